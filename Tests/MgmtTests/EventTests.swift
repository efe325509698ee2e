// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

@Suite("Management events, byte for byte (mgmt-api.txt)")
struct EventTests {
    /// Read Controller Information's 280 return bytes for a Raspberry Pi's
    /// controller: B8:27:EB:12:34:56, Bluetooth 5.0 (0x09), Broadcom
    /// (0x000F), powered with BR/EDR, name "raspberrypi", no short name.
    static let controllerInformationReturn = hex("56 34 12 EB 27 B8  09  0F 00  FF BE 01 00  D1 0A 00 00  00 00 00")
        + ascii("raspberrypi") + zeros(249 - 11) + zeros(11)

    @Test("Command Complete for Read Controller Information decodes every field")
    func readControllerInformation() throws {
        let packet = try decode(hex("01 00 00 00 1B 01  04 00  00") + Self.controllerInformationReturn)
        #expect(packet.index == ControllerIndex(0))
        guard case .commandComplete(let complete) = packet.event, case .controllerInformation(let info) = complete.reply else {
            Issue.record("not controller information: \(packet.event)")
            return
        }
        #expect(complete.opcode == .readControllerInformation)
        #expect(complete.status == .success)
        #expect(info.address == BDAddress(0xB8, 0x27, 0xEB, 0x12, 0x34, 0x56))
        #expect(info.bluetoothVersion == 9)
        #expect(info.manufacturer == 0x000F)
        #expect(info.supportedSettings.rawValue == 0x0001_BEFF)
        #expect(info.supportedSettings.contains([.lowEnergy, .bredr, .secureConnections, .staticAddress, .phyConfiguration]))
        #expect(!info.supportedSettings.contains(.highSpeed))
        #expect(info.currentSettings == [.powered, .bondable, .secureSimplePairing, .bredr, .lowEnergy, .secureConnections])
        #expect(info.classOfDevice == 0)
        #expect(info.name.name.bytes == ascii("raspberrypi"))
        #expect(info.name.shortName.isEmpty)
    }

    @Test("Command Complete for a Set command carries Current_Settings")
    func settingsReply() throws {
        let packet = try decode(hex("01 00 00 00 07 00  05 00  00  01 02 00 00"))
        #expect(packet.event == .commandComplete(CommandComplete(opcode: .setPowered, status: .success, reply: .settings([.powered, .lowEnergy]))))
    }

