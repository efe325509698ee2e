// SPDX-License-Identifier: Apache-2.0
// What the phone link reports and asks for, as values: its state, its
// events, its requests to the platform, and the typed reasons inside them.
// Reasons and results are enums so the policy can switch over them
// exhaustively; they become text only in the events stream and the log
// (App's Reporter). docs/architecture.md has the flow.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import Platform

/// Where the link is in its bring-up.
public enum LinkState: Equatable, Sendable {
    case disconnected
    case exchangingMTU
    case discoveringGATT
    case subscribingServiceChanged
    case discoveringANCS
    /// ANCS is found; nothing is subscribed until the link is encrypted.
    case awaitingEncryption
    case ancsAbsent
    case subscribingDataSource
    case subscribingNotificationSource
    /// The phone refused a subscription until the user allows notification
    /// sharing; the write is tried again at a backoff.
    case waitingForPermission
    case live
    case resubscribing
}

/// Why a session or the link ended.
public enum EndReason: Equatable, Sendable {
    /// The platform saw the link go, in its words (`peer-closed`, an HCI
    /// disconnection reason, a socket error).
    case platform(Name)
    /// An ATT request went unanswered for the transaction timeout.
    case attTimeout
    /// The bearer refused a bring-up request (its queue full): nothing would
    /// time out, so the link is ended.
    case attRefused
    /// The link was not encrypted in time, the raise failed, or ANCS
    /// discovery was refused for want of security and the raise gave up.
    case notSecured
    /// No usable ANCS after the bring-up retries.
    case ancsUnavailable
    /// The phone refused a subscription (other than for permission).
    case subscribeFailed
    // The session ends, the link stays up:
    /// A Service Changed indication covered the ANCS handles.
    case serviceChanged
    /// The link became encrypted while ANCS was absent: discovered again.
    case encrypted
    /// The keep-alive probe was not answered as ANCS answers.
    case keepAlive
    /// Notification Source was silent for `resubscribeQuietMs`.
    case notificationSourceSilent

    /// The link itself stays up (only the session ended).
    public var linkStaysUp: Bool {
        switch self {
        case .serviceChanged, .encrypted, .keepAlive, .notificationSourceSilent: true
        default: false
        }
    }

    /// The wearable ended the link itself: the link asked for it (an ATT
    /// timeout, a refused request, security or a subscription that failed),
    /// or its own Bluetooth stack did (`LinkInput.endedByLocalHost`: a
    /// controller reset). The phone was in reach when it ended.
    public var endedByWearable: Bool {
        switch self {
        case .attTimeout, .attRefused, .notSecured, .ancsUnavailable, .subscribeFailed: true
        case .platform(let name): name == LinkInput.endedByLocalHost
        case .serviceChanged, .encrypted, .keepAlive, .notificationSourceSilent: false
        }
    }
}

/// Something from the phone that was turned away (counted).
public enum LinkDrop: Equatable, Sendable {
    /// An ATT PDU the bearer could not take.
    case attPDU(ATTBearer.DropReason)
    case notificationSource(NotificationSourceError)
    /// A Notification Source value while no session is active.
    case notificationSourceOutsideSession
    case dataSource(DataSourceReassembler.DropReason)
    case notificationOnUnknownHandle
    case indicationOnUnknownHandle
    case serviceChangedMalformed
    /// An AMS Entity Update the wearable cannot read.
    case entityUpdate(EntityUpdateError)
    /// A PlaybackInfo value without a readable state.
    case playbackInfo(PlaybackInfoError)
    /// A Current Time or Local Time Information value out of range.
    case currentTime(CTSError)
}

/// Which of the phone's characteristics a subscription was for.
public enum SubscribedSource: Equatable, Sendable {
    case dataSource
    case notificationSource
}

/// Something on the link went wrong (reported; what follows is in the
/// events around it).
public enum LinkError: Equatable, Sendable {
    /// The bearer refused a request (its queue full).
    case requestRefused
    /// The phone has no Service Changed characteristic (or no GATT service).
    case serviceChangedAbsent
    case serviceChangedSubscribeFailed
    case gattDiscoveryFailed
    /// ANCS discovery was refused for want of security.
    case ancsDiscoveryNotSecured
    case ancsDiscoveryFailed
    /// ANCS was found without a usable Notification Source.
    case noNotificationSource
    case subscribeFailed(SubscribedSource)
    case transactionTimeout
    /// The link could not be encrypted: it is dropped.
    case encryptionFailed(EncryptionFailure)
    /// The phone refused a write to one of its AMS or CTS characteristics
    /// (a subscription or the Entity Update request), with this ATT error.
    case companionWriteFailed(CompanionCharacteristic, code: UInt8)
}

/// Why a link was never encrypted.
public enum EncryptionFailure: Equatable, Sendable {
    /// Not encrypted within the bound (`bondedEncryptionTimeoutMs`,
    /// `pairingTimeoutMs`): a device with a bonded address but no key.
    case timeout
    /// The raise failed (no key, the pairing refused).
    case refused
}

/// The characteristics of the phone's other services the link writes.
public enum CompanionCharacteristic: Equatable, Sendable {
    case remoteCommand
    case entityUpdate
    case currentTime
}

