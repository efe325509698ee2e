// SPDX-License-Identifier: Apache-2.0
import ATT
import Bounded
import GATT
import Testing
import TestSupport

/// Answers one request PDU with the wearable's database.
func serve(_ server: inout GATTServer, _ request: String, mtu: Int = 23) -> String {
    let bytes = hex(request)
    var out = ByteBuffer(capacity: 600)
    guard let pdu = try? ATTPDU.decode(bytes.span) else { return "undecodable" }
    guard server.respond(to: pdu, in: bytes.span, into: &out, mtu: mtu) else { return "" }
    return out.hexString
}

@Suite("GATT server: the database the phone discovers")
struct GATTServerTests {
    func server() -> GATTServer { GATTServer(deviceName: GATTServer.DeviceName("Wristlink")) }

    @Test("primary service discovery lists GAP and GATT, then Attribute Not Found past the end")
    func discoverAllPrimaryServices() {
        var s = server()
        #expect(serve(&s, "10 01 00 FF FF 00 28") == "11 06 01 00 05 00 00 18 06 00 09 00 01 18")
        #expect(serve(&s, "10 0A 00 FF FF 00 28") == "01 10 0A 00 0A")
    }

    @Test("a group type that is not a service is Unsupported Group Type")
    func unsupportedGroupType() {
        var s = server()
        #expect(serve(&s, "10 01 00 FF FF 03 28") == "01 10 01 00 10")
    }

    @Test("an invalid handle range is Invalid Handle naming the start")
    func invalidRange() {
        var s = server()
        #expect(serve(&s, "10 00 00 FF FF 00 28") == "01 10 00 00 01")
        #expect(serve(&s, "08 05 00 01 00 03 28") == "01 08 05 00 01")
        #expect(serve(&s, "04 09 00 08 00") == "01 04 09 00 01")
    }

    @Test("discover primary service by UUID finds the GATT service")
    func findByTypeValue() {
        var s = server()
        #expect(serve(&s, "06 01 00 FF FF 00 28 01 18") == "07 06 00 09 00")
        #expect(serve(&s, "06 01 00 FF FF 00 28 0F 18") == "01 06 01 00 0A")
    }

    @Test("characteristic discovery walks the declarations until Attribute Not Found")
    func readByTypeCharacteristics() {
        var s = server()
        #expect(serve(&s, "08 01 00 FF FF 03 28") == "09 07 02 00 02 03 00 00 2A 04 00 02 05 00 01 2A 07 00 20 08 00 05 2A")
        #expect(serve(&s, "08 08 00 FF FF 03 28") == "01 08 08 00 0A")
    }

    @Test("reading the device name and appearance by type or handle; appearance is a watch")
    func reads() {
        var s = server()
        #expect(serve(&s, "08 01 00 FF FF 00 2A") == "09 0B 03 00 57 72 69 73 74 6C 69 6E 6B")
        #expect(serve(&s, "0A 05 00") == "0B C0 00")
        #expect(serve(&s, "0C 03 00 04 00") == "0D 74 6C 69 6E 6B")
        #expect(serve(&s, "0C 03 00 0A 00") == "01 0C 03 00 07")
    }

    @Test("Service Changed is not readable; a missing handle is Invalid Handle")
    func readErrors() {
        var s = server()
        #expect(serve(&s, "0A 08 00") == "01 0A 08 00 02")
        #expect(serve(&s, "08 01 00 FF FF 05 2A") == "01 08 08 00 02")
        #expect(serve(&s, "0A 0A 00") == "01 0A 0A 00 01")
        #expect(serve(&s, "0A 00 00") == "01 0A 00 00 01")
    }

    @Test("descriptor discovery finds the Service Changed CCCD")
    func findInformation() {
        var s = server()
        #expect(serve(&s, "04 09 00 09 00") == "05 01 09 00 02 29")
        #expect(serve(&s, "04 01 00 FF FF") == "05 01 01 00 00 28 02 00 03 28 03 00 00 2A 04 00 03 28 05 00 01 2A")
        #expect(serve(&s, "04 0A 00 FF FF") == "01 04 0A 00 0A")
    }

    @Test("only the CCCD is writable, with exactly 2 bytes")
    func writes() {
        var s = server()
        #expect(serve(&s, "12 09 00 02 00") == "13")
        #expect(s.serviceChangedCCCD == 2)
        #expect(serve(&s, "0A 09 00") == "0B 02 00")
        #expect(serve(&s, "12 09 00 02") == "01 12 09 00 0D")
        #expect(serve(&s, "12 03 00 41") == "01 12 03 00 03")
        #expect(serve(&s, "12 20 00 41") == "01 12 20 00 01")
        s.reset()
        #expect(s.serviceChangedCCCD == 0)
    }

    @Test("responses never exceed the MTU")
    func mtuBound() {
        var s = GATTServer(deviceName: GATTServer.DeviceName(String(repeating: "N", count: 32)))
        let answer = serve(&s, "0A 03 00", mtu: 23)
        #expect(answer.split(separator: " ").count == 23)
    }
}
