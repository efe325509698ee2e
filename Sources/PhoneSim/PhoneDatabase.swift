// The simulated iPhone's GATT database and its answers to every ATT request
// (Core Vol 3 Part F 3.4, Part G 3). Handles are fixed so tests read well:
//
//   0x0001  Primary Service      Generic Access (0x1800), ends 0x0005
//   0x0002  Characteristic       read, -> 0x0003, Device Name (0x2A00)
//   0x0003  Device Name          "iPhone" (configurable)
//   0x0004  Characteristic       read, -> 0x0005, Appearance (0x2A01)
//   0x0005  Appearance           0x0040 Generic Phone
//   0x0006  Primary Service      Generic Attribute (0x1801), ends 0x0009
//   0x0007  Characteristic       indicate, -> 0x0008, Service Changed (0x2A05)
//   0x0008  Service Changed      (not readable)
//   0x0009  CCCD                 read/write, open
//           (0x000A–0x000F unused: ANCS starts at a round handle)
//   0x0010  Primary Service      ANCS 7905F431-…, ends 0x0018
//   0x0011  Characteristic       notify, -> 0x0012, Notification Source
//   0x0012  Notification Source  (notify only)
//   0x0013  CCCD                 read/write, needs a secured link
//   0x0014  Characteristic       write, -> 0x0015, Control Point
//   0x0015  Control Point        write with response, needs a secured link
//   0x0016  Characteristic       notify, -> 0x0017, Data Source
//   0x0017  Data Source          (notify only)
//   0x0018  CCCD                 read/write, needs a secured link
//
// ANCS can be removed and added back (`ancsPresent`); while removed its
// handles do not exist. Errors follow the spec as GATTServer does: a bad
// range is Invalid Handle naming the start; nothing found is Attribute Not
// Found naming the start; a group type other than a service is Unsupported
// Group Type; reading a value that is notify-only or write-only is Read Not
// Permitted; writing anything but a CCCD or the Control Point is Write Not
// Permitted; a CCCD value that is not 2 bytes is Invalid Attribute Value
// Length. Entries of a list response have one length (16- and 128-bit UUIDs
// never share a response) and stop at the MTU.
//
// The database does not decide what a Control Point write means: it checks
// the handle and the link's security and hands the value to the caller.

import ANCS
import ATT
import Bounded
import GATT

/// The phone's characteristics that a client writes to.
public enum PhoneCharacteristic: Equatable, Sendable {
    case serviceChanged
    case notificationSource
    case controlPoint
    case dataSource

    public var name: StaticString {
        switch self {
        case .serviceChanged: "service-changed"
        case .notificationSource: "notification-source"
        case .controlPoint: "control-point"
        case .dataSource: "data-source"
        }
    }
}

public struct PhoneDatabase: Sendable {
    public static let gapService: UInt16 = 0x0001
    public static let deviceNameValue: UInt16 = 0x0003
    public static let appearanceValue: UInt16 = 0x0005
    public static let gattService: UInt16 = 0x0006
    public static let serviceChangedValue: UInt16 = 0x0008
    public static let serviceChangedCCCD: UInt16 = 0x0009
    public static let ancsService: UInt16 = 0x0010
    public static let notificationSourceValue: UInt16 = 0x0012
    public static let notificationSourceCCCD: UInt16 = 0x0013
    public static let controlPointValue: UInt16 = 0x0015
    public static let dataSourceValue: UInt16 = 0x0017
    public static let dataSourceCCCD: UInt16 = 0x0018
    public static let ancsEnd: UInt16 = 0x0018
    public static let appearanceGenericPhone: UInt16 = 0x0040

    /// What a request turned out to be, for the caller to act on.
    public enum Outcome: Equatable, Sendable {
        /// `out` holds the response.
        case answered
        /// `out` holds Error Response 0x05: the link must be secured first.
        case insufficientAuthentication(handle: UInt16)
        /// A CCCD was written; `out` holds the Write Response.
        case subscription(PhoneCharacteristic, value: UInt16)
        /// A Control Point write on a secured link: the caller answers.
        case controlPoint(value: Range<Int>)
    }

    enum Role: Equatable, Sendable {
        case service(end: UInt16, uuid: ATTUUID)
        case declaration(properties: CharacteristicProperties, valueHandle: UInt16, uuid: ATTUUID)
        case deviceName
        case appearance
        case characteristicValue(PhoneCharacteristic)
        case cccd(PhoneCharacteristic)
    }

    struct Attribute: Sendable {
        var handle: UInt16
        var type: ATTUUID
        var role: Role
    }

