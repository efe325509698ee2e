// SPDX-License-Identifier: Apache-2.0
// Real GPIO lines through libgpiod 2.x (the kernel's character device, uAPI
// v2), as the board file describes them. Built instead of GPIODLines.swift
// (libgpiod 1.6) when pkg-config finds libgpiod 2.x, as on Debian 13 trixie
// and the Raspberry Pi OS based on it: the compilation condition GPIOD2, set
// by Package.swift and scripts/build-pi (docs/pi-build.md "Which libgpiod").
// Same type, API, messages and behaviour as the 1.6 backend; nothing above
// this file knows which one it got. What differs is how lines are held:
//
// - One `gpiod_chip` per chip the board uses and ONE `gpiod_line_request`
//   per chip for all of the board's lines on it: per-line
//   `gpiod_line_settings` added to one `gpiod_line_config`, the consumer
//   name in a `gpiod_request_config`. Each chip with buttons puts one
//   descriptor in the poll set however many buttons it has.
// - Outputs are requested as outputs at their inactive level; with
//   `active-low` the kernel inverts, so everywhere above this file 1 means
//   lit / running / pressed. Buttons: input, both edges, the board's bias.
//   Debounce stays the firmware's (Feedback), as with 1.6: the kernel's
//   debounce is not asked for, so both backends deliver the same raw edges.
// - A request refused with EINVAL while a button on that chip asks for a
//   bias is made again without biases, with a warning per such button (the
//   1.6 backend does the same per line; uAPI v2 needs Linux 5.10, which
//   knows bias flags, so this is left for drivers that cannot set one).
// - Edges are read non-blocking, at most `eventsPerRead` at a time, into one
//   `gpiod_edge_event_buffer` allocated here at start; the running firmware
//   allocates nothing per event. Each event names its line by offset.
//   Rising means pressed: with both edges requested, the v2 kernel also
//   reads the line's logical value and calls the edge rising when it is 1
//   (gpiolib-cdev.c, edge_irq_thread). Timestamps are CLOCK_MONOTONIC, the
//   v2 default event clock, the clock `Instant` comes from.
// - Lost edges: a request's kernel queue holds 16 events per line; when it
//   is full the kernel drops the oldest but keeps numbering. The request-wide
//   sequence number counts what was lost (`lostEdges`), the per-line one
//   names the button in the warning.
// - Finding lines: libgpiod 2 has no lookup across chips. A named line with
//   no chip is looked for on every /dev/gpiochip* in number order (as 1.6's
//   gpiod_line_find did); a chip from the board file is taken as 1.6's
//   gpiod_chip_open_lookup took it: a number (gpiochipN), a path under
//   /dev/, a name (/dev/<name>), else a label.

#if GPIOD2
import Bounded
import CGPIOD
import CLinux
import Platform

public struct GPIODLines: ~Copyable, LineBackend {
    /// One event descriptor per button.
    public static var maxDescriptors: Int { BoardLines.maxButtons }
    /// One read takes up to this many edges (the kernel keeps 16 per line).
    public static let eventsPerRead = 16
    /// Events older than this when read are taken as happening now.
    public static let maxEventAgeMs: Int64 = 60_000
    /// What `gpioinfo` shows as the lines' user.
    public static let consumer = "wristlink"

    /// Where a board line is held: its request (one per chip) and offset.
    struct Place {
        var request: Int
        var offset: UInt32
    }

    /// A chip as the kernel names it, for messages.
    struct ChipInfo {
        var name: String
        var label: String
        var lineCount: Int
    }

    public let outputNames: [String]
    public let buttonNames: [String]
    private let chips: [OpaquePointer]
    private let chipInfos: [ChipInfo]
    /// `requests[i]` holds every board line on `chips[i]`.
    private let requests: [OpaquePointer]
    /// The request's event descriptor; -1 when it holds no button.
    private let eventFDs: [Int32]
    /// A request whose descriptor failed is left out of the poll set, so a
    /// broken chip cannot spin the loop.
    private var failed: [Bool]
    private let outputs: [Place]
    private let buttons: [Place]
    private let events: OpaquePointer?
    private var pending = RingBuffer<InputEvent>(capacity: GPIODLines.eventsPerRead, policy: .refuseNewest)
    private var requestSequence: [EdgeSequence]
    private var buttonSequence: [EdgeSequence]

