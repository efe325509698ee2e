// SPDX-License-Identifier: Apache-2.0
import Bounded
import Testing
import TestSupport

/// The JSON string literal `append(jsonString:)` makes of `bytes`.
private func json(_ bytes: [UInt8], capacity: Int = 1024) -> (text: [UInt8], complete: Bool) {
    var buffer = ByteBuffer(capacity: capacity)
    let complete = buffer.append(jsonString: bytes.span)
    var text: [UInt8] = []
    for i in 0..<buffer.count { text.append(buffer[i]) }
    return (text, complete)
}

private let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

@Suite("JSON strings from untrusted UTF-8")
struct JSONStringTests {
    @Test("Well-formed two-, three- and four-byte sequences pass through unchanged")
    func wellFormedPassesThrough() {
        let text = Array("é € 😀 \u{10FFFF}".utf8)
        #expect(json(text).text == [0x22] + text + [0x22])
    }

    @Test("Quote, backslash and control characters are escaped")
    func escapes() {
        #expect(json(hex("22 5c 0a 0d 09 01 1f 7f")).text == Array(#""\"\\\n\r\t\u0001\u001f\u007f""#.utf8))
    }

    @Test(
        "Ill-formed sequences (Unicode Table 3-7) become one U+FFFD per byte",
        arguments: [
            "c0 80",        // overlong NUL
            "c1 bf",        // overlong
            "e0 80 80",     // overlong three-byte
            "ed a0 80",     // UTF-16 surrogate
            "f0 80 80 80",  // overlong four-byte
            "f4 90 80 80",  // above U+10FFFF
            "f5 80 80 80",  // no such lead byte
            "80",           // lone continuation
        ])
    func illFormedReplaced(_ bytes: String) {
        let input = hex(bytes)
        // The lead byte becomes U+FFFD; the continuation bytes that follow,
        // alone, are not sequences either.
        var expected: [UInt8] = [0x22]
        for _ in input { expected += replacement }
        expected.append(0x22)
        #expect(json(input).text == expected)
    }

    @Test("A sequence cut by the end of the value is replaced, not read past")
    func truncatedSequence() {
        #expect(json(hex("41 e2 82")).text == [0x22, 0x41] + replacement + replacement + [0x22])
        #expect(json(hex("f0 9f 98")).text == [0x22] + replacement + replacement + replacement + [0x22])
    }

    @Test("Output that does not fit is cut and reported")
    func cutIsReported() {
        let result = json(Array("hello".utf8), capacity: 4)
        #expect(result.complete == false)
        #expect(result.text == Array("\"hel".utf8))
    }

    @Test("Any bytes give a string Swift accepts as valid UTF-8 (10,000 seeded inputs)")
    func randomBytesGiveValidUTF8() {
        var random = SplitMix64(seed: 0x0A_4C_53)
        for _ in 0..<10_000 {
            let count = Int(random.next() % 24)
            // Bias towards bytes at the edges of Table 3-7.
            let interesting: [UInt8] = [0x00, 0x22, 0x5C, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
            let bytes = (0..<count).map { _ in
                random.next() % 2 == 0 ? interesting[Int(random.next() % UInt64(interesting.count))] : UInt8(truncatingIfNeeded: random.next())
            }
            let result = json(bytes, capacity: 8 * 24 + 2)
            #expect(result.complete)
            let inner = Array(result.text.dropFirst().dropLast())
            #expect(String(validating: inner, as: UTF8.self) != nil, "input \(bytes)")
        }
    }
}
