// SPDX-License-Identifier: Apache-2.0
// Comparing received bytes with configured text (policy rules) without
// allocating, and Strings by their UTF-8 bytes (no Unicode tables).

extension Span where Element == UInt8 {
    /// Whether the bytes are exactly the UTF-8 of `text`.
    public func elementsEqual(utf8Of text: String) -> Bool {
        var i = 0
        for b in text.utf8 {
            guard i < count, self[i] == b else { return false }
            i += 1
        }
        return i == count
    }

    /// Whether the UTF-8 of `text` occurs in the bytes (byte-exact, so
    /// case-sensitive). Empty text is contained in anything.
    public func contains(utf8Of text: String) -> Bool {
        let needle = text.utf8
        let n = needle.count
        guard n <= count else { return false }
        if n == 0 { return true }
        var start = 0
        while start + n <= count {
            var matched = true
            var k = start
            for b in needle {
                if self[k] != b { matched = false; break }
                k += 1
            }
            if matched { return true }
            start += 1
        }
        return false
    }
}

extension String {
    /// Whether the two have the same UTF-8 bytes. `==` on `String` holds
    /// canonically equivalent text equal (é as one scalar or as e and a
    /// combining accent), which links the Unicode normalisation tables into
    /// an Embedded build; names from the configuration compare as bytes.
    public func utf8Equals(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }

    /// Whether the UTF-8 bytes begin with `prefix`'s (`hasPrefix` compares
    /// Characters, with the same Unicode tables behind it).
    public func utf8HasPrefix(_ prefix: String) -> Bool { utf8.starts(with: prefix.utf8) }

    /// The text after the first `count` UTF-8 bytes.
    public func utf8Dropping(first count: Int) -> String { String(decoding: utf8.dropFirst(count), as: UTF8.self) }
}
