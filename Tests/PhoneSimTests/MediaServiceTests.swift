// SPDX-License-Identifier: Apache-2.0
// The phone as AMS's Media Source, driven alone with ATT PDUs: the service
// and its characteristics as discovered, security, the Remote Command list,
// commands carried out and reflected in PlaybackInfo, the error codes, the
// Entity Update and Entity Attribute writes (Apple's AMS specification;
// docs/ams.md).

import AMS
import ATT
import Bounded
import PhoneSim
import Testing
import TestSupport

/// An Entity Update notification of `value` for (entity, attribute).
func entityUpdate(_ entity: UInt8, _ attribute: UInt8, flags: UInt8 = 0, _ value: String) -> String {
    toHex([0x1B, 0x25, 0x00, entity, attribute, flags] + Array(value.utf8))
}

/// The Remote Command notification of the default player's list.
let defaultCommandList = "1B 22 00 00 01 02 03 04 05 06"

@Suite("AMS: the phone as Media Source")
struct MediaServiceTests {
    /// A connected phone that only answers, secured unless asked.
    func phone(requiresSecurity: Bool = false, script: String = "") -> PhoneCore {
        var p = PhoneCore(config: .serverOnly(requiresSecurity: requiresSecurity))
        p.linkUp(now: Instant(ms: 0))
        if !script.isEmpty {
            do {
                try p.load(script)
            } catch {
                preconditionFailure("script: \(error.kind)")
            }
        }
        _ = p.takeEvents()
        return p
    }

    /// A phone whose wearable has Remote Command and Entity Update
    /// notifications on and asked for the Player's PlaybackInfo.
    func subscribed(script: String = "") -> PhoneCore {
        var p = phone(script: script)
        _ = p.exchange("12 23 00 01 00")
        _ = p.exchange("12 26 00 01 00")
        _ = p.exchange("12 25 00 00 01")
        _ = p.takeEvents()
        return p
    }

    @Test("discovery: AMS is a 128-bit primary service at 0x0020–0x0028 after ANCS, in its own response")
    func amsService() {
        var p = phone()
        #expect(p.exchange("10 19 00 FF FF 00 28") == ["11 14 20 00 28 00 " + Wire.ams])
        #expect(p.exchange("06 01 00 FF FF 00 28 " + Wire.ams) == ["07 20 00 28 00"])
    }

