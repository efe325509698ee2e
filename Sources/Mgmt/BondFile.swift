// SPDX-License-Identifier: Apache-2.0
// The bond state file: the `BondStore` as text, one line per key, so a
// person can read it and a diff shows what pairing changed. The platform
// writes it atomically with mode 0600; this file only turns bonds into bytes
// and back, allocating nothing (parsing fills an inline `BondStore`).
//
//   wristlink-bonds 1
//   ltk <address> <addr-type> <key-type> <central> <enc-size> <ediv> <rand> <value>
//   irk <address> <addr-type> <value>
//
// Every field is lowercase hex of fixed width, separated by one space, and
// every line ends with "\n" (upper case is accepted on reading):
//   address    12 digits, most significant byte first (as people write it)
//   addr-type  2 digits: 01 LE public, 02 LE random (static)
//   key-type   2 digits: 00...03 (mgmt Key_Type; debug keys are never kept)
//   central    2 digits: 00 or 01
//   enc-size   2 digits: 07...10
//   ediv       4 digits, the number
//   rand       16 digits, the number
//   value      32 digits, the key's bytes in wire order (as the kernel sends them)
// Bonds are written least recently updated first, so the eviction order
// survives a restart. On reading, a UTF-8 byte-order mark before the header
// and a CR before each "\n" (the file saved by a Windows editor) are not
// part of the lines. Anything else is a corrupt file, reported with the
// 1-based line number of every bad line (`BondFileErrors`: the first 16,
// then a count; nothing after an unsupported version, whose lines this
// format cannot judge); the caller decides (start with no bonds, keep the
// file for inspection).

import Bounded

public struct BondFileError: LineError {
    /// 1-based; the header is line 1.
    public var line: Int
    public var problem: BondFileProblem

    public init(line: Int, _ problem: BondFileProblem) {
        self.line = line
        self.problem = problem
    }
}

/// Every bad line of a bond file (up to `BondFileErrors.capacity`).
public typealias BondFileErrors = FileErrors<BondFileError>

public enum BondFileProblem: Equatable, Sendable {
    case missingHeader
    case unsupportedVersion
    /// The last line does not end with "\n" (a cut-off write).
    case missingNewline
    /// Neither "ltk" nor "irk".
    case unknownRecord
    /// Wrong length, separator or hex digit.
    case malformedRecord
    case badAddressType
    /// A random address that is not static cannot be an identity.
    case notIdentityAddress
    case badKeyType
    case badCentralFlag
    case badEncryptionSize
    /// A second LTK with the same Central flag, or a second IRK, for one peer.
    case duplicateKey
    /// More peers than `BondStore.capacity`.
    case tooManyBonds

    public var name: StaticString {
        switch self {
        case .missingHeader: "missing-header"
        case .unsupportedVersion: "unsupported-version"
        case .missingNewline: "missing-newline"
        case .unknownRecord: "unknown-record"
        case .malformedRecord: "malformed-record"
        case .badAddressType: "bad-address-type"
        case .notIdentityAddress: "not-identity-address"
        case .badKeyType: "bad-key-type"
        case .badCentralFlag: "bad-central-flag"
        case .badEncryptionSize: "bad-encryption-size"
        case .duplicateKey: "duplicate-key"
        case .tooManyBonds: "too-many-bonds"
        }
    }
}

enum BondFileFormat {
    static let header: StaticString = "wristlink-bonds 1"
    static let headerPrefix: StaticString = "wristlink-bonds "
    static let headerByteCount = 17 + 1
    /// "ltk " + 12 + 3 + 3 + 3 + 3 + 5 + 17 + 33, plus "\n".
    static let longTermKeyLineByteCount = 83 + 1
    /// "irk " + 12 + 3 + 33, plus "\n".
    static let identityResolvingKeyLineByteCount = 52 + 1
}

extension BondStore {
    /// The largest file `capacity` bonds can make.
    public static let maxSerializedByteCount = BondFileFormat.headerByteCount
        + capacity * (2 * BondFileFormat.longTermKeyLineByteCount + BondFileFormat.identityResolvingKeyLineByteCount)

    public var serializedByteCount: Int {
        BondFileFormat.headerByteCount + longTermKeyCount * BondFileFormat.longTermKeyLineByteCount
            + identityResolvingKeyCount * BondFileFormat.identityResolvingKeyLineByteCount
    }

