// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import PhoneSim
import Testing
import TestSupport

func parse(_ line: String, lineNumber: Int = 1) throws(ScenarioError) -> ScenarioCommand? {
    let bytes = Array(line.utf8)
    return try ScenarioParser.parse(bytes.span, lineNumber: lineNumber)
}

func parseError(_ line: String) -> ScenarioError? {
    do {
        _ = try parse(line)
        return nil
    } catch {
        return error
    }
}

func content(app: String = "", title: String = "", subtitle: String = "", message: String = "", date: String = "20260101T120000",
             positive: String = "", negative: String = "") -> NotificationContent {
    var c = NotificationContent()
    c.appIdentifier = AppIdentifier(app)
    c.title = TitleBytes(title)
    c.subtitle = SubtitleBytes(subtitle)
    c.message = MessageBytes(message)
    c.date = DateBytes(date)
    c.positiveLabel = LabelBytes(positive)
    c.negativeLabel = LabelBytes(negative)
    return c
}

@Suite("Scenario language: parsing")
struct ScenarioParserTests {
    @Test("existing and notify take a category and key=value options, quoted or bare")
    func notificationLines() throws {
        #expect(try parse("existing Social uid=0 app=com.apple.MobileSMS title=\"Alice\" message=\"Lunch at noon?\" date=20251231T235959")
            == .existing(NotificationSpec(
                uid: 0, category: .social,
                content: content(app: "com.apple.MobileSMS", title: "Alice", message: "Lunch at noon?", date: "20251231T235959"))))
        #expect(try parse("notify IncomingCall uid=1 app=x title=Bob subtitle=\"mobile\" flags=important,positive,negative positive-label=Yes negative-label=\"No way\"")
            == .notify(NotificationSpec(
                uid: 1, category: .incomingCall, flags: [.important, .positiveAction, .negativeAction],
                content: content(app: "x", title: "Bob", subtitle: "mobile", positive: "Yes", negative: "No way"))))
    }

    @Test("shortcuts: call, message and email fill in the app, category, actions and labels")
    func shortcuts() throws {
        #expect(try parse("call \"Bob\"") == .notify(NotificationSpec(
            category: .incomingCall, flags: [.positiveAction, .negativeAction],
            content: content(app: "com.apple.mobilephone", title: "Bob", message: "Incoming Call", positive: "Answer", negative: "Decline"))))
        #expect(try parse("message \"Alice\" \"Lunch?\"") == .notify(NotificationSpec(
            category: .social, flags: [.negativeAction],
            content: content(app: "com.apple.MobileSMS", title: "Alice", message: "Lunch?", negative: "Clear"))))
        #expect(try parse("email Carol \"Quarterly report\" message=\"See attached\"") == .notify(NotificationSpec(
            category: .email, flags: [.negativeAction],
            content: content(app: "com.apple.mobilemail", title: "Carol", subtitle: "Quarterly report", message: "See attached", negative: "Clear"))))
        #expect(try parse("call Bob uid=7 flags=positive") == .notify(NotificationSpec(
            uid: 7, category: .incomingCall, flags: [.positiveAction],
            content: content(app: "com.apple.mobilephone", title: "Bob", message: "Incoming Call", positive: "Answer", negative: "Decline"))))
    }

    @Test("the other commands, case-insensitive, numbers in decimal or hex")
    func otherCommands() throws {
        #expect(try parse("remove 7") == .remove(uid: 7))
        #expect(try parse("app com.example.chat \"Chat\"") == .app(AppIdentifier("com.example.chat"), AppDisplayName("Chat")))
        #expect(try parse("sleep 250") == .sleep(ms: 250))
        #expect(try parse("wait-subscribed") == .waitSubscribed(timeoutMs: nil))
        #expect(try parse("wait-subscribed 60000") == .waitSubscribed(timeoutMs: 60_000))
        #expect(try parse("wait-action 0x10 5000") == .waitAction(uid: 16, timeoutMs: 5_000))
        #expect(try parse("error 0xA3") == .error(code: 0xA3, count: 1))
        #expect(try parse("error 163 3") == .error(code: 0xA3, count: 3))
        #expect(try parse("mtu 23") == .mtu(23))
        #expect(try parse("MTU 0x205") == .mtu(517))
        #expect(try parse("Service-Changed") == .serviceChanged)
        #expect(try parse("remove-ancs") == .removeANCS)
        #expect(try parse("add-ancs") == .addANCS)
        #expect(try parse("connect") == .connect)
        #expect(try parse("disconnect") == .disconnect)
        #expect(try parse("QUIT") == .quit)
        #expect(try parse("NOTIFY incomingcall uid=1") == .notify(NotificationSpec(uid: 1, category: .incomingCall, content: content())))
        #expect(try parse("notify 13 uid=1") == .notify(NotificationSpec(uid: 1, category: CategoryID(rawValue: 13), content: content())))
    }

    @Test("the quirk commands: share, hide-ancs, encrypt-delay, drop-subscription; a wrong word is refused where it stands")
    func quirkCommands() throws {
        #expect(try parse("share off") == .share(refusal: 0x08))
        #expect(try parse("share off 0x03") == .share(refusal: 0x03))
        #expect(try parse("Share ON") == .share(refusal: 0))
        #expect(try parse("hide-ancs encrypted") == .hideANCS(.untilEncrypted))
        #expect(try parse("hide-ancs bonded") == .hideANCS(.untilBonded))
        #expect(try parse("hide-ancs off") == .hideANCS(.never))
        #expect(try parse("encrypt-delay 300") == .encryptDelay(ms: 300))
        #expect(try parse("drop-subscription") == .dropSubscription)
        #expect(parseError("share maybe") == ScenarioError(line: 1, column: 7, kind: .unknownWord))
        #expect(parseError("share off 0") == ScenarioError(line: 1, column: 11, kind: .numberOutOfRange))
        #expect(parseError("share on 0x08") == ScenarioError(line: 1, column: 10, kind: .unexpectedArgument))
        #expect(parseError("hide-ancs always") == ScenarioError(line: 1, column: 11, kind: .unknownWord))
        #expect(parseError("encrypt-delay") == ScenarioError(line: 1, column: 1, kind: .missingArgument(what: "ms")))
        #expect(parseError("drop-subscription now") == ScenarioError(line: 1, column: 19, kind: .unexpectedArgument))
    }

    @Test("blank lines and comments are nothing; a comment may follow a command; escapes work in quotes")
    func commentsAndEscapes() throws {
        #expect(try parse("") == nil)
        #expect(try parse("   \t ") == nil)
        #expect(try parse("# a comment") == nil)
        #expect(try parse("remove 3 # gone") == .remove(uid: 3))
        #expect(try parse("message \"Al\" \"say \\\"hi\\\"\\n\\\\ok\"")
            == .notify(NotificationSpec(category: .social, flags: [.negativeAction],
                content: content(app: "com.apple.MobileSMS", title: "Al", message: "say \"hi\"\n\\ok", negative: "Clear"))))
        #expect(try parse("message Al \"a # not a comment\"") != nil)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var line: String
        var column: Int
        var kind: ScenarioError.Kind
        var testDescription: String { line }
    }

    @Test("a bad line is refused with its column and the reason", arguments: [
        Bad(line: "frobnicate 1", column: 1, kind: .unknownCommand),
        Bad(line: "\"notify\" Social", column: 1, kind: .unknownCommand),
        Bad(line: "notify Gossip uid=1", column: 8, kind: .unknownCategory),
        Bad(line: "notify", column: 1, kind: .missingArgument(what: "category")),
        Bad(line: "notify Social colour=red", column: 15, kind: .unknownKey),
        Bad(line: "notify Social uid=1 uid=2", column: 21, kind: .duplicateKey),
        Bad(line: "notify Social uid=x", column: 15, kind: .badNumber),
        Bad(line: "notify Social uid=4294967296", column: 15, kind: .numberOutOfRange),
        Bad(line: "notify Social title=\"open", column: 21, kind: .unterminatedQuote),
        Bad(line: "notify Social title=", column: 21, kind: .missingValue),
        Bad(line: "notify Social title=\"a\"b", column: 24, kind: .expectedSpace),
        Bad(line: "notify Social =x", column: 15, kind: .expectedSpace),
        Bad(line: "notify Social date=2026-01-01", column: 15, kind: .badDate),
        Bad(line: "notify Social flags=important,loud", column: 31, kind: .unknownFlag),
        Bad(line: "notify Social extra", column: 15, kind: .unexpectedArgument),
        Bad(line: "message \"Alice\"", column: 9, kind: .missingArgument(what: "text")),
        Bad(line: "call \"Bob\\x\"", column: 10, kind: .badEscape),
        Bad(line: "remove 1 2", column: 10, kind: .unexpectedArgument),
        Bad(line: "sleep 10 extra=1", column: 10, kind: .unexpectedArgument),
        Bad(line: "sleep 86400001", column: 7, kind: .numberOutOfRange),
        Bad(line: "error 0x1FF", column: 7, kind: .numberOutOfRange),
        Bad(line: "error 0xA3 0", column: 12, kind: .numberOutOfRange),
        Bad(line: "quit now", column: 6, kind: .unexpectedArgument),
        Bad(line: "mtu 22", column: 5, kind: .numberOutOfRange),
        Bad(line: "mtu 518", column: 5, kind: .numberOutOfRange),
        Bad(line: "mtu", column: 1, kind: .missingArgument(what: "mtu")),
        Bad(line: String(repeating: "a ", count: 25), column: 49, kind: .tooManyArguments),
    ])
    func badLines(_ bad: Bad) {
        #expect(parseError(bad.line) == ScenarioError(line: 1, column: bad.column, kind: bad.kind))
    }

    @Test("a value longer than its field is cut and flagged, not refused")
    func overlongValueIsCut() throws {
        guard case .notify(let spec)? = try parse("notify Social title=\"\(String(repeating: "x", count: 200))\"") else {
            Issue.record("not a notify")
            return
        }
        #expect(spec.content.title.count == 128)
        #expect(spec.content.truncatedFields == [.title])
    }

    @Test("an error prints as \"line L, column C: reason\"")
    func errorText() {
        var out = ByteBuffer(capacity: 100)
        ScenarioError(line: 3, column: 8, kind: .unknownCategory).write(into: &out)
        #expect(String(decoding: out.toArray(), as: UTF8.self) == "line 3, column 8: unknown category")
        ScenarioError(line: 2, column: 9, kind: .missingArgument(what: "text")).write(into: &out)
        #expect(String(decoding: out.toArray(), as: UTF8.self) == "line 2, column 9: missing argument <text>")
    }
}

