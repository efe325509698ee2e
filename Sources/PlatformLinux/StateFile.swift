// The bond state file under the state directory (default /var/lib/wristlink):
// written atomically (temporary file in the same directory, fsync, rename,
// fsync of the directory) with mode 0600, so a power cut leaves either the
// old or the new bonds, never half of them. A file that cannot be parsed is
// moved aside (bonds.corrupt-<seconds>) and reported; it is never fatal.

import Bounded
import CBlueZ
import CLinux

public enum StateFile {
    public static let bondsName = "bonds"

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
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
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

/// systemd's notification protocol (sd_notify without libsystemd): READY=1
/// once advertising, WATCHDOG=1 from the loop every half of WatchdogSec.
/// Datagrams to $NOTIFY_SOCKET; nothing happens when it is unset.
public struct ServiceManager: ~Copyable {
    private let fd: Int32
    private var address = sockaddr_un()
    private var addressLength: socklen_t = 0
    /// Half the watchdog interval, or 0 without a watchdog.
    public let watchdogPingMs: Int64
    public private(set) var nextPing: Instant? = nil

    public init(now: Instant) {
        guard let path = ProcessControl.environment("NOTIFY_SOCKET"), !path.isEmpty else {
            fd = -1
            watchdogPingMs = 0
            return
        }
        fd = CLinux.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }  // abstract namespace
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let count = min(bytes.count, capacity - 1)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for i in 0..<count { raw[i] = bytes[i] } }
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + count)
        let usec = ProcessControl.environment("WATCHDOG_USEC").flatMap { Int64($0) } ?? 0
        watchdogPingMs = usec > 0 ? max(1, usec / 2_000) : 0
        if watchdogPingMs > 0 { nextPing = now }
    }

    deinit { if fd >= 0 { _ = CLinux.close(fd) } }

    public func notify(_ message: StaticString) {
        guard fd >= 0 else { return }
        var address = self.address
        let length = addressLength
        message.withUTF8Buffer { text in
            _ = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, text.baseAddress, text.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
    }

    /// Pings the watchdog if it is due.
    public mutating func tick(now: Instant) {
        guard let due = nextPing, now >= due else { return }
        notify("WATCHDOG=1")
        nextPing = now.advanced(byMs: watchdogPingMs)
    }
}
