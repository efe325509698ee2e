// SPDX-License-Identifier: Apache-2.0
// Every management-interface number this module uses, as a type. Values the
// kernel may send that we do not name (newer statuses, settings bits, key
// types) are kept in `rawValue`, never rejected for being unknown.

/// Command codes (mgmt-api.txt, "Command Code").
public struct MgmtOpcode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let readControllerIndexList = MgmtOpcode(rawValue: 0x0003)
    public static let readControllerInformation = MgmtOpcode(rawValue: 0x0004)
    public static let setPowered = MgmtOpcode(rawValue: 0x0005)
    public static let setConnectable = MgmtOpcode(rawValue: 0x0007)
    public static let setBondable = MgmtOpcode(rawValue: 0x0009)
    public static let setLowEnergy = MgmtOpcode(rawValue: 0x000D)
    public static let setLocalName = MgmtOpcode(rawValue: 0x000F)
    public static let loadLongTermKeys = MgmtOpcode(rawValue: 0x0013)
    public static let disconnect = MgmtOpcode(rawValue: 0x0014)
    public static let setIOCapability = MgmtOpcode(rawValue: 0x0018)
    public static let unpairDevice = MgmtOpcode(rawValue: 0x001B)
    public static let userConfirmationReply = MgmtOpcode(rawValue: 0x001C)
    public static let userConfirmationNegativeReply = MgmtOpcode(rawValue: 0x001D)
    public static let setAdvertising = MgmtOpcode(rawValue: 0x0029)
    public static let setBREDR = MgmtOpcode(rawValue: 0x002A)
    public static let setSecureConnections = MgmtOpcode(rawValue: 0x002D)
    public static let loadIdentityResolvingKeys = MgmtOpcode(rawValue: 0x0030)
    public static let addAdvertising = MgmtOpcode(rawValue: 0x003E)
    public static let removeAdvertising = MgmtOpcode(rawValue: 0x003F)
    public static let setDefaultSystemConfiguration = MgmtOpcode(rawValue: 0x004C)
}

/// Event codes (mgmt-api.txt, "Event Code").
public struct MgmtEventCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let commandComplete = MgmtEventCode(rawValue: 0x0001)
    public static let commandStatus = MgmtEventCode(rawValue: 0x0002)
    public static let controllerError = MgmtEventCode(rawValue: 0x0003)
    public static let indexAdded = MgmtEventCode(rawValue: 0x0004)
    public static let indexRemoved = MgmtEventCode(rawValue: 0x0005)
    public static let newSettings = MgmtEventCode(rawValue: 0x0006)
    public static let newLongTermKey = MgmtEventCode(rawValue: 0x000A)
    public static let deviceConnected = MgmtEventCode(rawValue: 0x000B)
    public static let deviceDisconnected = MgmtEventCode(rawValue: 0x000C)
    public static let userConfirmationRequest = MgmtEventCode(rawValue: 0x000F)
    public static let authenticationFailed = MgmtEventCode(rawValue: 0x0011)
    public static let newIdentityResolvingKey = MgmtEventCode(rawValue: 0x0018)
    public static let advertisingAdded = MgmtEventCode(rawValue: 0x0023)
    public static let advertisingRemoved = MgmtEventCode(rawValue: 0x0024)
}

