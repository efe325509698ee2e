// SPDX-License-Identifier: Apache-2.0
import ATT
import Bounded
import Testing
import TestSupport

@Suite("ATT PDU decoding and encoding")
struct PDUTests {
    func decode(_ text: String) throws(ATTDecodeError) -> ATTPDU {
        try ATTPDU.decode(hex(text).span)
    }

    @Test("Error Response is exactly 5 bytes: opcode, request opcode, handle, code")
    func errorResponse() throws {
        #expect(try decode("01 12 2A 00 05") == .errorResponse(requestOpcode: 0x12, handle: 0x002A, code: 0x05))
        #expect(throws: ATTDecodeError.malformed(opcode: 0x01)) { try decode("01 12 2A 00") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x01)) { try decode("01 12 2A 00 05 00") }
    }

    @Test("Exchange MTU request and response carry a 2-byte MTU")
    func exchangeMTU() throws {
        #expect(try decode("02 05 02") == .exchangeMTURequest(clientMTU: 517))
        #expect(try decode("03 B9 00") == .exchangeMTUResponse(serverMTU: 185))
        #expect(throws: ATTDecodeError.malformed(opcode: 0x02)) { try decode("02 05") }
    }

    @Test("Find Information Response entries must be whole (handle, UUID) pairs of the format's width")
    func findInformationResponse() throws {
        #expect(try decode("05 01 0A 00 02 29 0B 00 03 28") == .findInformationResponse(uuidWidth: 2, entries: 2..<10))
        #expect(try decode("05 02 0A 00" + String(repeating: " 11", count: 16)) == .findInformationResponse(uuidWidth: 16, entries: 2..<20))
        #expect(throws: ATTDecodeError.malformed(opcode: 0x05)) { try decode("05 01 0A 00 02") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x05)) { try decode("05 03 0A 00 02 29") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x05)) { try decode("05 01") }
    }

    @Test("Read By Type Response entries must be a whole number of the stated length")
    func readByTypeResponse() throws {
        #expect(try decode("09 07 0C 00 10 0D 00 05 2A") == .readByTypeResponse(entryLength: 7, entries: 2..<9))
        #expect(throws: ATTDecodeError.malformed(opcode: 0x09)) { try decode("09 07 0C 00 10 0D 00 05") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x09)) { try decode("09 01 0C") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x09)) { try decode("09 00") }
    }

    @Test("Read By Type and Read By Group Type requests take a 2- or 16-byte type")
    func typedRequests() throws {
        #expect(try decode("08 01 00 FF FF 03 28") == .readByTypeRequest(start: 1, end: 0xFFFF, type: .uuid16(0x2803)))
        #expect(try decode("10 01 00 FF FF 00 28") == .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .uuid16(0x2800)))
        #expect(throws: ATTDecodeError.malformed(opcode: 0x08)) { try decode("08 01 00 FF FF 03 28 00") }
    }

    @Test("a 128-bit UUID built on the Base UUID equals its 16-bit form")
    func baseUUID() {
        let wire = hex("FB 34 9B 5F 80 00 00 80 00 10 00 00 03 28 00 00")
        #expect(ATTUUID(wire.span, at: 0, width: 16) == .uuid16(0x2803))
        let ancs = hex(Wire.ancs)
        #expect(ATTUUID(ancs.span, at: 0, width: 16) == .uuid128(UUID128("7905F431-B5CE-4E99-A40F-4B1E122D00D0")))
    }

    @Test("notifications, indications and writes carry the value after the handle")
    func valuePDUs() throws {
        #expect(try decode("1B 0D 00 00 18 01 01 07 00 00 00") == .notification(handle: 0x0D, value: 3..<11))
        #expect(try decode("1D 08 00 01 00 FF FF") == .indication(handle: 8, value: 3..<7))
        #expect(try decode("12 0E 00 01 00") == .writeRequest(handle: 0x0E, value: 3..<5))
        #expect(try decode("1B 0D 00") == .notification(handle: 0x0D, value: 3..<3))
        #expect(throws: ATTDecodeError.malformed(opcode: 0x1B)) { try decode("1B 0D") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x13)) { try decode("13 00") }
    }

    @Test("an unknown opcode is a request to refuse unless its command flag is set")
    func unknownOpcodes() throws {
        #expect(try decode("0E 01 00 02 00") == .unsupportedRequest(opcode: 0x0E))
        #expect(try decode("3F") == .unsupportedRequest(opcode: 0x3F))
        #expect(try decode("D2 01 00") == .unknownCommand(opcode: 0xD2))
        #expect(throws: ATTDecodeError.unexpectedOpcode(0x0F)) { try decode("0F 00") }
        #expect(throws: ATTDecodeError.empty) { try ATTPDU.decode([UInt8]().span) }
    }

