// SPDX-License-Identifier: Apache-2.0
// Formatting text into a fixed buffer without allocating: log lines and the
// JSON events stream are built here. Output that does not fit is cut (the
// buffer refuses bytes past its capacity) and the append returns false.

extension ByteBuffer {
    @discardableResult
    public mutating func append(text: StaticString) -> Bool {
        text.withUTF8Buffer { utf8 in
            var ok = true
            for b in utf8 where !append(b) { ok = false; break }
            return ok
        }
    }

    /// Appends the UTF-8 of a Swift string (configuration names; iterating
    /// a native string's UTF-8 does not allocate).
    @discardableResult
    public mutating func append(string: String) -> Bool {
        for b in string.utf8 where !append(b) { return false }
        return true
    }

    @discardableResult
    public mutating func append(decimal value: Int64) -> Bool {
        if value < 0 {
            guard append(UInt8(ascii: "-")) else { return false }
            return append(decimal: UInt64(value.magnitude))
        }
        return append(decimal: UInt64(value))
    }

    @discardableResult
    public mutating func append(decimal value: UInt64) -> Bool {
        var digits = InlineArray<20, UInt8>(repeating: 0)
        var n = value
        var count = 0
        repeat {
            digits[count] = UInt8(ascii: "0") + UInt8(n % 10)
            n /= 10
            count += 1
        } while n > 0
        while count > 0 {
            count -= 1
            guard append(digits[count]) else { return false }
        }
        return true
    }

    @discardableResult
    public mutating func append(decimal value: Int) -> Bool { append(decimal: Int64(value)) }

    /// Two lowercase hex digits per byte, separated by `separator` if given.
    @discardableResult
    public mutating func append(hex bytes: Span<UInt8>, separator: UInt8? = nil) -> Bool {
        let digits: StaticString = "0123456789abcdef"
        return digits.withUTF8Buffer { d in
            for i in 0..<bytes.count {
                if i > 0, let separator { guard append(separator) else { return false } }
                guard append(d[Int(bytes[i] >> 4)]), append(d[Int(bytes[i] & 0x0F)]) else { return false }
            }
            return true
        }
    }

    /// Two lowercase hex digits.
    @discardableResult
    public mutating func append(hexByte b: UInt8) -> Bool {
        func digit(_ n: UInt8) -> UInt8 { n < 10 ? UInt8(ascii: "0") + n : UInt8(ascii: "a") + n - 10 }
        return append(digit(b >> 4)) && append(digit(b & 0x0F))
    }

    /// A JSON string literal (quotes included) of UTF-8 `bytes`: quote,
    /// backslash and control characters escaped; invalid UTF-8 is passed
    /// through as the replacement character.
    @discardableResult
    public mutating func append(jsonString bytes: Span<UInt8>) -> Bool {
        guard append(UInt8(ascii: "\"")) else { return false }
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "\""): guard append(text: "\\\"") else { return false }
            case UInt8(ascii: "\\"): guard append(text: "\\\\") else { return false }
            case 0x0A: guard append(text: "\\n") else { return false }
            case 0x0D: guard append(text: "\\r") else { return false }
            case 0x09: guard append(text: "\\t") else { return false }
            case 0..<0x20, 0x7F:
                guard append(text: "\\u00"), append(hexByte: b) else { return false }
            case 0x80...:
                let length = UTF8Boundary.sequenceLength(bytes, at: i)
                if length == 0 {
                    guard append(text: "\u{FFFD}") else { return false }
                } else {
                    for k in 0..<length { guard append(bytes[i + k]) else { return false } }
                    i += length
                    continue
                }
            default:
                guard append(b) else { return false }
            }
            i += 1
        }
        return append(UInt8(ascii: "\""))
    }

    @discardableResult
    public mutating func append(jsonString text: StaticString) -> Bool {
        text.withUTF8Buffer { utf8 in append(jsonString: Span(_unsafeElements: utf8)) }
    }

    @discardableResult
    public mutating func append(jsonString text: String) -> Bool {
        var copy = text
        return copy.withUTF8 { utf8 in append(jsonString: Span(_unsafeElements: utf8)) }
    }
}

extension UTF8Boundary {
    /// The length of the well-formed UTF-8 sequence starting at `i`, or 0 if
    /// the bytes there are not one (Unicode Table 3-7: no overlong forms, no
    /// surrogates, nothing above U+10FFFF).
    public static func sequenceLength(_ bytes: Span<UInt8>, at i: Int) -> Int {
        let b = bytes[i]
        let length: Int
        // The range the second byte must fall in depends on the first.
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch b {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xED: length = 3; second = 0x80...0x9F
        case 0xE1...0xEF: length = 3
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; second = 0x80...0x8F
        default: return 0
        }
        guard i + length <= bytes.count, second.contains(bytes[i + 1]) else { return 0 }
        for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 { return 0 }
        return length
    }
}
