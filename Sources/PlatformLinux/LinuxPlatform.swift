// The Platform implementation for Linux: one poll over the link, the lines,
// the signals; the timeout is the earliest deadline anyone reported. No tick.

import Bounded
import CLinux
import Platform

public struct LinuxPlatform<Link: LinkBackend & ~Copyable, Lines: LineBackend & ~Copyable>: ~Copyable, Platform {
    public var link: Link
    public var lines: Lines
    private var signals: Signals?
    private var poll = PollSet()
    private var trace: BtsnoopWriter?
    /// Returns from poll(2), for the idle-wakeup figures.
    public private(set) var wakeups: UInt64 = 0

    /// `handleSignals`: take SIGINT/SIGTERM through a signalfd (the daemon);
    /// tests leave it off.
    /// `tracePath`: write every ATT PDU to this btsnoop file.
    public init(link: consuming Link, lines: consuming Lines, handleSignals: Bool, tracePath: String? = nil) throws(SystemError) {
        self.link = link
        self.lines = lines
        signals = handleSignals ? try Signals() : nil
        trace = try tracePath.map { (path) throws(SystemError) in try BtsnoopWriter(path: path) }
    }

    public func now() -> Instant { Instant(ms: Sys.monotonicMs()) }

    public mutating func wait(until deadline: Instant?) {
        poll.removeAll()
        link.addDescriptors(to: &poll)
        lines.addDescriptors(to: &poll)
        if let fd = signals?.fd { poll.add(fd, events: Int16(POLLIN)) }
        let timeout = PollSet.timeoutMs(until: earliest(deadline, lines.deadline), now: now())
        do {
            try poll.wait(timeoutMs: timeout)
            wakeups &+= 1
        } catch {
            Log.error("\(error)")
        }
    }

    public mutating func nextLinkInput(into pdu: inout ByteBuffer) -> LinkInput {
        let input = link.nextInput(into: &pdu, ready: poll)
        if case .pdu = input { trace?.record(pdu.span, received: true) }
        return input
    }

    public mutating func send(_ pdu: borrowing ByteBuffer) {
        trace?.record(pdu.span, received: false)
        link.send(pdu)
    }
    public mutating func raiseSecurity(attempt: Int) { link.raiseSecurity(attempt: attempt) }
    public mutating func disconnect() { link.disconnect() }
    public mutating func setOutput(_ line: Int, on: Bool) { lines.setOutput(line, on: on) }

    public mutating func nextInput() -> InputEvent? {
        if let signal = signals?.next() {
            return .stop(reason: signal == SIGINT ? "SIGINT" : "SIGTERM")
        }
        return lines.nextInput(now: now(), ready: poll)
    }

    /// Every output off: the last thing before the process ends.
    public mutating func allOff() { lines.allOff() }
}
