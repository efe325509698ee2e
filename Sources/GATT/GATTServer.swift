// SPDX-License-Identifier: Apache-2.0
// The database the phone discovers on the wearable, and the answers to every
// ATT request against it (Core Vol 3 Part F 3.4, Part G 3).
//
//   0x0001  Primary Service      Generic Access (0x1800)
//   0x0002  Characteristic       read, -> 0x0003, Device Name (0x2A00)
//   0x0003  Device Name          the configured name
//   0x0004  Characteristic       read, -> 0x0005, Appearance (0x2A01)
//   0x0005  Appearance           0x00C0 Generic Watch
//   0x0006  Primary Service      Generic Attribute (0x1801)
//   0x0007  Characteristic       indicate, -> 0x0008, Service Changed (0x2A05)
//   0x0008  Service Changed      (not readable)
//   0x0009  CCCD                 read/write
// Only while the wearable knows its battery (a fuel gauge reads):
//   0x000A  Primary Service      Battery Service (0x180F)
//   0x000B  Characteristic       read|notify, -> 0x000C, Battery Level (0x2A19)
//   0x000C  Battery Level        one byte, percent 0...100
//   0x000D  CCCD                 read/write (0x0001: notifications)
//
// The handles never move: the Battery Service is appended or withdrawn
// whole, and each time the database changes the range 0x000A...0x000D is
// owed to the phone as a Service Changed indication (`serviceChangeOwed`;
// the link sends it when the phone has indications on, and clears it at
// the confirmation). A battery that reads at start is there from the
// first link, so the usual case changes nothing (a change before any
// link has started is owed to nobody). `AttributeServer` answers
// discovery and reads (with the spec's errors: reading Service Changed is
// Read Not Permitted); writing anything but a CCCD is Write Not Permitted,
// a CCCD value other than 2 bytes Invalid Attribute Value Length. Nothing
// here is longer than one Write Request, so Prepare and Execute Write get
// Request Not Supported.
//
// The CCCDs are the phone's: a new link starts with both off, unless it is
// the bonded phone's, whose subscriptions carry over (Core Vol 3 Part G
// 3.3.3.3: a bonded client's configuration persists across connections).

import ATT
import Bounded

public struct GATTServer: Sendable {
    public typealias DeviceName = InlineBytes<32>

    public static let appearanceGenericWatch: UInt16 = 0x00C0

    struct Attribute: Sendable {
        var handle: UInt16
        var type: UInt16
        var value: InlineBytes<32>
        var readable: Bool
        /// For service declarations: the last handle of the service.
        var groupEnd: UInt16
    }

    public static let serviceChangedValueHandle: UInt16 = 0x0008
    public static let serviceChangedCCCDHandle: UInt16 = 0x0009
    public static let batteryServiceHandle: UInt16 = 0x000A
    public static let batteryLevelValueHandle: UInt16 = 0x000C
    public static let batteryLevelCCCDHandle: UInt16 = 0x000D
    static let baseCount = 9
    static let withBatteryCount = 13

    private var attributes: InlineArray<13, Attribute>
    private var count = GATTServer.baseCount
    /// The phone's subscription to Service Changed (0x0002 = indications).
    public private(set) var serviceChangedCCCD: UInt16 = 0
    /// The phone's subscription to Battery Level (0x0001 = notifications).
    public private(set) var batteryLevelCCCD: UInt16 = 0
    /// Database changes (the Battery Service came or went), those covered
    /// by the last indication sent, and by the last one confirmed: a change
    /// while an indication is out is owed again after its confirmation.
    private var changes: UInt32 = 0
    private var changesIndicated: UInt32 = 0
    private var changesConfirmed: UInt32 = 0
    /// The database changed and the phone has not confirmed a Service
    /// Changed indication sent since.
    public var serviceChangeOwed: Bool { changes != changesConfirmed }
    /// A link has started since this server was made: from then on a
    /// phone may hold the database in its cache, and a change is owed to
    /// it. Before (the battery's first reading at start), nothing is.
    private var served = false

