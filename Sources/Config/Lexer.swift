// SPDX-License-Identifier: Apache-2.0
// Lines to words. A word is text between spaces or tabs; `key=value` splits
// at the first `=` outside quotes; double quotes keep spaces, `#` and `=`
// (with `\"` and `\\` inside them); `#` outside quotes starts a comment.
// Blank and comment-only lines produce no `ConfigLine`, so every line the
// parsers see has a first word. A UTF-8 byte-order mark at the very start
// of the file is skipped; CR is whitespace, so CRLF line ends read as LF.
//
// Bytes throughout: a word's key and value are `Text`, the word's bytes with
// quotes and escapes removed, and keywords are matched against
// `StaticString` literals byte for byte. No `String` is compared or hashed
// while parsing (in the Embedded build that would link the Unicode
// normalisation tables); a `String` is made only for a name the parsed
// configuration keeps, and for a message. `Text` owns a small `[UInt8]`
// rather than a slice of the file: an `ArraySlice` is four words to a
// `[UInt8]`'s one, and every copy of a word cost code (measured: Config's
// Embedded object 122,328 bytes of code with slices, 117,772 with arrays).

import Bounded

/// A word's key or value: UTF-8 bytes, compared byte for byte.
struct Text: Equatable, Sendable, CustomStringConvertible {
    var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = Array(bytes) }

    var isEmpty: Bool { bytes.isEmpty }
    var byteCount: Int { bytes.count }

    /// The text as written, for messages and for names the configuration
    /// keeps. One copy of the decoding, not one per message.
    var description: String {
        @inline(never) get { String(decoding: bytes, as: UTF8.self) }
    }

    /// Whether the bytes are exactly `literal`'s.
    func matches(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { other in
            guard other.count == bytes.count else { return false }
            var i = 0
            for byte in other {
                guard bytes[i] == byte else { return false }
                i += 1
            }
            return true
        }
    }

    /// Whether the bytes are exactly `string`'s UTF-8 (not `String`'s
    /// `==`, which compares Unicode canonical equivalents as equal).
    func matches(_ string: String) -> Bool { bytes.elementsEqual(string.utf8) }
}

/// `case "on":` in a `switch` over a `Text`.
func ~= (pattern: StaticString, value: Text) -> Bool { value.matches(pattern) }

/// One word of a line: `key`, or `key=value` (`value` may be empty).
struct Word: Equatable, Sendable {
    var key: Text
    var value: Text?
}

struct ConfigLine: Sendable {
    /// 1-based line number in the file.
    var number: Int
    var words: [Word]

    /// The directive: the first word's key.
    var verb: Text { words[0].key }
}

enum Lexer {
    /// The file's lines with words; a line with a mistake is left out and
    /// its mistake added to `errors`.
    static func lines(_ text: String, errors: inout ConfigErrors) -> [ConfigLine] {
        let bytes = Array(text.utf8)
        var result: [ConfigLine] = []
        // A byte-order mark says how the file is encoded (Notepad's "UTF-8
        // with BOM"); it is not part of the first line.
        let hasMark = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
        var start = hasMark ? 3 : 0
        var number = 0
        while start < bytes.count {
            number += 1
            var end = start
            while end < bytes.count && bytes[end] != Byte.newline { end += 1 }
            do throws(ConfigError) {
                let words = try self.words(bytes[start..<end], line: number)
                if !words.isEmpty { result.append(ConfigLine(number: number, words: words)) }
            } catch {
                errors.add(error)
            }
            start = end + 1
        }
        return result
    }

    static func words(_ line: ArraySlice<UInt8>, line number: Int) throws(ConfigError) -> [Word] {
        var words: [Word] = []
        var key: [UInt8] = []
        var value: [UInt8] = []
        var inWord = false
        var inQuotes = false
        var hasValue = false
        var i = line.startIndex

        func finish() throws(ConfigError) {
            if hasValue && key.isEmpty {
                throw ConfigError(line: number, .badLine, "'=\(Text(value))' has no name before the '='")
            }
            words.append(Word(key: Text(key), value: hasValue ? Text(value) : nil))
            key = []
            value = []
            inWord = false
            hasValue = false
        }

        while i < line.endIndex {
            let byte = line[i]
            if inQuotes {
                if byte == Byte.quote {
                    inQuotes = false
                } else if byte == Byte.backslash, i + 1 < line.endIndex,
                    line[i + 1] == Byte.quote || line[i + 1] == Byte.backslash
                {
                    i += 1
                    if hasValue { value.append(line[i]) } else { key.append(line[i]) }
                } else {
                    if hasValue { value.append(byte) } else { key.append(byte) }
                }
            } else if byte == Byte.space || byte == Byte.tab || byte == Byte.carriageReturn {
                if inWord { try finish() }
            } else if byte == Byte.hash {
                break
            } else if byte == Byte.quote {
                inWord = true
                inQuotes = true
            } else if byte == Byte.equals && !hasValue {
                inWord = true
                hasValue = true
            } else {
                inWord = true
                if hasValue { value.append(byte) } else { key.append(byte) }
            }
            i += 1
        }
        if inQuotes {
            throw ConfigError(line: number, .badLine, "a double quote is not closed: end the text with \"")
        }
        if inWord { try finish() }
        return words
    }
}

enum Byte {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let hash: UInt8 = 0x23
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let equals: UInt8 = 0x3D
    static let backslash: UInt8 = 0x5C
    static let underscore: UInt8 = 0x5F
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
}
