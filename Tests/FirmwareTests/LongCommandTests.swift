// SPDX-License-Identifier: Apache-2.0
import ANCS
import ATT
import Bounded
import Firmware
import Testing
import TestSupport

/// The wearable's PhoneLink alone, fed scripted PDUs (the Script's database:
/// Service Changed 0x03, ANCS 0x0B–0x14, Control Point 0x10, Data Source
/// 0x12), settled after each as the Runner does.
struct LinkRig: ~Copyable {
    var link = LinkDriver(config: scriptedLinkConfig())
    var now = Instant(ms: 1_000)
    var events: [LinkEvent] = []
    var actions: [LinkAction] = []
    /// A raise asked for on an unencrypted link is answered "encrypted" at
    /// once, as the UNIX link (and a kernel with the bond's key) does.
    /// False: the test answers, or the link never encrypts.
    var answersRaises = true

    mutating func settle() {
        for _ in 0..<4 {
            while let e = link.nextEvent() { events.append(e) }
            link.flush(now: now)
            while let a = link.nextAction() {
                actions.append(a)
                if answersRaises, case .raiseSecurity = a, !link.isEncrypted { link.securityChanged(encrypted: true, now: now) }
            }
        }
    }

    /// Moves the clock on by `ms` and lets the link's timers run.
    mutating func advance(ms: Int64) {
        now = now.advanced(byMs: ms)
        link.advance(now: now)
        settle()
    }

    mutating func sent() -> [String] {
        var out = ByteBuffer(capacity: 600)
        var all: [String] = []
        while link.popOutgoing(into: &out) { all.append(out.hexString) }
        return all
    }

    mutating func run(_ script: [Step], sourceLocation: SourceLocation = #_sourceLocation) {
        var pending: [String] = []
        for (i, step) in script.enumerated() {
            switch step {
            case .phone(let text):
                let bytes = hex(text)
                link.receive(bytes.span, now: now)
                settle()
            case .firmware(let expected):
                pending += sent()
                let got = pending.isEmpty ? nil : pending.removeFirst()
                #expect(got == expected, "step \(i)", sourceLocation: sourceLocation)
                if got != expected { return }
            }
        }
        #expect(pending + sent() == [], "nothing else sent", sourceLocation: sourceLocation)
    }

    var results: [CommandResult] { events.compactMap { if case .command(let r) = $0 { r } else { nil } } }
}

/// ANCS discovery at MTU 23: one 128-bit characteristic per Read By Type.
let ancsDiscoveryAtMTU23: [Step] = [
    .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("07 0B 00 14 00"),
    .firmware("08 0C 00 14 00 03 28"), .phone("09 15 0C 00 10 0D 00 " + Wire.ns),
    .firmware("08 0D 00 14 00 03 28"), .phone("09 15 0F 00 08 10 00 " + Wire.cp),
    .firmware("08 10 00 14 00 03 28"), .phone("09 15 11 00 10 12 00 " + Wire.ds),
    .firmware("08 12 00 14 00 03 28"), .phone("01 08 12 00 0A"),
    .firmware("04 0E 00 0E 00"), .phone("05 01 0E 00 02 29"),
    .firmware("04 13 00 14 00"), .phone("05 01 13 00 02 29"),
]

/// Get App Attributes (display name) for com.apple.mobilephone at MTU 23,
/// on the Script's Control Point (0x10): 18 bytes at 0, then 6 at 18.
let longPart1 = "16 10 00 00 00 01 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69 6C 65 70"
let longPart2 = "16 10 00 12 00 68 6F 6E 65 00 00"
func echoed(_ request: String) -> String { "17" + request.dropFirst(2) }
/// Its Data Source answer, "Phone", in two notifications.
let phoneNameFragments = [
    "1B 12 00 01 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69 6C 65 70 68 6F",
    "1B 12 00 6E 65 00 00 05 00 50 68 6F 6E 65",
]

@Suite("Long Control Point commands through the wearable's PhoneLink at MTU 23")
struct LongCommandTests {
    /// A bring-up that goes otherwise is an issue of the calling test (at
    /// its line), not a precondition that would end the test process.
    func liveAtMTU23(sourceLocation: SourceLocation = #_sourceLocation) -> LinkRig {
        var rig = LinkRig()
        rig.link.linkUp(now: rig.now)
        rig.settle()
        rig.run([.firmware("02 05 02"), .phone("03 17 00")] + Script.gatt + ancsDiscoveryAtMTU23 + Script.subscribe,
                sourceLocation: sourceLocation)
        #expect(rig.link.state == .live, "bring-up at MTU 23 leaves the link live", sourceLocation: sourceLocation)
        #expect(rig.link.bearer.mtu == 23, sourceLocation: sourceLocation)
        rig.events.removeAll()
        rig.actions.removeAll()
        return rig
    }

