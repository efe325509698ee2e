// SPDX-License-Identifier: Apache-2.0
// GATT: the Generic Attribute Profile procedures ANCS needs (Core Vol 3
// Part G), sans-IO, on top of the ATT codec.
//
// Client: `ServiceDiscovery` finds one primary service by UUID (Find By Type
// Value), walks its characteristics with Read By Type until Attribute Not
// Found or the end of the range, and finds the CCCD of each wanted
// characteristic with Find Information. It writes one request at a time
// into the caller's buffer and consumes the matching response; characteristics
// it was not asked for are ignored. Every loop moves its start handle
// strictly forward and has an iteration bound, so a hostile server cannot
// make it spin. `LongWrite` writes a value longer than MTU − 3 with Prepare
// Write and Execute Write, checking every echo and cancelling on failure.
//
// Server: `GATTServer` is the small database the phone discovers on us (GAP
// with Device Name and Appearance = watch, GATT with Service Changed) and
// answers every request type with the right response or error, so the
// phone's discovery never stalls.

import ATT
import Bounded

public enum GATTUUID {
    public static let primaryService: UInt16 = 0x2800
    public static let secondaryService: UInt16 = 0x2801
    public static let include: UInt16 = 0x2802
    public static let characteristic: UInt16 = 0x2803
    public static let clientCharacteristicConfiguration: UInt16 = 0x2902
    public static let genericAccess: UInt16 = 0x1800
    public static let genericAttribute: UInt16 = 0x1801
    public static let deviceName: UInt16 = 0x2A00
    public static let appearance: UInt16 = 0x2A01
    public static let serviceChanged: UInt16 = 0x2A05
    /// Database Hash (GATT caching): 16 bytes that change with the database.
    public static let databaseHash: UInt16 = 0x2B2A
    public static let batteryService: UInt16 = 0x180F
    public static let batteryLevel: UInt16 = 0x2A19
}

/// Characteristic property bits (Core Vol 3 Part G 3.3.1.1).
public struct CharacteristicProperties: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
}

/// CCCD values (little-endian on the wire).
public enum CCCDValue {
    public static let none: UInt16 = 0x0000
    public static let notifications: UInt16 = 0x0001
    public static let indications: UInt16 = 0x0002
}

/// A Service Changed indication: the affected handle range.
public struct ServiceChangedRange: Equatable, Sendable {
    public var start: UInt16
    public var end: UInt16

    public init(start: UInt16, end: UInt16) {
        self.start = start
        self.end = end
    }

    /// Decodes the 4-byte indication value; nil when malformed.
    public init?(_ value: Span<UInt8>) {
        guard value.count == 4 else { return nil }
        start = value.le16(at: 0)
        end = value.le16(at: 2)
    }

    public func overlaps(start otherStart: UInt16, end otherEnd: UInt16) -> Bool {
        start <= otherEnd && otherStart <= end
    }
}