    @Test("discovery: Remote Command (write, notify), Entity Update (write, notify), Entity Attribute (read, write), two CCCDs")
    func amsCharacteristics() {
        var p = phone()
        #expect(p.exchange("02 05 02") == ["03 B9 00"])
        #expect(p.exchange("08 20 00 28 00 03 28") == [
            "09 15 21 00 18 22 00 \(Wire.remoteCommand) 24 00 18 25 00 \(Wire.entityUpdate) 27 00 0A 28 00 \(Wire.entityAttribute)"
        ])
        #expect(p.exchange("04 23 00 23 00") == ["05 01 23 00 02 29"])
        #expect(p.exchange("04 26 00 26 00") == ["05 01 26 00 02 29"])
        #expect(p.exchange("04 29 00 2F 00") == ["01 04 29 00 0A"], "the unused handles hold nothing")
    }

    @Test(
        "security: AMS's CCCDs, writes and Entity Attribute read get 0x05 Insufficient Authentication until the link is secured",
        arguments: ["0A 23 00", "12 23 00 01 00", "12 26 00 01 00", "12 22 00 02", "12 25 00 00 01", "12 28 00 00 01", "0A 28 00"])
    func securityRequired(request: String) {
        var p = phone(requiresSecurity: true)
        let opcode = String(request.prefix(2))
        let handle = String(request.dropFirst(3).prefix(5))
        #expect(p.exchange(request) == ["01 \(opcode) \(handle) 05"])
    }

    @Test("Remote Command notifications turned on: the list of available commands is notified at once, one byte per command")
    func commandListOnSubscription() {
        var p = phone()
        #expect(p.exchange("12 23 00 01 00") == ["13", defaultCommandList])
        #expect(p.takeEvents() == [
            .subscribed(.remoteCommand), .remoteCommandsSent(RemoteCommandSet([.play, .pause, .togglePlayPause, .nextTrack, .previousTrack, .volumeUp, .volumeDown])),
        ])
    }

    @Test("Entity Update write 00 01: Write Response, then the Player's PlaybackInfo, paused 12.5 s in")
    func entityUpdateSendsCurrentValue() {
        var p = phone()
        #expect(p.exchange("12 26 00 01 00") == ["13"])
        #expect(p.exchange("12 25 00 00 01") == ["13", entityUpdate(0, 1, "0,0.0,12.5")])
        #expect(p.takeEvents().suffix(2) == [
            .amsWrite(.entityUpdate, AMSWriteBytes(hex("00 01").span)),
            .entityUpdateSent(entity: 0, attribute: 1, flags: 0, value: MediaValue("0,0.0,12.5")),
        ])
    }

    @Test("TogglePlayPause: Write Response, then PlaybackInfo playing; the elapsed time runs while it plays; toggled again it pauses")
    func togglePlayPauseIsReflectedInPlaybackInfo() {
        var p = subscribed()
        #expect(p.exchange("12 22 00 02", now: Instant(ms: 1_000)) == ["13", entityUpdate(0, 1, "1,1.0,12.5")])
        #expect(p.mediaState == .playing)
        #expect(p.takeEvents().first == .mediaCommand(AMSWriteBytes(hex("02").span), .done(.playing)))
        #expect(p.exchange("12 22 00 02", now: Instant(ms: 3_250)) == ["13", entityUpdate(0, 1, "0,0.0,14.7")])
        #expect(p.mediaState == .paused)
        #expect(p.counters.mediaCommands == 2)
    }

    @Test("Play and Pause set the state; one that changes nothing sends nothing; NextTrack starts the track again")
    func playPauseNext() {
        var p = subscribed()
        #expect(p.exchange("12 22 00 00") == ["13", entityUpdate(0, 1, "1,1.0,12.5")])
        #expect(p.exchange("12 22 00 00") == ["13"], "already playing")
        #expect(p.exchange("12 22 00 03", now: Instant(ms: 5_000)) == ["13", entityUpdate(0, 1, "1,1.0,0.0")])
        #expect(p.exchange("12 22 00 01", now: Instant(ms: 7_000)) == ["13", entityUpdate(0, 1, "0,0.0,2.0")])
        #expect(p.exchange("12 22 00 05") == ["13"], "the volume changes nothing the wearable asked for")
    }

    @Test("no player (media unavailable): the empty list and an empty PlaybackInfo are notified; every command is 0xA0 Invalid State")
    func unavailablePlayerIsInvalidState() throws {
        var p = subscribed()
        try p.run("media unavailable")
        #expect(p.drain() == ["1B 22 00", entityUpdate(0, 1, "")])
        #expect(p.exchange("12 22 00 02") == ["01 12 22 00 A0"])
        #expect(p.takeEvents().last == .mediaCommand(AMSWriteBytes(hex("02").span), .refused(code: 0xA0, reason: "no-player")))
        try p.run("media play")
        #expect(p.drain() == [defaultCommandList, entityUpdate(0, 1, "1,1.0,12.5")], "the app is back, playing")
    }

    @Test("a command not available now, one the specification does not define, or a write that is not one byte is 0xA1 Invalid Command")
    func unavailableCommandIsInvalidCommand() {
        var p = subscribed()
        #expect(p.exchange("12 22 00 07") == ["01 12 22 00 A1"], "AdvanceRepeatMode is not in the list")
        #expect(p.exchange("12 22 00 0E") == ["01 12 22 00 A1"])
        #expect(p.exchange("12 22 00 02 02") == ["01 12 22 00 A1"])
        #expect(p.mediaState == .paused)
        #expect(p.counters.amsWritesRefused == 3)
    }

    @Test("Entity Update refusals: too short 0xA1; notifications off 0xA0; an unknown entity or attribute 0xA2 Absent Attribute")
    func entityUpdateRefusals() {
        var p = phone()
        #expect(p.exchange("12 25 00 00 01") == ["01 12 25 00 A0"], "Entity Update notifications are off")
        #expect(p.exchange("12 26 00 01 00") == ["13"])
        #expect(p.exchange("12 25 00 00") == ["01 12 25 00 A1"])
        #expect(p.exchange("12 25 00 03 01") == ["01 12 25 00 A2"])
        #expect(p.exchange("12 25 00 00 03") == ["01 12 25 00 A2"])
        #expect(p.takeEvents().last == .errorAnswered(handle: 0x25, code: 0xA2, reason: "unknown-attribute"))
    }

    @Test("a value longer than MTU − 6 is cut at a character boundary and flagged Truncated; Entity Attribute reads it whole")
    func truncatedValueAndEntityAttribute() {
        var p = phone()
        #expect(p.exchange("12 26 00 01 00") == ["13"])
        #expect(p.exchange("0A 28 00") == ["01 0A 28 00 A2"], "no attribute chosen yet")
        #expect(p.exchange("12 25 00 02 02") == ["13", entityUpdate(2, 2, flags: 1, "Bounded Buffers (")])
        #expect(p.exchange("12 28 00 02 02") == ["13"])
        #expect(p.exchange("0A 28 00") == ["0B " + toHex(text: "Bounded Buffers (Exten")], "a read carries MTU − 1 bytes")
        #expect(p.exchange("0C 28 00 16 00") == ["0D " + toHex(text: "ded Mix)")], "Read Blob the rest")
        #expect(p.exchange("12 28 00 02 02 00") == ["01 12 28 00 A1"])
    }

    @Test("a Write Command to Remote Command is ignored: it has no write-without-response")
    func writeCommandIgnored() {
        var p = subscribed()
        #expect(p.exchange("52 22 00 02") == [])
        #expect(p.mediaState == .paused)
        #expect(p.counters.amsWriteCommandsIgnored == 1)
    }

    @Test("wait-media ends when the wearable writes that command")
    func waitMedia() throws {
        var p = subscribed(script: "media play\nwait-media toggle-play-pause 5000\nquit")
        #expect(p.takeActions() == [])
        _ = p.exchange("12 22 00 02", now: Instant(ms: 100))
        #expect(p.takeActions() == [.quit])
        #expect(p.mediaState == .paused)
    }

    @Test("wait-media times out when the command never comes")
    func waitMediaTimesOut() throws {
        var p = phone(script: "wait-media next-track 1000\nquit")
        p.advance(now: Instant(ms: 1_000))
        #expect(p.takeEvents().contains(.stepFailed(line: 1, command: "wait-media", reason: "timeout")))
        #expect(p.takeActions() == [])
    }

    @Test("no-ams before the connection: the phone has no AMS to discover")
    func noAMS() throws {
        var p = PhoneCore(config: .serverOnly())
        try p.load("no-ams")
        p.linkUp(now: Instant(ms: 0))
        #expect(p.exchange("06 01 00 FF FF 00 28 " + Wire.ams) == ["01 06 01 00 0A"])
        #expect(p.exchange("0A 23 00") == ["01 0A 23 00 01"])
    }

    @Test("no-ams on a live link: the subscriptions go and Service Changed covers 0x0020–0x0028")
    func noAMSWhileConnected() throws {
        var p = subscribed()
        #expect(p.exchange("12 09 00 02 00") == ["13"])
        try p.run("no-ams")
        #expect(p.drain() == ["1D 08 00 20 00 28 00"])
        #expect(p.isSubscribed(.remoteCommand) == false && p.isSubscribed(.entityUpdate) == false)
        #expect(p.ancsPresent == true)
    }

    @Test("AMS events read as one line each")
    func eventText() {
        #expect(PhoneEvent.mediaCommand(AMSWriteBytes(hex("02").span), .done(.paused)).text == "ams-command 02 toggle-play-pause ok state=paused")
        #expect(
            PhoneEvent.mediaCommand(AMSWriteBytes(hex("00").span), .refused(code: 0xA0, reason: "no-player")).text
                == "ams-command 00 play refused code=0xA0 reason=no-player")
        #expect(PhoneEvent.amsWrite(.entityUpdate, AMSWriteBytes(hex("00 01").span)).text == "ams-write entity-update 00 01")
        #expect(PhoneEvent.remoteCommandsSent(RemoteCommandSet([.play, .nextTrack])).text == "ams-commands-sent play,next-track")
        #expect(PhoneEvent.remoteCommandsSent(RemoteCommandSet()).text == "ams-commands-sent none")
        #expect(
            PhoneEvent.entityUpdateSent(entity: 0, attribute: 1, flags: 0, value: MediaValue("1,1.0,12.5")).text
                == "ams-entity-sent 00 01 flags=00 \"1,1.0,12.5\"")
        #expect(PhoneEvent.serviceRemoved("ams").text == "ams-removed")
    }
}