    public let deviceName: PeerName
    public private(set) var ancsPresent = true
    public private(set) var serviceChangedCCCDValue: UInt16 = 0
    public private(set) var notificationSourceCCCDValue: UInt16 = 0
    public private(set) var dataSourceCCCDValue: UInt16 = 0
    private let attributes: InlineArray<18, Attribute>

    public init(deviceName: PeerName) {
        self.deviceName = deviceName
        let primary = ATTUUID.uuid16(GATTUUID.primaryService)
        let declaration = ATTUUID.uuid16(GATTUUID.characteristic)
        let cccd = ATTUUID.uuid16(GATTUUID.clientCharacteristicConfiguration)
        let ns = ATTUUID.uuid128(ANCSUUID.notificationSource)
        let cp = ATTUUID.uuid128(ANCSUUID.controlPoint)
        let ds = ATTUUID.uuid128(ANCSUUID.dataSource)
        attributes = [
            Attribute(handle: 0x01, type: primary, role: .service(end: 0x05, uuid: .uuid16(GATTUUID.genericAccess))),
            Attribute(handle: 0x02, type: declaration, role: .declaration(properties: .read, valueHandle: 0x03, uuid: .uuid16(GATTUUID.deviceName))),
            Attribute(handle: 0x03, type: .uuid16(GATTUUID.deviceName), role: .deviceName),
            Attribute(handle: 0x04, type: declaration, role: .declaration(properties: .read, valueHandle: 0x05, uuid: .uuid16(GATTUUID.appearance))),
            Attribute(handle: 0x05, type: .uuid16(GATTUUID.appearance), role: .appearance),
            Attribute(handle: 0x06, type: primary, role: .service(end: 0x09, uuid: .uuid16(GATTUUID.genericAttribute))),
            Attribute(handle: 0x07, type: declaration, role: .declaration(properties: .indicate, valueHandle: 0x08, uuid: .uuid16(GATTUUID.serviceChanged))),
            Attribute(handle: 0x08, type: .uuid16(GATTUUID.serviceChanged), role: .characteristicValue(.serviceChanged)),
            Attribute(handle: 0x09, type: cccd, role: .cccd(.serviceChanged)),
            Attribute(handle: 0x10, type: primary, role: .service(end: Self.ancsEnd, uuid: .uuid128(ANCSUUID.service))),
            Attribute(handle: 0x11, type: declaration, role: .declaration(properties: .notify, valueHandle: 0x12, uuid: ns)),
            Attribute(handle: 0x12, type: ns, role: .characteristicValue(.notificationSource)),
            Attribute(handle: 0x13, type: cccd, role: .cccd(.notificationSource)),
            Attribute(handle: 0x14, type: declaration, role: .declaration(properties: .write, valueHandle: 0x15, uuid: cp)),
            Attribute(handle: 0x15, type: cp, role: .characteristicValue(.controlPoint)),
            Attribute(handle: 0x16, type: declaration, role: .declaration(properties: .notify, valueHandle: 0x17, uuid: ds)),
            Attribute(handle: 0x17, type: ds, role: .characteristicValue(.dataSource)),
            Attribute(handle: 0x18, type: cccd, role: .cccd(.dataSource)),
        ]
    }

    /// A new link: every CCCD back to off (the bond does not keep them here).
    public mutating func resetSubscriptions() {
        serviceChangedCCCDValue = 0
        notificationSourceCCCDValue = 0
        dataSourceCCCDValue = 0
    }

    /// Removes ANCS; its subscriptions go with it.
    public mutating func removeANCS() {
        ancsPresent = false
        notificationSourceCCCDValue = 0
        dataSourceCCCDValue = 0
    }

    public mutating func addANCS() {
        ancsPresent = true
    }

    public func cccdValue(_ characteristic: PhoneCharacteristic) -> UInt16 {
        switch characteristic {
        case .serviceChanged: serviceChangedCCCDValue
        case .notificationSource: notificationSourceCCCDValue
        case .dataSource: dataSourceCCCDValue
        case .controlPoint: 0
        }
    }

    private func exists(_ a: Attribute) -> Bool {
        ancsPresent || a.handle < Self.ancsService || a.handle > Self.ancsEnd
    }

    private func index(of handle: UInt16) -> Int? {
        for i in 0..<attributes.count where attributes[i].handle == handle && exists(attributes[i]) { return i }
        return nil
    }

    private static func needsSecurity(_ characteristic: PhoneCharacteristic) -> Bool { characteristic != .serviceChanged }

