// SPDX-License-Identifier: Apache-2.0
// The events stream is a contract for scripts (docs/events.md): this test
// pins it. One sample of every event the firmware can report (every case
// of FirmwareEvent, LinkEvent and ControllerEvent, which the exhaustive
// switch below forces a new case to join) goes through the real Reporter
// into a real file, and the file must equal Tests/AppTests/Golden/events.jsonl
// byte for byte. A change to the format is a deliberate change to that file
// and to docs/events.md: run the suite with WRISTLINK_UPDATE_GOLDEN=1 to
// rewrite the file, then read its diff. The kinds in the file and the kinds
// docs/events.md's table lists must be the same.

import AMS
import ANCS
import App
import Bounded
import CTS
import Config
import Firmware
import Glibc
import Mgmt
import PlatformLinux
import Testing
import TestSupport

/// Every case of the events the Reporter writes, by name. The switch has no
/// default: a new case does not compile until it is named here and given
/// a sample in `EventsGoldenTests.samples`.
private func caseName(_ event: FirmwareEvent) -> String {
    switch event {
    case .link(let link):
        switch link {
        case .connected: "link.connected"
        case .secured: "link.secured"
        case .mtu: "link.mtu"
        case .discovered: "link.discovered"
        case .handles: "link.handles"
        case .ancsAbsent: "link.ancsAbsent"
        case .subscribed: "link.subscribed"
        case .permissionWaiting: "link.permissionWaiting"
        case .controlPointNotPermitted: "link.controlPointNotPermitted"
        case .controlPointPermitted: "link.controlPointPermitted"
        case .ended: "link.ended"
        case .notification: "link.notification"
        case .command(let result):
            switch result {
            case .actionDelivered: "link.command.actionDelivered"
            case .attributesReceived: "link.command.attributesReceived"
            case .appNameReceived: "link.command.appNameReceived"
            case .probeAnswered: "link.command.probeAnswered"
            case .probeFailed: "link.command.probeFailed"
            case .failed: "link.command.failed"
            }
        case .drop: "link.drop"
        case .error: "link.error"
        case .media: "link.media"
        case .time: "link.time"
        }
    case .controller(let controller):
        switch controller {
        case .advertising: "controller.advertising"
        case .controllerGone: "controller.controllerGone"
        case .setupFailed: "controller.setupFailed"
        case .pairingMode: "controller.pairingMode"
        case .consentRequested: "controller.consentRequested"
        case .consent: "controller.consent"
        case .bondStored: "controller.bondStored"
        case .bondIgnored: "controller.bondIgnored"
        case .connected: "controller.connected"
        case .reconnected: "controller.reconnected"
        case .refusedUnbonded: "controller.refusedUnbonded"
        case .disconnected: "controller.disconnected"
        case .pairingFailed: "controller.pairingFailed"
        case .staleBond: "controller.staleBond"
        case .fastAdvertisingSkipped: "controller.fastAdvertisingSkipped"
        case .dropped: "controller.dropped"
        }
    case .line: "line"
    case .button: "button"
    case .action: "action"
    case .silenced: "silenced"
    case .ringLimited: "ringLimited"
    case .media: "media"
    case .quietHours: "quietHours"
    case .phoneLost: "phoneLost"
    case .battery: "battery"
    case .rejected: "rejected"
    case .notice: "notice"
    case .stopping: "stopping"
    case .bondsNotSaved: "bondsNotSaved"
    }
}

/// The names `caseName` can return: kept beside the switch.
private let allCaseNames: Set<String> = [
    "link.connected", "link.secured", "link.mtu", "link.discovered", "link.handles", "link.ancsAbsent", "link.subscribed",
    "link.permissionWaiting", "link.controlPointNotPermitted", "link.controlPointPermitted", "link.ended",
    "link.notification", "link.command.actionDelivered", "link.command.attributesReceived",
    "link.command.appNameReceived", "link.command.probeAnswered", "link.command.probeFailed", "link.command.failed",
    "link.drop", "link.error", "link.media", "link.time",
    "controller.advertising", "controller.controllerGone", "controller.setupFailed", "controller.pairingMode",
    "controller.consentRequested", "controller.consent", "controller.bondStored", "controller.bondIgnored",
    "controller.connected", "controller.reconnected", "controller.refusedUnbonded", "controller.disconnected",
    "controller.pairingFailed", "controller.staleBond", "controller.fastAdvertisingSkipped", "controller.dropped",
    "line", "button", "action", "silenced", "ringLimited", "media", "quietHours", "phoneLost", "battery", "rejected",
    "notice", "stopping", "bondsNotSaved",
]