    /// Edges the kernel dropped because they were not read in time.
    public var lostEdges: UInt64 {
        var total: UInt64 = 0
        for sequence in requestSequence { total &+= sequence.lost }
        return total
    }

    /// Requests every output and button of `board` (not a simulated one).
    public init(board: BoardLines) throws(GPIOError) {
        precondition(!board.simulated, "a simulated board has no GPIO lines: use SimLines")
        let specs = board.outputs + board.buttons
        var opened = OpenedChips()
        var made: [OpaquePointer] = []
        var fds: [Int32] = []
        var places: [Place] = []
        do throws(GPIOError) {
            for (i, spec) in specs.enumerated() {
                places.append(try opened.locate(spec, role: Self.role(i, board), board: board))
            }
            for chip in opened.chips.indices {
                let members = places.indices.filter { places[$0].request == chip }
                let request = try Self.request(
                    chip: opened.chips[chip], info: opened.infos[chip], members: members, places: places, specs: specs, board: board)
                made.append(request)
                var fd: Int32 = -1
                if let firstButton = members.first(where: { $0 >= board.outputs.count }) {
                    fd = gpiod_line_request_get_fd(request)
                    do {
                        try Sys.setNonBlocking(fd)
                    } catch {
                        throw Self.error(specs[firstButton], role: "button", info: opened.infos[chip], error)
                    }
                }
                fds.append(fd)
            }
        } catch {
            for request in made { gpiod_line_request_release(request) }
            opened.closeAll()
            throw error
        }
        outputNames = board.outputs.map { $0.name }
        buttonNames = board.buttons.map { $0.name }
        chips = opened.chips
        chipInfos = opened.infos
        requests = made
        eventFDs = fds
        failed = [Bool](repeating: false, count: made.count)
        outputs = Array(places[0..<board.outputs.count])
        buttons = Array(places[board.outputs.count...])
        // Allocated once; nil only when the board has no buttons or memory
        // ran out (then no edge is read, and the error says so once).
        events = board.buttons.isEmpty ? nil : gpiod_edge_event_buffer_new(Self.eventsPerRead)
        if events == nil && !board.buttons.isEmpty {
            Log.error("buttons: no memory for libgpiod's edge event buffer: buttons are ignored")
        }
        requestSequence = [EdgeSequence](repeating: EdgeSequence(), count: made.count)
        buttonSequence = [EdgeSequence](repeating: EdgeSequence(), count: board.buttons.count)
        Log.debug("gpio: libgpiod \(String(cString: gpiod_api_version())): \(specs.count) lines in \(made.count) request(s), one per chip")
    }

    deinit {
        for place in outputs {
            _ = gpiod_line_request_set_value(requests[place.request], place.offset, GPIOD_LINE_VALUE_INACTIVE)
        }
        for request in requests { gpiod_line_request_release(request) }
        for chip in chips { gpiod_chip_close(chip) }
        if let events { gpiod_edge_event_buffer_free(events) }
    }

    // MARK: LineBackend

    public mutating func addDescriptors(to set: inout PollSet) {
        guard events != nil else { return }
        for i in eventFDs.indices where eventFDs[i] >= 0 && !failed[i] { set.add(eventFDs[i], events: Int16(POLLIN)) }
    }

    public var deadline: Instant? { nil }

    public mutating func nextInput(now: Instant, ready: borrowing PollSet) -> InputEvent? {
        if let event = pending.popFirst() { return event }
        guard events != nil else { return nil }
        for request in eventFDs.indices
        where eventFDs[request] >= 0 && !failed[request] && ready.revents(of: eventFDs[request]) & Int16(POLLIN) != 0 {
            read(request, now: now)
            if let event = pending.popFirst() { return event }
        }
        return nil
    }

