// SPDX-License-Identifier: Apache-2.0
// What `wristlink doctor` and `wristlink test-board` read about the system
// around the firmware: systemd units (through systemctl, each run bounded),
// processes (/proc/N/comm), files' type, mode, owner and time, symbolic
// links, the kernel release and small text files (/proc, /sys). Read-only:
// nothing here changes the system. The firmware itself never calls it.

import Bounded
import CLinux

/// What stat(2) says about a path.
public struct FileStatus: Equatable, Sendable {
    /// The permission bits (0o777 and the set-id/sticky bits).
    public var mode: UInt32
    public var isDirectory: Bool
    public var isRegular: Bool
    public var ownerUID: UInt32
    public var groupGID: UInt32
    /// Last modification, seconds since the Unix epoch.
    public var modifiedSeconds: Int64

    public init(mode: UInt32, isDirectory: Bool, isRegular: Bool, ownerUID: UInt32, groupGID: UInt32, modifiedSeconds: Int64) {
        self.mode = mode
        self.isDirectory = isDirectory
        self.isRegular = isRegular
        self.ownerUID = ownerUID
        self.groupGID = groupGID
        self.modifiedSeconds = modifiedSeconds
    }
}

/// A systemd unit's state as `systemctl show` reports it; an empty string
/// for a property it did not print.
public struct UnitState: Equatable, Sendable {
    /// loaded, not-found, masked, ...
    public var loadState: String
    /// active, inactive, failed, activating, deactivating, ...
    public var activeState: String
    /// running, dead, failed, auto-restart, ...
    public var subState: String
    /// success, exit-code, signal, watchdog, ...
    public var result: String
    /// The exit status of the main process's last run ("0" before any).
    public var execMainStatus: String
    /// enabled, disabled, masked, static, ...
    public var unitFileState: String
    /// The service's last STATUS= (sd_notify), empty if none.
    public var statusText: String

    public init(
        loadState: String = "", activeState: String = "", subState: String = "", result: String = "", execMainStatus: String = "",
        unitFileState: String = "", statusText: String = ""
    ) {
        self.loadState = loadState
        self.activeState = activeState
        self.subState = subState
        self.result = result
        self.execMainStatus = execMainStatus
        self.unitFileState = unitFileState
        self.statusText = statusText
    }

    public var isActive: Bool { activeState.utf8Equals("active") || activeState.utf8Equals("reloading") }
}

public enum SystemProbe {
    /// The longest any child process (systemctl) may take.
    public static let commandTimeoutMs: Int64 = 5_000
    /// More of a child's output than this is not kept.
    public static let maxOutputBytes = 16 * 1024
    /// More processes than this are not looked at in /proc.
    public static let maxProcesses = 32_768

    // MARK: systemd

    /// systemctl's path when systemd manages this system (sd_booted():
    /// /run/systemd/system exists); nil in a container or chroot without it.
    public static var systemctlPath: String? {
        guard status("/run/systemd/system")?.isDirectory == true else { return nil }
        for path in ["/usr/bin/systemctl", "/bin/systemctl"] where access(path, X_OK) == 0 { return path }
        return nil
    }

