// SPDX-License-Identifier: Apache-2.0
// Real GPIO lines through libgpiod 1.6 (the kernel's character device, uAPI
// v1), as the board file describes them. Built when pkg-config finds
// libgpiod 1.x (Debian 12 bookworm); GPIODLines2.swift is the libgpiod 2.x
// backend of the same type (docs/pi-build.md "Which libgpiod").
//
// Every line is requested once at start-up and held until deinit; a line
// that cannot be had stops start-up with a `GPIOError` that names the line,
// the chip and the likely fix. Outputs are requested as outputs at their
// inactive level; with `active-low` the kernel inverts, so everywhere above
// this file 1 means lit / running / pressed. Buttons are requested for
// both-edge events with the board's bias; a kernel that does not know bias
// flags (before 5.5: EINVAL) gets the request again without them and a
// warning. Each button's event descriptor is non-blocking and joins the poll
// set; edges are read up to `eventsPerRead` at a time into a buffer
// allocated here, so the running firmware allocates nothing per event.
//
// Edge direction: with both edges requested, the v1 kernel reads the line's
// logical value when it reports the event and calls it rising when that is
// 1 (gpiolib-cdev.c, lineevent_irq_thread in 6.1), so rising means pressed
// whatever the wiring. Timestamps are ktime_get_ns(), CLOCK_MONOTONIC (since
// Linux 5.7; before, CLOCK_REALTIME), the clock `Instant` comes from; an
// event stamped in the future or over a minute back is taken as happening
// now, which also covers those older kernels.
//
// Lines are found by name on every chip (gpiod_line_find), or on the chip
// the board gives, by name or offset. Each line gets its own chip handle, so
// releasing is the same for both: release the line, close its chip.

#if !GPIOD2
import Bounded
import CGPIOD
import CLinux
import Platform

public struct GPIODLines: ~Copyable, LineBackend {
    /// One event descriptor per button.
    public static var maxDescriptors: Int { BoardLines.maxButtons }
    /// The kernel keeps 16 events per line request; one read takes them all.
    public static let eventsPerRead = 16
    /// Events older than this when read are taken as happening now.
    public static let maxEventAgeMs: Int64 = 60_000
    /// What `gpioinfo` shows as the lines' user.
    public static let consumer = "wristlink"

    public let outputNames: [String]
    public let buttonNames: [String]
    private let outputs: [OpaquePointer]
    private let buttons: [OpaquePointer]
    private let eventFDs: [Int32]
    /// A button whose descriptor failed is left out of the poll set, so a
    /// broken line cannot spin the loop.
    private var failed: [Bool]
    private let events: UnsafeMutablePointer<gpiod_line_event>
    private var pending = RingBuffer<InputEvent>(capacity: GPIODLines.eventsPerRead, policy: .refuseNewest)
    /// Edges the kernel dropped: uAPI v1 events carry no sequence numbers,
    /// so this backend cannot tell (the libgpiod 2 one counts them).
    public var lostEdges: UInt64 { 0 }

    /// Requests every output and button of `board` (not a simulated one).
    public init(board: BoardLines) throws(GPIOError) {
        precondition(!board.simulated, "a simulated board has no GPIO lines: use SimLines")
        var held: [OpaquePointer] = []
        var fds: [Int32] = []
        do throws(GPIOError) {
            for spec in board.outputs {
                let line = try Self.find(spec, role: "output", board: board)
                held.append(line)
                let flags = spec.activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
                try Self.request(line, spec, role: "output", type: Int32(GPIOD_LINE_REQUEST_DIRECTION_OUTPUT), flags: flags)
            }
            for spec in board.buttons {
                let line = try Self.find(spec, role: "button", board: board)
                held.append(line)
                let flags = spec.activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
                let type = Int32(GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES)
                do throws(GPIOError) {
                    try Self.request(line, spec, role: "button", type: type, flags: flags | Self.biasFlags(spec.bias))
                } catch where error.underlying.errno == EINVAL && spec.bias != .asIs {
                    Log.warning(
                        "button \(spec.name): the kernel refused a bias on \(spec.line.description) (EINVAL, a kernel before 5.5?); "
                            + "requesting it without: the button needs its own pull resistor")
                    try Self.request(line, spec, role: "button", type: type, flags: flags)
                }
                let fd = gpiod_line_event_get_fd(line)
                do {
                    try Sys.setNonBlocking(fd)
                } catch {
                    throw Self.error(spec, role: "button", line: line, error)
                }
                fds.append(fd)
            }
        } catch {
            Self.release(held)
            throw error
        }
        outputNames = board.outputs.map { $0.name }
        buttonNames = board.buttons.map { $0.name }
        outputs = Array(held[0..<board.outputs.count])
        buttons = Array(held[board.outputs.count...])
        eventFDs = fds
        failed = [Bool](repeating: false, count: fds.count)
        events = .allocate(capacity: Self.eventsPerRead)
        events.initialize(repeating: gpiod_line_event(), count: Self.eventsPerRead)
        Log.debug("gpio: libgpiod \(String(cString: gpiod_version_string())): \(held.count) lines, one request each")
    }

    deinit {
        for line in outputs { gpiod_line_set_value(line, 0) }
        Self.release(outputs + buttons)
        events.deallocate()
    }

    // MARK: LineBackend

    public mutating func addDescriptors(to set: inout PollSet) {
        for i in eventFDs.indices where !failed[i] { set.add(eventFDs[i], events: Int16(POLLIN)) }
    }

    public var deadline: Instant? { nil }

