// SPDX-License-Identifier: Apache-2.0
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
//           (0x0019–0x001F unused)
//   0x0020  Primary Service      AMS 89D3502B-…, ends 0x0028
//   0x0021  Characteristic       write, notify, -> 0x0022, Remote Command
//   0x0022  Remote Command       write, needs a secured link
//   0x0023  CCCD                 read/write, needs a secured link
//   0x0024  Characteristic       write, notify, -> 0x0025, Entity Update
//   0x0025  Entity Update        write with response, needs a secured link
//   0x0026  CCCD                 read/write, needs a secured link
//   0x0027  Characteristic       read, write, -> 0x0028, Entity Attribute
//   0x0028  Entity Attribute     read/write, needs a secured link
//           (0x0029–0x002F unused)
//   0x0030  Primary Service      Current Time (0x1805), ends 0x0035
//   0x0031  Characteristic       read, notify, -> 0x0032, Current Time (0x2A2B)
//   0x0032  Current Time         read (10 bytes), needs a secured link
//   0x0033  CCCD                 read/write, needs a secured link
//   0x0034  Characteristic       read, -> 0x0035, Local Time Information (0x2A0F)
//   0x0035  Local Time Info.     read (2 bytes), needs a secured link
//
// AMS and CTS come after ANCS so that ANCS's handles are those of a phone
// without them. An iPhone offers all three to a bonded accessory only
// (docs/ams.md, docs/cts.md), so AMS's and CTS's values and CCCDs need a
// secured link like ANCS's: the Current Time read too, which a generic CTS
// server might leave open.
//
// ANCS can be removed and added back (`ancsPresent`); while removed its
// handles do not exist; AMS and CTS can be removed (`no-ams`, `no-cts`). Discovery and reads are answered by GATT's
// `AttributeServer` (the same code that answers for the wearable), from the
// attributes this database describes: reading a value that is notify-only or
// write-only is Read Not Permitted; the ANCS CCCDs need a secured link.
// Writes are decided here: anything but a CCCD, the Control Point or an AMS
// characteristic is Write Not Permitted; a CCCD value that is not 2 bytes is
// Invalid Attribute Value Length.
//
// The values that change (Current Time, Local Time Information, the Entity
// Attribute the wearable chose) are the caller's: it sets them before each
// request (`setValues`), so a read answers what the phone holds then.
//
// The database does not decide what a Control Point or AMS write means: it
// checks the handle and the link's security and hands the value to the
// caller.
// Likewise for long writes: a Prepare Write to the Control Point (with the
// same security) goes to the caller's queue, to any other attribute it is
// Write Not Permitted; Execute Write goes to the caller.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import GATT

/// The phone's characteristics that a client writes to.
public enum PhoneCharacteristic: Equatable, Sendable {
    case serviceChanged
    case notificationSource
    case controlPoint
    case dataSource
    case remoteCommand
    case entityUpdate
    case entityAttribute
    case currentTime
    case localTimeInformation

