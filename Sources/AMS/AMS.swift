// SPDX-License-Identifier: Apache-2.0
// Apple Media Service, Media Remote side (the wearable), sans-IO: the
// values the phone notifies and the bytes we write, nothing else. The
// phone (the Media Source) exposes three characteristics (docs/ams.md):
// - Remote Command: we write one RemoteCommandID to ask for it; the phone
//   notifies the list of commands available now (one byte each, possibly
//   empty when nothing plays).
// - Entity Update: we write an EntityID followed by the AttributeIDs we
//   want; the phone notifies EntityID, AttributeID, EntityUpdateFlags and
//   the value as UTF-8 text, cut to fit the ATT MTU (flag Truncated).
// - Entity Attribute: for reading a truncated value in full. Unused: the
//   wearable has no display, so it asks only for the Player's PlaybackInfo
//   ("state,rate,elapsed"), which is short, and never for track titles.
// Errors the phone answers writes with: 0xA0 Invalid State (no player),
// 0xA1 Invalid Command, 0xA2 Absent Attribute.

import Bounded

public enum AMSUUID {
    public static let service = UUID128("89D3502B-0F36-433A-8EF4-C502AD55F8DC")
    public static let remoteCommand = UUID128("9B3C81D8-57B1-4A8A-B8DF-0E56F7CA51C2")
    public static let entityUpdate = UUID128("2F7CABCE-808D-411F-9A0C-BB92BA96C102")
    public static let entityAttribute = UUID128("C6B2F38C-23AB-46D8-A6AB-A3A870BBD5D7")
}

/// A command of the Remote Command characteristic. IDs 0–13 are defined;
/// anything else the phone lists is ignored (counted by the list).
public enum RemoteCommandID: UInt8, CaseIterable, Sendable {
    case play = 0
    case pause = 1
    case togglePlayPause = 2
    case nextTrack = 3
    case previousTrack = 4
    case volumeUp = 5
    case volumeDown = 6
    case advanceRepeatMode = 7
    case advanceShuffleMode = 8
    case skipForward = 9
    case skipBackward = 10
    case likeTrack = 11
    case dislikeTrack = 12
    case bookmarkTrack = 13

    /// The specification's name, lowercase and hyphenated (for logs and
    /// the phone's scenarios): `toggle-play-pause`.
    public var name: StaticString {
        switch self {
        case .play: "play"
        case .pause: "pause"
        case .togglePlayPause: "toggle-play-pause"
        case .nextTrack: "next-track"
        case .previousTrack: "previous-track"
        case .volumeUp: "volume-up"
        case .volumeDown: "volume-down"
        case .advanceRepeatMode: "advance-repeat-mode"
        case .advanceShuffleMode: "advance-shuffle-mode"
        case .skipForward: "skip-forward"
        case .skipBackward: "skip-backward"
        case .likeTrack: "like-track"
        case .dislikeTrack: "dislike-track"
        case .bookmarkTrack: "bookmark-track"
        }
    }
}

/// The commands the phone says are available now: a bit per defined ID.
public struct RemoteCommandSet: Equatable, Sendable {
    public private(set) var bits: UInt16 = 0

    public init() {}
    public init(_ commands: [RemoteCommandID]) { for c in commands { insert(c) } }

    public mutating func insert(_ command: RemoteCommandID) { bits |= 1 << UInt16(command.rawValue) }
    public mutating func remove(_ command: RemoteCommandID) { bits &= ~(1 << UInt16(command.rawValue)) }
    public func contains(_ command: RemoteCommandID) -> Bool { bits & (1 << UInt16(command.rawValue)) != 0 }
    public var isEmpty: Bool { bits == 0 }

    /// The Remote Command notification's value: one byte per command, in
    /// ID order (the phone's side).
    public func encoded() -> InlineBytes<14> {
        var out = InlineBytes<14>()
        for raw in 0..<UInt8(14) where bits & (1 << UInt16(raw)) != 0 { out.append(raw) }
        return out
    }
}

/// A Remote Command notification, decoded: the available commands, and
/// how many bytes named no defined command (ignored, not an error: the
/// specification may define more).
public struct RemoteCommandList: Equatable, Sendable {
    public var available: RemoteCommandSet
    public var unknownIDs: Int

