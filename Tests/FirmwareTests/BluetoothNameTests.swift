// SPDX-License-Identifier: Apache-2.0
import ATT
import Bounded
import Config
import Firmware
import GATT
import Mgmt
import Testing
import TestSupport

/// A board naming itself "Chloë's watch" (14 bytes; the ë is C3 AB).
let namedBoard = try! BoardConfig.parse(
    """
    name sim
    chip sim
    bluetooth-name "Chloë's watch"
    output led-notify
    output led-call
    output vibration
    button accept
    button reject
    """)

extension ControllerRig {
    /// Completes the set-up as `completeSetup` does, returning the Add
    /// Advertising command it sent.
    mutating func addAdvertisingAtSetup() -> [UInt8] {
        var settings: UInt32 = 0
        var out = ByteBuffer(capacity: 1024)
        var addAdvertising: [UInt8] = []
        feed(ControllerSocketTests.reply(to: [0x04, 0x00, 0x00, 0x00, 0x00, 0x00], settings: settings))
        for _ in 0..<32 {
            guard controller.popCommand(into: &out) else { break }
            let command = out.toArray()
            switch UInt16(command[0]) | UInt16(command[1]) << 8 {
            case 0x000D: settings |= 0x200
            case 0x002D: settings |= 0x800
            case 0x0009: settings |= 0x10
            case 0x0007: settings |= 0x02
            case 0x0005: settings |= 0x01
            case 0x003E: addAdvertising = command
            default: break
            }
            feed(ControllerSocketTests.reply(to: command, settings: settings))
        }
        return addAdvertising
    }
}

@Suite("bluetooth-name: the board's name in the advertisement, the scan response and the GAP Device Name")
struct BluetoothNameTests {
    @Test("the advertisement carries the name shortened on a character boundary (0x08), the scan response all of it (0x09)")
    func advertisingBytes() throws {
        let config = WearableConfig(board: namedBoard, policy: defaultPolicy)
        var rig = ControllerRig { $0 = config.controller }
        let command = rig.addAdvertisingAtSetup()
        // Header, instance 1, connectable + discoverable + TX power, no
        // duration or timeout; 24 bytes of advertising data, 16 of scan
        // response.
        try #require(command.count == 17 + 24 + 16, "Add Advertising was sent: \(toHex(command))")
        #expect(toHex(Array(command.prefix(17))) == "3E 00 00 00 33 00 01 13 00 00 00 00 00 00 00 18 10")
        // The ANCS solicitation, then 5 bytes of room: "Chlo" and the
        // first byte of ë would be 5, so the ë is left out whole.
        #expect(toHex(Array(command[17..<35])) == "11 15 " + Wire.ancs)
        #expect(toHex(Array(command[35..<41])) == "05 08 43 68 6C 6F")
        #expect(toHex(Array(command[41...])) == "0F 09 43 68 6C 6F C3 AB 27 73 20 77 61 74 63 68")
    }

    @Test("Set Local Name gives the kernel the whole name")
    func setLocalName() {
        let config = WearableConfig(board: namedBoard, policy: defaultPolicy)
        var rig = ControllerRig { $0 = config.controller }
        var settings: UInt32 = 0
        var out = ByteBuffer(capacity: 1024)
        var name: [UInt8] = []
        rig.feed(ControllerSocketTests.reply(to: [0x04, 0x00, 0x00, 0x00, 0x00, 0x00], settings: settings))
        for _ in 0..<32 {
            guard rig.controller.popCommand(into: &out) else { break }
            let command = out.toArray()
            let opcode = UInt16(command[0]) | UInt16(command[1]) << 8
            if opcode == 0x000F { name = Array(command[6..<(6 + 15)]) }
            if opcode == 0x000D { settings |= 0x200 }
            rig.feed(ControllerSocketTests.reply(to: command, settings: settings))
        }
        #expect(name == Array("Chloë's watch".utf8) + [0], "the name, then the NUL padding of its 249-byte field")
    }

    @Test("a Read Request of the Device Name (0x0003) answers the whole name")
    func deviceNameRead() {
        let config = WearableConfig(board: namedBoard, policy: defaultPolicy)
        var server = GATTServer(deviceName: config.link.deviceName)
        let request = hex("0A 03 00")
        var out = ByteBuffer(capacity: 64)
        let pdu = try! ATTPDU.decode(request.span)
        #expect(server.respond(to: pdu, in: request.span, into: &out, mtu: 23))
        #expect(out.toArray() == hex("0B 43 68 6C 6F C3 AB 27 73 20 77 61 74 63 68"))
    }
}
