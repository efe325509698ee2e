// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

@Suite("Advertising data: AD structures and the 31-byte limit")
struct AdvertisingDataTests {
    /// What goes on the air: the kernel's Flags, our data, the kernel's TX Power.
    static func airByteCount(_ payload: AdvertisingPayload) -> Int {
        3 + payload.advertisingData.count + (payload.flags.contains(.txPower) ? 3 : 0)
    }

    @Test("the ANCS payload: kernel Flags and TX Power, the solicitation and the 5-byte shortened name ours, the complete name in the scan response")
    func ancsPayload() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii("Wristlink").span)
        #expect(payload.flags == [.connectable, .discoverable, .txPower])
        #expect(payload.flags.rawValue == 0x13)
        #expect(payload.advertisingData.bytes == hex("11 15" + Wire.ancs + "06 08") + ascii("Wrist"))
        #expect(Self.airByteCount(payload) == 31)
        #expect(payload.scanResponse.bytes == hex("0A 09") + ascii("Wristlink"))
        #expect(throws: Never.self) { try MgmtCommand.addAdvertising(payload.instance(1)).validate() }
    }

    @Test("a name of exactly the 5 bytes left goes complete (0x09) into the advertisement, filling 31 bytes on air")
    func nameOfLeftoverRoom() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii("Watch").span)
        #expect(payload.advertisingData.bytes == hex("11 15" + Wire.ancs + "06 09") + ascii("Watch"))
        #expect(Self.airByteCount(payload) == 31)
        #expect(payload.scanResponse.bytes == hex("06 09") + ascii("Watch"))
        let six = try AdvertisingPayload.solicitingService(ancsService, name: ascii("Watch2").span)
        #expect(six.advertisingData.bytes == hex("11 15" + Wire.ancs + "06 08") + ascii("Watch"))
    }

    @Test("the shortened name in the advertisement ends on a character boundary")
    func advertisedNameAtCharacterBoundary() throws {
        // "Wrisé": 4 ASCII bytes and a 2-byte é; 5 bytes fit, the cut drops é whole.
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: Array("Wrisé".utf8).span)
        #expect(payload.advertisingData.bytes == hex("11 15" + Wire.ancs + "05 08") + ascii("Wris"))
        #expect(payload.scanResponse.bytes == hex("07 09") + Array("Wrisé".utf8))
        // "Wriéé": the first 5 bytes end after the first é.
        let two = try AdvertisingPayload.solicitingService(ancsService, name: Array("Wriéé".utf8).span)
        #expect(two.advertisingData.bytes == hex("11 15" + Wire.ancs + "06 08") + Array("Wrié".utf8))
    }

    @Test("without TX Power (a kernel that refuses the flag) 8 bytes of the name fit")
    func withoutTxPower() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii("Wristlink").span, txPower: false)
        #expect(payload.flags == [.connectable, .discoverable])
        #expect(payload.advertisingData.bytes == hex("11 15" + Wire.ancs + "09 08") + ascii("Wristlin"))
        #expect(Self.airByteCount(payload) == 31)
        #expect(payload.scanResponse.bytes == hex("0A 09") + ascii("Wristlink"))
    }

    @Test("any name from 0 to 40 bytes keeps both blocks within 31 bytes and passes the kernel's checks")
    func everyNameLengthFits() throws {
        for n in 0...40 {
            for txPower in [true, false] {
                let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii(String(repeating: "n", count: n)).span,
                                                                       txPower: txPower)
                #expect(Self.airByteCount(payload) <= 31, "name of \(n) bytes")
                #expect(payload.scanResponse.count <= 31)
                #expect(throws: Never.self) { try MgmtCommand.addAdvertising(payload.instance(1)).validate() }
            }
        }
    }

    @Test("with Flags placed in our own data: 02 01 06 first, and no discoverable bit for the kernel")
    func flagsInData() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: ascii("W").span, flagsPlacement: .advertisingData,
                                                               txPower: false)
        #expect(payload.flags == [.connectable])
        #expect(payload.advertisingData.bytes == hex("02 01 06  11 15" + Wire.ancs + "02 09 57"))
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

    @Test("a name of which not one character fits is left out of the advertisement (and an error in the scan response)")
    func nameLeftOut() throws {
        var builder = AdvertisingDataBuilder(maxByteCount: 22)
        try builder.appendServiceSolicitation(ancsService)
        #expect(builder.freeCount == 4)
        // 2 bytes of room for the name: a 3-byte character does not fit.
        #expect(builder.appendLocalNameIfRoom(Array("€uro".utf8).span) == false)
        #expect(builder.bytes.count == 18)
        #expect(builder.appendLocalNameIfRoom(ascii("Wristlink").span) == true)
        #expect(builder.bytes.bytes == hex("11 15" + Wire.ancs + "03 08 57 72"))
        var full = AdvertisingDataBuilder(maxByteCount: 19)
        try full.appendServiceSolicitation(ancsService)
        #expect(full.appendLocalNameIfRoom(ascii("W").span) == false)
        #expect(throws: AdvertisingDataError.tooLong(byteCount: 21, maxBytes: 19)) { try full.appendLocalName(ascii("W").span) }
    }

    @Test("an empty name writes no name structure")
    func emptyName() throws {
        let payload = try AdvertisingPayload.solicitingService(ancsService, name: Span())
        #expect(payload.advertisingData.bytes == hex("11 15" + Wire.ancs))
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
