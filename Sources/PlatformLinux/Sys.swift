// SPDX-License-Identifier: Apache-2.0
// The syscall boundary: every call retries EINTR and reports failure as a
// typed error naming the call and errno. Nothing above this file reads errno.

import CLinux

public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }

    public var wouldBlock: Bool { errno == EAGAIN || errno == EWOULDBLOCK }
    /// No such file or directory.
    public var notFound: Bool { errno == ENOENT }
    /// The kernel does not know the socket's address family (a kernel
    /// without Bluetooth support, for AF_BLUETOOTH).
    public var addressFamilyUnsupported: Bool { errno == EAFNOSUPPORT }
    /// Permission denied (EACCES or EPERM).
    public var permissionDenied: Bool { errno == EACCES || errno == EPERM }
}

public enum Sys {
    /// Runs `body` until it does not fail with EINTR. A negative result is
    /// thrown as `SystemError`.
    @inline(__always)
    public static func call(_ name: String, _ body: () -> Int) throws(SystemError) -> Int {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = wl_errno()
            if code == EINTR { continue }
            throw SystemError(name, errno: code)
        }
    }

    @inline(__always)
    public static func call32(_ name: String, _ body: () -> Int32) throws(SystemError) -> Int32 {
        Int32(try call(name) { Int(body()) })
    }

    /// For C library calls that return NULL and set errno on failure
    /// (libgpiod's open and find calls).
    @inline(__always)
    public static func pointer<T>(_ name: String, _ body: () -> T?) throws(SystemError) -> T {
        if let result = body() { return result }
        throw SystemError(name, errno: wl_errno())
    }

    public static func setNonBlocking(_ fd: Int32) throws(SystemError) {
        let flags = try call32("fcntl(F_GETFL)") { wl_get_status_flags(fd) }
        _ = try call32("fcntl(F_SETFL)") { wl_set_status_flags(fd, flags | O_NONBLOCK) }
    }

    /// Writes all of `buffer` to `fd`, retrying EINTR and short writes;
    /// false when a write fails or makes no progress. The one write loop for
    /// the log, the events stream, the trace, the state file and child pipes.
    public static func writeAll(_ fd: Int32, _ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let n = try? call("write") { CLinux.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
            guard let n, n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// Monotonic milliseconds.
    public static func monotonicMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Monotonic microseconds (for benchmarks and traces).
    public static func monotonicUs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}
