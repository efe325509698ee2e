// SPDX-License-Identifier: Apache-2.0
// Management commands and their encoding (mgmt-api.txt, one section each).
//
// `encode` replaces the contents of the caller's buffer with one complete
// packet: the 6-byte header and the parameters. A command that the kernel
// would refuse for its shape (an advertising instance of 0, advertising data
// over its limit or carrying an AD type the kernel manages itself) is an
// error here, before any byte is written: the same rules as the kernel's
// tlv_data_is_valid(), so a mistake shows in a unit test and not as Invalid
// Parameters on the device. Load Long Term Keys and Load Identity Resolving
// Keys are written from a `BondStore` (Bond.swift).

import Bounded

/// Set Local Name parameters: a 249-byte and an 11-byte field, each of which
/// must end with a NUL, so at most 248 and 10 bytes of UTF-8.
public struct LocalName: Equatable, Sendable {
    public static let maxNameByteCount = 248
    public static let maxShortNameByteCount = 10
    static let nameFieldByteCount = 249
    static let shortNameFieldByteCount = 11

    public private(set) var name: InlineBytes<248>
    /// Used by the kernel where the full name does not fit; may be empty.
    public private(set) var shortName: InlineBytes<10>

    public init(name: Span<UInt8>, shortName: Span<UInt8>) throws(LocalNameError) {
        guard name.count <= Self.maxNameByteCount else { throw .nameTooLong(byteCount: name.count) }
        guard shortName.count <= Self.maxShortNameByteCount else { throw .shortNameTooLong(byteCount: shortName.count) }
        for i in name.indices where name[i] == 0 { throw .containsNul }
        for i in shortName.indices where shortName[i] == 0 { throw .containsNul }
        self.name = InlineBytes(name)
        self.shortName = InlineBytes(shortName)
    }

    /// From text (configuration and tests).
    public init(_ name: String, short shortName: String = "") throws(LocalNameError) {
        guard name.utf8.count <= Self.maxNameByteCount else { throw .nameTooLong(byteCount: name.utf8.count) }
        guard shortName.utf8.count <= Self.maxShortNameByteCount else {
            throw .shortNameTooLong(byteCount: shortName.utf8.count)
        }
        guard !name.utf8.contains(0) && !shortName.utf8.contains(0) else { throw .containsNul }
        self.name = InlineBytes(name)
        self.shortName = InlineBytes(shortName)
    }

    /// Names as the kernel reports them (fields cut at their first NUL).
    init(decodedName: InlineBytes<248>, shortName: InlineBytes<10>) {
        self.name = decodedName
        self.shortName = shortName
    }
}

public enum LocalNameError: Error, Equatable, Sendable {
    case nameTooLong(byteCount: Int)
    case shortNameTooLong(byteCount: Int)
    /// A NUL would end the name early on the wire.
    case containsNul
}

/// Add Advertising parameters. Durations are whole seconds on the wire.
public struct AdvertisingInstance: Equatable, Sendable {
    /// 1...254; 0 is reserved (and means "all" to Remove Advertising).
    public var instance: UInt8
    public var flags: AdvertisingFlags
    /// Time slice when several instances rotate; 0 means the kernel default
    /// (2 s). Ignored with a single instance.
    public var durationS: UInt16
    /// Lifetime; 0 means until removed. Needs the controller powered.
    public var timeoutS: UInt16
    public var advertisingData: InlineBytes<31>
    public var scanResponse: InlineBytes<31>

    public init(instance: UInt8, flags: AdvertisingFlags, durationS: UInt16 = 0, timeoutS: UInt16 = 0,
                advertisingData: InlineBytes<31>, scanResponse: InlineBytes<31>) {
        self.instance = instance
        self.flags = flags
        self.durationS = durationS
        self.timeoutS = timeoutS
        self.advertisingData = advertisingData
        self.scanResponse = scanResponse
    }
}

/// The kernel's default LE advertising interval, which Add Advertising copies
/// into each instance it adds (mgmt Set Default System Configuration types
/// 0x000A and 0x000B). Units are the document's 0.625 ms slots.
public struct AdvertisingInterval: Equatable, Sendable {
    /// Legacy advertising allows 20 ms ... 10.24 s.
    public static let slotRange: ClosedRange<UInt16> = 0x0020...0x4000
    public static let usPerSlot: UInt32 = 625

    public var minSlots: UInt16
    public var maxSlots: UInt16

