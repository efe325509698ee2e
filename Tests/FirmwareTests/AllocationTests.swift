// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Config
import Firmware
import MemoryPlatform
import TestSupport
import Testing

@Suite("Steady state allocates nothing: the wearable core", .enabled(if: isOptimizedBuild, "allocation counts are measured on the optimized build that ships (swift test -c release)"))
struct CoreAllocationTests {
    /// Every category (reserved ones too) with every kind of flags, added
    /// then removed, through WearableCore with the default policy: alerts,
    /// Important's stronger patterns, Silent, sustained rings, the unread
    /// indicator. Outputs are drained as the runner does, with nothing kept.
    @Test("every category and flag combination added and removed through the core allocates nothing")
    func everyCategoryAndFlag() {
        var rig = CoreRig()
        let flags: [EventFlags] = [[], [.important], [.silent], [.important, .silent], [.positiveAction, .negativeAction], [.preExisting]]
        var pdus: [([UInt8], [UInt8])] = []
        var uid: UInt32 = 100
        for category in 0..<13 {
            for f in flags {
                uid += 1
                let c = CategoryID(rawValue: UInt8(category))
                pdus.append((
                    hex("1B 0D 00") + [EventID.added.rawValue, f.rawValue, c.rawValue, 1] + le32(uid),
                    hex("1B 0D 00") + [EventID.removed.rawValue, 0, c.rawValue, 0] + le32(uid)))
            }
        }
        var out = ByteBuffer(capacity: 600)
        var tally = Tally()
        rig.runner.effects.sink.keepsEvents = false
        let addedBefore = rig.runner.effects.sink.added
        let removedBefore = rig.runner.effects.sink.removed
        // Line changes of each round, fewest and most.
        var fewestLineChanges = Int.max
        var mostLineChanges = 0
        let perRound = allocationsPerRound(rounds: 20) {
            let lineChangesBefore = tally.lineChanges
            for (added, removed) in pdus {
                rig.now = rig.now.advanced(byMs: 1)
                rig.runner.core.receive(added.span, now: rig.now, into: &rig.runner.effects)
                drain(&rig, &out, &tally)
                rig.now = rig.now.advanced(byMs: 1)
                rig.runner.core.receive(removed.span, now: rig.now, into: &rig.runner.effects)
                drain(&rig, &out, &tally)
            }
            rig.now = rig.now.advanced(byMs: 5_000)
            rig.runner.core.advance(now: rig.now, into: &rig.runner.effects)
            drain(&rig, &out, &tally)
            fewestLineChanges = min(fewestLineChanges, tally.lineChanges - lineChangesBefore)
            mostLineChanges = max(mostLineChanges, tally.lineChanges - lineChangesBefore)
        }
        #expect(perRound == 0)
        // The warm-up and 20 counted rounds, each adding and removing every
        // notification: the core saw them all and drove the outputs alike.
        #expect(rig.runner.effects.sink.added - addedBefore == 21 * pdus.count)
        #expect(rig.runner.effects.sink.removed - removedBefore == 21 * pdus.count)
        #expect(fewestLineChanges > 0)
        #expect(fewestLineChanges == mostLineChanges)
    }

    /// The phone's clock known (CTS), quiet hours on, AMS up: a message
    /// quietened, a call let through, a PlaybackInfo change, a media press
    /// and its answer, a Current Time notification, and the clock running
    /// past a window edge.
    @Test("quiet hours, the phone's clock and media presses allocate nothing")
    func quietHoursClockAndMedia() throws {
        var rig = CoreRig(policy: try mediaPolicyWithQuiet(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.phone(CompanionWire.commandsAvailable)
        var out = ByteBuffer(capacity: 600)
        var tally = Tally()
        rig.runner.effects.sink.keepsEvents = false
        let message = hex("1B 0D 00 00 00 04 01") + le32(500), messageGone = hex("1B 0D 00 02 00 04 00") + le32(500)
        let callAdded = hex("1B 0D 00 00 18 01 01") + le32(501), callGone = hex("1B 0D 00 02 00 01 00") + le32(501)
        let playing = hex(CompanionWire.playing), paused = hex(CompanionWire.paused)
        let timeNotified = hex("1B 32 00 EA 07 0C 01 16 0F 03 02 00 01")
        let writeResponse = hex("13")
        let pdus = [message, messageGone, callAdded, callGone, playing, paused, timeNotified]
        let perRound = allocationsPerRound(rounds: 10) {
            for pdu in pdus {
                rig.now = rig.now.advanced(byMs: 1)
                rig.runner.core.receive(pdu.span, now: rig.now, into: &rig.runner.effects)
                drain(&rig, &out, &tally)
            }
            rig.runner.core.input(.edge(button: 0, pressed: true, at: rig.now), now: rig.now, into: &rig.runner.effects)
            rig.now = rig.now.advanced(byMs: 1_000)
            rig.runner.core.advance(now: rig.now, into: &rig.runner.effects)
            rig.runner.core.input(.edge(button: 0, pressed: false, at: rig.now), now: rig.now, into: &rig.runner.effects)
            drain(&rig, &out, &tally)
            rig.runner.core.receive(writeResponse.span, now: rig.now, into: &rig.runner.effects)
            rig.now = rig.now.advanced(byMs: 120_000)
            rig.runner.core.advance(now: rig.now, into: &rig.runner.effects)
            drain(&rig, &out, &tally)
        }
        #expect(perRound == 0)
        #expect(rig.runner.core.counters.alertsQuieted > 0, "the messages were quietened")
    }

    private struct Tally {
        var lineChanges = 0
    }

    private func drain(_ rig: inout CoreRig, _ out: inout ByteBuffer, _ tally: inout Tally) {
        rig.runner.core.flush(now: rig.now, into: &rig.runner.effects)
        while rig.runner.core.popOutgoing(into: &out) {}
        while rig.runner.core.nextAction() != nil {}
        while rig.runner.core.nextLineChange() != nil { tally.lineChanges += 1 }
    }
}

private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }

/// The media long presses and a window around the scripted phone's 22:15.
private func mediaPolicyWithQuiet() throws -> PolicyConfig {
    var policy = try shippedPolicy(replacing: "", with: "", adding: "\nquiet 22:00-23:00\n")
    policy.longPress = [.media(.togglePlayPause), .media(.nextTrack)]
    return policy
}