/// The status in Command Complete / Command Status ("Error Codes").
public struct MgmtStatus: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = MgmtStatus(rawValue: 0x00)
    public static let unknownCommand = MgmtStatus(rawValue: 0x01)
    public static let notConnected = MgmtStatus(rawValue: 0x02)
    public static let failed = MgmtStatus(rawValue: 0x03)
    public static let connectFailed = MgmtStatus(rawValue: 0x04)
    public static let authenticationFailed = MgmtStatus(rawValue: 0x05)
    public static let notPaired = MgmtStatus(rawValue: 0x06)
    public static let noResources = MgmtStatus(rawValue: 0x07)
    public static let timeout = MgmtStatus(rawValue: 0x08)
    public static let alreadyConnected = MgmtStatus(rawValue: 0x09)
    public static let busy = MgmtStatus(rawValue: 0x0A)
    public static let rejected = MgmtStatus(rawValue: 0x0B)
    public static let notSupported = MgmtStatus(rawValue: 0x0C)
    public static let invalidParameters = MgmtStatus(rawValue: 0x0D)
    public static let disconnected = MgmtStatus(rawValue: 0x0E)
    public static let notPowered = MgmtStatus(rawValue: 0x0F)
    public static let cancelled = MgmtStatus(rawValue: 0x10)
    public static let invalidIndex = MgmtStatus(rawValue: 0x11)
    public static let rfKilled = MgmtStatus(rawValue: 0x12)
    public static let alreadyPaired = MgmtStatus(rawValue: 0x13)
    public static let permissionDenied = MgmtStatus(rawValue: 0x14)

    public var isSuccess: Bool { self == .success }

    public var name: StaticString {
        switch rawValue {
        case 0x00: "success"
        case 0x01: "unknown-command"
        case 0x02: "not-connected"
        case 0x03: "failed"
        case 0x04: "connect-failed"
        case 0x05: "authentication-failed"
        case 0x06: "not-paired"
        case 0x07: "no-resources"
        case 0x08: "timeout"
        case 0x09: "already-connected"
        case 0x0A: "busy"
        case 0x0B: "rejected"
        case 0x0C: "not-supported"
        case 0x0D: "invalid-parameters"
        case 0x0E: "disconnected"
        case 0x0F: "not-powered"
        case 0x10: "cancelled"
        case 0x11: "invalid-index"
        case 0x12: "rfkilled"
        case 0x13: "already-paired"
        case 0x14: "permission-denied"
        default: "unknown-status"
        }
    }
}

/// Supported_Settings / Current_Settings bits (Read Controller Information).
/// Bits the document adds later are kept in `rawValue`.
public struct ControllerSettings: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let powered = ControllerSettings(rawValue: 1 << 0)
    public static let connectable = ControllerSettings(rawValue: 1 << 1)
    public static let fastConnectable = ControllerSettings(rawValue: 1 << 2)
    public static let discoverable = ControllerSettings(rawValue: 1 << 3)
    public static let bondable = ControllerSettings(rawValue: 1 << 4)
    public static let linkLevelSecurity = ControllerSettings(rawValue: 1 << 5)
    public static let secureSimplePairing = ControllerSettings(rawValue: 1 << 6)
    public static let bredr = ControllerSettings(rawValue: 1 << 7)
    public static let highSpeed = ControllerSettings(rawValue: 1 << 8)
    public static let lowEnergy = ControllerSettings(rawValue: 1 << 9)
    public static let advertising = ControllerSettings(rawValue: 1 << 10)
    public static let secureConnections = ControllerSettings(rawValue: 1 << 11)
    public static let debugKeys = ControllerSettings(rawValue: 1 << 12)
    public static let privacy = ControllerSettings(rawValue: 1 << 13)
    public static let controllerConfiguration = ControllerSettings(rawValue: 1 << 14)
    public static let staticAddress = ControllerSettings(rawValue: 1 << 15)
    public static let phyConfiguration = ControllerSettings(rawValue: 1 << 16)
    public static let widebandSpeech = ControllerSettings(rawValue: 1 << 17)
    public static let cisCentral = ControllerSettings(rawValue: 1 << 18)
    public static let cisPeripheral = ControllerSettings(rawValue: 1 << 19)
    public static let isochronousBroadcaster = ControllerSettings(rawValue: 1 << 20)
    public static let synchronizedReceiver = ControllerSettings(rawValue: 1 << 21)

    /// The document's names, in bit order, for logs.
    public static let named: [(ControllerSettings, StaticString)] = [
        (.powered, "powered"), (.connectable, "connectable"), (.fastConnectable, "fast-connectable"),
        (.discoverable, "discoverable"), (.bondable, "bondable"), (.linkLevelSecurity, "link-security"),
        (.secureSimplePairing, "ssp"), (.bredr, "br/edr"), (.highSpeed, "hs"), (.lowEnergy, "le"),
        (.advertising, "advertising"), (.secureConnections, "secure-conn"), (.debugKeys, "debug-keys"),
        (.privacy, "privacy"), (.controllerConfiguration, "configuration"), (.staticAddress, "static-addr"),
        (.phyConfiguration, "phy-configuration"), (.widebandSpeech, "wide-band-speech"),
        (.cisCentral, "cis-central"), (.cisPeripheral, "cis-peripheral"),
        (.isochronousBroadcaster, "iso-broadcaster"), (.synchronizedReceiver, "sync-receiver"),
    ]
}

