// SPDX-License-Identifier: Apache-2.0
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
    private var mgmt: MgmtSocket
    private let bondsPath: String?
    private let gattCachePath: String?
    private var service: ServiceManager
    private var battery: BatteryFiles
    private let notices: NoticeFile?
    /// Look for the system's notice at the next input: at start, and after
    /// each SIGUSR1.
    private var lookForNotice = true
    /// Returns from poll(2), for the idle-wakeup figures.
    public private(set) var wakeups: UInt64 = 0
    /// poll(2) failures in a row; a few mean the loop cannot go on.
    private var pollFailures = 0
    public static var maxPollFailures: Int { 3 }

    /// `handleSignals`: take SIGINT/SIGTERM through a signalfd (the daemon);
    /// tests leave it off.
    /// `tracePath`: write every ATT PDU to this btsnoop file. `mgmt`: the
    /// controller's management socket (`.none` on the UNIX link).
    /// `bondsPath`: where `saveBonds` writes; `gattCachePath`, `saveGATTCache`. `serviceManager`: where READY
    /// and STATUS go (nil: $NOTIFY_SOCKET and $WATCHDOG_USEC; tests name
    /// their own socket rather than set the environment other suites read).
    /// `battery`: which power supply `readBattery` reads, under
    /// `powerSupplyRoot`. `noticePath`: the system's notice for the wrist
    /// (NoticeFile), looked at at start and on SIGUSR1; nil: none.
    public init(
        link: consuming Link, lines: consuming Lines, handleSignals: Bool, tracePath: String? = nil,
        mgmt: consuming MgmtSocket = .none, bondsPath: String? = nil, gattCachePath: String? = nil,
        serviceManager: (notifySocket: String?, watchdogUsec: String?)? = nil,
        battery: BatteryChoice = .none, powerSupplyRoot: String = PowerSupplyReader.defaultRoot, noticePath: String? = nil
    ) throws(SystemError) {
        // The poll table holds every descriptor the parts can add: the
        // link's, the lines', the management socket and the signal fd.
        precondition(Link.maxDescriptors + Lines.maxDescriptors + 2 <= PollSet.capacity, "the poll table is too small for these backends")
        self.link = link
        self.lines = lines
        signals = handleSignals ? try Signals() : nil
        trace = try tracePath.map { (path) throws(SystemError) in try BtsnoopWriter(path: path) }
        self.mgmt = mgmt
        self.bondsPath = bondsPath
        self.gattCachePath = gattCachePath
        self.battery = BatteryFiles(choice: battery, root: powerSupplyRoot)
        notices = noticePath.map { NoticeFile(path: $0) }
        let start = Instant(ms: Sys.monotonicMs())
        if let serviceManager {
            service = ServiceManager(now: start, notifySocket: serviceManager.notifySocket, watchdogUsec: serviceManager.watchdogUsec)
        } else {
            service = ServiceManager(now: start)
        }
    }

    public func now() -> Instant { Instant(ms: Sys.monotonicMs()) }

    public mutating func wait(until deadline: Instant?) {
        poll.removeAll()
        link.addDescriptors(to: &poll)
        lines.addDescriptors(to: &poll)
        mgmt.addDescriptor(to: &poll, now: now())
        if let fd = signals?.fd { poll.add(fd, events: Int16(POLLIN)) }
        let due = earliest(earliest(earliest(deadline, lines.deadline), service.nextPing), mgmt.pausedUntil)
        // A report waiting in the link (e.g. a raise from a timer) is read
        // now, and so is the notice looked for at start.
        let timeout = link.hasPendingInput || (lookForNotice && notices != nil) ? 0 : PollSet.timeoutMs(until: due, now: now())
        do {
            try poll.wait(timeoutMs: timeout)
            wakeups &+= 1
            pollFailures = 0
        } catch {
            pollFailures += 1
            Log.error("\(error)")
        }
        service.tick(now: now())
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
        if pollFailures >= Self.maxPollFailures {
            pollFailures = 0
            return .stop(reason: "fatal-poll-failed")
        }
        if let signal = signals?.next() {
            guard signal == SIGUSR1 else { return .stop(reason: signal == SIGINT ? "SIGINT" : "SIGTERM") }
            lookForNotice = true
        }
        if lookForNotice {
            lookForNotice = false
            if let input = takeNotice() { return input }
        }
        return lines.nextInput(now: now(), ready: poll)
    }

    /// The system's notice as an input (nil: none, or none configured).
    private func takeNotice() -> InputEvent? {
        guard let notices else { return nil }
        switch notices.take() {
        case .none:
            return nil
        case .notice(let notice):
            return .notice(notice)
        case .refused(let reason):
            return .rejected(what: "notice", reason: reason)
        case .failed(let errno):
            Log.warning("notice \(notices.pathText) could not be read (errno \(errno))")
            return .rejected(what: "notice", reason: "unreadable")
        }
    }

    public mutating func nextControllerInput(into packet: inout ByteBuffer) -> Bool { mgmt.receive(into: &packet, now: now()) }
    public mutating func sendController(_ packet: borrowing ByteBuffer) { mgmt.send(packet) }

    public mutating func saveBonds(_ contents: borrowing ByteBuffer) -> Bool {
        guard let bondsPath else { return true }
        do {
            try StateFile.write(bondsPath, contents)
            return true
        } catch {
            Log.error("bonds not saved: \(error)")
            return false
        }
    }

    public mutating func saveGATTCache(_ contents: borrowing ByteBuffer) -> Bool {
        guard let gattCachePath else { return true }
        do {
            try StateFile.write(gattCachePath, contents)
            return true
        } catch {
            Log.warning("GATT handle cache not saved (the phone's services are discovered again at its next link): \(error)")
            return false
        }
    }

    public mutating func notifyReady() { service.notify("READY=1") }
    public mutating func notifyStatus(_ text: borrowing ByteBuffer) { service.notify(status: text) }

    public mutating func readBattery() -> BatteryReading? { battery.read() }

    /// Every output off: the last thing before the process ends.
    public mutating func allOff() { lines.allOff() }
}