@Suite("board/scenarios/media-control.scn, played by the phone alone")
struct MediaControlScenarioTests {
    @Test("media-control.scn: the phone plays; the wearable's TogglePlayPause pauses it; the phone quits a second later")
    func mediaControl() throws {
        var p = PhoneCore(config: .serverOnly())
        try p.load(readRepositoryFile("board/scenarios/media-control.scn"))
        p.linkUp(now: Instant(ms: 0))
        #expect(p.mediaState == .playing)
        _ = p.subscribeANCS()
        #expect(p.exchange("12 23 00 01 00") == ["13", defaultCommandList])
        #expect(p.exchange("12 26 00 01 00") == ["13"])
        #expect(p.exchange("12 25 00 00 01", now: Instant(ms: 500)) == ["13", entityUpdate(0, 1, "1,1.0,13.0")])
        #expect(p.exchange("12 22 00 02", now: Instant(ms: 2_000)) == ["13", entityUpdate(0, 1, "0,0.0,14.5")])
        #expect(p.takeEvents().contains(.mediaCommand(AMSWriteBytes(hex("02").span), .done(.paused))))
        p.advance(now: Instant(ms: 2_999))
        #expect(p.takeActions() == [])
        p.advance(now: Instant(ms: 3_000))
        #expect(p.takeActions() == [.quit])
    }
}
