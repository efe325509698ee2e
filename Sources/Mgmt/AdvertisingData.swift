// Advertising and scan response data: AD structures (Core Supplement Part A,
// Length Type Data), the 31-byte legacy limit, and what the kernel writes
// itself (mgmt-api.txt, "Add Advertising Command" and "Read Advertising
// Features Command"; the kernel's tlv_data_is_valid() enforces the same).
//
// What the kernel manages and we must not duplicate:
// - Flags (type 0x01) is written by the kernel, 3 bytes in front of our data,
//   when the instance has Discoverable, Limited Discoverable or Managed
//   Flags set; data that carries its own Flags is then refused. Flags is
//   never allowed in a scan response.
// - TX Power (0x0A), Appearance (0x19) and the local name (0x08/0x09) are
//   refused in our data when the matching instance flag asks the kernel to
//   add them, and each such flag takes room from the 31 bytes.
//
// The ANCS payload lets the kernel write Flags (Discoverable: LE General
// Discoverable, plus BR/EDR Not Supported because BR/EDR is off: 0x06). With
// no flag bits and BR/EDR off, the kernel still prepends a Flags structure of
// its own (BR/EDR Not Supported) unless our data already has one, without
// reserving room for it (a full block overran its buffer until a 2026 fix);
// the managed path reserves the room properly. The name goes to the scan response, complete when it fits,
// else shortened (a prefix cut at a character boundary).

import Bounded

/// AD types this module writes or checks (Assigned Numbers, 2.3).
public enum ADType {
    public static let flags: UInt8 = 0x01
    public static let shortenedLocalName: UInt8 = 0x08
    public static let completeLocalName: UInt8 = 0x09
    public static let txPowerLevel: UInt8 = 0x0A
    public static let serviceSolicitation128: UInt8 = 0x15
    public static let appearance: UInt8 = 0x19
}

/// The Flags AD structure's bits (Core Supplement Part A 1.3).
public struct ADFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let leLimitedDiscoverable = ADFlags(rawValue: 1 << 0)
    public static let leGeneralDiscoverable = ADFlags(rawValue: 1 << 1)
    public static let bredrNotSupported = ADFlags(rawValue: 1 << 2)
}

public enum AdvertisingDataError: Error, Equatable, Sendable {
    /// More bytes than the instance leaves for this block.
    case tooLong(byteCount: Int, maxBytes: Int)
    /// An AD structure's length runs past the end of the block.
    case malformed(offset: Int)
    /// An AD type the instance flags ask the kernel to add itself, or Flags
    /// in a scan response.
    case kernelManagedType(UInt8)
}

/// The kernel's rules for one data block under a set of instance flags.
public enum AdvertisingDataRules {
    public static let legacyMaxByteCount = 31
    static let flagsStructureByteCount = 3
    static let txPowerStructureByteCount = 3
    static let appearanceStructureByteCount = 4
    /// The most the kernel's own name structure can take (10-byte short
    /// name + length + type): what it reserves when it adds the name.
    static let kernelNameStructureMaxByteCount = 12

    /// Bytes left for our data in the advertising data (`isScanResponse`
    /// false) or the scan response under `flags`.
    public static func maxByteCount(flags: AdvertisingFlags, isScanResponse: Bool) -> Int {
        var max = legacyMaxByteCount
        if isScanResponse {
            if flags.contains(.localName) { max -= kernelNameStructureMaxByteCount }
            if flags.contains(.appearance) { max -= appearanceStructureByteCount }
        } else {
            if !flags.isDisjoint(with: .kernelWritesFlags) { max -= flagsStructureByteCount }
            if flags.contains(.txPower) { max -= txPowerStructureByteCount }
        }
        return max
    }

    public static func check(_ data: Span<UInt8>, flags: AdvertisingFlags, isScanResponse: Bool) throws(MgmtEncodeError) {
        let max = maxByteCount(flags: flags, isScanResponse: isScanResponse)
        guard data.count <= max else { throw .advertisingData(.tooLong(byteCount: data.count, maxBytes: max)) }
        var i = 0
        while i < data.count {
            let length = Int(data[i])
            if length == 0 {
                i += 1
                continue
            }
            guard i + length < data.count else { throw .advertisingData(.malformed(offset: i)) }
            let type = data[i + 1]
            let managed: Bool
            switch type {
            case ADType.flags: managed = isScanResponse || !flags.isDisjoint(with: .kernelWritesFlags)
            case ADType.txPowerLevel: managed = flags.contains(.txPower)
            case ADType.completeLocalName, ADType.shortenedLocalName: managed = flags.contains(.localName)
            case ADType.appearance: managed = flags.contains(.appearance)
            default: managed = false
            }
            guard !managed else { throw .advertisingData(.kernelManagedType(type)) }
            i += length + 1
        }
    }
}