    public init(minSlots: UInt16, maxSlots: UInt16) {
        precondition(Self.slotRange.contains(minSlots) && Self.slotRange.contains(maxSlots) && minSlots <= maxSlots,
                     "advertising interval outside 20 ms ... 10.24 s, or min > max")
        self.minSlots = minSlots
        self.maxSlots = maxSlots
    }

    /// A fixed interval, `us` microseconds (a multiple of 625).
    public init(us: UInt32) {
        precondition(us % Self.usPerSlot == 0, "advertising interval must be a multiple of 0.625 ms")
        let slots = UInt16(us / Self.usPerSlot)
        self.init(minSlots: slots, maxSlots: slots)
    }
}

public enum MgmtCommand: Equatable, Sendable {
    /// Sent on `ControllerIndex.none`; read-only, allowed without
    /// CAP_NET_ADMIN (`wristlink doctor`).
    case readControllerIndexList
    case readControllerInformation
    case setPowered(Bool)
    case setConnectable(Bool)
    case setBondable(Bool)
    case setLowEnergy(Bool)
    case setBREDR(Bool)
    case setSecureConnections(SecureConnectionsMode)
    case setAdvertising(AdvertisingSetting)
    case setIOCapability(IOCapability)
    case setLocalName(LocalName)
    case disconnect(DeviceAddress)
    /// Removes every key of the device from the kernel.
    case unpairDevice(DeviceAddress, disconnect: Bool)
    case userConfirmationReply(DeviceAddress)
    case userConfirmationNegativeReply(DeviceAddress)
    case addAdvertising(AdvertisingInstance)
    /// 0 removes every instance.
    case removeAdvertising(instance: UInt8)
    /// Set Default System Configuration with the LE advertising minimum and
    /// maximum interval parameters (0x000A, 0x000B).
    case setDefaultAdvertisingInterval(AdvertisingInterval)
    /// Set Default System Configuration with the LE connection parameters
    /// (0x0017 min interval, 0x0018 max, 0x0019 latency, 0x001A supervision
    /// timeout): what the kernel asks an incoming connection for when the
    /// phone's interval is outside [min, max] (ConnectionParameters.swift).
    case setDefaultConnectionParameters(ConnectionParameters)

    public var opcode: MgmtOpcode {
        switch self {
        case .readControllerIndexList: .readControllerIndexList
        case .readControllerInformation: .readControllerInformation
        case .setPowered: .setPowered
        case .setConnectable: .setConnectable
        case .setBondable: .setBondable
        case .setLowEnergy: .setLowEnergy
        case .setBREDR: .setBREDR
        case .setSecureConnections: .setSecureConnections
        case .setAdvertising: .setAdvertising
        case .setIOCapability: .setIOCapability
        case .setLocalName: .setLocalName
        case .disconnect: .disconnect
        case .unpairDevice: .unpairDevice
        case .userConfirmationReply: .userConfirmationReply
        case .userConfirmationNegativeReply: .userConfirmationNegativeReply
        case .addAdvertising: .addAdvertising
        case .removeAdvertising: .removeAdvertising
        case .setDefaultAdvertisingInterval, .setDefaultConnectionParameters: .setDefaultSystemConfiguration
        }
    }

    /// The parameter block's size in bytes.
    public var parameterByteCount: Int {
        switch self {
        case .readControllerIndexList, .readControllerInformation: 0
        case .setPowered, .setConnectable, .setBondable, .setLowEnergy, .setBREDR, .setSecureConnections,
             .setAdvertising, .setIOCapability, .removeAdvertising: 1
        case .setLocalName: LocalName.nameFieldByteCount + LocalName.shortNameFieldByteCount
        case .disconnect, .userConfirmationReply, .userConfirmationNegativeReply: DeviceAddress.byteCount
        case .unpairDevice: DeviceAddress.byteCount + 1
        case .addAdvertising(let a): 11 + a.advertisingData.count + a.scanResponse.count
        case .setDefaultAdvertisingInterval: 2 * (2 + 1 + 2)
        case .setDefaultConnectionParameters: 4 * (2 + 1 + 2)
        }
    }

    /// Checks what the kernel would refuse for its shape, before encoding.
    public func validate() throws(MgmtEncodeError) {
        switch self {
        case .addAdvertising(let a):
            guard a.instance != 0 && a.instance != 0xFF else { throw .invalidAdvertisingInstance(a.instance) }
            try AdvertisingDataRules.check(a.advertisingData.span, flags: a.flags, isScanResponse: false)
            try AdvertisingDataRules.check(a.scanResponse.span, flags: a.flags, isScanResponse: true)
        case .removeAdvertising(let instance):
            guard instance != 0xFF else { throw .invalidAdvertisingInstance(instance) }
        default:
            break
        }
    }

