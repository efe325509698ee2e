// SPDX-License-Identifier: Apache-2.0
// A firmware on the real poll loop, with a scripted phone on the other end
// of a SOCK_SEQPACKET link (BlueZ unit/test-gatt.c style).

import ANCS
import ATT
import Bounded
import Config
import Firmware
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

/// Records everything the firmware reports.
struct RecordingSink: EventSink {
    /// Off: nothing is stored, only counted (the allocation tests).
    var keepsEvents = true
    var events: [FirmwareEvent] = []
    var attributeTitles: [String] = []
    var added = 0
    var removed = 0

    mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant) {
        switch event {
        case .link(.notification(.added)): added += 1
        case .link(.notification(.removed)): removed += 1
        default: break
        }
        guard keepsEvents else { return }
        events.append(event)
        if case .link(.command(.attributesReceived)) = event {
            let v = session.attributeValue(.title)
            attributeTitles.append(String(decoding: (0..<v.count).map { v[$0] }, as: UTF8.self))
        }
    }
}

typealias TestRunner = Runner<LinuxPlatform<UnixLink, SimLines>, RecordingSink>


/// The shipped simulated board and default policy: tests use the real files.
let simBoard = try! BoardConfig.parse(try! ProcessControl.readFile(repositoryRoot + "/board/sim/board.conf"))
let defaultPolicy = try! PolicyConfig.parse(try! ProcessControl.readFile(repositoryRoot + "/board/policy.conf"), board: simBoard)

func testConfig(policy: PolicyConfig = defaultPolicy) -> WearableConfig {
    var config = WearableConfig(board: simBoard, policy: policy)
    config.controller.enabled = false
    // These tests post new notifications right after subscribing; the
    // replay window has its own tests in PhoneSimTests/QuirkTests.
    config.replayWindowMs = 0
    config.link = scriptedLinkConfig()
    return config
}

/// The link as the scripted phones here know it: ANCS alone. The phone's
/// AMS and CTS (tried once ANCS is live) have their own scripted tests
/// (CompanionTests.swift) and the simulated iPhone's tests.
func scriptedLinkConfig() -> PhoneLinkConfig {
    var config = PhoneLinkConfig()
    config.companionServices = false
    return config
}

enum Step {
    /// The phone sends these bytes.
    case phone(String)
    /// The firmware must send exactly these bytes next.
    case firmware(String)
}

struct Rig: ~Copyable {
    var runner: TestRunner
    var phone: Int32

    /// `powerSupplyRoot`: the board's battery is read there (else none).
    init(tracePath: String? = nil, powerSupplyRoot: String? = nil, _ configure: (inout WearableConfig) -> Void = { _ in }) {
        var fds: [Int32] = [0, 0]
        let rc = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds)
        precondition(rc == 0, "socketpair")
        var config = testConfig()
        configure(&config)
        let platform = try! LinuxPlatform(
            link: UnixLink(connected: fds[0]),
            lines: SimLines(outputs: config.board.outputs.map(\.name), buttons: config.board.buttons.map(\.name), consoleFD: -1),
            handleSignals: false, tracePath: tracePath,
            battery: powerSupplyRoot == nil ? .none : config.board.battery, powerSupplyRoot: powerSupplyRoot ?? PowerSupplyReader.defaultRoot)
        runner = Runner(platform: platform, sink: RecordingSink(), core: WearableCore(config: config))
        phone = fds[1]
    }

    deinit { if phone >= 0 { close(phone) } }

    var events: [FirmwareEvent] { runner.effects.sink.events }
    var state: LinkState { runner.core.phone.state }

    mutating func phoneSends(_ text: String) {
        let bytes = hex(text)
        let n = bytes.withUnsafeBufferPointer { send(phone, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        precondition(n == bytes.count, "phone send failed")
    }

    /// The next PDU the firmware sends, running the loop up to `withinMs`.
    mutating func firmwareSent(withinMs: Int64 = 2_000) -> String? {
        let start = Instant(ms: Sys.monotonicMs())
        var buffer = [UInt8](repeating: 0, count: 600)
        while true {
            let n = buffer.withUnsafeMutableBufferPointer { recv(phone, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { return toHex(Array(buffer[0..<n])) }
            if n == 0 { return "EOF" }
            if Instant(ms: Sys.monotonicMs()).ms(since: start) > withinMs { return nil }
            runner.step(waitingAtMostMs: 20)
        }
    }

    /// Runs the loop for `ms` so queued input is processed.
    mutating func settle(ms: Int64 = 30) {
        let start = Sys.monotonicMs()
        while Sys.monotonicMs() - start < ms { runner.step(waitingAtMostMs: 5) }
    }

    mutating func run(_ script: [Step], sourceLocation: SourceLocation = #_sourceLocation) {
        for (i, step) in script.enumerated() {
            switch step {
            case .phone(let text):
                phoneSends(text)
            case .firmware(let expected):
                let sent = firmwareSent()
                #expect(sent == expected, "step \(i)", sourceLocation: sourceLocation)
                if sent != expected { return }
            }
        }
    }

    mutating func hangUp() {
        close(phone)
        phone = -1
    }
}

/// The phone's side of a complete bring-up at MTU 185 with ANCS at 0x0B–0x14,
/// the GATT service at 0x01–0x07 and Service Changed at 0x03.
enum Script {
    static let gatt: [Step] = [
        .firmware("06 01 00 FF FF 00 28 01 18"), .phone("07 01 00 07 00"),
        .firmware("08 02 00 07 00 03 28"), .phone("09 07 02 00 20 03 00 05 2A"),
        .firmware("08 03 00 07 00 03 28"), .phone("01 08 03 00 0A"),
        .firmware("04 04 00 07 00"), .phone("05 01 04 00 02 29"),
        .firmware("12 04 00 02 00"), .phone("13"),
    ]

    static let ancsDiscovery: [Step] = [
        .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("07 0B 00 14 00"),
        .firmware("08 0C 00 14 00 03 28"),
        .phone("09 15 0C 00 10 0D 00 \(Wire.ns) 0F 00 08 10 00 \(Wire.cp) 11 00 10 12 00 \(Wire.ds)"),
        .firmware("08 12 00 14 00 03 28"), .phone("01 08 12 00 0A"),
        .firmware("04 0E 00 0E 00"), .phone("05 01 0E 00 02 29"),
        .firmware("04 13 00 14 00"), .phone("05 01 13 00 02 29"),
    ]

    static let subscribe: [Step] = [
        .firmware("12 13 00 01 00"), .phone("13"),
        .firmware("12 0E 00 01 00"), .phone("13"),
    ]

    static let bringUp: [Step] = [.firmware("02 05 02"), .phone("03 B9 00")] + gatt + ancsDiscovery + subscribe

    /// The same phone back, bonded and encrypted: the handles of the last
    /// link stand in for discovery (no Database Hash on this phone).
    static let cachedReconnection: [Step] = [.firmware("02 05 02"), .phone("03 B9 00")] + subscribe
}

