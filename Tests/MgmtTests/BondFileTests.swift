// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

@Suite("Bond file: one line per key, hex fields, a version header")
struct BondFileTests {
    static let text = """
        wristlink-bonds 1
        ltk c0ffee123456 02 03 00 10 0000 0000000000000000 00112233445566778899aabbccddeeff
        ltk c0ffee123456 02 00 01 07 1234 0102030405060708 a1a2a3a4a5a6a7000000000000000000
        ltk 001b63aabbcc 01 03 00 10 0000 0000000000000000 00112233445566778899aabbccddeeff
        irk 001b63aabbcc 01 0f0e0d0c0b0a09080706050403020100

        """

    static func sampleStore() -> BondStore {
        var store = BondStore()
        _ = store.apply(ltk(phoneStatic, scKey))
        _ = store.apply(ltk(phoneStatic, legacyCentralKey))
        _ = store.apply(irk(phonePublic))
        _ = store.apply(ltk(phonePublic, scKey))
        return store
    }

    func parse(_ text: String) throws(BondFileError) -> BondStore {
        try BondStore.parse(ascii(text).span)
    }

    @Test("serialize writes the documented text, least recently updated bond first")
    func serializes() {
        let store = Self.sampleStore()
        var out = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
        #expect(store.serialize(into: &out) == true)
        #expect(String(decoding: out.toArray(), as: UTF8.self) == Self.text)
        #expect(out.count == store.serializedByteCount)
    }