    public mutating func setOutput(_ line: Int, on: Bool) {
        let place = outputs[line]
        let value = on ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE
        if gpiod_line_request_set_value(requests[place.request], place.offset, value) < 0 {
            Log.error(
                "output \(outputNames[line]): setting it \(on ? "on" : "off") failed: \(SystemError("gpiod_line_request_set_value", errno: wl_errno()))"
            )
        }
    }

    public mutating func allOff() {
        for i in outputs.indices { setOutput(i, on: false) }
    }

    /// Whether `chip` (name, label, number or path) can be opened: for
    /// diagnostics and the tests that need a real chip.
    public static func chipExists(_ chip: String) -> Bool {
        guard let handle = try? openLookup(chip) else { return false }
        gpiod_chip_close(handle)
        return true
    }

    // MARK: Events

    /// Reads what the kernel has queued for `request` into `pending`.
    private mutating func read(_ request: Int, now: Instant) {
        guard let events else { return }
        let room = pending.capacity - pending.count
        let handle = requests[request]
        let count: Int
        do {
            count = try Sys.call("gpiod_line_request_read_edge_events") {
                Int(gpiod_line_request_read_edge_events(handle, events, room))
            }
        } catch {
            if !error.wouldBlock {
                for button in buttons.indices where buttons[button].request == request {
                    Log.error("button \(buttonNames[button]): reading its edges failed, ignoring it from now on: \(error)")
                }
                failed[request] = true
            }
            return
        }
        for i in 0..<min(count, room) {
            guard let event = gpiod_edge_event_buffer_get_event(events, UInt(i)) else { continue }
            let offset = gpiod_edge_event_get_line_offset(event)
            _ = requestSequence[request].observe(UInt64(gpiod_edge_event_get_global_seqno(event)))
            guard let button = buttons.indices.first(where: { buttons[$0].request == request && buttons[$0].offset == offset }) else {
                // The request holds outputs too, which report no edges.
                Log.warning("GPIO \(chipInfos[request].name): an edge on offset \(offset), which is no button: ignored")
                continue
            }
            let lost = buttonSequence[button].observe(UInt64(gpiod_edge_event_get_line_seqno(event)))
            if lost > 0 {
                Log.warning(
                    "button \(buttonNames[button]): \(lost) edge(s) lost: the kernel's queue was full before they were read "
                        + "(\(lostEdges) lost in all)")
            }
            let pressed = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE
            let at = Self.instant(ns: UInt64(gpiod_edge_event_get_timestamp_ns(event)), now: now)
            pending.push(.edge(button: button, pressed: pressed, at: at))
        }
    }

    /// The event's monotonic timestamp, or `now` when it cannot be one.
    public static func instant(ns: UInt64, now: Instant) -> Instant {
        GPIODCommon.instant(ms: Int64(ns / 1_000_000), now: now, maxAgeMs: maxEventAgeMs)
    }

    /// The same for a `timespec` (the 1.6 backend's form; kept so both
    /// backends have one API).
    public static func instant(_ ts: timespec, now: Instant) -> Instant {
        GPIODCommon.instant(ms: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000, now: now, maxAgeMs: maxEventAgeMs)
    }

    // MARK: Start-up

    private static func role(_ index: Int, _ board: BoardLines) -> String {
        index < board.outputs.count ? "output" : "button"
    }

    /// The chips opened while locating the board's lines, one per kernel
    /// chip (two names for the same chip share it).
    struct OpenedChips {
        var chips: [OpaquePointer] = []
        var infos: [ChipInfo] = []

        mutating func closeAll() {
            for chip in chips { gpiod_chip_close(chip) }
            chips = []
            infos = []
        }

        /// Keeps `chip` unless the same kernel chip is open already; the index.
        mutating func adopt(_ chip: OpaquePointer, _ info: ChipInfo) -> Int {
            if let known = infos.firstIndex(where: { $0.name.utf8Equals(info.name) }) {
                gpiod_chip_close(chip)
                return known
            }
            chips.append(chip)
            infos.append(info)
            return chips.count - 1
        }