/// Appends AD structures to one block, refusing what would not fit.
public struct AdvertisingDataBuilder: Sendable {
    public private(set) var bytes = InlineBytes<31>()
    public let maxByteCount: Int

    public init(maxByteCount: Int = AdvertisingDataRules.legacyMaxByteCount) {
        precondition(maxByteCount >= 0 && maxByteCount <= AdvertisingDataRules.legacyMaxByteCount)
        self.maxByteCount = maxByteCount
    }

    public var freeCount: Int { maxByteCount - bytes.count }

    /// Appends `length type data`; nothing when it does not fit.
    public mutating func append(type: UInt8, _ data: Span<UInt8>) throws(AdvertisingDataError) {
        let needed = 2 + data.count
        guard needed <= freeCount else { throw .tooLong(byteCount: bytes.count + needed, maxBytes: maxByteCount) }
        bytes.append(UInt8(1 + data.count))
        bytes.append(type)
        bytes.append(data)
    }

    public mutating func appendFlags(_ flags: ADFlags) throws(AdvertisingDataError) {
        let value: InlineArray<1, UInt8> = [flags.rawValue]
        try append(type: ADType.flags, value.span)
    }

    /// "List of 128-bit Service Solicitation UUIDs" with one UUID.
    public mutating func appendServiceSolicitation(_ uuid: UUID128) throws(AdvertisingDataError) {
        try append(type: ADType.serviceSolicitation128, uuid.wire.span)
    }

    /// Complete Local Name when `name` fits, else Shortened Local Name: the
    /// longest prefix that fits and does not end inside a UTF-8 character.
    /// An empty name writes nothing.
    public mutating func appendLocalName(_ name: Span<UInt8>) throws(AdvertisingDataError) {
        guard !name.isEmpty else { return }
        let room = freeCount - 2
        if name.count <= room {
            try append(type: ADType.completeLocalName, name)
            return
        }
        guard room > 0 else { throw .tooLong(byteCount: bytes.count + 3, maxBytes: maxByteCount) }
        let cut = UTF8Boundary.lastCompleteEnd(name.extracting(0..<room))
        guard cut > 0 else { throw .tooLong(byteCount: bytes.count + 2 + room + 1, maxBytes: maxByteCount) }
        try append(type: ADType.shortenedLocalName, name.extracting(0..<cut))
    }
}

/// Where the Flags AD structure comes from.
public enum FlagsPlacement: Sendable {
    /// The instance's Discoverable flag makes the kernel write Flags 0x06
    /// (BR/EDR being off); our advertising data has 28 bytes.
    case kernel
    /// Our data carries `02 01 06` and the instance has no discoverable or
    /// managed-flags bit. Kernels that prepend their own Flags when BR/EDR is
    /// off would then send two: not used by `ControllerSetup`.
    case advertisingData
}

/// Advertising data, scan response and the Add Advertising flags that go
/// with them.
public struct AdvertisingPayload: Equatable, Sendable {
    public var advertisingData: InlineBytes<31>
    public var scanResponse: InlineBytes<31>
    public var flags: AdvertisingFlags

    /// What an ANCS Notification Consumer advertises (docs/ancs.md, "Advertising
    /// for ANCS"): Flags 0x06, the service in the 128-bit solicitation list,
    /// connectable; the name in the scan response.
    public static func solicitingService(_ service: UUID128, name: Span<UInt8>,
                                         flagsPlacement: FlagsPlacement = .kernel) throws(AdvertisingDataError) -> AdvertisingPayload {
        let flags: AdvertisingFlags = flagsPlacement == .kernel ? [.connectable, .discoverable] : [.connectable]
        var data = AdvertisingDataBuilder(maxByteCount: AdvertisingDataRules.maxByteCount(flags: flags, isScanResponse: false))
        if flagsPlacement == .advertisingData { try data.appendFlags([.leGeneralDiscoverable, .bredrNotSupported]) }
        try data.appendServiceSolicitation(service)
        var response = AdvertisingDataBuilder(maxByteCount: AdvertisingDataRules.maxByteCount(flags: flags, isScanResponse: true))
        try response.appendLocalName(name)
        return AdvertisingPayload(advertisingData: data.bytes, scanResponse: response.bytes, flags: flags)
    }

    public func instance(_ instance: UInt8) -> AdvertisingInstance {
        AdvertisingInstance(instance: instance, flags: flags, advertisingData: advertisingData, scanResponse: scanResponse)
    }
}