    @Test("Prepare Write Request and Response: handle, offset, then the part value (Core Vol 3 Part F 3.4.6.1–2)")
    func prepareWrite() throws {
        #expect(try decode("16 15 00 12 00 68 6F 6E 65 00 00") == .prepareWriteRequest(handle: 0x15, offset: 0x12, value: 5..<11))
        #expect(try decode("17 15 00 12 00 68 6F 6E 65 00 00") == .prepareWriteResponse(handle: 0x15, offset: 0x12, value: 5..<11))
        #expect(try decode("17 15 00 00 00") == .prepareWriteResponse(handle: 0x15, offset: 0, value: 5..<5))
        #expect(throws: ATTDecodeError.malformed(opcode: 0x16)) { try decode("16 15 00 00") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x17)) { try decode("17 15 00 00") }
        var out = ByteBuffer(capacity: 64)
        try PDUWriter.prepareWriteRequest(&out, handle: 0x15, offset: 0x12, value: hex("68 6F 6E 65 00 00").span, mtu: 23)
        #expect(out.hexString == "16 15 00 12 00 68 6F 6E 65 00 00")
        try PDUWriter.prepareWriteResponse(&out, handle: 0x15, offset: 0x12, value: hex("68 6F 6E 65 00 00").span, mtu: 23)
        #expect(out.hexString == "17 15 00 12 00 68 6F 6E 65 00 00")
    }

    @Test("a Prepare Write part is at most MTU − 5 bytes")
    func preparePartBound() throws {
        var out = ByteBuffer(capacity: 64)
        try PDUWriter.prepareWriteRequest(&out, handle: 0x15, offset: 0, value: [UInt8](repeating: 1, count: 18).span, mtu: 23)
        #expect(out.count == 23)
        #expect(throws: ATTEncodeError.doesNotFit(neededBytes: 24, mtu: 23)) {
            try PDUWriter.prepareWriteRequest(&out, handle: 0x15, offset: 0, value: [UInt8](repeating: 1, count: 19).span, mtu: 23)
        }
    }

    @Test("Execute Write Request carries flags 0x00 (cancel) or 0x01 (write); other flags are malformed; the response is 1 byte")
    func executeWrite() throws {
        #expect(try decode("18 01") == .executeWriteRequest(flags: ExecuteWriteFlags.write))
        #expect(try decode("18 00") == .executeWriteRequest(flags: ExecuteWriteFlags.cancel))
        #expect(try decode("19") == .executeWriteResponse)
        #expect(throws: ATTDecodeError.malformed(opcode: 0x18)) { try decode("18 02") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x18)) { try decode("18") }
        #expect(throws: ATTDecodeError.malformed(opcode: 0x19)) { try decode("19 00") }
        var out = ByteBuffer(capacity: 8)
        PDUWriter.executeWriteRequest(&out, flags: ExecuteWriteFlags.cancel)
        #expect(out.hexString == "18 00")
        PDUWriter.executeWriteRequest(&out, flags: ExecuteWriteFlags.write)
        #expect(out.hexString == "18 01")
        PDUWriter.executeWriteResponse(&out)
        #expect(out.hexString == "19")
    }

    @Test("a request that would exceed the MTU is an error; a read value is cut at MTU − 1")
    func mtuBounds() {
        var out = ByteBuffer(capacity: 600)
        let value = [UInt8](repeating: 0xAB, count: 21)
        #expect(throws: ATTEncodeError.doesNotFit(neededBytes: 24, mtu: 23)) {
            try PDUWriter.writeRequest(&out, handle: 1, value: value.span, mtu: 23)
        }
        PDUWriter.valueResponse(&out, opcode: ATTOpcode.readResponse, value: [UInt8](repeating: 1, count: 40).span, mtu: 23)
        #expect(out.count == 23)
    }

    @Test("encoders write the layouts of Core Vol 3 Part F 3.4")
    func encoders() throws {
        var out = ByteBuffer(capacity: 64)
        PDUWriter.exchangeMTURequest(&out, clientMTU: 517)
        #expect(out.hexString == "02 05 02")
        PDUWriter.readByTypeRequest(&out, start: 0x0C, end: 0x1F, type: .uuid16(0x2803))
        #expect(out.hexString == "08 0C 00 1F 00 03 28")
        try PDUWriter.findByTypeValueRequest(&out, start: 1, end: 0xFFFF, type: 0x2800, value: hex("01 18").span, mtu: 23)
        #expect(out.hexString == "06 01 00 FF FF 00 28 01 18")
        PDUWriter.findInformationRequest(&out, start: 0x0E, end: 0x10)
        #expect(out.hexString == "04 0E 00 10 00")
        PDUWriter.errorResponse(&out, requestOpcode: 0x08, handle: 0x0C, code: 0x0A)
        #expect(out.hexString == "01 08 0C 00 0A")
        try PDUWriter.writeRequest(&out, handle: 0x0E, value: hex("01 00").span, mtu: 23)
        #expect(out.hexString == "12 0E 00 01 00")
    }
}
