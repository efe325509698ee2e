// SPDX-License-Identifier: Apache-2.0
// The AMS values on real bytes: the Remote Command list, Entity Update
// notifications (with the Truncated flag), PlaybackInfo's state, and the
// two writes the wearable makes.

import AMS
import Bounded
import Testing
import TestSupport

/// PlaybackInfo's state from an array (a Span cannot go into #expect).
func state(_ bytes: [UInt8]) throws(PlaybackInfoError) -> PlaybackState { try PlaybackInfo.state(bytes.span) }

func decode(_ bytes: [UInt8]) throws(EntityUpdateError) -> EntityUpdate { try EntityUpdate.decode(bytes.span) }

func commands(_ bytes: [UInt8]) -> RemoteCommandList { RemoteCommandList(bytes.span) }

@Suite("AMS codec: Remote Command list, Entity Update, PlaybackInfo, the writes")
struct AMSCodecTests {
    @Test("a Remote Command notification lists the commands available now, one byte each")
    func remoteCommandListNamesAvailableCommands() {
        let bytes = hex("00 01 02 03 04 05 06")
        let list = commands(bytes)
        #expect(list.available.contains(.togglePlayPause))
        #expect(list.available.contains(.nextTrack))
        #expect(list.available.contains(.volumeDown))
        #expect(!list.available.contains(.likeTrack))
        #expect(list.unknownIDs == 0)
    }

    @Test("an empty Remote Command list means nothing can be asked for (no player)")
    func emptyListMeansNothingAvailable() {
        let bytes = hex("")
        #expect(commands(bytes).available.isEmpty)
    }

    @Test("an ID the specification does not define is counted and ignored, not an error")
    func unknownRemoteCommandIDIsCounted() {
        let bytes = hex("02 0E FF 03")
        let list = commands(bytes)
        #expect(list.available == RemoteCommandSet([.togglePlayPause, .nextTrack]))
        #expect(list.unknownIDs == 2)
    }

    @Test("an Entity Update is EntityID, AttributeID, flags, then the value: Player PlaybackInfo \"1,1.0,12.5\" is playing")
    func entityUpdatePlaybackInfoPlaying() throws {
        let bytes = hex("00 01 00") + Array("1,1.0,12.5".utf8)
        let update = try decode(bytes)
        #expect(update.entity == .player)
        #expect(update.attribute == PlayerAttributeID.playbackInfo.rawValue)
        #expect(!update.isTruncated)
        #expect(update.valueRange == 3..<13)
        #expect(try state(Array(bytes[update.valueRange])) == .playing)
    }

    @Test("flag bit 0 says the value was cut to the MTU; the state is still read from its first field")
    func truncatedFlagIsReported() throws {
        let bytes = hex("00 01 01") + Array("0,0.0,1234".utf8)
        let update = try decode(bytes)
        #expect(update.isTruncated)
        #expect(try state(Array(bytes[update.valueRange])) == .paused)
    }

    @Test("fewer than three bytes, or an unknown EntityID, is an error value")
    func malformedEntityUpdatesAreErrors() {
        let short = hex("00 01")
        #expect(throws: EntityUpdateError.tooShort) { try decode(short) }
        let unknown = hex("07 00 00 41")
        #expect(throws: EntityUpdateError.unknownEntity(7)) { try decode(unknown) }
    }

    @Test("PlaybackInfo states 2 and 3 are rewinding and fast-forwarding; others are kept as numbers")
    func playbackStatesBeyondPlayingAndPaused() throws {
        #expect(try state(Array("2,-2.0,5".utf8)) == .rewinding)
        #expect(try state(Array("3,2.0,5".utf8)) == .fastForwarding)
        #expect(try state(Array("9".utf8)) == .other(9))
    }

    @Test("an empty PlaybackInfo (no player) or a state that is not a number is an error value, never a guess")
    func badPlaybackInfoIsAnError() {
        #expect(throws: PlaybackInfoError.noState) { try state(Array("".utf8)) }
        #expect(throws: PlaybackInfoError.noState) { try state(Array(",1.0,2".utf8)) }
        #expect(throws: PlaybackInfoError.badState) { try state(Array("x,1.0".utf8)) }
        #expect(throws: PlaybackInfoError.badState) { try state(Array("1234,0".utf8)) }
    }

    @Test("TogglePlayPause is the one byte 02 written to Remote Command; the PlaybackInfo subscription is 00 01")
    func theWritesOnTheWire() {
        var out = ByteBuffer(capacity: 8)
        AMSCommand.remoteCommand(.togglePlayPause, into: &out)
        #expect(out.hexString == "02")
        AMSCommand.remoteCommand(.nextTrack, into: &out)
        #expect(out.hexString == "03")
        AMSCommand.subscribePlaybackInfo(into: &out)
        #expect(out.hexString == "00 01")
    }

    @Test("the UUIDs are the service's and its three characteristics' from the AMS specification")
    func uuids() {
        let service = hex(Wire.ams)
        let matches = AMSUUID.service.matches(service.span)
        #expect(matches, "89D3502B-0F36-433A-8EF4-C502AD55F8DC as the phone sends it")
        #expect(AMSUUID.remoteCommand.wire[15] == 0x9B, "little-endian on the wire: the text's first byte last")
        #expect(AMSUUID.entityUpdate.wire[0] == 0x02)
    }

    @Test("the phone's side: a command set encodes as one byte per command in ID order, and the list decodes back")
    func commandSetEncodes() {
        var set = RemoteCommandSet([.volumeDown, .play, .togglePlayPause])
        var wire = set.encoded()
        #expect(toHex((0..<wire.count).map { wire[$0] }) == "00 02 06")
        #expect(RemoteCommandList(wire.span).available == set)
        set.remove(.play)
        wire = set.encoded()
        #expect(toHex((0..<wire.count).map { wire[$0] }) == "02 06")
        #expect(RemoteCommandSet().encoded().isEmpty)
    }

    @Test("commands are named as the specification spells them, lowercase and hyphenated")
    func commandNames() {
        #expect("\(RemoteCommandID.togglePlayPause.name)" == "toggle-play-pause")
        #expect("\(RemoteCommandID.previousTrack.name)" == "previous-track")
        #expect("\(RemoteCommandID.bookmarkTrack.name)" == "bookmark-track")
    }
}