/// What became of a media press (an AMS Remote Command).
public enum MediaCommandResult: Equatable, Sendable {
    /// The phone acknowledged the write.
    case sent
    /// No AMS, no player, or the phone does not list the command now:
    /// nothing was sent.
    case notAvailable
    /// A media command was already waiting for the phone.
    case refused
    /// The phone answered with this ATT error (0xA0 Invalid State, 0xA1
    /// Invalid Command, 0xA2 Absent Attribute, or another).
    case phoneError(UInt8)
    /// The write was abandoned before the phone answered (the link ended
    /// or the phone's services changed).
    case interrupted
}

/// The phone's media player as AMS tells it.
public enum MediaEvent: Equatable, Sendable {
    /// The phone has no AMS (older iOS, or not offered to this wearable).
    case absent
    /// PlaybackInfo changed state.
    case playback(PlaybackState)
    /// PlaybackInfo is empty: no media app.
    case noPlayer
    /// A media press ended.
    case commandEnded(RemoteCommandID, MediaCommandResult)
}

/// Why the wearable does not know the time.
public enum TimeUnknownReason: Equatable, Sendable {
    /// The phone has no Current Time Service.
    case noCTS
    /// Reading Current Time failed (an ATT error).
    case readFailed
    /// The phone's Current Time value was out of range.
    case badValue
}

/// The phone's clock (Current Time Service).
public enum TimeEvent: Equatable, Sendable {
    /// The local time was read or notified; `jumpS` is how far it moved
    /// from the time the wearable kept (nil the first time).
    case learned(PhoneClock, jumpS: Int64?)
    case unknown(TimeUnknownReason)
}

/// Why handles kept from an earlier link of a bonded phone were dropped
/// for discovery.
public enum StaleHandlesReason: Equatable, Sendable {
    /// The phone's Database Hash is not the one kept.
    case hashChanged
    /// The phone answered a cached handle with Invalid Handle, Attribute
    /// Not Found or Database Out Of Sync.
    case handleRefused
    /// The phone indicated Service Changed over them.
    case serviceChanged

    public var name: StaticString {
        switch self {
        case .hashChanged: "hash-changed"
        case .handleRefused: "handle-refused"
        case .serviceChanged: "service-changed"
        }
    }
}

/// The bonded phone's handle cache on this link.
public enum HandlesEvent: Equatable, Sendable {
    /// ANCS (and what else was kept) is taken from the last link's
    /// handles: no discovery.
    case cached
    /// Those handles were wrong: the phone is discovered again.
    case stale(StaleHandlesReason)
}

public enum LinkEvent: Equatable, Sendable {
    case connected
    /// The link became encrypted (paired or bonded).
    case secured
    case mtu(Int)
    /// ANCS and its characteristics were found.
    case discovered
    case handles(HandlesEvent)
    case ancsAbsent
    /// Notification Source is subscribed: the session is live.
    case subscribed
    /// The phone refused a subscription (0x03/0x08: the user has not
    /// allowed notification sharing yet); tried again in `retryInMs`.
    case permissionWaiting(retryInMs: Int64)
    /// On the live link, Control Point writes were refused with 0x03/0x08
    /// `inARow` times in a row (probes or commands): the phone's "Share
    /// System Notifications" is off, or its prompt is pending. Reported at
    /// `PhoneLinkConfig.controlPointRefusalsForPermission` refusals and at
    /// each one after; the link stays as it is.
    case controlPointNotPermitted(inARow: Int)
    /// After `controlPointNotPermitted`, the phone took a Control Point
    /// write again (or answered one as ANCS does) or notified on
    /// Notification Source: it shares notifications again.
    case controlPointPermitted
    case ended(reason: EndReason)
    case notification(TableChange)
    case command(CommandResult)
    case drop(LinkDrop)
    case error(LinkError)
    case media(MediaEvent)
    case time(TimeEvent)
}

/// What the link asks of the platform. At most one of each kind is ever
/// waiting (see `PhoneLink.nextAction`), so none can be lost to a full queue.
public enum LinkAction: Equatable, Sendable {
    /// Ask the kernel to raise the link's security (SMP pairing or
    /// encryption with a stored key); report with `securityChanged`.
    case raiseSecurity(attempt: Int)
    case disconnect(reason: EndReason)
}

/// Who hears the link's events, in the call that causes them (after the
/// sink): the policy in the firmware (AlertPolicy), `LinkEventRecorder`
/// where the link runs alone (tests, fuzzing, tools). `session` is the
/// link's ANCS session, lent for the call: commands may be queued on it
/// (they are sent at `flush`).
public protocol LinkEventHandler: ~Copyable {
    mutating func linkEvent(_ event: LinkEvent, session: inout Session, now: Instant)
}

/// Keeps the link's events, for driving a `PhoneLink` without the policy.
/// Bounded: past `capacity` an event is counted in `dropped`, not kept.
public struct LinkEventRecorder: LinkEventHandler, ~Copyable {
    private var events: RingBuffer<LinkEvent>
    public private(set) var dropped: UInt64 = 0

    public init(capacity: Int = 64) { events = RingBuffer(capacity: capacity, policy: .refuseNewest) }

    public mutating func linkEvent(_ event: LinkEvent, session: inout Session, now: Instant) {
        if case .refused = events.push(event) { dropped &+= 1 }
    }

    public mutating func next() -> LinkEvent? { events.popFirst() }
}

/// A sink that keeps nothing, for a link driven alone.
public struct NoSink: EventSink {
    public init() {}
    public mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant) {}
}
