// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Testing
import TestSupport

@Suite("Notification Source")
struct NotificationSourceTests {
    @Test("an 8-byte Added event decodes every field, UID little-endian")
    func decodesAllFields() throws {
        let event = try NotificationSourceEvent.decode(hex("00 03 01 02 44 33 22 11").span)
        #expect(event.eventID == .added)
        #expect(event.flags == [.silent, .important])
        #expect(event.category == .incomingCall)
        #expect(event.categoryCount == 2)
        #expect(event.uid == 0x1122_3344)
    }

    @Test("a value that is not exactly 8 bytes is rejected with its length", arguments: [0, 1, 7, 9, 20])
    func wrongLength(length: Int) {
        let bytes = [UInt8](repeating: 0, count: length)
        #expect(throws: NotificationSourceError.wrongLength(length)) { try NotificationSourceEvent.decode(bytes.span) }
    }

    @Test("a reserved EventID (3–255) is rejected", arguments: [UInt8(3), 0x80, 0xFF])
    func reservedEventID(raw: UInt8) {
        #expect(throws: NotificationSourceError.reservedEventID(raw)) {
            try NotificationSourceEvent.decode(([raw] + hex("00 00 00 01 00 00 00")).span)
        }
    }

    @Test("reserved EventFlags bits are kept and ignored")
    func reservedFlagsKept() throws {
        let event = try NotificationSourceEvent.decode(hex("01 E8 06 01 01 00 00 00").span)
        #expect(event.flags.rawValue == 0xE8)
        #expect(event.flags.contains(.positiveAction))
        #expect(!event.flags.contains(.silent))
    }

    @Test("a reserved CategoryID is preserved and treated as Other")
    func reservedCategory() throws {
        let event = try NotificationSourceEvent.decode(hex("00 00 0C 01 01 00 00 00").span)
        #expect(event.category.rawValue == 12)
        #expect(event.category.isReserved)
        #expect(event.category.effective == .other)
        #expect("\(event.category.name)" == "Other")
        #expect("\(CategoryID.healthAndFitness.name)" == "HealthAndFitness")
        #expect(CategoryID(name: Array("IncomingCall".utf8).span) == .incomingCall)
        #expect(CategoryID(name: Array("Nope".utf8).span) == nil)
    }

    @Test("encode and decode are inverse")
    func roundTrip() throws {
        let event = NotificationSourceEvent(eventID: .removed, flags: [.preExisting, .negativeAction], category: .email, categoryCount: 9, uid: 0xDEAD_BEEF)
        var buffer = ByteBuffer(capacity: 8)
        #expect(event.encode(into: &buffer) == true)
        #expect(buffer.toArray() == hex("02 14 06 09 EF BE AD DE"))
        let decoded = try NotificationSourceEvent.decode(buffer.span)
        #expect(decoded == event)
    }
}

@Suite("ANCS constants")
struct ConstantsTests {
    @Test("the ANCS UUIDs go on the wire as the reverse of their text form")
    func uuidsOnTheWire() {
        let expected: [(UUID128, String)] = [
            (ANCSUUID.service, Wire.ancs),
            (ANCSUUID.notificationSource, Wire.ns),
            (ANCSUUID.controlPoint, Wire.cp),
            (ANCSUUID.dataSource, Wire.ds),
        ]
        for (uuid, wire) in expected {
            let bytes = hex(wire)
            #expect(uuid.matches(bytes.span) == true, "\(wire)")
        }
    }
}