    /// Replaces the contents of `out` with the file. Returns false, leaving
    /// `out` unchanged, when it does not fit.
    @discardableResult
    public func serialize(into out: inout ByteBuffer) -> Bool {
        guard serializedByteCount <= out.capacity else { return false }
        out.removeAll()
        _ = BondFileFormat.header.withUTF8Buffer { out.append(contentsOf: $0.span) }
        out.append(UInt8(ascii: "\n"))
        for i in 0..<count {
            let bond = self[i]
            for central in 0..<2 {
                guard let key = bond.keys[central] else { continue }
                appendKeyword("ltk", bond.address, to: &out)
                out.append(UInt8(ascii: " "))
                out.appendHex(UInt64(key.type.rawValue), digitCount: 2)
                out.append(UInt8(ascii: " "))
                out.appendHex(key.central ? 1 : 0, digitCount: 2)
                out.append(UInt8(ascii: " "))
                out.appendHex(UInt64(key.encryptionSizeBytes), digitCount: 2)
                out.append(UInt8(ascii: " "))
                out.appendHex(UInt64(key.ediv), digitCount: 4)
                out.append(UInt8(ascii: " "))
                out.appendHex(key.rand, digitCount: 16)
                out.append(UInt8(ascii: " "))
                appendKeyHex(key.value, to: &out)
                out.append(UInt8(ascii: "\n"))
            }
            if let irk = bond.identityResolvingKey {
                appendKeyword("irk", bond.address, to: &out)
                out.append(UInt8(ascii: " "))
                appendKeyHex(irk, to: &out)
                out.append(UInt8(ascii: "\n"))
            }
        }
        return true
    }

    private func appendKeyword(_ keyword: StaticString, _ address: DeviceAddress, to out: inout ByteBuffer) {
        _ = keyword.withUTF8Buffer { out.append(contentsOf: $0.span) }
        out.append(UInt8(ascii: " "))
        for i in 0..<6 { out.appendHex(UInt64(address.address.wire[5 - i]), digitCount: 2) }
        out.append(UInt8(ascii: " "))
        out.appendHex(UInt64(address.type.rawValue), digitCount: 2)
    }

    private func appendKeyHex(_ key: Key128, to out: inout ByteBuffer) {
        for i in 0..<16 { out.appendHex(UInt64(key.wire[i]), digitCount: 2) }
    }

    /// Reads a bond file, or throws its first bad line.
    public static func parse(_ text: Span<UInt8>) throws(BondFileError) -> BondStore {
        var errors = BondFileErrors()
        let store = read(text, errors: &errors)
        guard errors.isEmpty else { throw errors.first }
        return store
    }

    /// Reads a bond file. Any deviation from the format is an error naming
    /// the line, every bad line reported; nothing is returned from a
    /// corrupt file.
    public static func parseReportingAll(_ text: Span<UInt8>) throws(BondFileErrors) -> BondStore {
        var errors = BondFileErrors()
        let store = read(text, errors: &errors)
        guard errors.isEmpty else { throw errors }
        return store
    }

    /// The bonds of every good line; the bad lines' errors added to
    /// `errors`. Not to be used unless `errors` stays empty.
    private static func read(_ text: Span<UInt8>, errors: inout BondFileErrors) -> BondStore {
        var store = BondStore()
        let hasMark = text.count >= 3 && text[0] == 0xEF && text[1] == 0xBB && text[2] == 0xBF
        var start = hasMark ? 3 : 0
        var line = 0
        while start < text.count {
            line += 1
            var end = start
            while end < text.count && text[end] != UInt8(ascii: "\n") { end += 1 }
            guard end < text.count else {
                errors.add(BondFileError(line: line, .missingNewline))
                break
            }
            let contentEnd = end > start && text[end - 1] == UInt8(ascii: "\r") ? end - 1 : end
            let content = text.extracting(start..<contentEnd)
            start = end + 1
            do throws(BondFileError) {
                if line == 1 {
                    try parseHeader(content)
                } else {
                    try store.parseRecord(content, line: line)
                }
            } catch {
                errors.add(error)
                if error.problem == .unsupportedVersion { break }
            }
        }
        if line == 0 { errors.add(BondFileError(line: 1, .missingHeader)) }
        return store
    }

    private static func parseHeader(_ content: Span<UInt8>) throws(BondFileError) {
        if matches(content, BondFileFormat.header) { return }
        let prefix = BondFileFormat.headerPrefix.utf8CodeUnitCount
        if content.count > prefix && matches(content.extracting(0..<prefix), BondFileFormat.headerPrefix) {
            throw BondFileError(line: 1, .unsupportedVersion)
        }
        throw BondFileError(line: 1, .missingHeader)
    }

    private static func matches(_ bytes: Span<UInt8>, _ literal: StaticString) -> Bool {
        var equal = true
        literal.withUTF8Buffer { expected in
            guard expected.count == bytes.count else { equal = false; return }
            for i in 0..<expected.count where expected[i] != bytes[i] { equal = false; return }
        }
        return equal
    }

