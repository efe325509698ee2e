// SPDX-License-Identifier: Apache-2.0
// The phone link's settings (each with the reason for its default) and
// its counts, apart from the link's state machine (PhoneLink.swift).

import ANCS
import ATT
import GATT

public struct PhoneLinkConfig: Sendable {
    public var bearer = ATTBearer.Config()
    public var session = SessionConfig()
    public var deviceName = GATTServer.DeviceName("Wristlink")
    /// Notification Source silence after which the keep-alive probe is sent.
    public var keepAliveQuietMs: Int64 = 15 * 60_000
    /// Notification Source silence after which it is subscribed again on
    /// the live link (off, then on), even though the keep-alive probe is
    /// answered: real iPhones can stop notifying while the Control Point
    /// still answers.
    public var resubscribeQuietMs: Int64 = 30 * 60_000
    /// The first wait before a subscription refused for want of the user's
    /// permission (0x03/0x08) is tried again; it doubles each time...
    public var permissionRetryFirstMs: Int64 = 5_000
    /// ...up to this.
    public var permissionRetryMaxMs: Int64 = 60_000
    /// Control Point writes refused with 0x03/0x08 in a row on a live link
    /// (the keep-alive probe's included) after which the wearable takes it
    /// that the phone does not share notifications (PebbleOS tells the
    /// wearer after two checks): one refusal is that command's failure.
    public var controlPointRefusalsForPermission = 2
    /// On a link to a bonded phone: how long after the connection a request
    /// that needs security waits for the phone to encrypt by itself before
    /// the wearable asks for it.
    public var bondedEncryptionWaitMs: Int64 = 1_500
    /// On a link to a bonded phone: how long after the raise (asked
    /// `bondedEncryptionWaitMs` after the connection) the link may stay
    /// unencrypted before it is dropped. A bonded iPhone re-encrypts with
    /// the stored key in a few connection intervals; a device that only
    /// claims the bonded address has no key and never does.
    public var bondedEncryptionTimeoutMs: Int64 = 6_000
    /// On a link that is not to a bonded phone (pairing mode): how long
    /// after the connection the pairing may take (SMP's own 30 s, the
    /// wearer's consent window and the phone's dialog) before the link is
    /// dropped.
    public var pairingTimeoutMs: Int64 = 60_000
    /// A bring-up step that failed for a reason other than security or the
    /// user's permission (an ATT error, a malformed answer, no usable ANCS
    /// on an encrypted link) is tried again after this wait, doubling...
    public var bringUpRetryFirstMs: Int64 = 2_000
    /// ...this many times; then the link is ended (a bonded iPhone
    /// reconnects and starts afresh).
    public var bringUpRetries = 2
    /// Once ANCS is live, use the phone's Apple Media Service and Current
    /// Time Service too (AMSClient.swift, CTSClient.swift). Off: ANCS alone.
    public var companionServices = true

    public init() {}
}

public struct PhoneLinkCounters: Equatable, Sendable {
    public var unknownHandleNotifications: UInt64 = 0
    public var staleResponses: UInt64 = 0
    public var probesSent: UInt64 = 0
    public var resubscriptions: UInt64 = 0
    /// Resubscriptions because Notification Source was silent too long.
    public var silenceResubscriptions: UInt64 = 0
    /// Notifications removed because the phone answered 0xA2 (the UID is
    /// gone) to a command on them.
    public var removedByInvalidUID: UInt64 = 0
    /// Subscription writes refused with 0x03/0x08 (sharing not allowed yet).
    public var permissionRefusals: UInt64 = 0
    /// Control Point writes refused with 0x03/0x08 on the live link.
    public var controlPointPermissionRefusals: UInt64 = 0
    public var raiseSecurityRequests: UInt64 = 0
    /// A raise wanted while one was outstanding or deferred: not asked again.
    public var raisesCoalesced: UInt64 = 0
    /// Raises deferred on a bonded link to let the phone encrypt first.
    public var raisesDeferred: UInt64 = 0
    /// ANCS discoveries started again because the link became encrypted.
    public var rediscoveriesAfterEncryption: UInt64 = 0
    /// Links dropped because they were not encrypted in time, or the raise
    /// failed (no key, pairing refused): nothing was subscribed on them.
    public var encryptionFailures: UInt64 = 0
    /// Bring-up steps tried again after a failure (`bringUpRetryFirstMs`).
    public var bringUpRetries: UInt64 = 0
    /// Battery Level notifications and Service Changed indications sent.
    public var batteryNotifications: UInt64 = 0
    public var serviceChangedIndications: UInt64 = 0
    /// Links brought up from a bonded phone's cached handles, and cached
    /// handles found stale (then discovered again).
    public var handleCacheUses: UInt64 = 0
    public var handleCacheStale: UInt64 = 0
    public init() {}
}
