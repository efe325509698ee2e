// SPDX-License-Identifier: Apache-2.0
// The phone's media app as AMS's Media Source (Apple's "Apple Media Service
// Specification"; docs/ams.md): what plays, the commands it takes, and the
// notifications its three characteristics owe the wearable (the Media
// Remote).
//
// The player is `playing`, `paused` or `unavailable` (no media app: the
// Remote Command list is empty and every attribute's value is empty). It
// starts paused, 12.5 s into a track, with Play, Pause, TogglePlayPause,
// NextTrack, PreviousTrack, VolumeUp and VolumeDown available. The elapsed
// time runs on with the monotonic clock while it plays. The other
// attributes are fixed text (a player named "Music", one track of a queue
// of 12); only PlaybackInfo changes.
//
// Writes, as the specification has them (each answered with a Write
// Response or an ATT Error Response; a Write Command is ignored: none of
// the three has write-without-response):
// - Remote Command: one byte. Not one byte, or an ID that is not available
//   now (or not defined), is 0xA1 Invalid Command; with no player it is
//   0xA0 Invalid State. Otherwise the command is carried out:
//   TogglePlayPause flips, Play and Pause set, Next/PreviousTrack start the
//   track again (elapsed 0), VolumeUp/Down change nothing the wearable sees.
// - Entity Update: an EntityID and one or more AttributeIDs, replacing what
//   was registered for that entity; the current values follow at once, and
//   each later change of a registered attribute is notified. Fewer than two
//   bytes is 0xA1; written while Entity Update notifications are off, 0xA0
//   (the specification's example of Invalid State: the Media Remote has not
//   set up AMS); an entity or attribute the phone does not have, 0xA2
//   Absent Attribute.
// - Entity Attribute: EntityID, AttributeID (exactly two bytes, else
//   0xA1; 0xA0 and 0xA2 as for Entity Update). A read then answers the
//   attribute's whole value; an empty one (or none chosen) is 0xA2.
//
// Notifications are pulled, like the phone's others: a flag for the
// Remote Command list and a bit per registered attribute say what is
// owed, and `pop` writes the next one with the values as they are when it
// is sent. An Entity Update value longer than MTU − 3 − 3 is cut at a
// UTF-8 character boundary and flagged Truncated. What the wearable
// registered is per link.

import AMS
import ATT
import Bounded

/// The phone's media app (`media play|pause|unavailable`).
public enum MediaState: Equatable, Sendable {
    case playing
    case paused
    /// No media app: no commands, empty values.
    case unavailable

    public var name: StaticString {
        switch self {
        case .playing: "playing"
        case .paused: "paused"
        case .unavailable: "unavailable"
        }
    }
}

/// An AMS attribute's value as text (the longest fixed one is 30 bytes).
public typealias MediaValue = InlineBytes<32>

/// What came of a Remote Command write.
public enum MediaCommandResult: Equatable, Sendable {
    /// Carried out; the player's state after it.
    case done(MediaState)
    case refused(code: UInt8, reason: Name)
}

struct MediaPlayer {
    static let defaultCommands = RemoteCommandSet([.play, .pause, .togglePlayPause, .nextTrack, .previousTrack, .volumeUp, .volumeDown])
    static let startElapsedMs: Int64 = 12_500
    /// Player, Queue, Track (their attributes: 3, 4, 4; `attributeCount`).
    static let entityCount: UInt8 = 3

    /// Whether the wearable has the two notifications on.
    struct Subscribers {
        var remoteCommand: Bool
        var entityUpdate: Bool
    }

    private(set) var state = MediaState.paused
    /// Elapsed time of the track at `since`.
    private var elapsedMs = startElapsedMs
    private var since = Instant.zero
    /// Registered attributes, a bit per AttributeID, per entity (this link).
    private var registered = InlineArray<3, UInt8>(repeating: 0)
    /// Entity Update notifications owed, as `registered`.
    private var owed = InlineArray<3, UInt8>(repeating: 0)
    private var commandListOwed = false
    /// The Entity Attribute the wearable chose (entity, attribute).
    private var chosen: (entity: UInt8, attribute: UInt8)? = nil

    var available: RemoteCommandSet { state == .unavailable ? RemoteCommandSet() : Self.defaultCommands }

    /// A new link or none: registrations and owed notifications go.
    mutating func resetLink() {
        registered = InlineArray(repeating: 0)
        owed = InlineArray(repeating: 0)
        commandListOwed = false
        chosen = nil
    }

    /// Remote Command notifications were turned on: the list goes at once.
    mutating func remoteCommandSubscribed() { commandListOwed = true }

