// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

@Suite("Management commands, byte for byte (mgmt-api.txt)")
struct CommandTests {
    @Test("header is opcode, controller index, parameter length, little-endian")
    func header() throws {
        #expect(try encode(.readControllerInformation) == hex("04 00 00 00 00 00"))
        #expect(try encode(.readControllerInformation, index: 0x0102) == hex("04 00 02 01 00 00"))
    }

    @Test("one-octet settings commands: Set Powered 0x0005, Connectable 0x0007, Bondable 0x0009, LE 0x000D, BR/EDR 0x002A")
    func booleanSettings() throws {
        #expect(try encode(.setPowered(true)) == hex("05 00 00 00 01 00 01"))
        #expect(try encode(.setPowered(false), index: 1) == hex("05 00 01 00 01 00 00"))
        #expect(try encode(.setConnectable(true)) == hex("07 00 00 00 01 00 01"))
        #expect(try encode(.setBondable(true)) == hex("09 00 00 00 01 00 01"))
        #expect(try encode(.setLowEnergy(true)) == hex("0D 00 00 00 01 00 01"))
        #expect(try encode(.setBREDR(false)) == hex("2A 00 00 00 01 00 00"))
    }

    @Test("Set Secure Connections 0x002D takes 0x00, 0x01 or 0x02 (only)")
    func secureConnections() throws {
        #expect(try encode(.setSecureConnections(.on)) == hex("2D 00 00 00 01 00 01"))
        #expect(try encode(.setSecureConnections(.only)) == hex("2D 00 00 00 01 00 02"))
        #expect(try encode(.setSecureConnections(.off)) == hex("2D 00 00 00 01 00 00"))
    }

    @Test("Set Advertising 0x0029 and Set IO Capability 0x0018 (DisplayYesNo is 0x01)")
    func advertisingSettingAndIOCapability() throws {
        #expect(try encode(.setAdvertising(.off)) == hex("29 00 00 00 01 00 00"))
        #expect(try encode(.setAdvertising(.connectable)) == hex("29 00 00 00 01 00 02"))
        #expect(try encode(.setIOCapability(.displayYesNo)) == hex("18 00 00 00 01 00 01"))
        #expect(try encode(.setIOCapability(.keyboardDisplay)) == hex("18 00 00 00 01 00 04"))
    }

    @Test("Set Local Name 0x000F: a 249-byte and an 11-byte field, NUL-padded (260 = 0x0104)")
    func localName() throws {
        let name = try LocalName("Wristlink", short: "WL")
        let expected = hex("0F 00 00 00 04 01") + ascii("Wristlink") + zeros(249 - 9) + ascii("WL") + zeros(11 - 2)
        #expect(try encode(.setLocalName(name)) == expected)
    }

    @Test("a name must leave room for its NUL and contain none")
    func localNameLimits() throws {
        let longest = String(repeating: "n", count: 248)
        let name = try LocalName(longest, short: "0123456789")
        let bytes = try encode(.setLocalName(name))
        #expect(bytes[6 + 247] == UInt8(ascii: "n"))
        #expect(bytes[6 + 248] == 0)
        #expect(bytes[6 + 249 + 9] == UInt8(ascii: "9"))
        #expect(bytes[6 + 249 + 10] == 0)
        #expect(throws: LocalNameError.nameTooLong(byteCount: 249)) { try LocalName(longest + "n") }
        #expect(throws: LocalNameError.shortNameTooLong(byteCount: 11)) { try LocalName("a", short: "0123456789A") }
        #expect(throws: LocalNameError.containsNul) { try LocalName("a\u{0}b") }
    }

    @Test("address commands: Disconnect 0x0014, Unpair Device 0x001B, User Confirmation (Negative) Reply 0x001C/0x001D")
    func addressCommands() throws {
        #expect(try encode(.disconnect(phoneStatic)) == hex("14 00 00 00 07 00" + phoneStaticWire))
        #expect(try encode(.unpairDevice(phoneStatic, disconnect: true)) == hex("1B 00 00 00 08 00" + phoneStaticWire + "01"))
        #expect(try encode(.userConfirmationReply(phonePublic)) == hex("1C 00 00 00 07 00 CC BB AA 63 1B 00 01"))
        #expect(try encode(.userConfirmationNegativeReply(phonePublic)) == hex("1D 00 00 00 07 00" + phonePublicWire))
    }

    @Test("Add Advertising 0x003E: instance, flags(4), duration(2), timeout(2), lengths, data, scan response")
    func addAdvertising() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii("Wristlink").span)
        let command = MgmtCommand.addAdvertising(payload.instance(1))
        let expected = hex("3E 00 00 00 2F 00") + hex("01  13 00 00 00  00 00  00 00  19  0B")
            + hex("11 15" + Wire.ancs + "06 08") + ascii("Wrist") + hex("0A 09") + ascii("Wristlink")
        #expect(try encode(command) == expected)

        var timed = payload.instance(7)
        timed.durationS = 0x0102
        timed.timeoutS = 30
        #expect(Array(try encode(.addAdvertising(timed)).prefix(17)) == hex("3E 00 00 00 2F 00  07  13 00 00 00  02 01  1E 00  19 0B"))
    }

    @Test("Remove Advertising 0x003F; instance 0 removes all, 255 is reserved")
    func removeAdvertising() throws {
        #expect(try encode(.removeAdvertising(instance: 1)) == hex("3F 00 00 00 01 00 01"))
        #expect(try encode(.removeAdvertising(instance: 0)) == hex("3F 00 00 00 01 00 00"))
        #expect(throws: MgmtEncodeError.invalidAdvertisingInstance(0xFF)) { try encode(.removeAdvertising(instance: 0xFF)) }
    }

    @Test("Set Default System Configuration 0x004C: types 0x000A and 0x000B, 2-byte values in 0.625 ms slots")
    func defaultAdvertisingInterval() throws {
        #expect(try encode(.setDefaultAdvertisingInterval(AdvertisingInterval(us: 20_000)))
            == hex("4C 00 00 00 0A 00  0A 00 02 20 00  0B 00 02 20 00"))
        #expect(try encode(.setDefaultAdvertisingInterval(AdvertisingInterval(minSlots: 0x029C, maxSlots: 0x0320)))
            == hex("4C 00 00 00 0A 00  0A 00 02 9C 02  0B 00 02 20 03"))
    }

    @Test("a packet that does not fit the buffer is refused and the buffer left as it was")
    func bufferTooSmall() {
        var out = ByteBuffer(capacity: 100)
        out.append(0xAA)
        let name = try! LocalName("x")
        #expect(throws: MgmtEncodeError.bufferTooSmall(neededBytes: 266, capacity: 100)) {
            try MgmtCommand.setLocalName(name).encode(index: ControllerIndex(0), into: &out)
        }
        #expect(out.toArray() == [0xAA])
    }
}
