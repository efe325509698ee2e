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
// handles do not exist. Discovery and reads are answered by GATT's
// `AttributeServer` (the same code that answers for the wearable), from the
// attributes this database describes: reading a value that is notify-only or
// write-only is Read Not Permitted; the ANCS CCCDs need a secured link.
// Writes are decided here: anything but a CCCD or the Control Point is Write
// Not Permitted; a CCCD value that is not 2 bytes is Invalid Attribute Value
// Length.
//
// The database does not decide what a Control Point write means: it checks
// the handle and the link's security and hands the value to the caller.
// Likewise for long writes: a Prepare Write to the Control Point (with the
// same security) goes to the caller's queue, to any other attribute it is
// Write Not Permitted; Execute Write goes to the caller.

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
        /// A Prepare Write to the Control Point on a secured link: the caller
        /// queues the part and echoes it, or answers Prepare Queue Full.
        case controlPointPrepare(offset: UInt16, value: Range<Int>)
        /// An Execute Write: the caller writes or drops its queue.
        case executeWrite(flags: UInt8)
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

    /// Forgets the ANCS subscriptions (Notification Source, Data Source).
    public mutating func dropANCSSubscriptions() {
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
        switch AttributeServer.respond(to: request, in: pdu, database: self, secured: secured, into: &out, mtu: mtu) {
        case .answered(let code):
            guard let code, code == ATTErrorCode.insufficientAuthentication else { return .answered }
            return .insufficientAuthentication(handle: out.span.le16(at: 2))
        case .write(let index, let handle, let value):
            return write(index, handle, pdu.extracting(value), range: value, &out, secured, opcode: request.opcode ?? 0)
        case .prepareWrite(let index, let handle, let offset, let value):
            let op = ATTOpcode.prepareWriteRequest
            guard attributes[index].role == .characteristicValue(.controlPoint) else {
                return error(&out, op, handle, ATTErrorCode.writeNotPermitted)
            }
            if !secured { return error(&out, op, handle, ATTErrorCode.insufficientAuthentication) }
            return .controlPointPrepare(offset: offset, value: value)
        case .executeWrite(let flags):
            return .executeWrite(flags: flags)
        }
    }

    private func error(_ out: inout ByteBuffer, _ opcode: UInt8, _ handle: UInt16, _ code: UInt8) -> Outcome {
        PDUWriter.errorResponse(&out, requestOpcode: opcode, handle: handle, code: code)
        return code == ATTErrorCode.insufficientAuthentication ? .insufficientAuthentication(handle: handle) : .answered
    }

    private mutating func write(
        _ i: Int, _ handle: UInt16, _ value: Span<UInt8>, range: Range<Int>, _ out: inout ByteBuffer, _ secured: Bool, opcode: UInt8
    ) -> Outcome {
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

extension PhoneDatabase: AttributeDatabase {
    public var attributeCount: Int { attributes.count }

    public func attribute(at index: Int, secured: Bool) -> ServedAttribute? {
        let a = attributes[index]
        guard exists(a) else { return nil }
        var groupEnd = a.handle
        if case .service(let end, _) = a.role { groupEnd = end }
        return ServedAttribute(handle: a.handle, type: a.type, groupEnd: groupEnd, value: value(a), readError: readError(a, secured: secured))
    }
}
