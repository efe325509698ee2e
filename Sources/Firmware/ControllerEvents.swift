// SPDX-License-Identifier: Apache-2.0
// What the Controller (Controller.swift) is configured with and what it
// reports: its configuration, its events and their reasons, and the
// pairing a wearer allowed on the current link.

import ANCS
import Bounded
import Mgmt

public struct ControllerConfig: Sendable {
    /// False on links without a controller (the UNIX link): nothing is sent.
    public var enabled = true
    public var index: UInt16 = 0
    public var name = "Wristlink"
    public var pairingWindowMs: Int64 = 120_000
    public var consentWindowMs: Int64 = 20_000
    public var autoAcceptPairing = false
    public var retryDelayMs: Int64 = 5_000

    public init() {}
}

public enum ControllerEvent: Equatable, Sendable {
    /// Set-up finished: the wearable is advertising (READY for systemd, as
    /// are `controllerGone` and `setupFailed`).
    case advertising
    case controllerGone
    case setupFailed(step: SetupStep, failure: SetupFailure)
    case pairingMode(on: Bool, reason: PairingModeReason)
    /// A phone asks to pair: waiting for the wearer's press.
    case consentRequested
    case consent(granted: Bool, reason: ConsentReason)
    case bondStored
    case bondIgnored(reason: BondIgnoredReason)
    /// A phone connected, with the address the kernel names it by: its
    /// identity address once its resolvable private address resolved with
    /// a stored IRK, else the address it connected from.
    case connected(bonded: Bool, address: DeviceAddress)
    /// A bonded phone is back; how long it was gone.
    case reconnected(afterMs: Int64)
    case refusedUnbonded
    case disconnected(reason: UInt8)
    case pairingFailed(status: MgmtStatus)
    /// A phone we hold a bond for asks to pair again or failed to encrypt:
    /// it has probably forgotten us. `replacing`: pairing mode is on and the
    /// new pairing will replace the bond; otherwise it was refused.
    case staleBond(replacing: Bool)
    /// A disconnection got no fast advertising phase: the phone keeps
    /// reconnecting (see `ControllerSetup`, reconnection storms).
    case fastAdvertisingSkipped
    case dropped(ControllerDrop)
}

/// Why pairing mode opened or closed.
public enum PairingModeReason: Equatable, Sendable {
    /// No bond is stored: the wearable is open until one is.
    case noBond
    /// The wearer held both buttons.
    case buttons
    /// A pairing stored a bond.
    case bonded
    /// The pairing window ran out.
    case timeout
}

/// How the wearer's answer to a pairing request came about.
public enum ConsentReason: Equatable, Sendable {
    /// `autoAcceptPairing` is on.
    case automatic
    /// The wearer pressed accept.
    case button
    /// The wearer pressed reject.
    case rejected
    /// Pairing mode is off: refused without asking.
    case notPairing
    /// Nobody answered within the consent window.
    case timeout
}

/// A management event or command the controller could not handle.
public enum ControllerDrop: Equatable, Sendable {
    case mgmtEventMalformed
    case mgmtQueueFull
    case mgmtEncode
}

/// A pairing the wearer allowed: keys are stored only from it.
struct AllowedPairing {
    /// What the kernel named the phone by when it was allowed.
    var address: DeviceAddress
    /// The identity its IRK named, and that IRK, once it came.
    var identity: DeviceAddress? = nil
    var identityKey: NewIdentityResolvingKey? = nil
    /// A key of this pairing changed the store: the next ones complete
    /// that bond.
    var storedKey = false

    init(address: DeviceAddress) { self.address = address }

    func covers(_ other: DeviceAddress) -> Bool { other == address || other == identity }
}