    /// Replaces the contents of `out` with the packet for `index`. On error
    /// `out` is left unchanged.
    public func encode(index: ControllerIndex, into out: inout ByteBuffer) throws(MgmtEncodeError) {
        try validate()
        try MgmtCommandWriter.begin(opcode, index: index, parameterByteCount: parameterByteCount, into: &out)
        switch self {
        case .readControllerIndexList, .readControllerInformation:
            break
        case .setPowered(let on), .setConnectable(let on), .setBondable(let on), .setLowEnergy(let on), .setBREDR(let on):
            out.append(on ? 1 : 0)
        case .setSecureConnections(let mode):
            out.append(mode.rawValue)
        case .setAdvertising(let setting):
            out.append(setting.rawValue)
        case .setIOCapability(let capability):
            out.append(capability.rawValue)
        case .setLocalName(let name):
            out.appendPadded(name.name.span, fieldByteCount: LocalName.nameFieldByteCount)
            out.appendPadded(name.shortName.span, fieldByteCount: LocalName.shortNameFieldByteCount)
        case .disconnect(let address), .userConfirmationReply(let address), .userConfirmationNegativeReply(let address):
            out.append(address)
        case .unpairDevice(let address, let disconnect):
            out.append(address)
            out.append(disconnect ? 1 : 0)
        case .addAdvertising(let a):
            out.append(a.instance)
            out.appendLE32(a.flags.rawValue)
            out.appendLE16(a.durationS)
            out.appendLE16(a.timeoutS)
            out.append(UInt8(a.advertisingData.count))
            out.append(UInt8(a.scanResponse.count))
            out.append(contentsOf: a.advertisingData.span)
            out.append(contentsOf: a.scanResponse.span)
        case .removeAdvertising(let instance):
            out.append(instance)
        case .setDefaultAdvertisingInterval(let interval):
            out.appendParameter(DefaultSystemParameter.leAdvertisingMinInterval, interval.minSlots)
            out.appendParameter(DefaultSystemParameter.leAdvertisingMaxInterval, interval.maxSlots)
        case .setDefaultConnectionParameters(let p):
            out.appendParameter(DefaultSystemParameter.leMinConnectionInterval, p.minIntervalUnits)
            out.appendParameter(DefaultSystemParameter.leMaxConnectionInterval, p.maxIntervalUnits)
            out.appendParameter(DefaultSystemParameter.leConnectionLatency, p.latencyEvents)
            out.appendParameter(DefaultSystemParameter.leSupervisionTimeout, p.supervisionTimeoutUnits)
        }
    }
}

/// Set Default System Configuration Parameter_Type values used here.
enum DefaultSystemParameter {
    static let leAdvertisingMinInterval: UInt16 = 0x000A
    static let leAdvertisingMaxInterval: UInt16 = 0x000B
    static let leMinConnectionInterval: UInt16 = 0x0017
    static let leMaxConnectionInterval: UInt16 = 0x0018
    static let leConnectionLatency: UInt16 = 0x0019
    static let leSupervisionTimeout: UInt16 = 0x001A
}

extension ByteBuffer {
    /// One Set Default System Configuration TLV with a 2-byte value.
    mutating func appendParameter(_ type: UInt16, _ value: UInt16) {
        appendLE16(type)
        append(2)
        appendLE16(value)
    }
}

/// Writes packet headers after checking the whole packet fits.
enum MgmtCommandWriter {
    static func begin(_ opcode: MgmtOpcode, index: ControllerIndex, parameterByteCount: Int,
                      into out: inout ByteBuffer) throws(MgmtEncodeError) {
        precondition(parameterByteCount <= MgmtPacket.maxParameterByteCount, "parameters beyond the 16-bit length field")
        let needed = MgmtPacket.headerByteCount + parameterByteCount
        guard needed <= out.capacity else { throw .bufferTooSmall(neededBytes: needed, capacity: out.capacity) }
        out.removeAll()
        out.appendLE16(opcode.rawValue)
        out.appendLE16(index.rawValue)
        out.appendLE16(UInt16(parameterByteCount))
    }
}

public enum MgmtEncodeError: Error, Equatable, Sendable {
    case bufferTooSmall(neededBytes: Int, capacity: Int)
    /// 0 and 255 are reserved instance identifiers.
    case invalidAdvertisingInstance(UInt8)
    case advertisingData(AdvertisingDataError)
}
