// SPDX-License-Identifier: Apache-2.0
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
// The ANCS payload (Apple's Accessory Design Guidelines ask for Flags, TX
// Power Level, the local name and the services in the advertisement):
//   advertising data  Flags 0x06 (kernel: Discoverable, BR/EDR off)     3
//                     our bytes: ANCS in the 128-bit solicitation list 18
//                                + the name, if any of it fits        0-7
//                     TX Power Level (kernel, instance flag 0x10)       3
//   scan response     the complete name (shortened past 29 bytes)
// TX Power comes from the kernel because only it knows the value: the power
// the controller selected for the advertising set (LE Set Extended
// Advertising Parameters) or, on a legacy controller, LE Read Advertising
// Physical Channel Tx Power. It costs 3 of the 31 bytes, which leaves 7 for
// a name structure: a 5-byte name in full (Complete Local Name), a longer
// one as its longest prefix of at most 5 bytes that ends on a character
// boundary (Shortened Local Name; the Core Supplement allows only a prefix),
// nothing if not even one character fits. The kernel refuses the flag
// (Invalid Parameters) when the controller reported no advertising TX power;
// ControllerSetup then adds the payload built with `txPower: false`, which
// leaves 10 bytes for the name (8 of it).
//
// With no flag bits and BR/EDR off, the kernel still prepends a Flags
// structure of its own (BR/EDR Not Supported) unless our data already has
// one; kernels before a 2026 fix did so without reserving room for it (a
// full block overran their buffer). The managed path reserves the room.

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
    /// An empty name writes nothing; a name of which not one character fits
    /// is an error.
    public mutating func appendLocalName(_ name: Span<UInt8>) throws(AdvertisingDataError) {
        guard !name.isEmpty else { return }
        guard appendLocalNameIfRoom(name) else {
            throw .tooLong(byteCount: bytes.count + 2 + max(freeCount - 2, 0) + 1, maxBytes: maxByteCount)
        }
    }

    /// As `appendLocalName`, but writes nothing (and returns false) when not
    /// one character of the name fits or the name is empty.
    @discardableResult
    public mutating func appendLocalNameIfRoom(_ name: Span<UInt8>) -> Bool {
        let room = freeCount - 2
        guard !name.isEmpty, room > 0 else { return false }
        do throws(AdvertisingDataError) {
            if name.count <= room {
                try append(type: ADType.completeLocalName, name)
                return true
            }
            let cut = UTF8Boundary.lastCompleteEnd(name.extracting(0..<room))
            guard cut > 0 else { return false }
            try append(type: ADType.shortenedLocalName, name.extracting(0..<cut))
            return true
        } catch {
            preconditionFailure("the name was cut to the free room")
        }
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

    /// What an ANCS Notification Consumer advertises (file comment; docs/ancs.md): Flags
    /// 0x06 and, with `txPower`, TX Power Level from the kernel; the service
    /// in the 128-bit solicitation list and as much of the name as fits in
    /// the advertising data; connectable; the complete name in the scan
    /// response.
    public static func solicitingService(_ service: UUID128, name: Span<UInt8>, flagsPlacement: FlagsPlacement = .kernel,
                                         txPower: Bool = true) throws(AdvertisingDataError) -> AdvertisingPayload {
        var flags: AdvertisingFlags = flagsPlacement == .kernel ? [.connectable, .discoverable] : [.connectable]
        if txPower { flags.insert(.txPower) }
        var data = AdvertisingDataBuilder(maxByteCount: AdvertisingDataRules.maxByteCount(flags: flags, isScanResponse: false))
        if flagsPlacement == .advertisingData { try data.appendFlags([.leGeneralDiscoverable, .bredrNotSupported]) }
        try data.appendServiceSolicitation(service)
        data.appendLocalNameIfRoom(name)
        var response = AdvertisingDataBuilder(maxByteCount: AdvertisingDataRules.maxByteCount(flags: flags, isScanResponse: true))
        try response.appendLocalName(name)
        return AdvertisingPayload(advertisingData: data.bytes, scanResponse: response.bytes, flags: flags)
    }

    public func instance(_ instance: UInt8) -> AdvertisingInstance {
        AdvertisingInstance(instance: instance, flags: flags, advertisingData: advertisingData, scanResponse: scanResponse)
    }
}
