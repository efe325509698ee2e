// SPDX-License-Identifier: Apache-2.0
// The bond state file under the state directory (default /var/lib/wristlink):
// written atomically (temporary file in the same directory, fsync, rename,
// fsync of the directory) with mode 0600, so a power cut leaves either the
// old or the new bonds, never half of them. A file that cannot be parsed is
// moved aside (bonds.corrupt-<seconds>) and reported; it is never fatal.

import Bounded
import CBlueZ  // rename(2) comes with its <stdio.h> in whole-module builds
import CLinux

public enum StateFile {
    public static let bondsName = "bonds"
    /// The bonded phones' GATT handles (Firmware's GATTCache), beside the bonds.
    public static let gattCacheName = "gatt-cache"

    public static func path(_ directory: String, _ name: String = bondsName) -> String { directory + "/" + name }

    /// The file's bytes, or nil when there is none yet.
    public static func read(_ path: String, maxBytes: Int = 16 * 1024) throws(SystemError) -> [UInt8]? {
        guard access(path, F_OK) == 0 else { return nil }
        return Array(try ProcessControl.readFile(path, maxBytes: maxBytes).utf8)
    }

    /// Replaces `path` with `contents` atomically, mode 0600.
    public static func write(_ path: String, _ contents: borrowing ByteBuffer) throws(SystemError) {
        let temporary = path + ".tmp"
        let fd = try Sys.call32("open(\(temporary))") { wl_open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        let written = contents.span.withUnsafeBufferPointer { Sys.writeAll(fd, $0) }
        let synced = fsync(fd) == 0
        _ = CLinux.close(fd)
        guard written, synced else {
            _ = unlink(temporary)
            throw SystemError("write(\(temporary))", errno: wl_errno() == 0 ? EIO : wl_errno())
        }
        _ = chmod(temporary, 0o600)
        _ = try Sys.call32("rename(\(temporary), \(path))") { rename(temporary, path) }
        let bytes = path.utf8
        let directory = String(decoding: bytes[..<(bytes.lastIndex(of: UInt8(ascii: "/")) ?? bytes.startIndex)], as: UTF8.self)
        let dirFD = wl_open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            _ = CLinux.close(dirFD)
        }
    }

    /// Moves a corrupt file aside; returns where it went.
    public static func setAside(_ path: String) -> String {
        let target = path + ".corrupt-\(time(nil))"
        _ = rename(path, target)
        return target
    }

    public static func remove(_ path: String) -> Bool { unlink(path) == 0 || wl_errno() == ENOENT }

    /// Creates the state directory (0700) if it is missing.
    public static func ensureDirectory(_ path: String) throws(SystemError) {
        if access(path, F_OK) == 0 { return }
        _ = try Sys.call32("mkdir(\(path))") { mkdir(path, 0o700) }
    }

    /// The file's permission bits (for tests and diagnostics).
    public static func mode(_ path: String) -> UInt32? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return UInt32(st.st_mode) & 0o777
    }
}
