// SPDX-License-Identifier: Apache-2.0
// Management events and their decoding (mgmt-api.txt, "Command Complete
// Event" onwards).
//
// One socket read is one event. Nothing in it is trusted: the header's
// parameter length must equal the bytes that follow (fewer is truncated, more
// is oversize), a fixed-size event must have exactly its size, and variable
// parts (Device Connected's EIR data) must add up. Those are typed errors,
// for the caller to count and drop. An event code we do not decode is a
// value (`unknown`), not an error: the kernel adds events over time.
//
// Command Complete return parameters are decoded for the commands this
// module sends, when they have exactly the documented size; an empty block
// (some failures carry none) is `.none`; any other size is `.malformed`, a
// value the sequencer treats as a failed step, not a framing error.

import Bounded

public struct MgmtEventPacket: Equatable, Sendable {
    public var index: ControllerIndex
    public var event: MgmtEvent

    public init(index: ControllerIndex, event: MgmtEvent) {
        self.index = index
        self.event = event
    }
}

public enum MgmtEvent: Equatable, Sendable {
    case commandComplete(CommandComplete)
    /// Success means "started, Command Complete follows"; anything else
    /// ends the command.
    case commandStatus(opcode: MgmtOpcode, status: MgmtStatus)
    /// The HCI Hardware Error code.
    case controllerError(code: UInt8)
    case indexAdded
    case indexRemoved
    case newSettings(ControllerSettings)
    case newLongTermKey(NewLongTermKey)
    case deviceConnected(DeviceConnected)
    case deviceDisconnected(DeviceAddress, reason: DisconnectReason)
    case userConfirmationRequest(UserConfirmationRequest)
    case authenticationFailed(DeviceAddress, status: MgmtStatus)
    case newIdentityResolvingKey(NewIdentityResolvingKey)
    /// Sent only to other management sockets than the one that added it.
    case advertisingAdded(instance: UInt8)
    /// Sent to other sockets for Remove Advertising, to all when the kernel
    /// removes an instance itself (timeout, power off, LE off).
    case advertisingRemoved(instance: UInt8)
    case unknown(code: MgmtEventCode, parameterByteCount: Int)

    /// Decodes one event packet (header and parameters).
    public static func decode(_ packet: Span<UInt8>) throws(MgmtDecodeError) -> MgmtEventPacket {
        guard packet.count >= MgmtPacket.headerByteCount else { throw .truncatedHeader(byteCount: packet.count) }
        let code = MgmtEventCode(rawValue: packet.le16(at: 0))
        let index = ControllerIndex(packet.le16(at: 2))
        let declared = Int(packet.le16(at: 4))
        let received = packet.count - MgmtPacket.headerByteCount
        guard received >= declared else { throw .truncated(declaredBytes: declared, receivedBytes: received) }
        guard received == declared else { throw .oversize(declaredBytes: declared, receivedBytes: received) }
        let event = try decodeParameters(code, packet.extracting(MgmtPacket.headerByteCount..<packet.count))
        return MgmtEventPacket(index: index, event: event)
    }

