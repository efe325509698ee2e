// SPDX-License-Identifier: Apache-2.0
// systemd's notification protocol (sd_notify without libsystemd): READY=1
// once the firmware does its job (advertising, waiting for an absent
// controller, or retrying a failed set-up), STATUS= with what it is doing,
// WATCHDOG=1 from the loop every half of WatchdogSec.
// Datagrams to $NOTIFY_SOCKET; nothing happens when it is unset.

import Bounded
import CBlueZ
import CLinux

public struct ServiceManager: ~Copyable {
    private let fd: Int32
    private var address = sockaddr_un()
    private var addressLength: socklen_t = 0
    /// Half the watchdog interval, or 0 without a watchdog.
    public let watchdogPingMs: Int64
    public private(set) var nextPing: Instant? = nil
    /// "STATUS=" and the text, built here without allocating.
    private var message = ByteBuffer(capacity: ServiceManager.maxStatusBytes + 7)
    /// Longer status texts are cut (systemd shows one line anyway).
    public static let maxStatusBytes = 200

    /// From the environment systemd gives the service.
    public init(now: Instant) {
        self.init(
            now: now, notifySocket: ProcessControl.environment("NOTIFY_SOCKET"),
            watchdogUsec: ProcessControl.environment("WATCHDOG_USEC"))
    }

    /// `notifySocket`: $NOTIFY_SOCKET (nil or empty: not under systemd);
    /// `watchdogUsec`: $WATCHDOG_USEC. Tests pass them here rather than
    /// through the process environment other suites read at the same time.
    public init(now: Instant, notifySocket path: String?, watchdogUsec: String?) {
        guard let path, !path.isEmpty else {
            fd = -1
            watchdogPingMs = 0
            return
        }
        guard let (address, length) = UnixAddress.make(path, allowAbstract: true) else {
            Log.warning("NOTIFY_SOCKET does not fit a socket address; systemd is not notified")
            fd = -1
            watchdogPingMs = 0
            return
        }
        fd = CLinux.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.address = address
        addressLength = length
        let usec = watchdogUsec.flatMap { Int64($0) } ?? 0
        watchdogPingMs = usec > 0 ? max(1, usec / 2_000) : 0
        if watchdogPingMs > 0 { nextPing = now }
    }

    deinit { if fd >= 0 { _ = CLinux.close(fd) } }

    public func notify(_ message: StaticString) {
        message.withUTF8Buffer { send($0) }
    }

    /// STATUS=`text` (its first `maxStatusBytes` bytes).
    public mutating func notify(status text: borrowing ByteBuffer) {
        guard fd >= 0 else { return }
        message.removeAll()
        message.append(text: "STATUS=")
        message.append(contentsOf: text.span.extracting(0..<min(text.count, Self.maxStatusBytes)))
        message.span.withUnsafeBufferPointer { send($0) }
    }

    private func send(_ datagram: UnsafeBufferPointer<UInt8>) {
        guard fd >= 0 else { return }
        var address = self.address
        let length = addressLength
        _ = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, datagram.baseAddress, datagram.count, Int32(MSG_NOSIGNAL), $0, length) }
        }
    }

    /// Pings the watchdog if it is due.
    public mutating func tick(now: Instant) {
        guard let due = nextPing, now >= due else { return }
        notify("WATCHDOG=1")
        nextPing = now.advanced(byMs: watchdogPingMs)
    }
}
