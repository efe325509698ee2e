// SPDX-License-Identifier: Apache-2.0
// What the simulated phone reports: `PhoneEvent`s for observers (tests, the
// runner's log), `PhoneAction`s the platform must carry out, and the
// configuration and counters. Events and actions wait in bounded rings; a
// full ring refuses the newest and counts it. The rings and the counters
// are one value, `PhoneOutputs`, so that the phone can lend it to its parts
// (the Control Point server, the scenario runner) while they work.

import AMS
import ANCS
import ATT
import Bounded
import CTS

public struct PhoneConfig: Sendable {
    /// The phone's ATT side. `maxMTU` is what it offers and asks for: 185 as
    /// an iPhone does (set 23 to test the smallest MTU).
    public var bearer: ATTBearer.Config = {
        var c = ATTBearer.Config()
        c.maxMTU = 185
        c.outboxCapacity = 16
        return c
    }()
    public var deviceName = PeerName("iPhone")
    /// False: ANCS works on an unsecured link (no 0x05 at all).
    public var requiresSecurity = true
    /// How long the pairing that follows the first 0x05 takes (0–200 ms is
    /// realistic for Just Works; the wearer's consent can take longer).
    public var pairingDelayMs: Int64 = 100
    /// A security request from the wearable this close before the phone's
    /// own encryption of a bonded link (`encrypt-delay`) collides with it.
    public var encryptionCollisionWindowMs: Int64 = 500
    /// Send Title/Subtitle/Message in full, ignoring the requested maximum.
    public var overlongValues = false
    /// Discover the wearable's GAP/GATT after connecting, as iOS does.
    public var browsePeer = true
    /// Preload the display names of Phone, Messages and Mail.
    public var preloadAppleApps = true
    public var notificationCapacity = 256
    public var appCapacity = 32
    /// Notification Source events waiting to be sent (the PreExisting
    /// replay needs none of these).
    public var notificationQueueCapacity = 64
    /// Data Source responses waiting to be sent.
    public var dataSourceQueueCapacity = 4
    /// Prepared writes (long writes) held per link: parts, and bytes in all.
    /// A part beyond either is answered Prepare Queue Full (0x09).
    public var prepareQueueCapacity = 32
    public var prepareQueueCapacityBytes = ATTValue.maximumBytes
    /// PDUs that arrive while pairing runs (the link holds them).
    public var pairingHoldCapacity = 8
    public var eventCapacity = 128
    public var actionCapacity = 4
    /// How long an indication may wait for its confirmation (ATT: 30 s).
    public var indicationTimeoutMs: Int64 = 30_000
    /// `wait-subscribed`, `wait-action` and `wait-media` without a timeout.
    public var defaultWaitTimeoutMs: Int64 = 30_000
    /// The scenario program: bytes of queued lines and how many lines.
    public var scriptCapacityBytes = 64 * 1024
    public var scriptLineCapacity = 2048

    public init() {}
}

/// What the platform must do.
public enum PhoneAction: Equatable, Sendable {
    /// Connect to the wearable, then call `linkUp`.
    case connect
    /// Close the link. The core has already taken it down (`linkDown` again
    /// is harmless).
    case disconnect(reason: Name)
    /// The scenario said `quit`: stop the program.
    case quit
}

/// Up to 160 bytes of a Control Point write; any valid ANCS command fits
/// (the longest is Get App Attributes with a 128-byte app identifier).
/// A longer write is cut and flagged `wasTruncated`.
public typealias ControlPointBytes = InlineBytes<160>

/// Up to 16 bytes of a write to an AMS characteristic (an Entity Update
/// write naming every attribute of an entity is 5); more is cut and flagged.
public typealias AMSWriteBytes = InlineBytes<16>