    /// The attribute's value as read, at most 32 bytes (all of ours fit).
    private func value(_ a: Attribute) -> InlineBytes<32> {
        var v = InlineBytes<32>()
        func put(_ uuid: ATTUUID) {
            switch uuid {
            case .uuid16(let x):
                v.append(UInt8(truncatingIfNeeded: x))
                v.append(UInt8(truncatingIfNeeded: x >> 8))
            case .uuid128(let u):
                for i in 0..<16 { v.append(u.wire[i]) }
            }
        }
        func put16(_ x: UInt16) {
            v.append(UInt8(truncatingIfNeeded: x))
            v.append(UInt8(truncatingIfNeeded: x >> 8))
        }
        switch a.role {
        case .service(_, let uuid):
            put(uuid)
        case .declaration(let properties, let valueHandle, let uuid):
            v.append(properties.rawValue)
            put16(valueHandle)
            put(uuid)
        case .deviceName:
            v = deviceName
        case .appearance:
            put16(Self.appearanceGenericPhone)
        case .cccd(let c):
            put16(cccdValue(c))
        case .characteristicValue:
            break
        }
        return v
    }

    /// Nil when `a` may be read on this link, else the error code.
    private func readError(_ a: Attribute, secured: Bool) -> UInt8? {
        switch a.role {
        case .characteristicValue: ATTErrorCode.readNotPermitted
        case .cccd(let c) where Self.needsSecurity(c) && !secured: ATTErrorCode.insufficientAuthentication
        default: nil
        }
    }