    private mutating func parseRecord(_ r: Span<UInt8>, line: Int) throws(BondFileError) {
        let isLTK = r.count >= 4 && Self.matches(r.extracting(0..<4), "ltk ")
        let isIRK = r.count >= 4 && Self.matches(r.extracting(0..<4), "irk ")
        guard isLTK || isIRK else { throw BondFileError(line: line, .unknownRecord) }
        let expected = (isLTK ? BondFileFormat.longTermKeyLineByteCount : BondFileFormat.identityResolvingKeyLineByteCount) - 1
        guard r.count == expected else { throw BondFileError(line: line, .malformedRecord) }
        var fields = FieldReader(r, at: 4, line: line)
        let address = try fields.address()
        let type = AddressType(rawValue: UInt8(try fields.number(digits: 2)))
        guard type.isLE else { throw BondFileError(line: line, .badAddressType) }
        let peer = DeviceAddress(address, type)
        guard peer.isLEIdentity else { throw BondFileError(line: line, .notIdentityAddress) }
        let existing = firstIndex(of: peer)
        if isLTK {
            let keyType = LongTermKeyType(rawValue: UInt8(try fields.number(digits: 2)))
            guard keyType.isStorable else { throw BondFileError(line: line, .badKeyType) }
            let central = try fields.number(digits: 2)
            guard central <= 1 else { throw BondFileError(line: line, .badCentralFlag) }
            let size = UInt8(try fields.number(digits: 2))
            guard LongTermKey.encryptionSizeRange.contains(size) else { throw BondFileError(line: line, .badEncryptionSize) }
            let ediv = UInt16(try fields.number(digits: 4))
            let rand = try fields.number(digits: 16)
            let value = try fields.key()
            let key = LongTermKey(type: keyType, central: central == 1, encryptionSizeBytes: size, ediv: ediv, rand: rand, value: value)
            if let i = existing {
                guard self[i].longTermKey(central: key.central) == nil else { throw BondFileError(line: line, .duplicateKey) }
                modifyParsed(at: i) { $0.setLongTermKey(key) }
            } else {
                var bond = Bond(address: peer)
                bond.setLongTermKey(key)
                guard insertParsed(bond) else { throw BondFileError(line: line, .tooManyBonds) }
            }
        } else {
            let value = try fields.key()
            if let i = existing {
                guard self[i].identityResolvingKey == nil else { throw BondFileError(line: line, .duplicateKey) }
                modifyParsed(at: i) { $0.identityResolvingKey = value }
            } else {
                var bond = Bond(address: peer)
                bond.identityResolvingKey = value
                guard insertParsed(bond) else { throw BondFileError(line: line, .tooManyBonds) }
            }
        }
    }
}

/// Reads space-separated fixed-width hex fields; the line length has been
/// checked, so offsets stay inside it.
private struct FieldReader: ~Escapable {
    let text: Span<UInt8>
    var offset: Int
    /// For the error: the 1-based line number in the file.
    let line: Int

    @_lifetime(copy text)
    init(_ text: Span<UInt8>, at offset: Int, line: Int) {
        self.text = text
        self.offset = offset
        self.line = line
    }

    /// `digits` hex digits, then a space unless at the end of the line.
    mutating func number(digits: Int) throws(BondFileError) -> UInt64 {
        guard let value = Hex.number(text, at: offset, count: digits) else { throw BondFileError(line: line, .malformedRecord) }
        offset += digits
        try separator()
        return value
    }

    mutating func address() throws(BondFileError) -> BDAddress {
        var wire = InlineArray<6, UInt8>(repeating: 0)
        for i in 0..<6 {
            guard let byte = Hex.number(text, at: offset + 2 * i, count: 2) else { throw BondFileError(line: line, .malformedRecord) }
            wire[5 - i] = UInt8(byte)
        }
        offset += 12
        try separator()
        return BDAddress(wire: wire)
    }

    mutating func key() throws(BondFileError) -> Key128 {
        var wire = InlineArray<16, UInt8>(repeating: 0)
        for i in 0..<16 {
            guard let byte = Hex.number(text, at: offset + 2 * i, count: 2) else { throw BondFileError(line: line, .malformedRecord) }
            wire[i] = UInt8(byte)
        }
        offset += 32
        try separator()
        return Key128(wire: wire)
    }

    private mutating func separator() throws(BondFileError) {
        guard offset < text.count else { return }
        guard text[offset] == UInt8(ascii: " ") else { throw BondFileError(line: line, .malformedRecord) }
        offset += 1
    }
}