    @Test("Command Complete return parameters: address, instance, none, unparsed, malformed")
    func otherReplies() throws {
        #expect(try decode(hex("01 00 00 00 0A 00  1C 00  02" + phoneStaticWire)).event
            == .commandComplete(CommandComplete(opcode: .userConfirmationReply, status: .notConnected, reply: .address(phoneStatic))))
        #expect(try decode(hex("01 00 00 00 04 00  3E 00  00  01")).event
            == .commandComplete(CommandComplete(opcode: .addAdvertising, status: .success, reply: .advertisingInstance(1))))
        #expect(try decode(hex("01 00 00 00 03 00  13 00  00")).event
            == .commandComplete(CommandComplete(opcode: .loadLongTermKeys, status: .success, reply: .none)))
        #expect(try decode(hex("01 00 00 00 05 00  01 00  00  01 00")).event
            == .commandComplete(CommandComplete(opcode: MgmtOpcode(rawValue: 0x0001), status: .success, reply: .unparsed(byteCount: 2))))
        #expect(try decode(hex("01 00 00 00 06 00  05 00  00  01 02 00")).event
            == .commandComplete(CommandComplete(opcode: .setPowered, status: .success, reply: .malformed(byteCount: 3))))
    }

    @Test("Command Status 0x0002: opcode and status")
    func commandStatus() throws {
        #expect(try decode(hex("02 00 00 00 03 00  2D 00  0C")).event == .commandStatus(opcode: .setSecureConnections, status: .notSupported))
    }

    @Test("Controller Error 0x0003, Index Added 0x0004, Index Removed 0x0005, New Settings 0x0006")
    func controllerEvents() throws {
        #expect(try decode(hex("03 00 00 00 01 00 2A")).event == .controllerError(code: 0x2A))
        let added = try decode(hex("04 00 01 00 00 00"))
        #expect(added == MgmtEventPacket(index: ControllerIndex(1), event: .indexAdded))
        #expect(try decode(hex("05 00 00 00 00 00")).event == .indexRemoved)
        #expect(try decode(hex("06 00 00 00 04 00 D1 0A 00 00")).event
            == .newSettings([.powered, .bondable, .secureSimplePairing, .bredr, .lowEnergy, .secureConnections]))
    }

    @Test("New Long Term Key 0x000A: store hint, address, type, central, size, EDIV, Rand, value")
    func newLongTermKey() throws {
        let packet = try decode(hex("0A 00 00 00 25 00  01" + phoneStaticWire + "01 01 10  34 12  08 07 06 05 04 03 02 01  00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF"))
        let expected = NewLongTermKey(storeHint: true, address: phoneStatic, key: LongTermKey(
            type: .authenticatedLegacy, central: true, encryptionSizeBytes: 16, ediv: 0x1234, rand: 0x0102_0304_0506_0708,
            value: key("00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF")))
        #expect(packet.event == .newLongTermKey(expected))
    }

    @Test("Device Connected 0x000B: address, flags, EIR length and data (skipped)")
    func deviceConnected() throws {
        let packet = try decode(hex("0B 00 00 00 12 00" + phonePublicWire + "0A 00 00 00  05 00  04 09 41 42 43"))
        #expect(packet.event == .deviceConnected(DeviceConnected(address: phonePublic, flags: 0x0A, eirByteCount: 5)))
        if case .deviceConnected(let connected) = packet.event {
            #expect(connected.isLegacyPairing)
            #expect(connected.weInitiated)
        }
    }

    @Test("Device Disconnected 0x000C, Authentication Failed 0x0011")
    func disconnectedAndAuthFailed() throws {
        #expect(try decode(hex("0C 00 00 00 08 00" + phoneStaticWire + "03")).event == .deviceDisconnected(phoneStatic, reason: .remoteHost))
        #expect(try decode(hex("11 00 00 00 08 00" + phoneStaticWire + "05")).event == .authenticationFailed(phoneStatic, status: .authenticationFailed))
    }

    @Test("User Confirmation Request 0x000F: address, confirm hint, 4-byte value (123456)")
    func userConfirmationRequest() throws {
        #expect(try decode(hex("0F 00 00 00 0C 00" + phoneStaticWire + "00  40 E2 01 00")).event
            == .userConfirmationRequest(UserConfirmationRequest(address: phoneStatic, confirmHint: false, value: 123_456)))
        #expect(try decode(hex("0F 00 00 00 0C 00" + phoneStaticWire + "01  00 00 00 00")).event
            == .userConfirmationRequest(UserConfirmationRequest(address: phoneStatic, confirmHint: true, value: 0)))
    }

    @Test("New Identity Resolving Key 0x0018: store hint, resolvable address, identity, key")
    func newIdentityResolvingKey() throws {
        let packet = try decode(hex("18 00 00 00 1E 00  01  F1 0E 1D 2C 3B 4A" + phonePublicWire + "0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))
        #expect(packet.event == .newIdentityResolvingKey(NewIdentityResolvingKey(
            storeHint: true, randomAddress: BDAddress(0x4A, 0x3B, 0x2C, 0x1D, 0x0E, 0xF1), identity: phonePublic,
            key: key("0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))))
    }

    @Test("Advertising Added 0x0023 and Advertising Removed 0x0024 carry the instance")
    func advertisingEvents() throws {
        #expect(try decode(hex("23 00 00 00 01 00 01")).event == .advertisingAdded(instance: 1))
        #expect(try decode(hex("24 00 02 00 01 00 05")) == MgmtEventPacket(index: ControllerIndex(2), event: .advertisingRemoved(instance: 5)))
    }

    @Test("an event code this module does not decode is a value with its size, not an error")
    func unknownEvent() throws {
        #expect(try decode(hex("12 00 00 00 02 00 AA BB")).event == .unknown(code: MgmtEventCode(rawValue: 0x0012), parameterByteCount: 2))
        #expect(try decode(hex("FF 7F FF FF 00 00")) == MgmtEventPacket(index: .none, event: .unknown(code: MgmtEventCode(rawValue: 0x7FFF), parameterByteCount: 0)))
    }

    @Test("fewer than 6 bytes is a truncated header", arguments: [0, 1, 5])
    func truncatedHeader(count: Int) {
        #expect(throws: MgmtDecodeError.truncatedHeader(byteCount: count)) { try decode(Array(hex("06 00 00 00 04 00").prefix(count))) }
    }

    @Test("a parameter length larger than what arrived is truncated; smaller is oversize")
    func lengthMismatch() {
        #expect(throws: MgmtDecodeError.truncated(declaredBytes: 4, receivedBytes: 3)) { try decode(hex("06 00 00 00 04 00 01 02 00")) }
        #expect(throws: MgmtDecodeError.truncated(declaredBytes: 0xFFFF, receivedBytes: 1)) { try decode(hex("23 00 00 00 FF FF 01")) }
        #expect(throws: MgmtDecodeError.oversize(declaredBytes: 4, receivedBytes: 5)) { try decode(hex("06 00 00 00 04 00 01 02 00 00 00")) }
    }

    @Test("a fixed-size event with the wrong size is rejected, consistent header or not")
    func wrongFixedSizes() {
        #expect(throws: MgmtDecodeError.parametersTooShort(event: .newSettings, byteCount: 3, minimumBytes: 4)) {
            try decode(hex("06 00 00 00 03 00 01 02 00"))
        }
        #expect(throws: MgmtDecodeError.parametersTooLong(event: .indexAdded, byteCount: 1, expectedBytes: 0)) {
            try decode(hex("04 00 00 00 01 00 00"))
        }
        #expect(throws: MgmtDecodeError.parametersTooShort(event: .commandComplete, byteCount: 2, minimumBytes: 3)) {
            try decode(hex("01 00 00 00 02 00 05 00"))
        }
        #expect(throws: MgmtDecodeError.parametersTooShort(event: .newLongTermKey, byteCount: 36, minimumBytes: 37)) {
            try decode(event(0x000A, [1] + zeros(35)))
        }
        #expect(throws: MgmtDecodeError.parametersTooLong(event: .newIdentityResolvingKey, byteCount: 31, expectedBytes: 30)) {
            try decode(event(0x0018, zeros(31)))
        }
    }

    @Test("Device Connected whose EIR length disagrees with the packet is rejected")
    func deviceConnectedEIRMismatch() {
        #expect(throws: MgmtDecodeError.parametersTooShort(event: .deviceConnected, byteCount: 17, minimumBytes: 18)) {
            try decode(hex("0B 00 00 00 11 00" + phonePublicWire + "00 00 00 00  05 00  04 09 41 42"))
        }
        #expect(throws: MgmtDecodeError.parametersTooShort(event: .deviceConnected, byteCount: 12, minimumBytes: 13)) {
            try decode(hex("0B 00 00 00 0C 00" + phonePublicWire + "00 00 00 00  05"))
        }
    }

    @Test("every prefix of every valid event is rejected, never decoded as something else")
    func everyTruncationRejected() {
        let valid = [
            hex("01 00 00 00 1B 01  04 00  00") + Self.controllerInformationReturn,
            hex("0A 00 00 00 25 00 01" + phoneStaticWire) + zeros(29),
            hex("0F 00 00 00 0C 00" + phoneStaticWire + "00 40 E2 01 00"),
            hex("18 00 00 00 1E 00 01") + zeros(29),
            hex("0B 00 00 00 12 00" + phonePublicWire + "0A 00 00 00 05 00 04 09 41 42 43"),
        ]
        for packet in valid {
            for cut in 0..<packet.count {
                #expect(throws: MgmtDecodeError.self) { try decode(Array(packet.prefix(cut))) }
            }
        }
    }
}