@Suite("Scenario player: steps in order, on the virtual clock")
struct ScenarioPlayerTests {
    func phone() -> PhoneCore {
        var p = PhoneCore(config: .serverOnly())
        p.linkUp(now: Instant(ms: 0))
        _ = p.takeEvents()
        return p
    }

    @Test("loading a script with a bad line reports the line and runs nothing")
    func badScriptRunsNothing() {
        var p = phone()
        let script = """
            existing Social uid=1
            # fine so far

            notify Gossip uid=2
            """
        #expect(throws: ScenarioError(line: 4, column: 8, kind: .unknownCategory)) { try p.load(script) }
        #expect(p.notificationCount == 0)
        #expect(p.isScenarioIdle == true)
    }

    @Test("lines run at once until one blocks; sleep blocks for exactly its ms")
    func sleepBlocks() throws {
        var p = phone()
        try p.load("existing Social uid=1\nsleep 250\nexisting Social uid=2\n", now: Instant(ms: 1_000))
        #expect(p.notificationCount == 1)
        #expect(p.deadline == Instant(ms: 1_250))
        p.advance(now: Instant(ms: 1_249))
        #expect(p.notificationCount == 1)
        p.advance(now: Instant(ms: 1_250))
        #expect(p.notificationCount == 2)
        #expect(p.takeEvents() == [
            .stepDone(line: 1, command: "existing"), .stepDone(line: 2, command: "sleep"), .stepDone(line: 3, command: "existing"),
            .scenarioFinished(ok: true),
        ])
        #expect(p.deadline == nil)
    }

    @Test("a wait that times out fails its step, drops the rest and ends the script")
    func waitTimesOut() throws {
        var p = phone()
        try p.load("wait-subscribed 1000\nexisting Social uid=1")
        p.advance(now: Instant(ms: 1_000))
        #expect(p.takeEvents() == [.stepFailed(line: 1, command: "wait-subscribed", reason: "timeout"), .scenarioFinished(ok: false)])
        #expect(p.notificationCount == 0)
        #expect(p.isScenarioIdle == true)
    }

    @Test("wait-subscribed ends when the replay has been pulled: the deadline says run now")
    func waitSubscribedAfterReplay() throws {
        var p = phone()
        try p.load("existing Social uid=1\nwait-subscribed\nnotify Social uid=2")
        #expect(p.deadline == Instant(ms: 30_000))
        _ = p.exchange("12 13 00 01 00", now: Instant(ms: 5))
        #expect(p.deadline == Instant(ms: 5), "the replay went out: the step can finish now")
        p.advance(now: Instant(ms: 5))
        #expect(p.drain() == ["1B 12 00 00 00 04 02 02 00 00 00"])
    }

    @Test("typed commands queue behind a blocking step and are numbered on their own")
    func typedCommandsQueue() throws {
        var p = phone()
        try p.load("sleep 100")
        try p.run("existing Social uid=1")
        #expect(p.notificationCount == 0)
        #expect(throws: ScenarioError(line: 2, column: 1, kind: .unknownCommand)) { try p.run("bogus") }
        p.advance(now: Instant(ms: 100))
        #expect(p.notificationCount == 1)
        #expect(p.takeEvents().contains(.stepDone(line: 1, command: "existing")))
    }

    @Test("disconnect, connect and quit are actions for the platform")
    func actions() throws {
        var p = phone()
        try p.run("disconnect")
        #expect(p.takeActions() == [.disconnect(reason: "scenario")])
        #expect(p.isConnected == false)
        #expect(p.takeEvents().contains(.disconnected(reason: "scenario")))
        try p.run("connect")
        #expect(p.takeActions() == [.connect])
        try p.load("quit\nexisting Social uid=1")
        #expect(p.takeActions() == [.quit])
        #expect(p.notificationCount == 0)
        #expect(p.takeEvents().last == .scenarioFinished(ok: true))
    }

    @Test("a cut value and a failed remove are reported as events")
    func reportedProblems() throws {
        var p = phone()
        try p.run("notify Social uid=1 message=\"\(String(repeating: "m", count: 600))\"")
        #expect(p.takeEvents().contains(.valueTruncated(line: 1, field: "Message")))
        #expect(p.content(uid: 1)?.message.count == 512)
        try p.run("remove 99")
        #expect(p.takeEvents() == [.stepFailed(line: 2, command: "remove", reason: "unknown-uid")])
    }

    @Test("wait-action counts an action performed since the UID was posted")
    func waitActionSeesEarlierAction() throws {
        var p = phone()
        _ = p.subscribeANCS()
        try p.run("call Bob uid=4")
        _ = p.exchange("12 15 00 02 04 00 00 00 00")
        try p.run("wait-action 4 1000")
        #expect(p.takeEvents().contains(.stepDone(line: 2, command: "wait-action")))
    }

    @Test("events read as one line of text each")
    func eventText() {
        #expect(PhoneEvent.notificationSent(NotificationSourceEvent(
            eventID: .added, flags: [.important, .positiveAction], category: .incomingCall, categoryCount: 1, uid: 7)).text
            == "ns-sent added flags=Important,PositiveAction category=IncomingCall count=1 uid=7")
        #expect(PhoneEvent.controlPointWrite(ControlPointBytes(hex("02 07 00 00 00 00").span)).text == "cp-write 02 07 00 00 00 00")
        #expect(PhoneEvent.errorAnswered(handle: 0x15, code: 0xA2, reason: "unknown-uid").text
            == "error-answered handle=0x0015 code=0xA2 reason=unknown-uid")
        #expect(PhoneEvent.stepFailed(line: 3, command: "wait-action", reason: "timeout").text == "step-failed line=3 wait-action reason=timeout")
        #expect(PhoneEvent.writePrepared(offset: 18, byteCount: 6).text == "cp-prepare offset=18 bytes=6")
        #expect(PhoneEvent.writeExecuted(write: true, byteCount: 24).text == "cp-execute write bytes=24")
        #expect(PhoneEvent.writeExecuted(write: false, byteCount: 18).text == "cp-execute cancel bytes=18")
    }
}
