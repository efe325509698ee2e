// SPDX-License-Identifier: Apache-2.0
// The fixed table given to poll(2). Rebuilt before every wait from the
// components' current descriptors (at most `capacity`, a handful), so there
// is no registration state to get out of step.

import Bounded
import CLinux

public struct PollSet: ~Copyable {
    public static let capacity = 8
    private let fds: UnsafeMutablePointer<pollfd>
    public private(set) var count = 0

    public init() {
        fds = .allocate(capacity: Self.capacity)
        fds.initialize(repeating: pollfd(), count: Self.capacity)
    }

    deinit { fds.deallocate() }

    public mutating func removeAll() { count = 0 }

    /// Watches `fd` for `events` (POLLIN, POLLOUT). Returns its slot.
    @discardableResult
    public mutating func add(_ fd: Int32, events: Int16) -> Int {
        precondition(count < Self.capacity, "more descriptors than the poll table holds")
        fds[count] = pollfd(fd: fd, events: events, revents: 0)
        count += 1
        return count - 1
    }

    /// Sleeps until a descriptor is ready or `timeoutMs` passes (-1: no
    /// timeout). Returns the number of ready descriptors.
    @discardableResult
    public mutating func wait(timeoutMs: Int32) throws(SystemError) -> Int {
        let fds = self.fds
        let count = self.count
        return try Sys.call("poll") { Int(poll(fds, nfds_t(count), timeoutMs)) }
    }

    public func revents(of fd: Int32) -> Int16 {
        for i in 0..<count where fds[i].fd == fd { return fds[i].revents }
        return 0
    }

    /// The poll timeout until `deadline`: -1 for none, 0 if already due,
    /// rounded up so we never wake before it.
    public static func timeoutMs(until deadline: Instant?, now: Instant) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = deadline.ms(since: now)
        if remaining <= 0 { return 0 }
        return Int32(min(remaining, Int64(Int32.max)))
    }
}