/// A Notification Source PDU (ANCS: EventID, EventFlags, CategoryID, CategoryCount, NotificationUID LE).
private func nsPDU(_ event: UInt8, flags: UInt8, category: UInt8, count: UInt8, uid: UInt32) -> [UInt8] {
    [event, flags, category, count, UInt8(uid & 0xFF), UInt8(uid >> 8 & 0xFF), UInt8(uid >> 16 & 0xFF), UInt8(uid >> 24)]
}

@Suite("The events stream's golden file")
struct EventsGoldenTests {
    static let goldenPath = "Tests/AppTests/Golden/events.jsonl"

    /// The session the samples are reported against: an incoming call (UID
    /// 7) and an email (UID 9) from the phone's Notification Source, the
    /// email's title and message fetched and answered on the Data Source,
    /// and then Mail's display name, all as bytes. Events that write no line
    /// (a delivered action is reported as its `action`, a keep-alive probe's
    /// answer, a refused fetch, an AMS command's end reported as `media`, a
    /// connection and a disconnection the link reports) are in the samples
    /// too: the golden file pins that they stay silent.
    static func session() -> Session {
        var session = Session(config: SessionConfig())
        session.begin()
        _ = session.receiveNotificationSource(nsPDU(0, flags: 0x18, category: 1, count: 1, uid: 7).span)
        _ = session.receiveNotificationSource(nsPDU(0, flags: 0x02, category: 6, count: 1, uid: 9).span)
        var out = ByteBuffer(capacity: 512)
        _ = session.fetchAttributes(uid: 9, [.title, .message])
        _ = session.encodeNextCommand(into: &out, maxLength: 512)
        _ = session.controlPointWriteAcknowledged(now: Instant(ms: 0))
        // CommandID 0, UID 9, Title "Lunch?", Message "At noon" (each: ID, length LE, bytes).
        let response: [UInt8] = [0x00, 0x09, 0x00, 0x00, 0x00]
            + [0x01, 0x06, 0x00] + Array("Lunch?".utf8)
            + [0x03, 0x07, 0x00] + Array("At noon".utf8)
        _ = session.receiveDataSource(response.span)
        // Get App Attributes for Mail: CommandID 1, the identifier NUL-ended, DisplayName (0) "Mail".
        _ = session.fetchAppName(AppIdentifier("com.apple.mobilemail"))
        _ = session.encodeNextCommand(into: &out, maxLength: 512)
        _ = session.controlPointWriteAcknowledged(now: Instant(ms: 0))
        let appResponse: [UInt8] = [0x01] + Array("com.apple.mobilemail".utf8) + [0x00, 0x00, 0x04, 0x00] + Array("Mail".utf8)
        _ = session.receiveDataSource(appResponse.span)
        return session
    }

