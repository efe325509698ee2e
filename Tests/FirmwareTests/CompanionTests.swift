// SPDX-License-Identifier: Apache-2.0
// The phone's Apple Media Service and Current Time Service, after ANCS is
// live, against a scripted phone: AMS at 0x20–0x28 (Remote Command 0x22
// with its CCCD at 0x23, Entity Update 0x25 / 0x26, Entity Attribute
// 0x28), CTS at 0x30–0x35 (Current Time 0x32 / 0x33, Local Time
// Information 0x35). Byte order on the wire is little-endian throughout
// (Core Vol 3 Part F 3.2.9).

import AMS
import ANCS
import Bounded
import CTS
import Config
import Firmware
import Testing
import TestSupport

enum CompanionWire {
    static let amsDiscovery: [Step] = [
        .firmware("06 01 00 FF FF 00 28 " + Wire.ams), .phone("07 20 00 28 00"),
        .firmware("08 21 00 28 00 03 28"),
        .phone("09 15 21 00 18 22 00 \(Wire.remoteCommand) 24 00 18 25 00 \(Wire.entityUpdate) 27 00 0A 28 00 \(Wire.entityAttribute)"),
        .firmware("08 28 00 28 00 03 28"), .phone("01 08 28 00 0A"),
        .firmware("04 23 00 23 00"), .phone("05 01 23 00 02 29"),
        .firmware("04 26 00 26 00"), .phone("05 01 26 00 02 29"),
    ]
    /// Remote Command and Entity Update notifications on, then the Player's
    /// PlaybackInfo asked for (`00 01`).
    static let amsSubscribe: [Step] = [
        .firmware("12 23 00 01 00"), .phone("13"),
        .firmware("12 26 00 01 00"), .phone("13"),
        .firmware("12 25 00 00 01"), .phone("13"),
    ]
    static let ctsDiscovery: [Step] = [
        .firmware("06 01 00 FF FF 00 28 05 18"), .phone("07 30 00 35 00"),
        .firmware("08 31 00 35 00 03 28"), .phone("09 07 31 00 12 32 00 2B 2A 34 00 02 35 00 0F 2A"),
        .firmware("08 35 00 35 00 03 28"), .phone("01 08 35 00 0A"),
        .firmware("04 33 00 33 00"), .phone("05 01 33 00 02 29"),
    ]
    /// 2026-12-01 22:15:03, Tuesday; UTC+1 (4 quarter hours), no DST.
    static let ctsRead: [Step] = [
        .firmware("0A 32 00"), .phone("0B EA 07 0C 01 16 0F 03 02 00 00"),
        .firmware("0A 35 00"), .phone("0B 04 00"),
        .firmware("12 33 00 01 00"), .phone("13"),
    ]
    static let all = amsDiscovery + amsSubscribe + ctsDiscovery + ctsRead
    /// Remote Command: Play, Pause, TogglePlayPause, Next, Previous, Volume up/down.
    static let commandsAvailable = "1B 22 00 00 01 02 03 04 05 06"
    /// Entity Update: Player, PlaybackInfo, no flags, "1,1.0,12.5" (playing).
    static let playing = "1B 25 00 00 01 00 31 2C 31 2E 30 2C 31 32 2E 35"
    static let paused = "1B 25 00 00 01 00 30 2C 30 2E 30 2C 31 32 2E 35"
}

/// The shipped policy with the long presses as the media defaults.
func mediaPolicy() -> PolicyConfig {
    var policy = defaultPolicy
    policy.longPress = [.media(.togglePlayPause), .media(.nextTrack)]
    policy.ringingLongPress = [.positive, .silence]
    return policy
}