    static func decodeParameters(_ code: MgmtEventCode, _ p: Span<UInt8>) throws(MgmtDecodeError) -> MgmtEvent {
        switch code {
        case .commandComplete:
            guard p.count >= 3 else { throw .parametersTooShort(event: code, byteCount: p.count, minimumBytes: 3) }
            let opcode = MgmtOpcode(rawValue: p.le16(at: 0))
            let status = MgmtStatus(rawValue: p[2])
            let reply = CommandReply.decode(opcode, p.extracting(3..<p.count))
            return .commandComplete(CommandComplete(opcode: opcode, status: status, reply: reply))
        case .commandStatus:
            try require(code, p.count, exactly: 3)
            return .commandStatus(opcode: MgmtOpcode(rawValue: p.le16(at: 0)), status: MgmtStatus(rawValue: p[2]))
        case .controllerError:
            try require(code, p.count, exactly: 1)
            return .controllerError(code: p[0])
        case .indexAdded:
            try require(code, p.count, exactly: 0)
            return .indexAdded
        case .indexRemoved:
            try require(code, p.count, exactly: 0)
            return .indexRemoved
        case .newSettings:
            try require(code, p.count, exactly: 4)
            return .newSettings(ControllerSettings(rawValue: p.le32(at: 0)))
        case .newLongTermKey:
            try require(code, p.count, exactly: 1 + LongTermKey.recordByteCount)
            let (address, key) = LongTermKey.decodeRecord(p, at: 1)
            return .newLongTermKey(NewLongTermKey(storeHint: p[0] != 0, address: address, key: key))
        case .deviceConnected:
            guard p.count >= 13 else { throw .parametersTooShort(event: code, byteCount: p.count, minimumBytes: 13) }
            let eirByteCount = Int(p.le16(at: 11))
            try require(code, p.count, exactly: 13 + eirByteCount)
            return .deviceConnected(DeviceConnected(
                address: DeviceAddress(wireBytes: p, at: 0), flags: p.le32(at: 7), eirByteCount: eirByteCount))
        case .deviceDisconnected:
            try require(code, p.count, exactly: 8)
            return .deviceDisconnected(DeviceAddress(wireBytes: p, at: 0), reason: DisconnectReason(rawValue: p[7]))
        case .userConfirmationRequest:
            try require(code, p.count, exactly: 12)
            return .userConfirmationRequest(UserConfirmationRequest(
                address: DeviceAddress(wireBytes: p, at: 0), confirmHint: p[7] != 0, value: p.le32(at: 8)))
        case .authenticationFailed:
            try require(code, p.count, exactly: 8)
            return .authenticationFailed(DeviceAddress(wireBytes: p, at: 0), status: MgmtStatus(rawValue: p[7]))
        case .newIdentityResolvingKey:
            try require(code, p.count, exactly: 30)
            return .newIdentityResolvingKey(NewIdentityResolvingKey(
                storeHint: p[0] != 0, randomAddress: BDAddress(wireBytes: p, at: 1),
                identity: DeviceAddress(wireBytes: p, at: 7), key: Key128(wireBytes: p, at: 14)))
        case .advertisingAdded:
            try require(code, p.count, exactly: 1)
            return .advertisingAdded(instance: p[0])
        case .advertisingRemoved:
            try require(code, p.count, exactly: 1)
            return .advertisingRemoved(instance: p[0])
        default:
            return .unknown(code: code, parameterByteCount: p.count)
        }
    }
}

/// Checks a fixed-size event's parameter block.
func require(_ code: MgmtEventCode, _ byteCount: Int, exactly expected: Int) throws(MgmtDecodeError) {
    if byteCount < expected { throw .parametersTooShort(event: code, byteCount: byteCount, minimumBytes: expected) }
    if byteCount > expected { throw .parametersTooLong(event: code, byteCount: byteCount, expectedBytes: expected) }
}

public enum MgmtDecodeError: Error, Equatable, Sendable {
    /// Fewer than the 6 header bytes.
    case truncatedHeader(byteCount: Int)
    /// The header promises more parameter bytes than arrived.
    case truncated(declaredBytes: Int, receivedBytes: Int)
    /// More bytes arrived than the header describes.
    case oversize(declaredBytes: Int, receivedBytes: Int)
    case parametersTooShort(event: MgmtEventCode, byteCount: Int, minimumBytes: Int)
    case parametersTooLong(event: MgmtEventCode, byteCount: Int, expectedBytes: Int)
}

public struct CommandComplete: Equatable, Sendable {
    public var opcode: MgmtOpcode
    public var status: MgmtStatus
    public var reply: CommandReply

    public init(opcode: MgmtOpcode, status: MgmtStatus, reply: CommandReply) {
        self.opcode = opcode
        self.status = status
        self.reply = reply
    }
}

/// Return parameters of a Command Complete.
public enum CommandReply: Equatable, Sendable {
    /// No return parameters.
    case none
    case controllerIndexList(ControllerIndexList)
    case controllerInformation(ControllerInformation)
    /// Current_Settings, the reply of every Set <setting> command.
    case settings(ControllerSettings)
    case localName(LocalName)
    /// Address + Address_Type (Disconnect, Unpair Device, User Confirmation
    /// (Negative) Reply).
    case address(DeviceAddress)
    /// Add / Remove Advertising.
    case advertisingInstance(UInt8)
    /// A command this module does not interpret; its parameters are skipped.
    case unparsed(byteCount: Int)
    /// A command we know, with parameters of the wrong size.
    case malformed(byteCount: Int)