    public init(_ value: Span<UInt8>) {
        available = RemoteCommandSet()
        unknownIDs = 0
        for i in 0..<value.count {
            if let command = RemoteCommandID(rawValue: value[i]) { available.insert(command) } else { unknownIDs += 1 }
        }
    }
}

public enum EntityID: UInt8, Sendable {
    case player = 0
    case queue = 1
    case track = 2
}

public enum PlayerAttributeID: UInt8, Sendable {
    case name = 0
    case playbackInfo = 1
    case volume = 2
}

public enum QueueAttributeID: UInt8, Sendable {
    case index = 0
    case count = 1
    case shuffleMode = 2
    case repeatMode = 3
}

public enum TrackAttributeID: UInt8, Sendable {
    case artist = 0
    case album = 1
    case title = 2
    case duration = 3
}

/// EntityUpdateFlags bit 0: the value was cut to fit the MTU.
public enum EntityUpdateFlag {
    public static let truncated: UInt8 = 1 << 0
}

public enum AMSErrorCode {
    public static let invalidState: UInt8 = 0xA0
    public static let invalidCommand: UInt8 = 0xA1
    public static let absentAttribute: UInt8 = 0xA2
}

/// Why an Entity Update notification was dropped.
public enum EntityUpdateError: Error, Equatable, Sendable {
    /// Fewer than the three header bytes.
    case tooShort
    /// An EntityID this module does not know.
    case unknownEntity(UInt8)
}

/// An Entity Update notification: which attribute of which entity, its
/// flags and where its value lies in the notification's bytes.
public struct EntityUpdate: Equatable, Sendable {
    public var entity: EntityID
    public var attribute: UInt8
    public var flags: UInt8
    /// The value's bytes: `value[valueRange]` of the notification.
    public var valueRange: Range<Int>

    public var isTruncated: Bool { flags & EntityUpdateFlag.truncated != 0 }

    public static func decode(_ value: Span<UInt8>) throws(EntityUpdateError) -> EntityUpdate {
        guard value.count >= 3 else { throw .tooShort }
        guard let entity = EntityID(rawValue: value[0]) else { throw .unknownEntity(value[0]) }
        return EntityUpdate(entity: entity, attribute: value[1], flags: value[2], valueRange: 3..<value.count)
    }
}

/// The Player's PlaybackState (the first field of PlaybackInfo).
public enum PlaybackState: Equatable, Sendable {
    case paused
    case playing
    case rewinding
    case fastForwarding
    /// A value the specification does not define (kept, not guessed).
    case other(UInt8)

    public init(code: UInt8) {
        switch code {
        case 0: self = .paused
        case 1: self = .playing
        case 2: self = .rewinding
        case 3: self = .fastForwarding
        default: self = .other(code)
        }
    }
}

/// Why a PlaybackInfo value was not understood.
public enum PlaybackInfoError: Error, Equatable, Sendable {
    /// No digits before the first comma (or none at all).
    case noState
    /// The state field is not a small decimal number.
    case badState
}

/// PlaybackInfo: "PlaybackState,PlaybackRate,ElapsedTime" as UTF-8 text,
/// e.g. "1,1.0,12.5". Only the state is read; rate and elapsed time mean
/// nothing to a wearable without a display. An empty value means no player.
public enum PlaybackInfo {
    public static func state(_ value: Span<UInt8>) throws(PlaybackInfoError) -> PlaybackState {
        var code = 0
        var digits = 0
        for i in 0..<value.count {
            let byte = value[i]
            if byte == UInt8(ascii: ",") { break }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 3 else { throw .badState }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0 else { throw .noState }
        guard code <= 255 else { throw .badState }
        return PlaybackState(code: UInt8(code))
    }
}

/// The bytes we write.
public enum AMSCommand {
    /// To Remote Command: the one byte of the command.
    public static func remoteCommand(_ command: RemoteCommandID, into out: inout ByteBuffer) {
        out.removeAll()
        out.append(command.rawValue)
    }

    /// To Entity Update: the Player's PlaybackInfo, the only attribute the
    /// wearable subscribes to.
    public static func subscribePlaybackInfo(into out: inout ByteBuffer) {
        out.removeAll()
        out.append(EntityID.player.rawValue)
        out.append(PlayerAttributeID.playbackInfo.rawValue)
    }
}