    // MARK: The phone's own changes

    /// The user started, paused or closed the media app.
    mutating func set(_ newState: MediaState, now: Instant) {
        guard newState != state else { return }
        let wasAvailable = state != .unavailable
        elapsedMs = elapsed(at: now)
        since = now
        state = newState
        if wasAvailable != (newState != .unavailable) {
            // Every value appears or empties, and the command list changes.
            commandListOwed = true
            for e in 0..<3 { owed[e] |= registered[e] }
        } else {
            owe(.player, PlayerAttributeID.playbackInfo.rawValue)
        }
    }

    private func elapsed(at now: Instant) -> Int64 {
        state == .playing ? elapsedMs + max(0, now.ms(since: since)) : elapsedMs
    }

    private mutating func owe(_ entity: EntityID, _ attribute: UInt8) {
        owed[Int(entity.rawValue)] |= registered[Int(entity.rawValue)] & (1 << attribute)
    }

    // MARK: Writes

    /// A write to one of the three characteristics on a secured link:
    /// answered into `reply` (Write Response or Error Response). Returns the
    /// Remote Command written, for the scenario's `wait-media`, whatever
    /// the answer.
    mutating func write(
        _ characteristic: PhoneCharacteristic, _ value: Span<UInt8>, handle: UInt16, now: Instant, subscribers: Subscribers,
        reply: inout ByteBuffer, outputs: inout PhoneOutputs
    ) -> RemoteCommandID? {
        if characteristic == .remoteCommand {
            let command = value.count == 1 ? RemoteCommandID(rawValue: value[0]) : nil
            let result = remoteCommand(value, now: now)
            outputs.counters.mediaCommands &+= 1
            outputs.emit(.mediaCommand(AMSWriteBytes(value), result))
            if case .refused(let code, _) = result {
                outputs.counters.amsWritesRefused &+= 1
                PDUWriter.errorResponse(&reply, requestOpcode: ATTOpcode.writeRequest, handle: handle, code: code)
            } else {
                PDUWriter.writeResponse(&reply)
            }
            return command
        }
        outputs.emit(.amsWrite(characteristic, AMSWriteBytes(value)))
        let refusal =
            characteristic == .entityUpdate
            ? entityUpdate(value, subscribed: subscribers.entityUpdate) : entityAttribute(value, subscribed: subscribers.entityUpdate)
        if let (code, reason) = refusal {
            outputs.counters.amsWritesRefused &+= 1
            PDUWriter.errorResponse(&reply, requestOpcode: ATTOpcode.writeRequest, handle: handle, code: code)
            outputs.emit(.errorAnswered(handle: handle, code: code, reason: reason))
        } else {
            PDUWriter.writeResponse(&reply)
        }
        return nil
    }

    private mutating func remoteCommand(_ value: Span<UInt8>, now: Instant) -> MediaCommandResult {
        guard value.count == 1 else { return .refused(code: AMSErrorCode.invalidCommand, reason: "malformed") }
        guard state != .unavailable else { return .refused(code: AMSErrorCode.invalidState, reason: "no-player") }
        guard let command = RemoteCommandID(rawValue: value[0]) else {
            return .refused(code: AMSErrorCode.invalidCommand, reason: "unknown-command")
        }
        guard available.contains(command) else { return .refused(code: AMSErrorCode.invalidCommand, reason: "not-available") }
        switch command {
        case .togglePlayPause: set(state == .playing ? .paused : .playing, now: now)
        case .play: set(.playing, now: now)
        case .pause: set(.paused, now: now)
        case .nextTrack, .previousTrack:
            elapsedMs = 0
            since = now
            owe(.player, PlayerAttributeID.playbackInfo.rawValue)
        default: break
        }
        return .done(state)
    }

    private static func attributeCount(_ entity: UInt8) -> UInt8 { entity == EntityID.player.rawValue ? 3 : 4 }

    /// Nil when `entity`, `attribute` name something the phone has.
    private static func absent(_ entity: UInt8, _ attribute: UInt8) -> (UInt8, Name)? {
        guard entity < entityCount else { return (AMSErrorCode.absentAttribute, "unknown-entity") }
        guard attribute < attributeCount(entity) else { return (AMSErrorCode.absentAttribute, "unknown-attribute") }
        return nil
    }

    private mutating func entityUpdate(_ value: Span<UInt8>, subscribed: Bool) -> (UInt8, Name)? {
        guard value.count >= 2 else { return (AMSErrorCode.invalidCommand, "malformed") }
        guard subscribed else { return (AMSErrorCode.invalidState, "not-subscribed") }
        var bits: UInt8 = 0
        for i in 1..<value.count {
            if let refusal = Self.absent(value[0], value[i]) { return refusal }
            bits |= 1 << value[i]
        }
        registered[Int(value[0])] = bits
        owed[Int(value[0])] = bits
        return nil
    }

