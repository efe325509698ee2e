// SPDX-License-Identifier: Apache-2.0
// What this binary is, in the one line that `wristlink --version` prints
// and that opens the log, `wristlink doctor`'s report and (as the hello
// event) the events stream: the version, the git revision it was built
// from, the libgpiod API its line backend was compiled for, and the
// licence. The version and revision are compiled in by CBuildInfo
// (docs/versions.md); the libgpiod API follows the GPIOD2 condition that
// picked GPIODLines.swift or GPIODLines2.swift.

import CBuildInfo

public enum BuildInfo {
    /// The licence of the firmware (LICENSE).
    public static let licence = "Apache-2.0"

    /// The release, from the VERSION file.
    public static var version: String { String(cString: wl_build_version()) }

    /// The git revision, or "unknown".
    public static var revision: String { String(cString: wl_build_revision()) }

    /// The libgpiod major version whose API the line backend uses.
    public static var libgpiodAPI: String {
        #if GPIOD2
        return "2"
        #else
        return "1"
        #endif
    }

    /// `wristlink 0.1.0 (git 0123456789ab, libgpiod 2 API), licence Apache-2.0`.
    public static var line: String { line(version: version, revision: revision, libgpiodAPI: libgpiodAPI) }

    public static func line(version: String, revision: String, libgpiodAPI: String) -> String {
        "wristlink \(version) (git \(revision), libgpiod \(libgpiodAPI) API), licence \(licence)"
    }
}
