// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the decoders (make fuzz). One binary, many
// targets: WRISTLINK_FUZZ_TARGET picks the decoder, so one instrumented build
// serves them all. A target either survives the input or crashes (a
// precondition or an ASan report): there is no "expected" output here, only
// the invariants each target checks.

import ANCS
import ATT
import Bounded
import Config
import Firmware
import PhoneSim
import Platform
import PlatformLinux
import GATT
import Glibc
import Mgmt

enum Target {
    case notificationSource, dataSource, session, att, phoneLink, mgmtEvent, bondFile, controllerSetup, config, console, scenario
}

nonisolated(unsafe) var selected: Target? = nil

func target() -> Target {
    if let selected { return selected }
    let name = getenv("WRISTLINK_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    let t: Target
    switch name {
    case "notification-source": t = .notificationSource
    case "data-source": t = .dataSource
    case "session": t = .session
    case "att": t = .att
    case "phone-link": t = .phoneLink
    case "mgmt-event": t = .mgmtEvent
    case "bond-file": t = .bondFile
    case "controller-setup": t = .controllerSetup
    case "config": t = .config
    case "console": t = .console
    case "scenario": t = .scenario
    default:
        print("set WRISTLINK_FUZZ_TARGET to one of: notification-source data-source session att phone-link mgmt-event bond-file controller-setup config console scenario")
        exit(2)
    }
    selected = t
    return t
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Span(_unsafeElements: UnsafeBufferPointer(start: data, count: size))
    switch target() {
    case .notificationSource: fuzzNotificationSource(input)
    case .dataSource: fuzzDataSource(input)
    case .session: fuzzSession(input)
    case .att: fuzzATT(input)
    case .phoneLink: fuzzPhoneLink(input)
    case .mgmtEvent: fuzzMgmtEvent(input)
    case .bondFile: fuzzBondFile(input)
    case .controllerSetup: fuzzControllerSetup(input)
    case .config: fuzzConfig(input)
    case .console: fuzzConsole(input)
    case .scenario: fuzzScenario(input)
    }
    return 0
}

func fuzzNotificationSource(_ input: Span<UInt8>) {
    do throws(NotificationSourceError) {
        let event = try NotificationSourceEvent.decode(input)
        precondition(input.count == 8 && input[0] <= 2)
        var out = ByteBuffer(capacity: 8)
        event.encode(into: &out)
        for i in 0..<8 { precondition(out[i] == input[i], "decode/encode must round-trip") }
    } catch {
        switch error {
        case .wrongLength(let n): precondition(n == input.count && n != 8)
        case .reservedEventID(let id): precondition(id > 2 && input.count == 8)
        }
    }
}

/// A cursor over the fuzzer's bytes.
struct Reader: ~Escapable {
    let bytes: Span<UInt8>
    var offset = 0

    @_lifetime(copy bytes)
    init(_ bytes: Span<UInt8>) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func le32() -> UInt32 {
        UInt32(byte()) | UInt32(byte()) << 8 | UInt32(byte()) << 16 | UInt32(byte()) << 24
    }

    @_lifetime(copy self)
    mutating func take(_ n: Int) -> Span<UInt8> {
        let k = min(n, remaining)
        defer { offset += k }
        return bytes.extracting(offset..<(offset + k))
    }
}

/// Input: a request (kind, attribute set, UID or app identifier, limits),
/// then fragments, each prefixed by its length.
func fuzzDataSource(_ input: Span<UInt8>) {
    var r = Reader(input)
    var limits = AttributeLimits()
    limits[.title] = Int(r.byte()) + 1
    limits[.message] = Int(r.byte()) * 4 + 1
    var reassembler = DataSourceReassembler(limits: limits)
    let kind = r.byte()
    if kind & 1 == 0 {
        let set = NotificationAttributeSet(rawValue: max(1, r.byte()))
        reassembler.expect(.notificationAttributes(uid: r.le32(), attributes: set))
    } else {
        let app = AppIdentifier(r.take(Int(r.byte() % 40) + 1))
        reassembler.expect(.appAttributes(appIdentifier: app, attributes: .displayName))
    }
    var completions = 0
    while r.remaining > 0 {
        let fragment = r.take(Int(r.byte()) + 1)
        switch reassembler.feed(fragment) {
        case .complete(let trailing):
            precondition(trailing >= 0 && trailing < fragment.count)
            completions += 1
            for id in NotificationAttributeID.allCases {
                precondition(reassembler.value(id).count <= limits[id], "a value never exceeds its limit")
            }
            precondition(reassembler.displayName.count <= limits.displayNameBytes)
        case .dropped(let n, _):
            precondition(n == fragment.count)
        case .needMore:
            break
        }
        precondition(completions <= 1, "a response completes at most once per expect")
    }
}

/// Input: a sequence of operations on one session; invariants checked after each.
func fuzzSession(_ input: Span<UInt8>) {
    var config = SessionConfig()
    config.notificationCapacity = 8
    config.fetchQueueCapacity = 3
    config.actionQueueCapacity = 2
    config.appNameCacheCapacity = 2
    var session = Session(config: config)
    var out = ByteBuffer(capacity: 256)
    var r = Reader(input)
    var now = Instant.zero
    session.begin()
    while r.remaining > 0 {
        let op = r.byte() % 12
        let uid = UInt32(r.byte() % 10)
        switch op {
        case 0, 1:
            var pdu = InlineBytes<8>()
            pdu.append(r.byte() % 4)
            pdu.append(r.byte())
            pdu.append(r.byte() % 14)
            pdu.append(1)
            pdu.append(UInt8(uid))
            pdu.append(0); pdu.append(0); pdu.append(0)
            _ = session.receiveNotificationSource(pdu.span)
        case 2: _ = session.receiveNotificationSource(r.take(Int(r.byte() % 12)))
        case 3: _ = session.fetchAttributes(uid: uid, NotificationAttributeSet(rawValue: r.byte()))
        case 4: _ = session.performAction(uid: uid, r.byte() & 1 == 0 ? .positive : .negative)
        case 5: _ = session.fetchAppName(AppIdentifier(r.take(Int(r.byte() % 24))))
        case 6: _ = session.encodeNextCommand(into: &out, maxLength: r.byte() & 1 == 0 ? 20 : 182)
        case 7: _ = session.controlPointWriteAcknowledged(now: now)
        case 8: _ = session.controlPointWriteFailed(attErrorCode: r.byte())
        case 9: _ = session.receiveDataSource(r.take(Int(r.byte() % 64)))
        case 10:
            now = now.advanced(byMs: Int64(r.byte()) * 100)
            _ = session.checkTimeout(now: now)
            if let deadline = session.deadline { precondition(deadline > now, "an overdue command survives checkTimeout") }
        default:
            if r.byte() & 1 == 0 { session.end() } else { session.begin() }
            _ = session.probe()
        }
        precondition(session.table.count <= config.notificationCapacity)
        precondition(session.queuedCount <= config.fetchQueueCapacity + config.actionQueueCapacity)
        if !session.isActive { precondition(session.table.count == 0 && session.queuedCount == 0 && !session.hasCommandInFlight) }
    }
}

/// One PDU: decoding must stay inside the bytes; the bearer and our GATT
/// server must answer or drop it without breaking their bounds.
func fuzzATT(_ input: Span<UInt8>) {
    if let pdu = try? ATTPDU.decode(input) {
        switch pdu {
        case .findInformationResponse(_, let r), .findByTypeValueResponse(let r), .readByTypeResponse(_, let r),
            .readResponse(let r), .readBlobResponse(let r), .readByGroupTypeResponse(_, let r),
            .writeRequest(_, let r), .writeCommand(_, let r), .notification(_, let r), .indication(_, let r),
            .findByTypeValueRequest(_, _, _, let r), .prepareWriteRequest(_, _, let r), .prepareWriteResponse(_, _, let r):
            precondition(r.lowerBound >= 0 && r.upperBound <= input.count, "a range leaves the PDU")
        default: break
        }
    }
    switch fuzzBearer.receive(input, now: .zero) {
    case .request(let request):
        var out = ByteBuffer(capacity: 517)
        var server = GATTServer(deviceName: GATTServer.DeviceName("fuzz"))
        _ = server.respond(to: request, in: input, into: &out, mtu: fuzzBearer.mtu)
        precondition(out.count <= fuzzBearer.mtu, "a response longer than the MTU")
        fuzzBearer.respond(copyOf: out)
    default: break
    }
    var out = ByteBuffer(capacity: 517)
    while fuzzBearer.popOutgoing(into: &out) { precondition(out.count <= fuzzBearer.mtu) }
}

nonisolated(unsafe) var fuzzBearer = ATTBearer(config: ATTBearer.Config())

/// A sequence of PDUs (length-prefixed) and clock steps into a fresh phone
/// link: whatever the phone sends, the link keeps its bounds.
func fuzzPhoneLink(_ input: Span<UInt8>) {
    var config = PhoneLinkConfig()
    config.keepAliveQuietMs = 5_000
    var link = LinkDriver(config: config)
    var r = Reader(input)
    var now = Instant.zero
    var out = ByteBuffer(capacity: 517)
    link.linkUp(now: now)
    var steps = 0
    while r.remaining > 0 && steps < 256 {
        steps += 1
        let op = r.byte()
        switch op % 8 {
        case 0:
            now = now.advanced(byMs: Int64(r.byte()) * 250)
            link.advance(now: now)
        case 1:
            link.securityChanged(encrypted: r.byte() & 1 == 0, now: now)
        case 2:
            _ = link.performAction(uid: UInt32(r.byte() % 8), r.byte() & 1 == 0 ? .positive : .negative)
            _ = link.requestAttributes(uid: UInt32(r.byte() % 8), .title)
        case 3:
            // A new link, to a bonded phone or not (the bonded wait, the
            // permission backoff and the single raise start over).
            link.linkUp(now: now, bonded: r.byte() & 1 == 0)
        default:
            link.receive(r.take(Int(r.byte() % 64)), now: now)
        }
        link.flush(now: now)
        while link.popOutgoing(into: &out) { precondition(out.count > 0 && out.count <= link.bearer.mtu) }
        while link.nextEvent() != nil {}
        // As the runner does: a disconnection asked for ends the link.
        while let action = link.nextAction() {
            if case .disconnect(let reason) = action { link.linkDown(reason: reason, now: now) }
        }
        while link.nextEvent() != nil {}
        precondition(link.session.table.count <= config.session.notificationCapacity)
        precondition(link.session.queuedCount <= config.session.fetchQueueCapacity + config.session.actionQueueCapacity)
        if !link.session.isActive { precondition(link.session.table.count == 0) }
        // Trusted only once encrypted: no session, no live link before.
        if link.state == .live || link.session.isActive { precondition(link.isEncrypted, "a session on an unencrypted link") }
        // No phase without a way out: every one but live (and no link)
        // has a deadline.
        if link.state != .live && link.state != .disconnected {
            precondition(link.deadline != nil, "a bring-up phase without a deadline: \(link.state)")
        }
    }
}

let fuzzBoard = try! BoardConfig.parse("name sim\nchip sim\noutput led-notify\noutput led-call\noutput vibration\nbutton accept\nbutton reject\n")

/// Board and policy files: any text parses or fails with a line number
/// inside the file and a message; a board that parses is usable by a policy.
func fuzzConfig(_ input: Span<UInt8>) {
    let text = input.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    // Lines as the lexer counts them: by newline bytes (a Swift String
    // split would treat "\r\n" as one character).
    var lines = 1
    for i in input.indices where input[i] == 0x0A { lines += 1 }
    do throws(ConfigError) {
        let board = try BoardConfig.parse(text)
        precondition(!board.outputs.isEmpty && !board.buttons.isEmpty)
        _ = try? PolicyConfig.parse(text, board: board)
    } catch {
        precondition(error.line >= 0 && error.line <= lines + 1, "an error line outside the file")
        precondition(!error.message.isEmpty)
    }
    do throws(ConfigError) {
        let policy = try PolicyConfig.parse(text, board: fuzzBoard)
        for alert in policy.alerts.compactMap({ $0 }) {
            for o in alert.outputs + alert.important {
                precondition(o.output < fuzzBoard.outputs.count && o.pattern < policy.patterns.count)
            }
        }
        // The system's notices (built in or from a line) play on the
        // board's outputs and end by themselves.
        for notice in SystemNotice.all {
            for o in policy.feedback(for: notice) {
                precondition(o.output < fuzzBoard.outputs.count && o.pattern < policy.patterns.count)
                precondition(policy.patterns[o.pattern].pattern.totalMs != nil, "a notice that never ends")
            }
        }
    } catch {
        precondition(error.line >= 0 && error.line <= lines + 1)
    }
}

/// The firmware's console (`press <button> <ms>`), and the system's notice
/// file (another line of text from outside the firmware): a notice only
/// for exactly a keyword and at most one line end.
func fuzzConsole(_ input: Span<UInt8>) {
    // The oracle, by other means: the bytes as text equal to a keyword
    // plus "", "\n" or "\r\n" (Strings compared by their UTF-8 bytes).
    let bytes = input.withUnsafeBufferPointer { Array($0) }
    let expected = SystemNotice.all.first { notice in
        let keyword = Array("\(notice.keyword)".utf8)
        return [keyword, keyword + [0x0A], keyword + [0x0D, 0x0A]].contains(bytes)
    }
    switch SystemNotice.parse(input) {
    case .notice(let notice): precondition(notice == expected, "a notice from other bytes")
    case .refused(let refusal):
        precondition(expected == nil, "a notice refused")
        precondition((refusal == .tooLong) == (bytes.count > SystemNotice.maxFileBytes))
    }
    let text = input.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    switch SimLines.parseConsole(text, buttonNames: ["accept", "reject"]) {
    case .press(let button, let ms):
        precondition(button >= 0 && button < 2 && ms >= 1 && ms <= SimLines.maxPressMs)
    case .nothing, .rejected:
        break
    }
}

/// The phone's scenario language (its stdin commands), line by line:
/// every line parses or fails with its own line number.
func fuzzScenario(_ input: Span<UInt8>) {
    var start = 0
    var line = 1
    for i in 0...input.count where i == input.count || input[i] == 0x0A {
        do throws(ScenarioError) {
            _ = try ScenarioParser.parse(input.extracting(start..<i), lineNumber: line)
        } catch {
            precondition(error.line == line, "an error naming another line")
        }
        start = i + 1
        line += 1
    }
}