    /// One sample per case (and a few variants whose fields differ), in
    /// the order they are written; each at its own t_ms.
    static var samples: [FirmwareEvent] {
        let call = NotificationRecord.sample(uid: 7, category: .incomingCall, flags: [.positiveAction, .negativeAction], count: 1)
        let mail = NotificationRecord.sample(uid: 9, category: .email, flags: [.important], count: 1)
        let mailApp = AppIdentifier("com.apple.mobilemail")
        var clock = PhoneClock()
        if let local = CivilDateTime(year: 2026, month: 12, day: 3, hour: 7, minute: 30, second: 5) {
            _ = clock.learn(CurrentTime(local: local), at: Instant(ms: 0))
        }
        clock.learn(LocalTimeInformation(timeZoneMin: 60, dstMin: 0))
        return [
            .controller(.advertising),
            .controller(.pairingMode(on: true, reason: .buttons)),
            .controller(.consentRequested),
            .controller(.consent(granted: true, reason: .button)),
            .controller(.bondStored),
            .controller(.bondIgnored(reason: .noConsent)),
            .controller(.staleBond(replacing: true)),
            .controller(.pairingFailed(status: .authenticationFailed)),
            .controller(.refusedUnbonded),
            .controller(.connected(bonded: true, address: DeviceAddress(BDAddress(0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56), .lePublic))),
            .controller(.reconnected(afterMs: 4_250)),
            .link(.connected),
            .link(.mtu(185)),
            .link(.secured),
            .link(.handles(.cached)),
            .link(.handles(.stale(.hashChanged))),
            .link(.discovered),
            .link(.ancsAbsent),
            .link(.permissionWaiting(retryInMs: 5_000)),
            .link(.controlPointNotPermitted(inARow: 2)),
            .link(.controlPointPermitted),
            .link(.subscribed),
            .link(.notification(.added(call, evicted: nil))),
            .line(index: 0, on: true),
            .link(.notification(.modified(mail, previous: mail))),
            .link(.command(.attributesReceived(uid: 9))),
            .link(.command(.appNameReceived(mailApp))),
            .link(.command(.probeAnswered)),
            .link(.command(.probeFailed(.timedOut))),
            .link(.command(.failed(.getNotificationAttributes(uid: 9, attributes: .title), .ancs(.invalidParameter)))),
            .button(index: 0, gesture: .short),
            .action(uid: 7, action: .positive, result: .queued),
            .link(.command(.actionDelivered(uid: 7, action: .positive))),
            .action(uid: 7, action: .positive, result: .sent),
            .action(uid: 0, action: .negative, result: .nothingToDo),
            .silenced(uid: 7),
            .silenced(uid: nil),
            .ringLimited(uid: 7),
            .link(.notification(.removed(call))),
            .line(index: 0, on: false),
            .link(.media(.playback(.playing))),
            .link(.media(.noPlayer)),
            .link(.media(.absent)),
            .link(.media(.commandEnded(.togglePlayPause, .sent))),
            .media(command: .nextTrack, result: .notAvailable),
            .link(.time(.learned(clock, jumpS: nil))),
            .link(.time(.unknown(.noCTS))),
            .quietHours(.on),
            .quietHours(.timeUnknown),
            .phoneLost(true),
            .phoneLost(false),
            .battery(.level(percent: 80, status: .discharging, estimated: false)),
            .battery(.level(percent: 55, status: .notCharging, estimated: true)),
            .battery(.low(percent: 15)),
            .battery(.critical(percent: 5)),
            .battery(.gone),
            .link(.drop(.dataSource(.uidMismatch))),
            .link(.drop(.notificationSource(.wrongLength(7)))),
            .link(.error(.encryptionFailed(.timeout))),
            .link(.error(.companionWriteFailed(.remoteCommand, code: 0x03))),
            .link(.ended(reason: .notSecured)),
            .controller(.disconnected(reason: 0x13)),
            .controller(.fastAdvertisingSkipped),
            .controller(.dropped(.mgmtQueueFull)),
            .controller(.setupFailed(step: .powerOff, failure: .noReply)),
            .controller(.controllerGone),
            .controller(.pairingMode(on: false, reason: .timeout)),
            .rejected(what: "press", reason: "unknown-button"),
            .rejected(what: "notice", reason: "unknown"),
            .notice(.updateDone),
            .notice(.updateFailed),
            .bondsNotSaved(retryInMs: 1_000),
            .stopping(reason: "signal"),
        ]
    }

    /// The stream the samples give: hello, then one line each, t_ms 10 apart.
    static func stream() throws -> String {
        let dir = makeScratchDirectory("golden")
        defer { removeTree(dir) }
        let board = try BoardConfig.parse(readRepositoryFile("board/sim/board.conf"))
        let session = session()
        do {
            var reporter = Reporter(board: board, events: try OutputFile(path: dir + "/events"), start: Instant(ms: 1_000))
            for (i, event) in samples.enumerated() {
                reporter.record(event, session: session, now: Instant(ms: 1_000 + 10 * Int64(i + 1)))
            }
        }
        var text = (try? ProcessControl.readFile(dir + "/events")) ?? ""
        // The hello line carries this build's version and revision: pinned as placeholders.
        if let end = text.firstIndex(of: "\n") {
            let hello = String(text[..<end])
            let pinned = hello
                .replacingFirst("\"version\":\"\(BuildInfo.version)\"", with: "\"version\":\"VERSION\"")
                .replacingFirst("\"revision\":\"\(BuildInfo.revision)\"", with: "\"revision\":\"REVISION\"")
            text = pinned + String(text[end...])
        }
        return text
    }