    public var name: StaticString {
        switch self {
        case .serviceChanged: "service-changed"
        case .notificationSource: "notification-source"
        case .controlPoint: "control-point"
        case .dataSource: "data-source"
        case .remoteCommand: "remote-command"
        case .entityUpdate: "entity-update"
        case .entityAttribute: "entity-attribute"
        case .currentTime: "current-time"
        case .localTimeInformation: "local-time-information"
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
    public static let amsService: UInt16 = 0x0020
    public static let remoteCommandValue: UInt16 = 0x0022
    public static let remoteCommandCCCD: UInt16 = 0x0023
    public static let entityUpdateValue: UInt16 = 0x0025
    public static let entityUpdateCCCD: UInt16 = 0x0026
    public static let entityAttributeValue: UInt16 = 0x0028
    public static let amsEnd: UInt16 = 0x0028
    public static let ctsService: UInt16 = 0x0030
    public static let currentTimeValue: UInt16 = 0x0032
    public static let currentTimeCCCD: UInt16 = 0x0033
    public static let localTimeInformationValue: UInt16 = 0x0035
    public static let ctsEnd: UInt16 = 0x0035
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
        /// A write to Remote Command, Entity Update or Entity Attribute on a
        /// secured link: the caller answers.
        case amsWrite(PhoneCharacteristic, value: Range<Int>)
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
        /// Not readable (notify- or write-only).
        case characteristicValue(PhoneCharacteristic)
        /// Readable on a secured link: the value the caller set.
        case readableValue(PhoneCharacteristic)
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
    public private(set) var amsPresent = true
    public private(set) var ctsPresent = true
    public private(set) var remoteCommandCCCDValue: UInt16 = 0
    public private(set) var entityUpdateCCCDValue: UInt16 = 0
    public private(set) var currentTimeCCCDValue: UInt16 = 0
    private var currentTime = InlineBytes<10>()
    private var localTimeInformation = InlineBytes<2>()
    /// Nil: no attribute chosen, or an empty one (a read is Absent Attribute).
    private var entityAttribute: InlineBytes<32>? = nil
    private let attributes: InlineArray<33, Attribute>

    public init(deviceName: PeerName) {
        self.deviceName = deviceName
        let primary = ATTUUID.uuid16(GATTUUID.primaryService)
        let declaration = ATTUUID.uuid16(GATTUUID.characteristic)
        let cccd = ATTUUID.uuid16(GATTUUID.clientCharacteristicConfiguration)
        let ns = ATTUUID.uuid128(ANCSUUID.notificationSource)
        let cp = ATTUUID.uuid128(ANCSUUID.controlPoint)
        let ds = ATTUUID.uuid128(ANCSUUID.dataSource)
        let rc = ATTUUID.uuid128(AMSUUID.remoteCommand)
        let eu = ATTUUID.uuid128(AMSUUID.entityUpdate)
        let ea = ATTUUID.uuid128(AMSUUID.entityAttribute)
        let ct = ATTUUID.uuid16(CTSUUID.currentTime)
        let lti = ATTUUID.uuid16(CTSUUID.localTimeInformation)
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
            Attribute(handle: 0x20, type: primary, role: .service(end: Self.amsEnd, uuid: .uuid128(AMSUUID.service))),
            Attribute(handle: 0x21, type: declaration, role: .declaration(properties: [.write, .notify], valueHandle: 0x22, uuid: rc)),
            Attribute(handle: 0x22, type: rc, role: .characteristicValue(.remoteCommand)),
            Attribute(handle: 0x23, type: cccd, role: .cccd(.remoteCommand)),
            Attribute(handle: 0x24, type: declaration, role: .declaration(properties: [.write, .notify], valueHandle: 0x25, uuid: eu)),
            Attribute(handle: 0x25, type: eu, role: .characteristicValue(.entityUpdate)),
            Attribute(handle: 0x26, type: cccd, role: .cccd(.entityUpdate)),
            Attribute(handle: 0x27, type: declaration, role: .declaration(properties: [.read, .write], valueHandle: 0x28, uuid: ea)),
            Attribute(handle: 0x28, type: ea, role: .readableValue(.entityAttribute)),
            Attribute(handle: 0x30, type: primary, role: .service(end: Self.ctsEnd, uuid: .uuid16(CTSUUID.service))),
            Attribute(handle: 0x31, type: declaration, role: .declaration(properties: [.read, .notify], valueHandle: 0x32, uuid: ct)),
            Attribute(handle: 0x32, type: ct, role: .readableValue(.currentTime)),
            Attribute(handle: 0x33, type: cccd, role: .cccd(.currentTime)),
            Attribute(handle: 0x34, type: declaration, role: .declaration(properties: .read, valueHandle: 0x35, uuid: lti)),
            Attribute(handle: 0x35, type: lti, role: .readableValue(.localTimeInformation)),
        ]
    }

    /// A new link: every CCCD back to off (the bond does not keep them here).
    /// A bonded client's Service Changed subscription persists across links
    /// (Core Vol 3 Part G 3.3.3.3): given back at its reconnection.
    mutating func restoreServiceChangedSubscription(_ value: UInt16) { serviceChangedCCCDValue = value }

    public mutating func resetSubscriptions() {
        serviceChangedCCCDValue = 0
        notificationSourceCCCDValue = 0
        dataSourceCCCDValue = 0
        remoteCommandCCCDValue = 0
        entityUpdateCCCDValue = 0
        currentTimeCCCDValue = 0
    }

    /// Removes AMS (`no-ams`); its subscriptions go with it. It does not
    /// come back.
    public mutating func removeAMS() {
        amsPresent = false
        remoteCommandCCCDValue = 0
        entityUpdateCCCDValue = 0
    }

    /// Removes CTS (`no-cts`); its subscription goes with it.
    public mutating func removeCTS() {
        ctsPresent = false
        currentTimeCCCDValue = 0
    }

    /// The values reads answer from now on: the phone's local time, its
    /// zone, and the Entity Attribute the wearable chose (nil: none, or empty).
    public mutating func setValues(currentTime: InlineBytes<10>, localTimeInformation: InlineBytes<2>, entityAttribute: InlineBytes<32>?) {
        self.currentTime = currentTime
        self.localTimeInformation = localTimeInformation
        self.entityAttribute = entityAttribute
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
        case .remoteCommand: remoteCommandCCCDValue
        case .entityUpdate: entityUpdateCCCDValue
        case .currentTime: currentTimeCCCDValue
        case .controlPoint, .entityAttribute, .localTimeInformation: 0
        }
    }

    private func exists(_ a: Attribute) -> Bool {
        if !ancsPresent, (Self.ancsService...Self.ancsEnd).contains(a.handle) { return false }
        if !amsPresent, (Self.amsService...Self.amsEnd).contains(a.handle) { return false }
        if !ctsPresent, (Self.ctsService...Self.ctsEnd).contains(a.handle) { return false }
        return true
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
        case .readableValue(.currentTime):
            v.append(currentTime.span)
        case .readableValue(.localTimeInformation):
            v.append(localTimeInformation.span)
        case .readableValue:
            if let entityAttribute { v = entityAttribute }
        case .characteristicValue:
            break
        }
        return v
    }

    /// Nil when `a` may be read on this link, else the error code.
    private func readError(_ a: Attribute, secured: Bool) -> UInt8? {
        switch a.role {
        case .characteristicValue: ATTErrorCode.readNotPermitted
        case .readableValue where !secured: ATTErrorCode.insufficientAuthentication
        case .readableValue(.entityAttribute) where entityAttribute == nil: AMSErrorCode.absentAttribute
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
            case .remoteCommand: remoteCommandCCCDValue = v
            case .entityUpdate: entityUpdateCCCDValue = v
            case .currentTime: currentTimeCCCDValue = v
            case .controlPoint, .entityAttribute, .localTimeInformation: break
            }
            PDUWriter.writeResponse(&out)
            return .subscription(c, value: v)
        case .characteristicValue(.controlPoint):
            if !secured { return error(&out, opcode, handle, ATTErrorCode.insufficientAuthentication) }
            return .controlPoint(value: range)
        case .characteristicValue(let c) where c == .remoteCommand || c == .entityUpdate, .readableValue(let c) where c == .entityAttribute:
            if !secured { return error(&out, opcode, handle, ATTErrorCode.insufficientAuthentication) }
            return .amsWrite(c, value: range)
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