    /// Answers `request` (decoded from `pdu`) into `out`. `secured`: the link
    /// may use ANCS. For a Write Command the response in `out` is not sent.
    public mutating func respond(
        to request: ATTPDU, in pdu: Span<UInt8>, into out: inout ByteBuffer, mtu: Int, secured: Bool
    ) -> Outcome {
        switch request {
        case .readByGroupTypeRequest(let start, let end, let type):
            return readByGroupType(start, end, type, &out, mtu)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            return findByTypeValue(start, end, type, pdu.extracting(value), &out, mtu)
        case .readByTypeRequest(let start, let end, let type):
            return readByType(start, end, type, &out, mtu, secured)
        case .findInformationRequest(let start, let end):
            return findInformation(start, end, &out, mtu)
        case .readRequest(let handle):
            return read(handle, offset: nil, &out, mtu, secured)
        case .readBlobRequest(let handle, let offset):
            return read(handle, offset: offset, &out, mtu, secured)
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value):
            return write(handle, pdu.extracting(value), range: value, &out, secured, opcode: request.opcode ?? 0)
        default:
            return error(&out, request.opcode ?? 0, 0, ATTErrorCode.requestNotSupported)
        }
    }

    private func error(_ out: inout ByteBuffer, _ opcode: UInt8, _ handle: UInt16, _ code: UInt8) -> Outcome {
        PDUWriter.errorResponse(&out, requestOpcode: opcode, handle: handle, code: code)
        return code == ATTErrorCode.insufficientAuthentication ? .insufficientAuthentication(handle: handle) : .answered
    }

    private func validRange(_ start: UInt16, _ end: UInt16) -> Bool { start != 0 && start <= end }

    private func readByGroupType(_ start: UInt16, _ end: UInt16, _ type: ATTUUID, _ out: inout ByteBuffer, _ mtu: Int) -> Outcome {
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
            guard exists(a), a.handle >= start, a.handle <= end, a.type == type, case .service(let groupEnd, _) = a.role else { continue }
            let v = value(a)
            let length = 4 + v.count
            if entryLength != 0 && length != entryLength { break }
            if out.count + length > limit { break }
            entryLength = length
            out.appendLE16(a.handle)
            out.appendLE16(groupEnd)
            out.append(contentsOf: v.span)
        }
        guard entryLength != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
        out[1] = UInt8(entryLength)
        return .answered
    }

    private func findByTypeValue(
        _ start: UInt16, _ end: UInt16, _ type: UInt16, _ wanted: Span<UInt8>, _ out: inout ByteBuffer, _ mtu: Int
    ) -> Outcome {
        let op = ATTOpcode.findByTypeValueRequest
        guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
        let limit = min(mtu, out.capacity)
        out.removeAll()
        out.append(ATTOpcode.findByTypeValueResponse)
        for i in 0..<attributes.count {
            let a = attributes[i]
            guard exists(a), a.handle >= start, a.handle <= end, a.type == .uuid16(type), readError(a, secured: true) == nil,
                value(a).elementsEqual(wanted)
            else { continue }
            if out.count + 4 > limit { break }
            var groupEnd = a.handle
            if case .service(let serviceEnd, _) = a.role { groupEnd = serviceEnd }
            out.appendLE16(a.handle)
            out.appendLE16(groupEnd)
        }
        guard out.count > 1 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
        return .answered
    }

    private func readByType(_ start: UInt16, _ end: UInt16, _ type: ATTUUID, _ out: inout ByteBuffer, _ mtu: Int, _ secured: Bool) -> Outcome {
        let op = ATTOpcode.readByTypeRequest
        guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
        let limit = min(mtu, out.capacity)
        out.removeAll()
        out.append(ATTOpcode.readByTypeResponse)
        out.append(0)
        var entryLength = 0
        for i in 0..<attributes.count {
            let a = attributes[i]
            guard exists(a), a.handle >= start, a.handle <= end, a.type == type else { continue }
            if let code = readError(a, secured: secured) {
                if entryLength == 0 { return error(&out, op, a.handle, code) }
                break
            }
            let v = value(a)
            let valueLength = min(v.count, min(limit - 4, 253))
            let length = 2 + valueLength
            if entryLength != 0 && (length != entryLength || out.count + length > limit) { break }
            entryLength = length
            out.appendLE16(a.handle)
            out.append(contentsOf: v.span.extracting(0..<valueLength))
        }
        guard entryLength != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
        out[1] = UInt8(entryLength)
        return .answered
    }

    private func findInformation(_ start: UInt16, _ end: UInt16, _ out: inout ByteBuffer, _ mtu: Int) -> Outcome {
        let op = ATTOpcode.findInformationRequest
        guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
        let limit = min(mtu, out.capacity)
        out.removeAll()
        out.append(ATTOpcode.findInformationResponse)
        out.append(0)
        var width = 0
        for i in 0..<attributes.count {
            let a = attributes[i]
            guard exists(a), a.handle >= start, a.handle <= end else { continue }
            if width != 0 && a.type.width != width { break }
            if out.count + 2 + a.type.width > limit { break }
            width = a.type.width
            out.appendLE16(a.handle)
            a.type.append(to: &out)
        }
        guard width != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
        out[1] = width == 2 ? 1 : 2
        return .answered
    }

    private func read(_ handle: UInt16, offset: UInt16?, _ out: inout ByteBuffer, _ mtu: Int, _ secured: Bool) -> Outcome {
        let op = offset == nil ? ATTOpcode.readRequest : ATTOpcode.readBlobRequest
        guard let i = index(of: handle) else { return error(&out, op, handle, ATTErrorCode.invalidHandle) }
        let a = attributes[i]
        if let code = readError(a, secured: secured) { return error(&out, op, handle, code) }
        let v = value(a)
        let from = Int(offset ?? 0)
        guard from <= v.count else { return error(&out, op, handle, ATTErrorCode.invalidOffset) }
        let responseOpcode = offset == nil ? ATTOpcode.readResponse : ATTOpcode.readBlobResponse
        PDUWriter.valueResponse(&out, opcode: responseOpcode, value: v.span.extracting(from..<v.count), mtu: mtu)
        return .answered
    }

    private mutating func write(
        _ handle: UInt16, _ value: Span<UInt8>, range: Range<Int>, _ out: inout ByteBuffer, _ secured: Bool, opcode: UInt8
    ) -> Outcome {
        guard let i = index(of: handle) else { return error(&out, opcode, handle, ATTErrorCode.invalidHandle) }
        switch attributes[i].role {
        case .cccd(let c):
            if Self.needsSecurity(c) && !secured { return error(&out, opcode, handle, ATTErrorCode.insufficientAuthentication) }
            guard value.count == 2 else { return error(&out, opcode, handle, ATTErrorCode.invalidAttributeValueLength) }
            let v = value.le16(at: 0)
            switch c {
            case .serviceChanged: serviceChangedCCCDValue = v
            case .notificationSource: notificationSourceCCCDValue = v
            case .dataSource: dataSourceCCCDValue = v
            case .controlPoint: break
            }
            PDUWriter.writeResponse(&out)
            return .subscription(c, value: v)
        case .characteristicValue(.controlPoint):
            if !secured { return error(&out, opcode, handle, ATTErrorCode.insufficientAuthentication) }
            return .controlPoint(value: range)
        default:
            return error(&out, opcode, handle, ATTErrorCode.writeNotPermitted)
        }
    }
}
