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
//
// The database never changes while running, so Service Changed is never
// indicated; it is there because iOS expects it. `AttributeServer` answers
// discovery and reads (with the spec's errors: reading Service Changed is
// Read Not Permitted); writing anything but the CCCD is Write Not Permitted,
// a CCCD value other than 2 bytes Invalid Attribute Value Length. Nothing
// here is longer than one Write Request, so Prepare and Execute Write get
// Request Not Supported.

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

    private var attributes: InlineArray<9, Attribute>
    /// The phone's subscription to Service Changed (0x0002 = indications).
    public private(set) var serviceChangedCCCD: UInt16 = 0

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
        ]
    }

    /// Forgets the phone's per-link state (CCCD) for a new link.
    public mutating func reset() {
        serviceChangedCCCD = 0
        attributes[8].value = InlineBytes<32>()
        attributes[8].value.append(0)
        attributes[8].value.append(0)
    }

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
            guard handle == Self.serviceChangedCCCDHandle else {
                _ = AttributeServer.error(&out, op, handle, ATTErrorCode.writeNotPermitted)
                return !isCommand
            }
            guard value.count == 2 else {
                _ = AttributeServer.error(&out, op, handle, ATTErrorCode.invalidAttributeValueLength)
                return !isCommand
            }
            setCCCD(pdu.extracting(value))
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

    private mutating func setCCCD(_ value: Span<UInt8>) {
        serviceChangedCCCD = value.le16(at: 0)
        attributes[8].value = InlineBytes<32>(value)
    }
}

extension GATTServer: AttributeDatabase {
    public var attributeCount: Int { attributes.count }

    public func attribute(at index: Int, secured: Bool) -> ServedAttribute? {
        let a = attributes[index]
        return ServedAttribute(
            handle: a.handle, type: .uuid16(a.type), groupEnd: a.groupEnd, value: a.value,
            readError: a.readable ? nil : ATTErrorCode.readNotPermitted)
    }
}
