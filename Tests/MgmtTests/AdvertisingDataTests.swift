import Bounded
import Mgmt
import Testing
import TestSupport

@Suite("Advertising data: AD structures and the 31-byte limit")
struct AdvertisingDataTests {
    @Test("the ANCS payload: the kernel writes Flags, the solicitation list is ours, the name is in the scan response")
    func ancsPayload() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii("Wristlink").span)
        #expect(payload.flags == [.connectable, .discoverable])
        #expect(payload.advertisingData.bytes == hex("11 15" + ancsWire))
        #expect(payload.scanResponse.bytes == hex("0A 09") + ascii("Wristlink"))
    }

    @Test("with Flags placed in our own data: 02 01 06 first, and no discoverable bit for the kernel")
    func flagsInData() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii("W").span, flagsPlacement: .advertisingData)
        #expect(payload.flags == [.connectable])
        #expect(payload.advertisingData.bytes == hex("02 01 06  11 15" + ancsWire))
        #expect(payload.scanResponse.bytes == hex("02 09 57"))
        #expect(throws: Never.self) { try MgmtCommand.addAdvertising(payload.instance(1)).validate() }
    }

    @Test("a 29-byte name is complete and fills the scan response to exactly 31 bytes")
    func completeNameAtLimit() throws {
        let name = ascii(String(repeating: "a", count: 29))
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: name.span)
        #expect(payload.scanResponse.count == 31)
        #expect(payload.scanResponse.bytes == hex("1E 09") + name)
    }

    @Test("a longer name is shortened (0x08) to the 29 bytes that fit")
    func shortenedName() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii(String(repeating: "b", count: 30)).span)
        #expect(payload.scanResponse.bytes == hex("1E 08") + ascii(String(repeating: "b", count: 29)))
    }

    @Test("shortening never cuts a UTF-8 character in half")
    func shortenedAtCharacterBoundary() throws {
        let name = ascii(String(repeating: "a", count: 28) + "é")
        #expect(name.count == 30)
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: name.span)
        #expect(payload.scanResponse.bytes == hex("1D 08") + ascii(String(repeating: "a", count: 28)))
    }

    @Test("an empty name writes no name structure")
    func emptyName() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: Span())
        #expect(payload.scanResponse.isEmpty)
    }

    @Test("the builder refuses a structure past its limit and keeps what it had")
    func builderLimit() throws {
        var builder = AdvertisingDataBuilder()
        try builder.appendFlags([.leGeneralDiscoverable, .bredrNotSupported])
        try builder.appendServiceSolicitation(ancsService)
        #expect(builder.freeCount == 10)
        let eight = ascii("12345678")
        try builder.append(type: 0xFF, eight.span)
        #expect(builder.bytes.count == 31)
        #expect(throws: AdvertisingDataError.tooLong(byteCount: 33, maxBytes: 31)) { try builder.append(type: 0xFF, Span()) }
        #expect(builder.bytes.count == 31)

        var managed = AdvertisingDataBuilder(maxByteCount: AdvertisingDataRules.maxByteCount(flags: [.discoverable], isScanResponse: false))
        #expect(managed.maxByteCount == 28)
        try managed.appendServiceSolicitation(ancsService)
        #expect(throws: AdvertisingDataError.tooLong(byteCount: 29, maxBytes: 28)) { try managed.append(type: 0xFF, ascii("123456789").span) }
    }

    @Test("room the kernel takes: Flags and TX Power 3 bytes each, Appearance 4, its own name up to 12")
    func kernelReservations() {
        #expect(AdvertisingDataRules.maxByteCount(flags: [], isScanResponse: false) == 31)
        #expect(AdvertisingDataRules.maxByteCount(flags: [.connectable], isScanResponse: false) == 31)
        #expect(AdvertisingDataRules.maxByteCount(flags: [.managedFlags], isScanResponse: false) == 28)
        #expect(AdvertisingDataRules.maxByteCount(flags: [.discoverable, .limitedDiscoverable, .txPower], isScanResponse: false) == 25)
        #expect(AdvertisingDataRules.maxByteCount(flags: [.discoverable], isScanResponse: true) == 31)
        #expect(AdvertisingDataRules.maxByteCount(flags: [.appearance, .localName], isScanResponse: true) == 15)
    }

    func instance(flags: AdvertisingFlags, data: [UInt8], response: [UInt8] = []) -> MgmtCommand {
        .addAdvertising(AdvertisingInstance(instance: 1, flags: flags, advertisingData: InlineBytes(data.span), scanResponse: InlineBytes(response.span)))
    }

    @Test("Add Advertising with 31 bytes of data and no flag bits is accepted; 29 with Discoverable is not")
    func addAdvertisingLimits() throws {
        let thirtyOne = hex("1E FF") + zeros(29)
        #expect(throws: Never.self) { try instance(flags: [.connectable], data: thirtyOne).validate() }
        let twentyNine = hex("1C FF") + zeros(27)
        #expect(throws: MgmtEncodeError.advertisingData(.tooLong(byteCount: 29, maxBytes: 28))) {
            try instance(flags: [.connectable, .discoverable], data: twentyNine).validate()
        }
    }

    @Test("AD types the kernel manages are refused, as the kernel would with Invalid Parameters")
    func kernelManagedTypes() {
        #expect(throws: MgmtEncodeError.advertisingData(.kernelManagedType(ADType.flags))) {
            try instance(flags: [.discoverable], data: hex("02 01 06")).validate()
        }
        #expect(throws: MgmtEncodeError.advertisingData(.kernelManagedType(ADType.flags))) {
            try instance(flags: [], data: [], response: hex("02 01 06")).validate()
        }
        #expect(throws: MgmtEncodeError.advertisingData(.kernelManagedType(ADType.completeLocalName))) {
            try instance(flags: [.localName], data: [], response: hex("02 09 41")).validate()
        }
        #expect(throws: MgmtEncodeError.advertisingData(.kernelManagedType(ADType.txPowerLevel))) {
            try instance(flags: [.txPower], data: hex("02 0A 00")).validate()
        }
        #expect(throws: MgmtEncodeError.advertisingData(.kernelManagedType(ADType.appearance))) {
            try instance(flags: [.appearance], data: [], response: hex("03 19 C1 00")).validate()
        }
        #expect(throws: Never.self) { try instance(flags: [], data: hex("02 01 06"), response: hex("02 09 41")).validate() }
    }

    @Test("an AD structure running past the block, or instance 0, is refused")
    func malformedData() {
        #expect(throws: MgmtEncodeError.advertisingData(.malformed(offset: 3))) {
            try instance(flags: [], data: hex("02 FF 00  05 FF 00 00")).validate()
        }
        #expect(throws: Never.self) { try instance(flags: [], data: hex("02 FF 00 00 00")).validate() }
        let zero = MgmtCommand.addAdvertising(AdvertisingInstance(instance: 0, flags: [], advertisingData: InlineBytes(), scanResponse: InlineBytes()))
        #expect(throws: MgmtEncodeError.invalidAdvertisingInstance(0)) { try zero.validate() }
    }
}