    static func decode(_ opcode: MgmtOpcode, _ p: Span<UInt8>) -> CommandReply {
        if p.isEmpty { return .none }
        switch opcode {
        case .readControllerIndexList:
            guard let list = ControllerIndexList(p) else { return .malformed(byteCount: p.count) }
            return .controllerIndexList(list)
        case .readControllerInformation:
            guard p.count == ControllerInformation.byteCount else { return .malformed(byteCount: p.count) }
            return .controllerInformation(ControllerInformation(p))
        case .setPowered, .setConnectable, .setBondable, .setLowEnergy, .setBREDR, .setSecureConnections, .setAdvertising:
            guard p.count == 4 else { return .malformed(byteCount: p.count) }
            return .settings(ControllerSettings(rawValue: p.le32(at: 0)))
        case .setLocalName:
            guard p.count == LocalName.nameFieldByteCount + LocalName.shortNameFieldByteCount else {
                return .malformed(byteCount: p.count)
            }
            return .localName(LocalName(decodedName: nulTerminated(p, at: 0, fieldByteCount: LocalName.nameFieldByteCount),
                                        shortName: nulTerminated(p, at: LocalName.nameFieldByteCount,
                                                                 fieldByteCount: LocalName.shortNameFieldByteCount)))
        case .disconnect, .unpairDevice, .userConfirmationReply, .userConfirmationNegativeReply:
            guard p.count == DeviceAddress.byteCount else { return .malformed(byteCount: p.count) }
            return .address(DeviceAddress(wireBytes: p, at: 0))
        case .addAdvertising, .removeAdvertising:
            guard p.count == 1 else { return .malformed(byteCount: p.count) }
            return .advertisingInstance(p[0])
        case .setIOCapability, .loadLongTermKeys, .loadIdentityResolvingKeys, .setDefaultSystemConfiguration:
            return .malformed(byteCount: p.count)
        default:
            return .unparsed(byteCount: p.count)
        }
    }
}

/// The bytes of a NUL-padded text field up to its first NUL.
func nulTerminated<let capacity: Int>(_ p: Span<UInt8>, at offset: Int, fieldByteCount: Int) -> InlineBytes<capacity> {
    var text = InlineBytes<capacity>()
    for i in offset..<(offset + fieldByteCount) {
        if p[i] == 0 { break }
        text.append(p[i])
    }
    return text
}

/// Read Controller Index List's return parameters: Num_Controllers, then
/// that many 16-bit indices. The first `capacity` are kept; `count` is what
/// the kernel said.
public struct ControllerIndexList: Equatable, Sendable {
    public static let capacity = 8
    public private(set) var count: Int
    private var stored: InlineArray<8, UInt16>

    public init(_ indices: [UInt16]) {
        count = indices.count
        stored = InlineArray(repeating: 0)
        for i in 0..<min(indices.count, Self.capacity) { stored[i] = indices[i] }
    }

    /// Nil unless the block is exactly 2 + 2 x Num_Controllers bytes.
    init?(_ p: Span<UInt8>) {
        guard p.count >= 2 else { return nil }
        let n = Int(p.le16(at: 0))
        guard p.count == 2 + 2 * n else { return nil }
        count = n
        stored = InlineArray(repeating: 0)
        for i in 0..<min(n, Self.capacity) { stored[i] = p.le16(at: 2 + 2 * i) }
    }

    /// The indices kept (at most `capacity`), in the kernel's order.
    public var indices: [UInt16] {
        var out: [UInt16] = []
        for i in 0..<min(count, Self.capacity) { out.append(stored[i]) }
        return out
    }

    public func contains(_ index: UInt16) -> Bool {
        for i in 0..<min(count, Self.capacity) where stored[i] == index { return true }
        return false
    }