/// Address_Type. Commands about LE keys accept only `lePublic` and
/// `leRandom` (and for random, only a static address: an identity).
public struct AddressType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let bredr = AddressType(rawValue: 0)
    public static let lePublic = AddressType(rawValue: 1)
    public static let leRandom = AddressType(rawValue: 2)

    public var isLE: Bool { self == .lePublic || self == .leRandom }
}

/// Set IO Capability values (SMP and SSP share them).
public enum IOCapability: UInt8, Sendable {
    case displayOnly = 0
    case displayYesNo = 1
    case keyboardOnly = 2
    /// Ours: the wearable has no display to show a comparison number, so it
    /// must not claim one (the phone would believe the key authenticated).
    /// Pairing is Just Works; kernel 6.1 still asks with User Confirmation
    /// Request (hint 1), which the wearer answers with a button press.
    case noInputNoOutput = 3
    case keyboardDisplay = 4
}

/// Set Secure Connections values.
public enum SecureConnectionsMode: UInt8, Sendable {
    case off = 0
    case on = 1
    /// Refuses legacy pairing altogether.
    case only = 2
}

/// Set Advertising values. Anything but `off` overrides every Add
/// Advertising instance, so Wristlink only ever switches it off.
public enum AdvertisingSetting: UInt8, Sendable {
    case off = 0
    /// Advertise following the connectable setting.
    case on = 1
    /// Always connectable advertising.
    case connectable = 2
}

/// The Flags of Add Advertising (mgmt-api.txt, "Add Advertising Command").
public struct AdvertisingFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Undirected connectable advertising, whatever the global setting.
    public static let connectable = AdvertisingFlags(rawValue: 1 << 0)
    /// The kernel adds a Flags AD structure with LE General Discoverable
    /// (and BR/EDR Not Supported while BR/EDR is off) in front of the data.
    public static let discoverable = AdvertisingFlags(rawValue: 1 << 1)
    public static let limitedDiscoverable = AdvertisingFlags(rawValue: 1 << 2)
    /// The kernel keeps a Flags AD structure up to date in front of the data.
    public static let managedFlags = AdvertisingFlags(rawValue: 1 << 3)
    public static let txPower = AdvertisingFlags(rawValue: 1 << 4)
    public static let appearance = AdvertisingFlags(rawValue: 1 << 5)
    public static let localName = AdvertisingFlags(rawValue: 1 << 6)
    public static let secondaryChannelLE1M = AdvertisingFlags(rawValue: 1 << 7)
    public static let secondaryChannelLE2M = AdvertisingFlags(rawValue: 1 << 8)
    public static let secondaryChannelLECoded = AdvertisingFlags(rawValue: 1 << 9)

    /// With any of these the kernel writes the Flags AD structure itself (3
    /// bytes of the 31) and rejects advertising data that carries one.
    public static let kernelWritesFlags: AdvertisingFlags = [.discoverable, .limitedDiscoverable, .managedFlags]
}

/// Device Disconnected reasons.
public struct DisconnectReason: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let unspecified = DisconnectReason(rawValue: 0)
    public static let connectionTimeout = DisconnectReason(rawValue: 1)
    public static let localHost = DisconnectReason(rawValue: 2)
    public static let remoteHost = DisconnectReason(rawValue: 3)
    public static let authenticationFailure = DisconnectReason(rawValue: 4)
    public static let localHostSuspend = DisconnectReason(rawValue: 5)

    public var name: StaticString {
        switch rawValue {
        case 0: "unspecified"
        case 1: "timeout"
        case 2: "local-host"
        case 3: "remote-host"
        case 4: "authentication-failure"
        case 5: "local-host-suspend"
        default: "unknown-reason"
        }
    }
}

/// Key_Type of an LE long-term key (New Long Term Key lists all five; Load
/// Long Term Keys documents only the first two, but the kernel loads the
/// P-256 ones too and skips debug keys).
public struct LongTermKeyType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let unauthenticatedLegacy = LongTermKeyType(rawValue: 0x00)
    public static let authenticatedLegacy = LongTermKeyType(rawValue: 0x01)
    public static let unauthenticatedP256 = LongTermKeyType(rawValue: 0x02)
    public static let authenticatedP256 = LongTermKeyType(rawValue: 0x03)
    /// Made with the Secure Connections debug key pair: never persistent.
    public static let debugP256 = LongTermKeyType(rawValue: 0x04)

    /// The types worth keeping across restarts.
    public var isStorable: Bool { rawValue <= 0x03 }
}
