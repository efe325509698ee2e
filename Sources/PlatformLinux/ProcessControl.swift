// SPDX-License-Identifier: Apache-2.0
// Process-level calls the app and the simulator need without importing
// Glibc themselves: arguments, environment, files read at start-up, small
// waits while child processes start. Nothing here runs in the firmware loop.

import CLinux

public enum ProcessControl {
    public static func exit(_ code: Int32) -> Never { CLinux.exit(code) }

    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    public static var processID: Int32 { getpid() }

    public static func sleep(ms: Int64) { usleep(useconds_t(max(0, ms) * 1000)) }
    /// The command line, program name first (`CommandLine.arguments`, which
    /// Embedded Swift does not have).
    public static var arguments: [String] {
        let argv = wl_argv()
        var result: [String] = []
        for i in 0..<Int(wl_argc()) {
            guard let argument = argv?[i] else { break }
            result.append(String(cString: argument))
        }
        return result
    }

    public static let pollIn = Int16(POLLIN)

    /// Writes `text` to standard output at once, unbuffered (a line that is
    /// built up while something happens, as `wristlink test-board` prints).
    public static func writeOut(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { Sys.writeAll(1, $0) }
    }

    /// Writes `text` to standard error (a usage error's help text).
    public static func writeError(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { Sys.writeAll(2, $0) }
    }

    public static func makeDirectory(_ path: String) { _ = mkdir(path, 0o700) }

    /// A descriptor appending to `path` (created 0600), or -1.
    public static func openForAppend(_ path: String) -> Int32 {
        wl_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Waits until `path` exists (a socket being created by a child).
    public static func waitForPath(_ path: String, timeoutMs: Int64) -> Bool {
        let start = Sys.monotonicMs()
        while !exists(path) {
            if Sys.monotonicMs() - start > timeoutMs { return false }
            usleep(20_000)
        }
        return true
    }

    /// Characters typed at a raw-mode terminal since the last call.
    public static func readKeys(fd: Int32) -> [Character] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBufferPointer { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return [] }
        return Array(String(decoding: buffer[0..<n], as: UTF8.self))
    }

    /// Reads a whole (small) file; for configuration at start-up only.
    public static func readFile(_ path: String, maxBytes: Int = 256 * 1024) throws(SystemError) -> String {
        let fd = try Sys.call32("open(\(path))") { wl_open(path, O_RDONLY | O_CLOEXEC, 0) }
        defer { _ = CLinux.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try chunk.withUnsafeMutableBufferPointer { (b) throws(SystemError) -> Int in
                try Sys.call("read(\(path))") { CLinux.read(fd, b.baseAddress, b.count) }
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > maxBytes { throw SystemError("\(path): larger than \(maxBytes) bytes", errno: EFBIG) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