    /// `systemctl show UNIT -p ...`: nil when systemctl is absent or did not answer.
    public static func unit(_ name: String) -> UnitState? {
        guard let systemctl = systemctlPath else { return nil }
        guard
            let (status, output) = run(
                [systemctl, "show", name, "-p", "LoadState,ActiveState,SubState,Result,ExecMainStatus,UnitFileState,StatusText"]),
            status == 0
        else { return nil }
        var state = UnitState()
        for line in Array(output.utf8).split(separator: UInt8(ascii: "\n")) {
            guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: line[line.startIndex..<eq], as: UTF8.self)
            let value = String(decoding: line[(eq + 1)...], as: UTF8.self)
            if key.utf8Equals("LoadState") { state.loadState = value }
            if key.utf8Equals("ActiveState") { state.activeState = value }
            if key.utf8Equals("SubState") { state.subState = value }
            if key.utf8Equals("Result") { state.result = value }
            if key.utf8Equals("ExecMainStatus") { state.execMainStatus = value }
            if key.utf8Equals("UnitFileState") { state.unitFileState = value }
            if key.utf8Equals("StatusText") { state.statusText = value }
        }
        return state
    }

    /// Runs `arguments[0]` (a path) with its standard error discarded and
    /// returns its exit status and standard output; nil when it could not
    /// start or was still running after `timeoutMs` (then it is killed).
    public static func run(_ arguments: [String], timeoutMs: Int64 = commandTimeoutMs) -> (status: Int32, output: String)? {
        let devNull = wl_open("/dev/null", O_WRONLY | O_CLOEXEC, 0)
        defer { if devNull >= 0 { _ = CLinux.close(devNull) } }
        var child: ChildProcess
        do { child = try ChildProcess.spawn(arguments, pipeStdin: false, pipeStdout: true, stderrFD: devNull) } catch { return nil }
        let fd = child.stdout
        let start = Sys.monotonicMs()
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        var finished = false
        while !finished {
            let leftMs = timeoutMs - (Sys.monotonicMs() - start)
            guard leftMs > 0 else { break }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = try? Sys.call32("poll") { poll(&entry, 1, Int32(leftMs)) }
            do {
                let n = try chunk.withUnsafeMutableBufferPointer { (b) throws(SystemError) -> Int in
                    try Sys.call("read(child)") { CLinux.read(fd, b.baseAddress, b.count) }
                }
                if n == 0 { finished = true }
                if bytes.count < maxOutputBytes { bytes.append(contentsOf: chunk[0..<n]) }
            } catch {
                if !error.wouldBlock { finished = true }
            }
        }
        let leftMs = max(0, timeoutMs - (Sys.monotonicMs() - start))
        let status = child.wait(timeoutMs: finished ? leftMs : 0)
        guard finished else { return nil }
        return (status, String(decoding: bytes, as: UTF8.self))
    }

    // MARK: Processes

    /// The ids of the processes whose command name (/proc/N/comm, at most
    /// 15 bytes) is `name`, lowest first.
    public static func processes(named name: String) -> [Int32] {
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        var found: [Int32] = []
        var seen = 0
        while let entry = CLinux.readdir(dir), seen < maxProcesses {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            guard let pid = Int32(entryName) else { continue }
            seen += 1
            guard let comm = try? ProcessControl.readFile("/proc/" + entryName + "/comm", maxBytes: 64) else { continue }
            if trimmed(comm).utf8Equals(name) { found.append(pid) }
        }
        found.sort()
        return found
    }

    // MARK: Files

    /// stat(2) of `path` (following symbolic links); nil if it fails.
    public static func status(_ path: String) -> FileStatus? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return fileStatus(st)
    }

    /// Why stat(2) of `path` fails; nil if it does not.
    public static func statusError(_ path: String) -> SystemError? {
        var st = stat()
        do throws(SystemError) {
            _ = try Sys.call32("stat(\(path))") { stat(path, &st) }
            return nil
        } catch {
            return error
        }
    }

    private static func fileStatus(_ st: stat) -> FileStatus {
        let type = UInt32(st.st_mode) & UInt32(S_IFMT)
        return FileStatus(
            mode: UInt32(st.st_mode) & 0o7777, isDirectory: type == UInt32(S_IFDIR), isRegular: type == UInt32(S_IFREG),
            ownerUID: UInt32(st.st_uid), groupGID: UInt32(st.st_gid), modifiedSeconds: Int64(st.st_mtim.tv_sec))
    }

    /// Where the symbolic link `path` points; nil if it is none.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { return nil }
        return buffer.withUnsafeBufferPointer { String(decoding: UnsafeRawBufferPointer($0).prefix(n), as: UTF8.self) }
    }

    public static func exists(_ path: String) -> Bool { ProcessControl.exists(path) }

    /// Whether this process may read `path`.
    public static func readable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// A small text file's contents without trailing NULs, newlines and
    /// spaces (device-tree strings end with a NUL); nil if it cannot be read.
    public static func text(_ path: String, maxBytes: Int = 4096) -> String? {
        guard let contents = try? ProcessControl.readFile(path, maxBytes: maxBytes) else { return nil }
        return trimmed(contents)
    }

    static func trimmed(_ text: String) -> String {
        var bytes = Array(text.utf8)
        while let last = bytes.last, last == 0 || last == 0x0A || last == 0x20 || last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: The system

    /// uname -r.
    public static var kernelRelease: String {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown" }
        return withUnsafeBytes(of: names.release) { raw in
            String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
    }

    /// Wall-clock seconds since the Unix epoch.
    public static var nowSeconds: Int64 { Int64(time(nil)) }

    /// This process's effective user id.
    public static var effectiveUID: UInt32 { UInt32(geteuid()) }
}