        mutating func locate(_ spec: LineSpec, role: String, board: BoardLines) throws(GPIOError) -> Place {
            guard let chipName = board.chip(of: spec) else {
                guard case .named(let name) = spec.line else {
                    preconditionFailure("BoardConfig.parse requires a chip for an offset")
                }
                return try find(name, spec, role: role)
            }
            let chip: OpaquePointer
            do {
                chip = try GPIODLines.openLookup(chipName)
            } catch {
                throw GPIODCommon.error(spec, role: role, chip: chipName, error, notFound: .noSuchChip)
            }
            let info = GPIODLines.info(chip)
            let offset: UInt32
            switch spec.line {
            case .named(let name):
                let found = gpiod_chip_get_line_offset_from_name(chip, name)
                guard found >= 0 else {
                    let error = SystemError("gpiod_chip_get_line_offset_from_name", errno: wl_errno())
                    gpiod_chip_close(chip)
                    throw GPIODCommon.error(spec, role: role, chip: chipName, error, notFound: .noSuchLine)
                }
                offset = UInt32(found)
            case .offset(let wanted):
                guard wanted >= 0, wanted < info.lineCount else {
                    gpiod_chip_close(chip)
                    throw GPIODCommon.error(
                        spec, role: role, chip: chipName, SystemError("gpiod_chip_get_line_info", errno: EINVAL),
                        notFound: .noSuchLine, offsetPastEnd: true)
                }
                offset = UInt32(wanted)
            }
            return Place(request: adopt(chip, info), offset: offset)
        }

        /// A named line on whichever chip has it, first chip first.
        private mutating func find(_ name: String, _ spec: LineSpec, role: String) throws(GPIOError) -> Place {
            for device in GPIODCommon.scanChips().names {
                guard let chip = gpiod_chip_open("/dev/" + device) else { continue }
                let found = gpiod_chip_get_line_offset_from_name(chip, name)
                guard found >= 0 else {
                    gpiod_chip_close(chip)
                    continue
                }
                return Place(request: adopt(chip, GPIODLines.info(chip)), offset: UInt32(found))
            }
            throw GPIODCommon.error(
                spec, role: role, chip: nil, SystemError("gpiod_chip_get_line_offset_from_name", errno: ENOENT), notFound: .noSuchLine)
        }
    }

    /// Opens a chip as libgpiod 1.6's gpiod_chip_open_lookup did.
    static func openLookup(_ chip: String) throws(SystemError) -> OpaquePointer {
        let digits = !chip.isEmpty && chip.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let path = digits ? "/dev/gpiochip" + chip : chip.utf8HasPrefix("/dev/") ? chip : "/dev/" + chip
        if let handle = gpiod_chip_open(path) { return handle }
        let byPath = SystemError("gpiod_chip_open", errno: wl_errno())
        if digits || chip.utf8HasPrefix("/dev/") { throw byPath }
        for device in GPIODCommon.scanChips().names {
            guard let handle = gpiod_chip_open("/dev/" + device) else { continue }
            if info(handle).label.utf8Equals(chip) { return handle }
            gpiod_chip_close(handle)
        }
        throw SystemError("gpiod_chip_open", errno: ENOENT)
    }

    static func info(_ chip: OpaquePointer) -> ChipInfo {
        guard let info = gpiod_chip_get_info(chip) else {
            return ChipInfo(name: String(cString: gpiod_chip_get_path(chip)), label: "", lineCount: 0)
        }
        defer { gpiod_chip_info_free(info) }
        return ChipInfo(
            name: String(cString: gpiod_chip_info_get_name(info)), label: String(cString: gpiod_chip_info_get_label(info)),
            lineCount: gpiod_chip_info_get_num_lines(info))
    }

