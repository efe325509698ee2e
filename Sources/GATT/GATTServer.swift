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
// indicated; it is there because iOS expects it. Errors follow the spec: a
// bad range is Invalid Handle naming the start, nothing found is Attribute
// Not Found naming the start, a group type other than a service is
// Unsupported Group Type, reading Service Changed is Read Not Permitted,
// writing anything but the CCCD is Write Not Permitted.

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

    private var lastHandle: UInt16 { attributes[attributes.count - 1].handle }

    private func index(of handle: UInt16) -> Int? {
        guard handle >= 1, handle <= lastHandle else { return nil }
        return Int(handle) - 1
    }

    /// Writes the response to `request` into `out`. Returns false for a
    /// Write Command (no response).
    public mutating func respond(to request: ATTPDU, in pdu: Span<UInt8>, into out: inout ByteBuffer, mtu: Int) -> Bool {
        switch request {
        case .readByGroupTypeRequest(let start, let end, let type):
            readByGroupType(start, end, type, &out, mtu)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            findByTypeValue(start, end, type, pdu.extracting(value), &out, mtu)
        case .readByTypeRequest(let start, let end, let type):
            readByType(start, end, type, &out, mtu)
        case .findInformationRequest(let start, let end):
            findInformation(start, end, &out, mtu)
        case .readRequest(let handle):
            read(handle, offset: nil, &out, mtu)
        case .readBlobRequest(let handle, let offset):
            read(handle, offset: offset, &out, mtu)
        case .writeRequest(let handle, let value):
            write(handle, pdu.extracting(value), &out)
        case .writeCommand(let handle, let value):
            if handle == Self.serviceChangedCCCDHandle, value.count == 2 { setCCCD(pdu.extracting(value)) }
            return false
        default:
            PDUWriter.errorResponse(&out, requestOpcode: request.opcode ?? 0, handle: 0, code: ATTErrorCode.requestNotSupported)
        }
        return true
    }

    private func error(_ out: inout ByteBuffer, _ opcode: UInt8, _ handle: UInt16, _ code: UInt8) {
        PDUWriter.errorResponse(&out, requestOpcode: opcode, handle: handle, code: code)
    }

    private func validRange(_ start: UInt16, _ end: UInt16) -> Bool { start != 0 && start <= end }

    private func readByGroupType(_ start: UInt16, _ end: UInt16, _ type: ATTUUID, _ out: inout ByteBuffer, _ mtu: Int) {
        let op = ATTOpcode.readByGroupTypeRequest
        guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
        guard type == .uuid16(GATTUUID.primaryService) || type == .uuid16(GATTUUID.secondaryService) else {
            return error(&out, op, start, ATTErrorCode.unsupportedGroupType)
        }
        let limit = min(mtu, out.capacity)
        out.removeAll()
        out.append(ATTOpcode.readByGroupTypeResponse)
        out.append(0)
        var entryLength = 0
        for i in 0..<attributes.count {
            let a = attributes[i]
            guard a.handle >= start, a.handle <= end, .uuid16(a.type) == type else { continue }
            let length = 4 + a.value.count
            if entryLength != 0 && (length != entryLength || out.count + length > limit) { break }
            if out.count + length > limit { break }
            entryLength = length
            out.appendLE16(a.handle)
            out.appendLE16(a.groupEnd)
            out.append(contentsOf: a.value.span)
        }
        guard entryLength != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
        out[1] = UInt8(entryLength)
    }

    private func findByTypeValue(_ start: UInt16, _ end: UInt16, _ type: UInt16, _ value: Span<UInt8>, _ out: inout ByteBuffer, _ mtu: Int) {
        let op = ATTOpcode.findByTypeValueRequest
        guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
        let limit = min(mtu, out.capacity)
        out.removeAll()
        out.append(ATTOpcode.findByTypeValueResponse)
        for i in 0..<attributes.count {
            let a = attributes[i]
            guard a.handle >= start, a.handle <= end, a.type == type, a.value.elementsEqual(value) else { continue }
            if out.count + 4 > limit { break }
            out.appendLE16(a.handle)
            out.appendLE16(a.groupEnd)
        }
        guard out.count > 1 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
    }

    private func readByType(_ start: UInt16, _ end: UInt16, _ type: ATTUUID, _ out: inout ByteBuffer, _ mtu: Int) {
        let op = ATTOpcode.readByTypeRequest
        guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
        let limit = min(mtu, out.capacity)
        out.removeAll()
        out.append(ATTOpcode.readByTypeResponse)
        out.append(0)
        var entryLength = 0
        for i in 0..<attributes.count {
            let a = attributes[i]
            guard a.handle >= start, a.handle <= end, .uuid16(a.type) == type else { continue }
            guard a.readable else {
                if entryLength == 0 { return error(&out, op, a.handle, ATTErrorCode.readNotPermitted) }
                break
            }
            let valueLength = min(a.value.count, min(limit - 4, 253))
            let length = 2 + valueLength
            if entryLength != 0 && (length != entryLength || out.count + length > limit) { break }
            entryLength = length
            out.appendLE16(a.handle)
            out.append(contentsOf: a.value.span.extracting(0..<valueLength))
        }
        guard entryLength != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
        out[1] = UInt8(entryLength)
    }

    private func findInformation(_ start: UInt16, _ end: UInt16, _ out: inout ByteBuffer, _ mtu: Int) {
        let op = ATTOpcode.findInformationRequest
        guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
        let limit = min(mtu, out.capacity)
        out.removeAll()
        out.append(ATTOpcode.findInformationResponse)
        out.append(1)
        for i in 0..<attributes.count {
            let a = attributes[i]
            guard a.handle >= start, a.handle <= end else { continue }
            if out.count + 4 > limit { break }
            out.appendLE16(a.handle)
            out.appendLE16(a.type)
        }
        guard out.count > 2 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
    }

    private func read(_ handle: UInt16, offset: UInt16?, _ out: inout ByteBuffer, _ mtu: Int) {
        let op = offset == nil ? ATTOpcode.readRequest : ATTOpcode.readBlobRequest
        guard let i = index(of: handle) else { return error(&out, op, handle, ATTErrorCode.invalidHandle) }
        let a = attributes[i]
        guard a.readable else { return error(&out, op, handle, ATTErrorCode.readNotPermitted) }
        let from = Int(offset ?? 0)
        guard from <= a.value.count else { return error(&out, op, handle, ATTErrorCode.invalidOffset) }
        let responseOpcode = offset == nil ? ATTOpcode.readResponse : ATTOpcode.readBlobResponse
        PDUWriter.valueResponse(&out, opcode: responseOpcode, value: a.value.span.extracting(from..<a.value.count), mtu: mtu)
    }

    private mutating func write(_ handle: UInt16, _ value: Span<UInt8>, _ out: inout ByteBuffer) {
        let op = ATTOpcode.writeRequest
        guard index(of: handle) != nil else { return error(&out, op, handle, ATTErrorCode.invalidHandle) }
        guard handle == Self.serviceChangedCCCDHandle else { return error(&out, op, handle, ATTErrorCode.writeNotPermitted) }
        guard value.count == 2 else { return error(&out, op, handle, ATTErrorCode.invalidAttributeValueLength) }
        setCCCD(value)
        PDUWriter.writeResponse(&out)
    }

    private mutating func setCCCD(_ value: Span<UInt8>) {
        serviceChangedCCCD = value.le16(at: 0)
        attributes[8].value = InlineBytes<32>(value)
    }
}
