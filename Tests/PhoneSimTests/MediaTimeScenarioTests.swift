// SPDX-License-Identifier: Apache-2.0
// The wearable core against the simulated iPhone's AMS and CTS:
// board/scenarios/media-control.scn, and the phone's clock.

import AMS
import CTS
import Config
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

@Suite("Quiet hours and phone left behind against the simulated iPhone")
struct QuietAndLostScenarioTests {
    @Test("quiet-hours.scn with the shipped example line: Ann's message at 23:10 is quiet, Bob's call rings, at 07:00 Ann's next message alerts")
    func quietHours() throws {
        let text = readRepositoryFile("board/policy.conf").split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("# quiet ") ? String($0.dropFirst(2)) : String($0) }.joined(separator: "\n")
        let policy = try PolicyConfig.parse(text, board: simBoard)
        #expect(policy.quietHours.count == 1, "the shipped example line")
        var rig = WearableLoopback(scenario: "quiet-hours.scn") { $0.policy = policy }
        rig.connect()
        #expect(rig.run(untilMs: 10_000) { $0.sawAdded(2) })
        #expect(rig.events.contains(.quietHours(.on)))
        #expect(rig.everOn("vibration", forMs: 1_500) == false, "Ann's message is quiet")
        #expect(rig.core.level(of: rig.output("led-notify")) == true, "the unread LED shows it")
        #expect(rig.run(untilMs: 5_000) { $0.sawAdded(3) })
        let rang = rig.everOn("vibration", forMs: 1_000)
        #expect(rang, "Bob's call rings through quiet hours")
        #expect(rig.run(untilMs: 10_000) { $0.events.contains(.quietHours(.off)) }, "07:00 on the phone's clock ends them")
        #expect(rig.run(untilMs: 5_000) { $0.sawAdded(4) })
        let alerted = rig.everOn("vibration", forMs: 1_000)
        #expect(alerted, "Ann's morning message buzzes")
    }

    @Test("phone-left-behind.scn: away past 30 s, phone lost once with the buzz; back in range, phone back without a buzz")
    func phoneLeftBehind() {
        var rig = WearableLoopback(scenario: "phone-left-behind.scn")
        rig.connect()
        #expect(rig.run(untilMs: 40_000) { $0.events.contains(.phoneLost(true)) })
        let buzzed = rig.everOn("vibration", forMs: 1_000)
        #expect(buzzed, "the phone-lost buzz")
        #expect(rig.run(untilMs: 10_000) { $0.events.contains(.phoneLost(false)) })
        #expect(rig.events.filter { $0 == .phoneLost(true) }.count == 1)
        #expect(rig.everOn("vibration", forMs: 1_000) == false, "phone back does not buzz")
    }
}
