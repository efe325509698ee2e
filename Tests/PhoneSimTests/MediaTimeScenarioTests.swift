// The wearable core against the simulated iPhone's AMS and CTS:
// board/scenarios/media-control.scn, and the phone's clock.

import AMS
import CTS
import Firmware
import PhoneSim
import Testing
import TestSupport

@Suite("Media and time against the simulated iPhone")
struct MediaTimeScenarioTests {
    @Test("media-control.scn: the phone plays; a long accept writes TogglePlayPause (02), the phone answers and pauses")
    func mediaControl() {
        var rig = WearableLoopback(scenario: "media-control.scn")
        rig.connect()
        #expect(rig.run(untilMs: 10_000) { $0.events.contains(.link(.media(.playback(.playing)))) }, "PlaybackInfo says playing")
        rig.hold("accept", ms: 1_000)
        #expect(rig.run(untilMs: 3_000) { $0.events.contains(.link(.media(.playback(.paused)))) }, "the phone paused")
        #expect(rig.events.contains(.media(command: .togglePlayPause, result: .sent)))
        #expect(rig.trace.contains("W> 12 22 00 02"), "one Remote Command byte, 02, with a Write Request")
    }

    @Test("a long reject skips to the next track (03); a short press keeps its notification meaning")
    func longRejectIsNextTrack() {
        var rig = WearableLoopback(scenario: "media-control.scn")
        rig.connect()
        #expect(rig.run(untilMs: 10_000) { $0.events.contains(.link(.media(.playback(.playing)))) })
        rig.hold("reject", ms: 1_000)
        #expect(rig.run(untilMs: 3_000) { $0.events.contains(.media(command: .nextTrack, result: .sent)) })
        rig.hold("reject", ms: 100)
        #expect(rig.trace.filter { $0.hasPrefix("W> 12 22 00") }.count == 1)
    }

    @Test("the phone's Current Time is read after ANCS: the wearable knows the phone's local time")
    func timeFromThePhone() {
        var rig = WearableLoopback(scenario: "media-control.scn")
        rig.connect()
        #expect(rig.run(untilMs: 10_000) { loopback in
            loopback.events.contains { if case .link(.time(.learned)) = $0 { true } else { false } }
        })
        let local = rig.core.phone.phoneClock.local(at: rig.now)
        #expect(local?.year == 2026 && local?.month == 12 && local?.day == 1 && local?.hour == 12, "the phone's default clock")
        #expect(rig.core.phone.phoneClock.utcOffsetMin == 0)
    }
}