    public mutating func nextInput(now: Instant, ready: borrowing PollSet) -> InputEvent? {
        if let event = pending.popFirst() { return event }
        for button in eventFDs.indices where !failed[button] && ready.revents(of: eventFDs[button]) & Int16(POLLIN) != 0 {
            read(button, now: now)
            if let event = pending.popFirst() { return event }
        }
        return nil
    }

    public mutating func setOutput(_ line: Int, on: Bool) {
        if gpiod_line_set_value(outputs[line], on ? 1 : 0) < 0 {
            Log.error("output \(outputNames[line]): setting it \(on ? "on" : "off") failed: \(SystemError("gpiod_line_set_value", errno: wl_errno()))")
        }
    }

    public mutating func allOff() {
        for i in outputs.indices { setOutput(i, on: false) }
    }

    /// Whether `chip` (name, label, number or path) can be opened: for
    /// diagnostics and the tests that need a real chip.
    public static func chipExists(_ chip: String) -> Bool {
        guard let handle = gpiod_chip_open_lookup(chip) else { return false }
        gpiod_chip_close(handle)
        return true
    }

    // MARK: Events

    /// Reads what the kernel has queued for `button` into `pending`.
    private mutating func read(_ button: Int, now: Instant) {
        let room = pending.capacity - pending.count
        let line = buttons[button]
        let events = self.events
        let count: Int
        do {
            count = try Sys.call("gpiod_line_event_read_multiple") {
                Int(gpiod_line_event_read_multiple(line, events, UInt32(room)))
            }
        } catch {
            if !error.wouldBlock {
                Log.error("button \(buttonNames[button]): reading its edges failed, ignoring it from now on: \(error)")
                failed[button] = true
            }
            return
        }
        for i in 0..<count {
            let event = events[i]
            let pressed = event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE)
            pending.push(.edge(button: button, pressed: pressed, at: Self.instant(event.ts, now: now)))
        }
    }

    /// The event's monotonic timestamp, or `now` when it cannot be one.
    public static func instant(_ ts: timespec, now: Instant) -> Instant {
        GPIODCommon.instant(ms: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000, now: now, maxAgeMs: maxEventAgeMs)
    }

    // MARK: Start-up

    private static func find(_ spec: LineSpec, role: String, board: BoardLines) throws(GPIOError) -> OpaquePointer {
        let chipName = board.chip(of: spec)
        guard let chipName else {
            guard case .named(let name) = spec.line else {
                preconditionFailure("BoardConfig.parse requires a chip for an offset")
            }
            do {
                return try Sys.pointer("gpiod_line_find") { gpiod_line_find(name) }
            } catch {
                throw Self.error(spec, role: role, chip: nil, error, notFound: .noSuchLine)
            }
        }
        let chip: OpaquePointer
        do {
            chip = try Sys.pointer("gpiod_chip_open_lookup") { gpiod_chip_open_lookup(chipName) }
        } catch {
            throw Self.error(spec, role: role, chip: chipName, error, notFound: .noSuchChip)
        }
        do {
            switch spec.line {
            case .named(let name):
                return try Sys.pointer("gpiod_chip_find_line") { gpiod_chip_find_line(chip, name) }
            case .offset(let offset):
                return try Sys.pointer("gpiod_chip_get_line") { gpiod_chip_get_line(chip, UInt32(offset)) }
            }
        } catch {
            gpiod_chip_close(chip)
            throw Self.error(spec, role: role, chip: chipName, error, notFound: .noSuchLine)
        }
    }

    private static func request(_ line: OpaquePointer, _ spec: LineSpec, role: String, type: Int32, flags: Int32) throws(GPIOError) {
        var failure: SystemError? = nil
        consumer.withCString { consumer in
            var config = gpiod_line_request_config(consumer: consumer, request_type: type, flags: flags)
            // Outputs start inactive: logical 0, which the kernel turns into
            // the high level for an active-low line.
            do throws(SystemError) {
                _ = try Sys.call32("gpiod_line_request") { gpiod_line_request(line, &config, 0) }
            } catch {
                failure = error
            }
        }
        if let failure { throw Self.error(spec, role: role, line: line, failure) }
    }

    private static func biasFlags(_ bias: Bias) -> Int32 {
        switch bias {
        case .asIs: 0
        case .disable: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        case .pullUp: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case .pullDown: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        }
    }

    /// An error for a line that was found: the chip is the one it is on.
    private static func error(_ spec: LineSpec, role: String, line: OpaquePointer, _ error: SystemError) -> GPIOError {
        let chip = gpiod_line_get_chip(line)!
        let name = String(cString: gpiod_chip_name(chip))
        let label = String(cString: gpiod_chip_label(chip))
        return Self.error(spec, role: role, chip: name, label: label.utf8Equals(name) ? nil : label, error, notFound: .failed)
    }

    private static func error(
        _ spec: LineSpec, role: String, chip: String?, label: String? = nil, _ error: SystemError,
        notFound: GPIOError.Reason
    ) -> GPIOError {
        // gpiod_chip_get_line answers EINVAL for an offset past the chip's
        // end. Looking a chip up by label falls back to /dev/<label>, which
        // hides the EACCES of the chips it could not open behind an ENOENT
        // (GPIODCommon.error reports permission then).
        GPIODCommon.error(
            spec, role: role, chip: chip, label: label, error, notFound: notFound,
            offsetPastEnd: error.call.utf8Equals("gpiod_chip_get_line"))
    }

    private static func release(_ lines: [OpaquePointer]) {
        for line in lines {
            let chip = gpiod_line_get_chip(line)
            gpiod_line_release(line)
            if let chip { gpiod_chip_close(chip) }
        }
    }
}
#endif