@Suite("Companion services: AMS and CTS after ANCS")
struct CompanionTests {
    @Test("once ANCS is live: AMS discovered, Remote Command and Entity Update subscribed, 00 01 written; CTS read and subscribed")
    func bringUpOrder() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        #expect(rig.sent == [], "nothing more once the companions are up")
        rig.sent.removeAll()
        let local = CivilDateTime(year: 2026, month: 12, day: 1, hour: 22, minute: 15, second: 3)!
        #expect(rig.core.phone.phoneClock.local(at: rig.now) == local)
        #expect(rig.core.phone.phoneClock.utcOffsetMin == 60)
        #expect(rig.events.contains { if case .link(.time(.learned(_, nil))) = $0 { true } else { false } })
    }

    @Test("PlaybackInfo notifications report playing and paused once each, not again for the same state")
    func playbackStateEvents() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.phone(CompanionWire.playing)
        rig.phone(CompanionWire.playing)
        rig.phone(CompanionWire.paused)
        rig.phone("1B 25 00 00 01 00")
        let media = rig.events.compactMap { if case .link(.media(let m)) = $0 { m } else { nil } }
        #expect(media == [.playback(.playing), .playback(.paused), .noPlayer])
    }

    /// " 31 2C ...": `value`'s UTF-8 as hex after a notification's header.
    func text(_ value: String) -> String { " " + toHex(Array(value.utf8)) }

    @Test("PlaybackInfo with decimal commas (a de_DE phone) or an unreadable rate keeps its state; one with no readable state is dropped, the last state standing")
    func playbackInfoReadDefensively() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.phone("1B 25 00 00 01 00" + text("1,1,0,12,5"))
        rig.phone("1B 25 00 00 01 00" + text("0,0,0,12,5"))
        rig.phone("1B 25 00 00 01 00" + text("1,1.0,abc"))
        rig.phone("1B 25 00 00 01 00" + text("x,1.0,12.5"))
        rig.phone("1B 25 00 00 01 00" + text("1.0,1.0,12.5"))
        rig.phone("1B 25 00 00 01 01" + text(",1"))
        let media = rig.events.compactMap { if case .link(.media(let m)) = $0 { m } else { nil } }
        #expect(media == [.playback(.playing), .playback(.paused), .playback(.playing)])
        let drops = rig.events.compactMap { if case .link(.drop(.playbackInfo(let e))) = $0 { e } else { nil } }
        #expect(drops == [.badState, .badState, .noState])
        #expect(rig.core.phone.state == .live, "a value the wearable cannot read never ends the link")
    }

    @Test("a Current Time the wearable cannot read (month 13, cut short) is dropped and counted; the clock keeps the last good time and the link stays")
    func currentTimeReadDefensively() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        let before = rig.core.phone.phoneClock
        rig.phone("1B 32 00 EA 07 0D 01 16 0F 03 02 00 01")
        rig.phone("1B 32 00 EA 07 0C 01 16")
        let drops = rig.events.compactMap { if case .link(.drop(.currentTime(let e))) = $0 { e } else { nil } }
        #expect(drops == [.fieldOutOfRange, .wrongLength(5)])
        #expect(rig.core.phone.phoneClock == before)
        #expect(rig.core.phone.state == .live)
    }

    @Test("a long accept with no call ringing writes TogglePlayPause (02) to Remote Command; the Write Response reports it sent")
    func longAcceptTogglesPlayback() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.phone(CompanionWire.commandsAvailable)
        rig.press(0, ms: 1_000)
        #expect(rig.sent == ["12 22 00 02"])
        rig.sent.removeAll()
        rig.phone("13")
        #expect(rig.events.contains(.media(command: .togglePlayPause, result: .sent)))
        rig.press(1, ms: 1_000)
        #expect(rig.sent == ["12 22 00 03"], "a long reject skips to the next track")
        rig.sent.removeAll()
    }

    @Test("a media command the phone does not list is not sent: not-available and the nothing-to-do nudge")
    func unlistedCommandIsNotSent() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.phone("1B 22 00 00 01")  // only Play and Pause now
        rig.press(0, ms: 1_000)
        #expect(rig.sent == [])
        rig.sent.removeAll()
        #expect(rig.events.contains(.media(command: .togglePlayPause, result: .notAvailable)))
        let vibration = simBoard.outputIndex(named: "vibration")!
        #expect(rig.events.contains(.line(index: vibration, on: true)), "the nothing-to-do feedback")
    }

    @Test("0xA0 Invalid State to a Remote Command write is reported as the phone's error, with the failure pattern")
    func invalidStateIsReported() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.phone(CompanionWire.commandsAvailable)
        rig.press(0, ms: 1_000)
        #expect(rig.sent == ["12 22 00 02"])
        rig.sent.removeAll()
        rig.phone("01 12 22 00 A0")
        #expect(rig.events.contains(.media(command: .togglePlayPause, result: .phoneError(AMSErrorCode.invalidState))))
        let failed = rig.everOn("vibration", forMs: 300)
        #expect(failed, "the action-failed feedback")
    }

    @Test("no AMS and no CTS (Attribute Not Found): media absent, time unknown, and a long accept is not-available")
    func absentServices() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play([
            .firmware("06 01 00 FF FF 00 28 " + Wire.ams), .phone("01 06 01 00 0A"),
            .firmware("06 01 00 FF FF 00 28 05 18"), .phone("01 06 01 00 0A"),
        ])
        #expect(up)
        #expect(rig.sent == [])
        rig.sent.removeAll()
        #expect(rig.events.contains(.link(.media(.absent))))
        #expect(rig.events.contains(.link(.time(.unknown(.noCTS)))))
        rig.press(0, ms: 1_000)
        #expect(rig.sent == [])
        rig.sent.removeAll()
        #expect(rig.events.contains(.media(command: .togglePlayPause, result: .notAvailable)))
    }

    @Test("the Control Point goes first: a notification's fetch queued during AMS discovery is written before the next AMS step")
    func controlPointFirst() throws {
        let policy = try shippedPolicy(replacing: "", with: "", adding: "\nrule app=com.example.x led-notify=blink\n")
        var rig = CoreRig(policy: policy, companions: true)
        #expect(rig.sent == ["06 01 00 FF FF 00 28 " + Wire.ams])
        rig.sent.removeAll()
        rig.notify(.added, [], .social, uid: 7)
        #expect(rig.sent == [], "one request at a time: the discovery is out")
        rig.sent.removeAll()
        rig.phone("07 20 00 28 00")
        #expect(rig.sent == ["12 10 00 00 07 00 00 00 00"], "the fetch for the app rule before AMS goes on")
        rig.sent.removeAll()
    }

    @Test("a Current Time notification after a time-zone change reads Local Time Information again and reports the new time")
    func timeZoneChangeRereadsLocalTime() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.events.removeAll()
        // 2026-12-01 23:15:03, reason: time zone change (bit 2).
        rig.phone("1B 32 00 EA 07 0C 01 17 0F 03 02 00 04")
        #expect(rig.sent == ["0A 35 00"])
        rig.sent.removeAll()
        rig.phone("0B 08 00")
        #expect(rig.core.phone.phoneClock.utcOffsetMin == 120)
        #expect(rig.events.contains { if case .link(.time(.learned(_, 3_600))) = $0 { true } else { false } })
    }

    @Test("the phone's clock runs on with the monotonic clock and survives the link going down")
    func clockKeptAcrossLinks() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.all)
        #expect(up)
        rig.advance(ms: 60_000)
        rig.linkDown(.platform("peer-closed"))
        rig.advance(ms: 60_000)
        let expected = CivilDateTime(year: 2026, month: 12, day: 1, hour: 22, minute: 17, second: 3)!
        #expect(rig.core.phone.phoneClock.local(at: rig.now) == expected)
    }

    @Test("Service Changed covering only ANCS while the Current Time CCCD write is out: once ANCS is live again the same CCCD write goes out again")
    func serviceChangedOverANCSRewritesTheCompanionCCCD() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let discovered = rig.play(CompanionWire.amsDiscovery + CompanionWire.amsSubscribe + CompanionWire.ctsDiscovery
            + Array(CompanionWire.ctsRead.dropLast()))
        #expect(discovered)
        // ANCS (0x0B-0x14) moved; AMS and CTS did not. The CCCD write's
        // answer would come under the old database: it is skipped.
        rig.phone("1D 03 00 0B 00 14 00")
        let again = rig.play([.firmware("1E"), .phone("13")] + Script.ancsDiscovery + Script.subscribe
            + [.firmware("12 33 00 01 00"), .phone("13")])
        #expect(again)
        #expect(rig.sent == [], "AMS and CTS are up")
        #expect(rig.core.phone.phoneClock.utcOffsetMin == 60, "the phone's clock was learned")
    }

    @Test("a Current Time notification that arrives while Local Time Information is read for an older sample is the time learned; the older never overwrites it")
    func newerCurrentTimeWinsOverOlderRead() {
        var rig = CoreRig(policy: mediaPolicy(), companions: true)
        let up = rig.play(CompanionWire.amsDiscovery + CompanionWire.amsSubscribe + CompanionWire.ctsDiscovery
            + [.firmware("0A 32 00"), .phone("0B EA 07 0C 01 16 0F 03 02 00 00"), .firmware("0A 35 00")])
        #expect(up)
        rig.advance(ms: 5_000)
        // The phone's clock was set forward: 22:20:00, reason manual (bit 0).
        rig.phone("1B 32 00 EA 07 0C 01 16 14 00 02 00 01")
        rig.phone("0B 04 00")
        let expected = CivilDateTime(year: 2026, month: 12, day: 1, hour: 22, minute: 20, second: 0)!
        #expect(rig.core.phone.phoneClock.local(at: rig.now) == expected)
    }
}

@Suite("Media buttons: the AMS remote command each sends")
struct MediaCommandTests {
    @Test("media-toggle sends TogglePlayPause (2), media-next NextTrack (3), media-previous PreviousTrack (4), volume-up VolumeUp (5), volume-down VolumeDown (6)")
    func remoteCommandIDs() {
        let sent = [MediaAction.togglePlayPause, .nextTrack, .previousTrack, .volumeUp, .volumeDown].map { RemoteCommandID($0).rawValue }
        #expect(sent == [2, 3, 4, 5, 6])
    }
}
