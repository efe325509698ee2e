// SPDX-License-Identifier: Apache-2.0
// The real Runner (step, settle, the link's actions, bonds, READY) on the
// in-memory platform: the scripted phone's bytes queued, the firmware's read
// back, time virtual. The same scripts as the socket rig (Rig.swift), with no
// socket and no real time.

import ANCS
import Bounded
import Firmware
import MemoryPlatform
import Platform
import Testing
import TestSupport

struct MemoryRig: ~Copyable {
    var runner: Runner<MemoryPlatform, RecordingSink>

    init(_ configure: (inout WearableConfig) -> Void = { _ in }) {
        var config = testConfig()
        configure(&config)
        runner = Runner(platform: MemoryPlatform(outputs: config.board.outputs.count), sink: RecordingSink(), core: WearableCore(config: config))
        runner.start()
    }

    var events: [FirmwareEvent] { runner.effects.sink.events }
    var state: LinkState { runner.core.phone.state }
    var now: Instant { runner.platform.now() }

    /// Steps until everything queued is taken (bounded: a queue that never
    /// empties is a failure of the test, not a hang).
    mutating func settle(sourceLocation: SourceLocation = #_sourceLocation) {
        let taken = runner.takeQueued()
        #expect(taken, "the runner left input queued", sourceLocation: sourceLocation)
    }

    /// Runs the virtual clock `ms` on, waking at every deadline on the way.
    mutating func advance(ms: Int64) {
        let target = now.advanced(byMs: ms)
        var steps = 0
        while now < target && steps < 100_000 {
            runner.step(waitingAtMostMs: target.ms(since: now))
            steps += 1
        }
    }

    mutating func phone(_ text: String) {
        runner.platform.queue(.pdu(hex(text)))
        settle()
    }

    /// A phone connects and plays `script`.
    mutating func connect(_ script: [Step], sourceLocation: SourceLocation = #_sourceLocation) {
        runner.platform.queue(.connected)
        settle(sourceLocation: sourceLocation)
        run(script, sourceLocation: sourceLocation)
    }

    mutating func run(_ script: [Step], sourceLocation: SourceLocation = #_sourceLocation) {
        var pending: [String] = []
        for (i, step) in script.enumerated() {
            switch step {
            case .phone(let text):
                phone(text)
            case .firmware(let expected):
                pending += runner.platform.takeSent().map { toHex($0) }
                let got = pending.isEmpty ? nil : pending.removeFirst()
                #expect(got == expected, "step \(i)", sourceLocation: sourceLocation)
                if got != expected { return }
            }
        }
        let rest = pending + runner.platform.takeSent().map { toHex($0) }
        #expect(rest == [], "nothing else sent", sourceLocation: sourceLocation)
    }

    func level(_ name: String) -> Bool { runner.platform.levels[simBoard.outputIndex(named: name)!] }
}

/// MTU, the GATT service and ANCS discovered; the link waits for encryption.
private let discoveredUnencrypted: [Step] = [.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + Script.ancsDiscovery

@Suite("The runner on the in-memory platform")
struct MemoryRunnerTests {
    @Test("a phone connects: the whole ANCS bring-up byte for byte, the link's one raise answered at once")
    func bringUp() {
        var rig = MemoryRig()
        rig.connect(Script.bringUp)
        let state = rig.state, raises = rig.runner.platform.raises, disconnects = rig.runner.platform.disconnects
        #expect(state == .live)
        #expect(raises == [1])
        #expect(disconnects == 0)
    }

    @Test("an incoming call lights led-call; a short accept sends Perform Notification Action positive for its UID")
    func callAnsweredThroughTheRunner() {
        var rig = MemoryRig()
        rig.connect(Script.bringUp)
        // EventID added, flags positive and negative action, CategoryID
        // incoming call, count 1, UID 0x2A.
        rig.phone("1B 0D 00 00 18 01 01 2A 00 00 00")
        let ringing = rig.level("led-call")
        #expect(ringing)
        rig.runner.platform.queue(.edge(button: 0, pressed: true, at: rig.now))
        rig.settle()
        rig.advance(ms: 100)
        rig.runner.platform.queue(.edge(button: 0, pressed: false, at: rig.now))
        rig.settle()
        rig.run([.firmware("12 10 00 02 2A 00 00 00 00"), .phone("13")])
        let events = rig.events
        #expect(events.contains(.action(uid: 0x2A, action: .positive, result: .sent)))
    }

    @Test("a refused pairing: the runner closes the link, ends it in the core, and nothing the phone had queued is read")
    func refusedPairingClosesTheLink() {
        var rig = MemoryRig()
        rig.runner.platform.answersRaises = false
        rig.connect(discoveredUnencrypted)
        let raises = rig.runner.platform.raises
        #expect(raises == [1], "asked at once: there is no bond to wait for")
        rig.runner.platform.queue(.securityChanged(encrypted: false))
        rig.runner.platform.queue(.pdu(hex("1B 0D 00 00 18 01 01 2A 00 00 00")))
        rig.settle()
        let disconnects = rig.runner.platform.disconnects, state = rig.state, events = rig.events
        let added = rig.runner.effects.sink.added, sent = rig.runner.platform.takeSent(), ringing = rig.level("led-call")
        #expect(disconnects == 1)
        #expect(state == .disconnected)
        #expect(events.contains(.link(.ended(reason: .notSecured))))
        #expect(added == 0, "the queued notification died with the link")
        #expect(sent == [])
        #expect(!ringing)
    }

    @Test("a pairing that never completes is dropped 60 s after the connection, on the virtual clock")
    func unansweredRaiseTimesOut() {
        var rig = MemoryRig()
        rig.runner.platform.answersRaises = false
        let connectedAt = rig.now
        rig.connect(discoveredUnencrypted)
        rig.advance(ms: 60_000 - rig.now.ms(since: connectedAt) - 1)
        let before = rig.runner.platform.disconnects
        #expect(before == 0)
        rig.advance(ms: 1)
        let after = rig.runner.platform.disconnects, state = rig.state, elapsedMs = rig.now.ms(since: connectedAt)
        #expect(after == 1)
        #expect(state == .disconnected)
        #expect(elapsedMs == 60_000, "the clock stopped at the deadline, not past it")
    }
}