    private mutating func entityAttribute(_ value: Span<UInt8>, subscribed: Bool) -> (UInt8, Name)? {
        guard value.count == 2 else { return (AMSErrorCode.invalidCommand, "malformed") }
        guard subscribed else { return (AMSErrorCode.invalidState, "not-subscribed") }
        if let refusal = Self.absent(value[0], value[1]) { return refusal }
        chosen = (value[0], value[1])
        return nil
    }

    // MARK: Values

    /// What a read of Entity Attribute answers; nil (Absent Attribute) when
    /// none was chosen or its value is empty.
    func chosenValue(at now: Instant) -> MediaValue? {
        guard let chosen else { return nil }
        let v = value(entity: chosen.entity, attribute: chosen.attribute, at: now)
        return v.isEmpty ? nil : v
    }

    /// An attribute's value now, as the specification writes it.
    func value(entity: UInt8, attribute: UInt8, at now: Instant) -> MediaValue {
        var v = MediaValue()
        guard state != .unavailable else { return v }
        switch (entity, attribute) {
        case (0, 0): ScenarioParser.assign(&v, "Music")
        case (0, 1):
            // PlaybackState,PlaybackRate,ElapsedTime: "1,1.0,12.5".
            ScenarioParser.assign(&v, state == .playing ? "1,1.0," : "0,0.0,")
            let ms = elapsed(at: now)
            appendDecimal(&v, ms / 1_000)
            v.append(UInt8(ascii: "."))
            v.append(UInt8(ascii: "0") + UInt8(ms % 1_000 / 100))
        case (0, 2): ScenarioParser.assign(&v, "0.5")
        case (1, 0): ScenarioParser.assign(&v, "2")
        case (1, 1): ScenarioParser.assign(&v, "12")
        case (1, 2), (1, 3): ScenarioParser.assign(&v, "0")
        case (2, 0): ScenarioParser.assign(&v, "The Wristlinks")
        case (2, 1): ScenarioParser.assign(&v, "Sans-IO")
        case (2, 2): ScenarioParser.assign(&v, "Bounded Buffers (Extended Mix)")
        default: ScenarioParser.assign(&v, "215.0")
        }
        return v
    }

    private func appendDecimal(_ v: inout MediaValue, _ n: Int64) {
        var divisor: Int64 = 1
        while n / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            v.append(UInt8(ascii: "0") + UInt8(n / divisor % 10))
            divisor /= 10
        }
    }

    // MARK: Notifications

    /// Writes the next notification owed into `out` (a whole PDU); false
    /// when none is. What is owed to a characteristic whose notifications
    /// are off is dropped.
    mutating func pop(into out: inout ByteBuffer, mtu: Int, now: Instant, subscribers: Subscribers, outputs: inout PhoneOutputs) -> Bool {
        if !subscribers.remoteCommand { commandListOwed = false }
        if !subscribers.entityUpdate { owed = InlineArray(repeating: 0) }
        if commandListOwed {
            commandListOwed = false
            let list = available
            out.removeAll()
            out.append(ATTOpcode.handleValueNotification)
            out.appendLE16(PhoneDatabase.remoteCommandValue)
            out.append(contentsOf: list.encoded().span)
            outputs.emit(.remoteCommandsSent(list))
            return true
        }
        for e in 0..<Int(Self.entityCount) where owed[e] != 0 {
            var attribute: UInt8 = 0
            while owed[e] & (1 << attribute) == 0 { attribute += 1 }
            owed[e] &= ~(1 << attribute)
            let v = value(entity: UInt8(e), attribute: attribute, at: now)
            let room = mtu - 3 - 3
            var length = v.count
            if length > room { length = UTF8Boundary.lastCompleteEnd(v.span.extracting(0..<room)) }
            let flags = length < v.count ? EntityUpdateFlag.truncated : 0
            out.removeAll()
            out.append(ATTOpcode.handleValueNotification)
            out.appendLE16(PhoneDatabase.entityUpdateValue)
            out.append(UInt8(e))
            out.append(attribute)
            out.append(flags)
            out.append(contentsOf: v.span.extracting(0..<length))
            outputs.emit(.entityUpdateSent(entity: UInt8(e), attribute: attribute, flags: flags, value: MediaValue(v.span.extracting(0..<length))))
            return true
        }
        return false
    }
}
