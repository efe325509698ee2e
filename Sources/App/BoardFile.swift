// SPDX-License-Identifier: Apache-2.0
// The board file as the maintenance commands read it (pinout, test-board,
// lines-off): read, parsed with every error reported, each error logged
// with the file and line. `run` and `doctor` have their own paths (the
// fallback board, the doctor's FAIL lines).

import Config
import PlatformLinux

enum BoardFile {
    /// The board at `path`, or nil with the reasons logged (the command
    /// then exits with `ExitCode.config`).
    static func load(_ path: String) -> BoardConfig? {
        let text: String
        do throws(SystemError) { text = try ProcessControl.readFile(path) } catch {
            Log.error("cannot read the board file \(path): \(error)")
            return nil
        }
        do throws(ConfigErrors) { return try BoardConfig.parseReportingAll(text) } catch {
            for line in error.located(in: path) { Log.error(line) }
            return nil
        }
    }
}