    public static func == (a: ControllerIndexList, b: ControllerIndexList) -> Bool {
        a.count == b.count && a.indices == b.indices
    }
}

/// Read Controller Information's return parameters (280 bytes).
public struct ControllerInformation: Equatable, Sendable {
    static let byteCount = 6 + 1 + 2 + 4 + 4 + 3 + 249 + 11

    /// The public address; 00:00:00:00:00:00 on LE-only controllers without one.
    public var address: BDAddress
    public var bluetoothVersion: UInt8
    public var manufacturer: UInt16
    public var supportedSettings: ControllerSettings
    public var currentSettings: ControllerSettings
    public var classOfDevice: UInt32
    public var name: LocalName

    public init(address: BDAddress, bluetoothVersion: UInt8, manufacturer: UInt16, supportedSettings: ControllerSettings,
                currentSettings: ControllerSettings, classOfDevice: UInt32, name: LocalName) {
        self.address = address
        self.bluetoothVersion = bluetoothVersion
        self.manufacturer = manufacturer
        self.supportedSettings = supportedSettings
        self.currentSettings = currentSettings
        self.classOfDevice = classOfDevice
        self.name = name
    }

    init(_ p: Span<UInt8>) {
        address = BDAddress(wireBytes: p, at: 0)
        bluetoothVersion = p[6]
        manufacturer = p.le16(at: 7)
        supportedSettings = ControllerSettings(rawValue: p.le32(at: 9))
        currentSettings = ControllerSettings(rawValue: p.le32(at: 13))
        classOfDevice = p.le24(at: 17)
        name = LocalName(decodedName: nulTerminated(p, at: 20, fieldByteCount: LocalName.nameFieldByteCount),
                         shortName: nulTerminated(p, at: 269, fieldByteCount: LocalName.shortNameFieldByteCount))
    }
}

/// New Long Term Key: a pairing finished and produced `key` for `address`
/// (the peer's identity when it shared one).
public struct NewLongTermKey: Equatable, Sendable {
    /// False when the key must not be kept (no bonding, or no identity).
    public var storeHint: Bool
    public var address: DeviceAddress
    public var key: LongTermKey

    public init(storeHint: Bool, address: DeviceAddress, key: LongTermKey) {
        self.storeHint = storeHint
        self.address = address
        self.key = key
    }
}

/// New Identity Resolving Key: the peer's IRK and the identity it resolves to.
public struct NewIdentityResolvingKey: Equatable, Sendable {
    public var storeHint: Bool
    /// The resolvable private address it was resolved from; 00:...:00 when
    /// the peer paired with its identity address.
    public var randomAddress: BDAddress
    public var identity: DeviceAddress
    public var key: Key128

    public init(storeHint: Bool, randomAddress: BDAddress, identity: DeviceAddress, key: Key128) {
        self.storeHint = storeHint
        self.randomAddress = randomAddress
        self.identity = identity
        self.key = key
    }
}

public struct DeviceConnected: Equatable, Sendable {
    public var address: DeviceAddress
    /// Bit 1 legacy pairing, bit 3 connection initiated by us.
    public var flags: UInt32
    /// The EIR/AD data that came with the connection is skipped; its size is kept.
    public var eirByteCount: Int

    public init(address: DeviceAddress, flags: UInt32, eirByteCount: Int) {
        self.address = address
        self.flags = flags
        self.eirByteCount = eirByteCount
    }

    public var isLegacyPairing: Bool { flags & (1 << 1) != 0 }
    public var weInitiated: Bool { flags & (1 << 3) != 0 }
}

/// The kernel asks whether to accept a pairing (answer with User
/// Confirmation Reply or Negative Reply).
public struct UserConfirmationRequest: Equatable, Sendable {
    public var address: DeviceAddress
    /// True: a plain yes/no (Just Works); false: show `value` and ask
    /// whether it matches the phone's (numeric comparison).
    public var confirmHint: Bool
    /// The 6-digit number to show, 0...999999.
    public var value: UInt32

    public init(address: DeviceAddress, confirmHint: Bool, value: UInt32) {
        self.address = address
        self.confirmHint = confirmHint
        self.value = value
    }
}