public enum PhoneEvent: Equatable, Sendable {
    case connected(bonded: Bool)
    case disconnected(reason: Name)
    /// The ATT MTU changed.
    case mtu(Int)
    /// An ANCS write was answered Insufficient Authentication; the link
    /// pairs for `pairingDelayMs`.
    case pairingStarted
    /// ANCS may be used now: `newlyPaired` after pairing, false for a bond
    /// reused at connection.
    case secured(newlyPaired: Bool)
    case subscribed(PhoneCharacteristic)
    case unsubscribed(PhoneCharacteristic)
    /// A Notification Source notification went to the bearer.
    case notificationSent(NotificationSourceEvent)
    /// The PreExisting replay of a subscription has been sent.
    case replayFinished(count: Int)
    /// A Data Source response went out whole, in `fragmentCount` notifications.
    case dataSourceSent(byteCount: Int, fragmentCount: Int)
    /// Every Control Point write, as received (a long write once executed,
    /// its parts joined).
    case controlPointWrite(ControlPointBytes)
    /// A Prepare Write to the Control Point was queued and echoed.
    case writePrepared(offset: Int, byteCount: Int)
    /// An Execute Write: the queued `byteCount` bytes were written
    /// (`write`), or dropped.
    case writeExecuted(write: Bool, byteCount: Int)
    case actionPerformed(uid: UInt32, action: ActionID)
    /// A write to ANCS answered with an ATT error (0x05 before pairing,
    /// 0xA0–0xA3, 0x11, or a scripted `error`).
    case errorAnswered(handle: UInt16, code: UInt8, reason: Name)
    case serviceChangedIndicated(start: UInt16, end: UInt16)
    case indicationConfirmed
    case ancsRemoved
    case ancsAdded
    /// `no-ams`, `no-cts`: the service is gone (`ams`, `cts`).
    case serviceRemoved(Name)
    /// A write to Remote Command, as received, and what came of it.
    case mediaCommand(AMSWriteBytes, MediaCommandResult)
    /// A write to Entity Update or Entity Attribute, as received (a refusal
    /// follows as `errorAnswered`).
    case amsWrite(PhoneCharacteristic, AMSWriteBytes)
    /// A Remote Command notification: the commands available now.
    case remoteCommandsSent(RemoteCommandSet)
    /// An Entity Update notification, its value as sent (cut to fit if
    /// `flags` says Truncated).
    case entityUpdateSent(entity: UInt8, attribute: UInt8, flags: UInt8, value: MediaValue)
    /// A Current Time notification.
    case currentTimeSent(CurrentTime)
    /// A Current Time read answered.
    case currentTimeRead(CurrentTime)
    /// Browsing the wearable's database finished.
    case peerDiscovered(name: PeerName, serviceCount: Int)
    /// A scenario value was cut to fit its storage.
    case valueTruncated(line: Int, field: Name)
    case stepDone(line: Int, command: Name)
    case stepFailed(line: Int, command: Name, reason: Name)
    /// A loaded script ran to its end (`ok`) or stopped at a failed step.
    case scenarioFinished(ok: Bool)
    /// Something turned away or given up (counted).
    case dropped(what: Name, reason: Name)
}

public struct PhoneCounters: Equatable, Sendable {
    public var eventsDropped: UInt64 = 0
    public var actionsDropped: UInt64 = 0
    public var pdusWhileDisconnected: UInt64 = 0
    public var pdusHeldDuringPairing: UInt64 = 0
    public var heldPDUsDropped: UInt64 = 0
    public var notificationQueueFull: UInt64 = 0
    public var dataSourceQueueFull: UInt64 = 0
    public var dataSourceWithoutSubscription: UInt64 = 0
    public var notificationsEvicted: UInt64 = 0
    public var controlPointCommandsIgnored: UInt64 = 0
    public var indicationsNotSubscribed: UInt64 = 0
    public var indicationQueueFull: UInt64 = 0
    public var indicationTimeouts: UInt64 = 0
    public var transactionTimeouts: UInt64 = 0
    public var peerValuesIgnored: UInt64 = 0
    public var bearerDrops: UInt64 = 0
    /// ANCS writes refused because sharing is off (`share off`).
    public var writesRefusedNotShared: UInt64 = 0
    /// Security requests from the wearable (`securityRequested`)...
    public var securityRequests: UInt64 = 0
    /// ...that came while the phone's own encryption was pending or running.
    public var securityCollisions: UInt64 = 0
    /// Control Point writes taken after `drop-subscription`, before the
    /// wearable subscribed again.
    public var controlPointWritesWithoutSession: UInt64 = 0
    /// Notification Source events not sent because of `ns-dead`.
    public var notificationsWithheld: UInt64 = 0
    /// Data Source responses not sent because of `lose-response`.
    public var responsesLost: UInt64 = 0
    /// Remote Command writes (carried out or refused).
    public var mediaCommands: UInt64 = 0
    /// AMS writes answered with an ATT error (0xA0–0xA2).
    public var amsWritesRefused: UInt64 = 0
    /// Write Commands to AMS characteristics (none has write-without-response).
    public var amsWriteCommandsIgnored: UInt64 = 0
    public init() {}
}

/// The phone's outputs: its event and action rings and its counters.
struct PhoneOutputs: ~Copyable {
    private var events: RingBuffer<PhoneEvent>
    private var actions: RingBuffer<PhoneAction>
    var counters = PhoneCounters()

    init(eventCapacity: Int, actionCapacity: Int) {
        events = RingBuffer(capacity: eventCapacity, policy: .refuseNewest)
        actions = RingBuffer(capacity: actionCapacity, policy: .refuseNewest)
    }

    mutating func emit(_ event: PhoneEvent) {
        if case .refused = events.push(event) { counters.eventsDropped &+= 1 }
    }

    mutating func act(_ action: PhoneAction) {
        if case .refused = actions.push(action) { counters.actionsDropped &+= 1 }
    }

    mutating func nextEvent() -> PhoneEvent? { events.popFirst() }
    mutating func nextAction() -> PhoneAction? { actions.popFirst() }
}
