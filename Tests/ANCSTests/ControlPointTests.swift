// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Testing
import TestSupport

@Suite("Control Point encoding")
struct ControlPointTests {
    let limits = AttributeLimits()

    func encode(_ command: ControlPointCommand, maxLength: Int = 182) throws(ControlPointError) -> [UInt8] {
        var out = ByteBuffer(capacity: 512)
        try command.encode(into: &out, limits: limits, maxLength: maxLength)
        return out.toArray()
    }

    @Test("Get Notification Attributes lists IDs in order, with a 2-byte max length after Title, Subtitle and Message")
    func getNotificationAttributes() throws {
        let bytes = try encode(.getNotificationAttributes(uid: 0x0102_0304, attributes: [.appIdentifier, .title, .message, .date]))
        #expect(bytes == hex("00 04 03 02 01  00  01 40 00  03 00 01  05"))
        let all = try encode(.getNotificationAttributes(uid: 7, attributes: .all))
        #expect(all == hex("00 07 00 00 00 00 01 40 00 02 40 00 03 00 01 04 05 06 07"))
    }

    @Test("Get App Attributes sends the app identifier NUL-terminated, then the attribute IDs")
    func getAppAttributes() throws {
        let bytes = try encode(.getAppAttributes(appIdentifier: AppIdentifier("com.apple.mobilephone"), attributes: .displayName))
        #expect(bytes == [0x01] + Array("com.apple.mobilephone".utf8) + [0x00, 0x00])
    }

    @Test("Perform Notification Action is 02 UID ActionID", arguments: [(ActionID.positive, UInt8(0)), (.negative, 1)])
    func performAction(action: ActionID, raw: UInt8) throws {
        #expect(try encode(.performNotificationAction(uid: 0xAABB_CCDD, action: action)) == hex("02 DD CC BB AA") + [raw])
    }

    @Test("a command longer than MTU − 3 is an error, not a truncation, and leaves the buffer untouched")
    func doesNotFitMTU() {
        var out = ByteBuffer(capacity: 64)
        out.append(0x99)
        let command = ControlPointCommand.getAppAttributes(appIdentifier: AppIdentifier("com.apple.MobileSMS"), attributes: .displayName)
        #expect(throws: ControlPointError.doesNotFit(neededBytes: 22, maxBytes: 20)) {
            try command.encode(into: &out, limits: limits, maxLength: 23 - 3)
        }
        #expect(out.toArray() == [0x99])
        #expect(throws: Never.self) { try command.encode(into: &out, limits: limits, maxLength: 22) }
    }

    @Test("requests the wire format cannot express are refused")
    func invalidRequests() {
        #expect(throws: ControlPointError.noAttributes) { try encode(.getNotificationAttributes(uid: 1, attributes: [])) }
        #expect(throws: ControlPointError.emptyAppIdentifier) { try encode(.getAppAttributes(appIdentifier: AppIdentifier(), attributes: .displayName)) }
        #expect(throws: ControlPointError.nulInAppIdentifier) { try encode(.getAppAttributes(appIdentifier: AppIdentifier("a\u{0}b"), attributes: .displayName)) }
        let long = AppIdentifier(String(repeating: "x", count: 200))
        #expect(throws: ControlPointError.truncatedAppIdentifier) { try encode(.getAppAttributes(appIdentifier: long, attributes: .displayName), maxLength: 512) }
    }

    @Test("configured limits become the requested maximum lengths")
    func limitsAreRequested() throws {
        var custom = AttributeLimits()
        custom[.title] = 0x120
        var out = ByteBuffer(capacity: 32)
        try ControlPointCommand.getNotificationAttributes(uid: 1, attributes: .title).encode(into: &out, limits: custom, maxLength: 20)
        #expect(out.toArray() == hex("00 01 00 00 00 01 20 01"))
    }
}
