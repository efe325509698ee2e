import ANCS
import AllocCounter
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
        func round(_ rig: inout CoreRig) {
            for (added, removed) in pdus {
                rig.now = rig.now.advanced(byMs: 1)
                rig.core.receive(added.span, now: rig.now)
                drain(&rig, &out)
                rig.now = rig.now.advanced(byMs: 1)
                rig.core.receive(removed.span, now: rig.now)
                drain(&rig, &out)
            }
            rig.now = rig.now.advanced(byMs: 5_000)
            rig.core.advance(now: rig.now)
            drain(&rig, &out)
        }
        round(&rig)
        let before = wl_alloc_count()
        for _ in 0..<20 { round(&rig) }
        #expect(wl_alloc_count() - before == 0)
    }

    private func drain(_ rig: inout CoreRig, _ out: inout ByteBuffer) {
        for _ in 0..<4 {
            while rig.core.nextEvent() != nil {}
            rig.core.flush(now: rig.now)
        }
        while rig.core.popOutgoing(into: &out) {}
        while rig.core.nextAction() != nil {}
        while rig.core.nextLineChange() != nil {}
    }
}

private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