    public init(deviceName: DeviceName, appearance: UInt16 = GATTServer.appearanceGenericWatch) {
        func bytes(_ list: UInt8...) -> InlineBytes<32> {
            var b = InlineBytes<32>()
            for x in list { b.append(x) }
            return b
        }
        func le(_ v: UInt16) -> (UInt8, UInt8) { (UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)) }
        let app = le(appearance)
        attributes = [
            Attribute(handle: 1, type: GATTUUID.primaryService, value: bytes(0x00, 0x18), readable: true, groupEnd: 5),
            Attribute(handle: 2, type: GATTUUID.characteristic, value: bytes(0x02, 0x03, 0x00, 0x00, 0x2A), readable: true, groupEnd: 2),
            Attribute(handle: 3, type: GATTUUID.deviceName, value: deviceName, readable: true, groupEnd: 3),
            Attribute(handle: 4, type: GATTUUID.characteristic, value: bytes(0x02, 0x05, 0x00, 0x01, 0x2A), readable: true, groupEnd: 4),
            Attribute(handle: 5, type: GATTUUID.appearance, value: bytes(app.0, app.1), readable: true, groupEnd: 5),
            Attribute(handle: 6, type: GATTUUID.primaryService, value: bytes(0x01, 0x18), readable: true, groupEnd: 9),
            Attribute(handle: 7, type: GATTUUID.characteristic, value: bytes(0x20, 0x08, 0x00, 0x05, 0x2A), readable: true, groupEnd: 7),
            Attribute(handle: 8, type: GATTUUID.serviceChanged, value: bytes(0, 0, 0, 0), readable: false, groupEnd: 8),
            Attribute(handle: 9, type: GATTUUID.clientCharacteristicConfiguration, value: bytes(0, 0), readable: true, groupEnd: 9),
            Attribute(handle: 10, type: GATTUUID.primaryService, value: bytes(0x0F, 0x18), readable: true, groupEnd: 13),
            Attribute(handle: 11, type: GATTUUID.characteristic, value: bytes(0x12, 0x0C, 0x00, 0x19, 0x2A), readable: true, groupEnd: 11),
            Attribute(handle: 12, type: GATTUUID.batteryLevel, value: bytes(0), readable: true, groupEnd: 12),
            Attribute(handle: 13, type: GATTUUID.clientCharacteristicConfiguration, value: bytes(0, 0), readable: true, groupEnd: 13),
        ]
    }

    /// Forgets the phone's per-link state for a new link; a bonded phone
    /// (`keepSubscriptions`) keeps its CCCDs.
    public mutating func reset(keepSubscriptions: Bool = false) {
        served = true
        guard !keepSubscriptions else { return }
        setCCCD(handle: Self.serviceChangedCCCDHandle, 0)
        setCCCD(handle: Self.batteryLevelCCCDHandle, 0)
    }

    // MARK: Battery

    /// What a new battery reading changed in the database.
    public enum BatteryChange: Equatable, Sendable {
        case unchanged
        /// The level's value changed: notify it if the phone subscribed.
        case level
        /// The Battery Service appeared or was withdrawn: Service Changed
        /// is owed.
        case service
    }

    /// The battery level served, percent (nil: no Battery Service).
    public var batteryLevel: UInt8? { count == Self.withBatteryCount ? attributes[11].value[0] : nil }

    /// Serves `percent` (clamped to 100) as the Battery Level, adding the
    /// service if it was not there; nil withdraws it.
    public mutating func setBattery(_ percent: UInt8?) -> BatteryChange {
        guard let percent else {
            guard count == Self.withBatteryCount else { return .unchanged }
            count = Self.baseCount
            setCCCD(handle: Self.batteryLevelCCCDHandle, 0)
            if served { changes &+= 1 }
            return .service
        }
        let level = min(percent, 100)
        let added = count == Self.baseCount
        let old = attributes[11].value[0]
        attributes[11].value = InlineBytes<32>()
        attributes[11].value.append(level)
        if added {
            count = Self.withBatteryCount
            if served { changes &+= 1 }
            return .service
        }
        return old == level ? .unchanged : .level
    }

    /// The phone asked for Battery Level notifications on this link.
    public var notifiesBattery: Bool { count == Self.withBatteryCount && batteryLevelCCCD & CCCDValue.notifications != 0 }
    /// The phone asked for Service Changed indications.
    public var indicatesServiceChanged: Bool { serviceChangedCCCD & CCCDValue.indications != 0 }

    /// The Handle Value Notification of the Battery Level; false when there
    /// is no battery.
    public func batteryNotification(into out: inout ByteBuffer) -> Bool {
        guard let level = batteryLevel else { return false }
        out.removeAll()
        out.append(ATTOpcode.handleValueNotification)
        out.appendLE16(Self.batteryLevelValueHandle)
        out.append(level)
        return true
    }

    /// The Handle Value Indication of Service Changed for the Battery
    /// Service's range (where the database changes); it covers every
    /// change so far.
    public mutating func serviceChangedIndication(into out: inout ByteBuffer) {
        changesIndicated = changes
        out.removeAll()
        out.append(ATTOpcode.handleValueIndication)
        out.appendLE16(Self.serviceChangedValueHandle)
        out.appendLE16(Self.batteryServiceHandle)
        out.appendLE16(Self.batteryLevelCCCDHandle)
    }

    /// The phone confirmed the Service Changed indication.
    public mutating func serviceChangeConfirmed() { changesConfirmed = changesIndicated }

    // MARK: Requests

    /// Writes the response to `request` into `out`. Returns false for a
    /// Write Command (no response).
    public mutating func respond(to request: ATTPDU, in pdu: Span<UInt8>, into out: inout ByteBuffer, mtu: Int) -> Bool {
        var isCommand = false
        if case .writeCommand = request { isCommand = true }
        switch AttributeServer.respond(to: request, in: pdu, database: self, secured: true, into: &out, mtu: mtu) {
        case .answered:
            return !isCommand
        case .write(_, let handle, let value):
            let op = request.opcode ?? ATTOpcode.writeRequest
            guard handle == Self.serviceChangedCCCDHandle || (handle == Self.batteryLevelCCCDHandle && count == Self.withBatteryCount) else {
                _ = AttributeServer.error(&out, op, handle, ATTErrorCode.writeNotPermitted)
                return !isCommand
            }
            guard value.count == 2 else {
                _ = AttributeServer.error(&out, op, handle, ATTErrorCode.invalidAttributeValueLength)
                return !isCommand
            }
            setCCCD(handle: handle, pdu.extracting(value).le16(at: 0))
            PDUWriter.writeResponse(&out)
            return !isCommand
        case .prepareWrite(_, let handle, _, _):
            _ = AttributeServer.error(&out, ATTOpcode.prepareWriteRequest, handle, ATTErrorCode.requestNotSupported)
            return true
        case .executeWrite:
            _ = AttributeServer.error(&out, ATTOpcode.executeWriteRequest, 0, ATTErrorCode.requestNotSupported)
            return true
        }
    }

    private mutating func setCCCD(handle: UInt16, _ value: UInt16) {
        let index = Int(handle) - 1
        if handle == Self.serviceChangedCCCDHandle { serviceChangedCCCD = value } else { batteryLevelCCCD = value }
        attributes[index].value = InlineBytes<32>()
        attributes[index].value.append(UInt8(truncatingIfNeeded: value))
        attributes[index].value.append(UInt8(truncatingIfNeeded: value >> 8))
    }
}

extension GATTServer: AttributeDatabase {
    public var attributeCount: Int { count }

    public func attribute(at index: Int, secured: Bool) -> ServedAttribute? {
        let a = attributes[index]
        return ServedAttribute(
            handle: a.handle, type: .uuid16(a.type), groupEnd: a.groupEnd, value: a.value,
            readError: a.readable ? nil : ATTErrorCode.readNotPermitted)
    }
}
