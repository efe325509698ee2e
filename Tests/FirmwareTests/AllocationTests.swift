import ANCS
import Bounded
import Firmware
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
        rig.effects.sink.keepsEvents = false
        let addedBefore = rig.effects.sink.added
        let removedBefore = rig.effects.sink.removed
        // Line changes of each round, fewest and most.
        var fewestLineChanges = Int.max
        var mostLineChanges = 0
        let perRound = allocationsPerRound(rounds: 20) {
            let lineChangesBefore = tally.lineChanges
            for (added, removed) in pdus {
                rig.now = rig.now.advanced(byMs: 1)
                rig.core.receive(added.span, now: rig.now, into: &rig.effects)
                drain(&rig, &out, &tally)
                rig.now = rig.now.advanced(byMs: 1)
                rig.core.receive(removed.span, now: rig.now, into: &rig.effects)
                drain(&rig, &out, &tally)
            }
            rig.now = rig.now.advanced(byMs: 5_000)
            rig.core.advance(now: rig.now, into: &rig.effects)
            drain(&rig, &out, &tally)
            fewestLineChanges = min(fewestLineChanges, tally.lineChanges - lineChangesBefore)
            mostLineChanges = max(mostLineChanges, tally.lineChanges - lineChangesBefore)
        }
        #expect(perRound == 0)
        // The warm-up and 20 counted rounds, each adding and removing every
        // notification: the core saw them all and drove the outputs alike.
        #expect(rig.effects.sink.added - addedBefore == 21 * pdus.count)
        #expect(rig.effects.sink.removed - removedBefore == 21 * pdus.count)
        #expect(fewestLineChanges > 0)
        #expect(fewestLineChanges == mostLineChanges)
    }

    private struct Tally {
        var lineChanges = 0
    }

    private func drain(_ rig: inout CoreRig, _ out: inout ByteBuffer, _ tally: inout Tally) {
        rig.core.flush(now: rig.now, into: &rig.effects)
        while rig.core.popOutgoing(into: &out) {}
        while rig.core.nextAction() != nil {}
        while rig.core.nextLineChange() != nil { tally.lineChanges += 1 }
    }
}

private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