    @Test("every event case has a sample: a new case must join the golden file")
    func everyCaseSampled() {
        let sampled = Set(Self.samples.map(caseName))
        #expect(allCaseNames.subtracting(sampled).sorted() == [], "cases without a sample")
        #expect(sampled.subtracting(allCaseNames).sorted() == [], "allCaseNames is missing a case")
    }

    @Test("the stream's bytes equal the checked-in golden file (WRISTLINK_UPDATE_GOLDEN=1 rewrites it)")
    func streamMatchesGolden() throws {
        let text = try Self.stream()
        if getenv("WRISTLINK_UPDATE_GOLDEN") != nil {
            writeRepositoryFile(Self.goldenPath, text)
            return
        }
        let golden = readRepositoryFile(Self.goldenPath)
        let got = text.split(separator: "\n", omittingEmptySubsequences: false)
        let want = golden.split(separator: "\n", omittingEmptySubsequences: false)
        for i in 0..<max(got.count, want.count) {
            let g = i < got.count ? String(got[i]) : "<none>"
            let w = i < want.count ? String(want[i]) : "<none>"
            #expect(g == w, "line \(i + 1)")
        }
    }

    @Test("the notification contents in the stream are the attributes event's only: no other line carries a title or message")
    func contentsOnlyInAttributes() throws {
        for line in try Self.stream().split(separator: "\n") where line.contains("Lunch?") || line.contains("At noon") {
            #expect(line.contains("\"kind\":\"attributes\""), "\(line)")
        }
    }

    @Test("docs/events.md's table lists exactly the kinds the golden file has")
    func docsListTheKinds() {
        func kinds(_ text: String, prefix: String) -> Set<String> {
            var found = Set<String>()
            for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
                let rest = line.dropFirst(prefix.count)
                if let end = rest.firstIndex(of: prefix.last == "`" ? "`" : "\"") { found.insert(String(rest[..<end])) }
            }
            return found
        }
        let golden = readRepositoryFile(Self.goldenPath)
        var inFile = Set<String>()
        for line in golden.split(separator: "\n") {
            let parts = line.split(separator: "\"kind\":\"", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let end = parts[1].firstIndex(of: "\"") else { continue }
            inFile.insert(String(parts[1][..<end]))
        }
        let doc = readRepositoryFile("docs/events.md")
        let table = doc.split(separator: "## Kinds", maxSplits: 1, omittingEmptySubsequences: false)
        #expect(table.count == 2, "docs/events.md has a '## Kinds' section")
        let documented = kinds(String(table.last ?? ""), prefix: "| `")
        #expect(inFile.subtracting(documented).sorted() == [], "kinds written but not in docs/events.md")
        #expect(documented.subtracting(inFile).sorted() == [], "kinds documented but not in the golden file")
    }
}

/// Writes a file in the repository (the golden file's update).
private func writeRepositoryFile(_ relativePath: String, _ text: String) {
    let path = repositoryRoot + "/" + relativePath
    guard let file = fopen(path, "w") else { preconditionFailure("cannot write \(path): errno \(errno)") }
    defer { fclose(file) }
    _ = Array(text.utf8).withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
}

extension NotificationRecord {
    fileprivate static func sample(uid: UInt32, category: CategoryID, flags: EventFlags, count: UInt8) -> NotificationRecord {
        NotificationRecord(
            uid: uid, category: category, flags: flags, categoryCount: count, lastEvent: .added, sequence: UInt64(uid),
            attributesKnown: [])
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        let parts = split(separator: target, maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return self }
        return String(parts[0]) + replacement + String(parts[1])
    }
}