    /// The long write of Get App Attributes for com.apple.mobilephone,
    /// echoed and executed, and the name's answer on Data Source.
    static let phoneNameWrittenAndAnswered: [Step] = [
        .firmware(longPart1), .phone(echoed(longPart1)),
        .firmware(longPart2), .phone(echoed(longPart2)),
        .firmware("18 01"), .phone("19"),
        .phone(phoneNameFragments[0]), .phone(phoneNameFragments[1]),
    ]

    @Test("the wearable offers its largest MTU (517) and a command over MTU − 3 goes as Prepare Writes + Execute Write, never refused")
    func longCommandIsWrittenNotRefused() {
        var rig = liveAtMTU23()
        let app = AppIdentifier("com.apple.mobilephone")
        #expect(rig.link.requestAppName(app) == .queued)
        rig.settle()
        rig.run(Self.phoneNameWrittenAndAnswered)
        #expect(rig.results == [.appNameReceived(app)])
        #expect(rig.link.session.appName(for: app) == AppDisplayName("Phone"))
        let unsendable = rig.link.session.counters.commandsUnsendable
        #expect(unsendable == 0)
    }

    @Test("Insufficient Authentication on the first Prepare Write: security is raised and the same Prepare Write is sent again")
    func securityOnFirstPrepareWrite() {
        var rig = liveAtMTU23()
        let app = AppIdentifier("com.apple.mobilephone")
        _ = rig.link.requestAppName(app)
        rig.settle()
        rig.run([.firmware(longPart1), .phone("01 16 10 00 05")])
        #expect(rig.actions == [.raiseSecurity(attempt: 1)])
        rig.link.securityChanged(encrypted: true, now: rig.now)
        rig.settle()
        rig.run(Self.phoneNameWrittenAndAnswered)
        #expect(rig.results == [.appNameReceived(app)])
    }

    @Test("an echo that differs from the part sent: Execute Write 00, and the command fails as a Write Request refused with 0x04")
    func echoMismatchCancels() {
        var rig = liveAtMTU23()
        let app = AppIdentifier("com.apple.mobilephone")
        _ = rig.link.requestAppName(app)
        rig.settle()
        rig.run([
            .firmware(longPart1), .phone(echoed(longPart1).replacing("62 69", with: "62 6A")),
            .firmware("18 00"), .phone("19"),
        ])
        #expect(rig.results == [.failed(.getAppAttributes(appIdentifier: app, attributes: .displayName), .att(ATTErrorCode.invalidPDU))])
        let inFlight = rig.link.session.hasCommandInFlight
        #expect(!inFlight)
    }

    @Test("an error to a Prepare Write: Execute Write 00, then the command fails with that code; the next command is sent")
    func prepareErrorCancels() {
        var rig = liveAtMTU23()
        let app = AppIdentifier("com.apple.mobilephone")
        _ = rig.link.requestAppName(app)
        rig.settle()
        rig.run([
            .firmware(longPart1), .phone(echoed(longPart1)),
            .firmware(longPart2), .phone("01 16 10 00 09"),
            .firmware("18 00"), .phone("19"),
        ])
        #expect(rig.results == [.failed(.getAppAttributes(appIdentifier: app, attributes: .displayName), .att(ATTErrorCode.prepareQueueFull))])
        _ = rig.link.requestAppName(AppIdentifier("com.x"))
        rig.settle()
        rig.run([.firmware("12 10 00 01 63 6F 6D 2E 78 00 00")])
    }

    @Test("0xA2 to the Execute Write is the ANCS error of the command: no cancel")
    func executeErrorIsTheCommandsError() {
        var rig = liveAtMTU23()
        let app = AppIdentifier("com.apple.mobilephone")
        _ = rig.link.requestAppName(app)
        rig.settle()
        rig.run([
            .firmware(longPart1), .phone(echoed(longPart1)),
            .firmware(longPart2), .phone(echoed(longPart2)),
            .firmware("18 01"), .phone("01 18 10 00 A2"),
        ])
        #expect(rig.results == [.failed(.getAppAttributes(appIdentifier: app, attributes: .displayName), .ancs(.invalidParameter))])
    }

    @Test("Service Changed during a long write: its late echo is ignored, and the next long write on the link cancels the phone's queue (18 00) first")
    func serviceChangedMidWriteCancelsFirst() {
        var rig = liveAtMTU23()
        let app = AppIdentifier("com.apple.mobilephone")
        _ = rig.link.requestAppName(app)
        rig.settle()
        rig.run([
            .firmware(longPart1), .phone("1D 03 00 0B 00 14 00"),
            .firmware("1E"), .phone(echoed(longPart1)),
        ] + ancsDiscoveryAtMTU23 + Script.subscribe)
        let state = rig.link.state
        let stale = rig.link.counters.staleResponses
        #expect(state == .live)
        #expect(stale == 1)
        #expect(rig.link.requestAppName(app) == .queued)
        rig.settle()
        rig.run([.firmware("18 00"), .phone("19")] + Self.phoneNameWrittenAndAnswered)
        #expect(rig.results.last == .appNameReceived(app))
    }
}