    /// One request for `members` (indices into `specs`, board order) on
    /// `chip`; on EINVAL with biases asked for, once more without them.
    private static func request(
        chip: OpaquePointer, info: ChipInfo, members: [Int], places: [Place], specs: [LineSpec], board: BoardLines
    ) throws(GPIOError) -> OpaquePointer {
        // Two board lines at one offset (one by name, one by number): the
        // second is busy, as the 1.6 backend's second request of it was.
        for (k, member) in members.enumerated() {
            if members[..<k].contains(where: { places[$0].offset == places[member].offset }) {
                throw error(specs[member], role: role(member, board), info: info, SystemError("gpiod_chip_request_lines", errno: EBUSY))
            }
        }
        // Two attempts at most: with the board's biases, then without.
        let biased = members.filter { $0 >= board.outputs.count && specs[$0].bias != .asIs }
        var failure = SystemError("gpiod_chip_request_lines", errno: EINVAL)
        for withBias in [true, false] {
            do {
                return try request(chip, members: members, places: places, specs: specs, board: board, withBias: withBias)
            } catch {
                failure = error
            }
            guard failure.errno == EINVAL, withBias, !biased.isEmpty else { break }
            for member in biased {
                Log.warning(
                    "button \(specs[member].name): the kernel refused a bias on \(specs[member].line.description) "
                        + "(EINVAL: its GPIO driver cannot set one?); requesting it without: the button needs its own pull resistor")
            }
        }
        let culprit = blamed(chip, members: members, places: places, failure)
        throw error(specs[culprit], role: role(culprit, board), info: info, failure)
    }

    /// The member an error is reported for: for EBUSY the first line
    /// another process holds, else the first line of the request.
    private static func blamed(_ chip: OpaquePointer, members: [Int], places: [Place], _ failure: SystemError) -> Int {
        guard failure.errno == EBUSY else { return members[0] }
        for member in members {
            guard let line = gpiod_chip_get_line_info(chip, places[member].offset) else { continue }
            let used = gpiod_line_info_is_used(line)
            gpiod_line_info_free(line)
            if used { return member }
        }
        return members[0]
    }

    private static func request(
        _ chip: OpaquePointer, members: [Int], places: [Place], specs: [LineSpec], board: BoardLines, withBias: Bool
    ) throws(SystemError) -> OpaquePointer {
        let settings = try Sys.pointer("gpiod_line_settings_new") { gpiod_line_settings_new() }
        defer { gpiod_line_settings_free(settings) }
        let config = try Sys.pointer("gpiod_line_config_new") { gpiod_line_config_new() }
        defer { gpiod_line_config_free(config) }
        let requestConfig = try Sys.pointer("gpiod_request_config_new") { gpiod_request_config_new() }
        defer { gpiod_request_config_free(requestConfig) }
        gpiod_request_config_set_consumer(requestConfig, consumer)
        for member in members {
            let spec = specs[member]
            gpiod_line_settings_reset(settings)
            gpiod_line_settings_set_active_low(settings, spec.activeLow)
            if member < board.outputs.count {
                // Outputs start inactive: logical 0, which the kernel turns
                // into the high level for an active-low line.
                _ = gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT)
                _ = gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE)
            } else {
                _ = gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT)
                _ = gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH)
                if withBias { _ = gpiod_line_settings_set_bias(settings, bias(spec.bias)) }
            }
            var offset = places[member].offset
            _ = try Sys.call32("gpiod_line_config_add_line_settings") {
                gpiod_line_config_add_line_settings(config, &offset, 1, settings)
            }
        }
        return try Sys.pointer("gpiod_chip_request_lines") { gpiod_chip_request_lines(chip, requestConfig, config) }
    }

    private static func bias(_ bias: Bias) -> gpiod_line_bias {
        switch bias {
        case .asIs: GPIOD_LINE_BIAS_AS_IS
        case .disable: GPIOD_LINE_BIAS_DISABLED
        case .pullUp: GPIOD_LINE_BIAS_PULL_UP
        case .pullDown: GPIOD_LINE_BIAS_PULL_DOWN
        }
    }

    /// An error for a line that was found: the chip is the one it is on.
    private static func error(_ spec: LineSpec, role: String, info: ChipInfo, _ error: SystemError) -> GPIOError {
        GPIODCommon.error(
            spec, role: role, chip: info.name, label: info.label.utf8Equals(info.name) ? nil : info.label, error, notFound: .failed)
    }
}
#endif