    @Test("keys from a pairing over a resolvable private address are filed under the identity address and its type")
    func identityFromResolvablePrivateAddress() throws {
        // New IRK: store hint, RPA 5A:11:22:33:44:55, identity C0:FF:EE:12:34:56 (static random, type 2), key.
        let newIRK = try decode(hex("18 00 00 00 1E 00  01  55 44 33 22 11 5A" + phoneStaticWire + "0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))
        let newLTK = try decode(hex("0A 00 00 00 25 00  01" + phoneStaticWire + "03 00 10  00 00  00 00 00 00 00 00 00 00  00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF"))
        var store = BondStore()
        guard case .newIdentityResolvingKey(let irkEvent) = newIRK.event, case .newLongTermKey(let ltkEvent) = newLTK.event else {
            Issue.record("not key events: \(newIRK.event), \(newLTK.event)")
            return
        }
        #expect(irkEvent.randomAddress == BDAddress(0x5A, 0x11, 0x22, 0x33, 0x44, 0x55))
        #expect(store.apply(irkEvent) == .stored)
        #expect(store.apply(ltkEvent) == .stored)
        #expect(store.count == 1)
        #expect(store[0].address == phoneStatic)
        var out = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
        store.serialize(into: &out)
        #expect(String(decoding: out.toArray(), as: UTF8.self) == """
            wristlink-bonds 1
            ltk c0ffee123456 02 03 00 10 0000 0000000000000000 00112233445566778899aabbccddeeff
            irk c0ffee123456 02 0f0e0d0c0b0a09080706050403020100

            """)
        // The private address itself never becomes a bond.
        var other = BondStore()
        let keyForRPA = NewIdentityResolvingKey(storeHint: true, randomAddress: .any,
                                                identity: DeviceAddress(BDAddress(0x5A, 0x11, 0x22, 0x33, 0x44, 0x55), .leRandom), key: irkValue)
        #expect(other.apply(keyForRPA) == .ignored(.notIdentity))
    }

    @Test("parse then serialize gives the same bonds and the same bytes")
    func roundTrip() throws {
        let store = try parse(Self.text)
        let original = Self.sampleStore()
        #expect(store.count == 2)
        for i in 0..<2 { #expect(store[i] == original[i]) }
        var out = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
        store.serialize(into: &out)
        #expect(out.toArray() == ascii(Self.text))
    }

    @Test("a full store round-trips within maxSerializedByteCount, and upper-case hex is read")
    func fullStore() throws {
        var store = BondStore()
        for n in 1...8 {
            _ = store.apply(irk(peer(n)))
            _ = store.apply(ltk(peer(n), scKey))
            _ = store.apply(ltk(peer(n), legacyCentralKey))
        }
        var out = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
        #expect(store.serialize(into: &out) == true)
        #expect(out.count == BondStore.maxSerializedByteCount)
        let lines = String(decoding: out.toArray(), as: UTF8.self).split(separator: "\n")
        var upper = String(lines[0]) + "\n"
        for line in lines.dropFirst() { upper += line.prefix(4) + line.dropFirst(4).uppercased() + "\n" }
        #expect(upper.contains("LTK") == false && upper.contains("C0000000000"))
        let again = try parse(upper)
        #expect(again.count == 8)
        for i in 0..<8 { #expect(again[i] == store[i]) }
    }

    @Test("a file saved with a UTF-8 byte-order mark or CRLF line ends (edited on Windows) reads as the same bonds")
    func byteOrderMarkAndCRLF() throws {
        let bytes = ascii(Self.text)
        let crlf = bytes.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }
        let original = Self.sampleStore()
        for variant in [[0xEF, 0xBB, 0xBF] + bytes, crlf, [0xEF, 0xBB, 0xBF] + crlf] {
            let store = try BondStore.parse(variant.span)
            #expect(store.count == 2)
            for i in 0..<2 { #expect(store[i] == original[i]) }
        }
        // A mark that is not the first bytes, or a CR without its LF, is
        // still corrupt.
        #expect(throws: BondFileError(line: 2, .unknownRecord)) { _ = try BondStore.parse(ascii("wristlink-bonds 1\n\u{FEFF}" + Self.ltkLine).span) }
        #expect(throws: BondFileError(line: 2, .malformedRecord)) {
            _ = try BondStore.parse(ascii("wristlink-bonds 1\n" + Self.ltkLine.replacingFirst(" 0000 ", with: " 0000\r")).span)
        }
    }

    @Test("an empty store is just the header")
    func emptyStore() throws {
        var out = ByteBuffer(capacity: 32)
        #expect(BondStore().serialize(into: &out) == true)
        #expect(out.toArray() == ascii("wristlink-bonds 1\n"))
        #expect(try parse("wristlink-bonds 1\n").isEmpty)
    }

    @Test("serialize refuses a buffer that is too small and leaves it unchanged")
    func tooSmall() {
        var out = ByteBuffer(capacity: 100)
        out.append(0x55)
        #expect(Self.sampleStore().serialize(into: &out) == false)
        #expect(out.toArray() == [0x55])
    }

    static let ltkLine = "ltk c0ffee123456 02 03 00 10 0000 0000000000000000 00112233445566778899aabbccddeeff\n"

    @Test("a corrupt file is an error naming the line", arguments: [
        ("", 1, BondFileProblem.missingHeader),
        ("\n", 1, .missingHeader),
        ("wristlink-bonds\n", 1, .missingHeader),
        ("wristlink-bonds 2\n" + ltkLine, 1, .unsupportedVersion),
        ("wristlink-bonds 1", 1, .missingNewline),
        ("wristlink-bonds 1\n" + ltkLine + String(ltkLine.dropLast()), 3, .missingNewline),
        ("wristlink-bonds 1\n" + String(ltkLine.prefix(40)), 2, .missingNewline),
        ("wristlink-bonds 1\n" + String(ltkLine.prefix(40)) + "\n", 2, .malformedRecord),
        ("wristlink-bonds 1\n\n", 2, .unknownRecord),
        ("wristlink-bonds 1\nkey c0ffee123456 02\n", 2, .unknownRecord),
        ("wristlink-bonds 1\n" + ltkLine + ltkLine.replacingFirst(" 0000 ", with: " 00x0 "), 3, .malformedRecord),
        ("wristlink-bonds 1\n" + ltkLine.replacingFirst(" 02 03", with: "\t02 03"), 2, .malformedRecord),
        ("wristlink-bonds 1\n" + ltkLine.replacingFirst(" 02 03", with: " 00 03"), 2, .badAddressType),
        ("wristlink-bonds 1\n" + ltkLine.replacingFirst("c0ffee", with: "4affee"), 2, .notIdentityAddress),
        ("wristlink-bonds 1\n" + ltkLine.replacingFirst(" 02 03", with: " 02 04"), 2, .badKeyType),
        ("wristlink-bonds 1\n" + ltkLine.replacingFirst(" 03 00 10", with: " 03 02 10"), 2, .badCentralFlag),
        ("wristlink-bonds 1\n" + ltkLine.replacingFirst(" 03 00 10", with: " 03 00 06"), 2, .badEncryptionSize),
        ("wristlink-bonds 1\n" + ltkLine.replacingFirst(" 03 00 10", with: " 03 00 11"), 2, .badEncryptionSize),
        ("wristlink-bonds 1\n" + ltkLine + ltkLine, 3, .duplicateKey),
        ("wristlink-bonds 1\nirk 001b63aabbcc 01 0f0e0d0c0b0a09080706050403020100\nirk 001b63aabbcc 01 00000000000000000000000000000000\n", 3, .duplicateKey),
    ])
    func corrupt(text: String, line: Int, problem: BondFileProblem) {
        #expect(throws: BondFileError(line: line, problem)) { _ = try parse(text) }
    }

    @Test("every bad line is reported, in order; parse still throws the first; nothing after an unsupported version")
    func everyBadLine() {
        let text = "wristlink-bonds 1\n" + Self.ltkLine.replacingFirst(" 02 03", with: " 02 04") + Self.ltkLine + "key x\n" + String(Self.ltkLine.prefix(40))
        var found: [BondFileError] = []
        do throws(BondFileErrors) { _ = try BondStore.parseReportingAll(ascii(text).span) } catch {
            found = (0..<error.count).map { error[$0] }
        }
        #expect(found == [BondFileError(line: 2, .badKeyType), BondFileError(line: 4, .unknownRecord), BondFileError(line: 5, .missingNewline)])
        #expect(throws: BondFileError(line: 2, .badKeyType)) { _ = try parse(text) }
        var newer: [BondFileError] = []
        do throws(BondFileErrors) { _ = try BondStore.parseReportingAll(ascii("wristlink-bonds 2\nsomething else\n").span) } catch {
            newer = (0..<error.count).map { error[$0] }
        }
        #expect(newer == [BondFileError(line: 1, .unsupportedVersion)])
    }

    @Test("more peers than the store holds is an error on the first line too many")
    func tooManyBonds() {
        var text = "wristlink-bonds 1\n"
        for n in 1...9 { text += "irk c00000000" + format2(n) + " 02 0f0e0d0c0b0a09080706050403020100\n" }
        #expect(throws: BondFileError(line: 10, .tooManyBonds)) { _ = try parse(text) }
    }

    func format2(_ n: Int) -> String { n < 16 ? "00" + String(n, radix: 16) : "0" + String(n, radix: 16) }
}

extension String {
    /// `self` with the first `target` replaced (no Foundation in the tests either).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8)
        let t = Array(target.utf8)
        for i in 0...(bytes.count - t.count) where Array(bytes[i..<(i + t.count)]) == t {
            return String(decoding: Array(bytes[..<i]) + Array(replacement.utf8) + Array(bytes[(i + t.count)...]), as: UTF8.self)
        }
        preconditionFailure("\(target) not in \(self)")
    }
}
