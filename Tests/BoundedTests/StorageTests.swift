// SPDX-License-Identifier: Apache-2.0
import Bounded
import Testing
import TestSupport

@Suite("Fixed storage")
struct StorageTests {
    @Test("FixedArray refuses to grow past its capacity")
    func fixedArrayFull() {
        var array = FixedArray<Int>(capacity: 2)
        #expect(array.append(1) == true)
        #expect(array.append(2) == true)
        #expect(array.append(3) == false)
        #expect(array.count == 2)
    }

    @Test("FixedArray removal keeps the order of the rest")
    func fixedArrayRemove() {
        var array = FixedArray<Int>(capacity: 4)
        for i in 10..<14 { array.append(i) }
        #expect(array.remove(at: 1) == 11)
        #expect([array[0], array[1], array[2]] == [10, 12, 13])
        #expect(array.lastIndex { $0 < 13 } == 1)
    }

    @Test("ByteBuffer writes little-endian and refuses bytes past its capacity")
    func byteBuffer() {
        var buffer = ByteBuffer(capacity: 7)
        #expect(buffer.append(0xAA) == true)
        #expect(buffer.appendLE16(0x0102) == true)
        #expect(buffer.appendLE32(0x0304_0506) == true)
        #expect(buffer.toArray() == [0xAA, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03])
        #expect(buffer.append(0xFF) == false)
        let word = buffer.span.le32(at: 3)
        #expect(word == 0x0304_0506)
        buffer.removeAll()
        #expect(buffer.append(contentsOf: [1, 2, 3, 4, 5, 6, 7, 8].span) == false)
        #expect(buffer.isEmpty == true)
    }

    @Test("InlineBytes cuts what does not fit and says so")
    func inlineBytesTruncates() {
        let bytes = InlineBytes<4>("abcdef")
        #expect(bytes.count == 4)
        #expect(bytes.wasTruncated)
        #expect(bytes.text == "abcd")
        #expect(InlineBytes<8>("abc") == InlineBytes<8>("abc"))
        #expect(InlineBytes<8>("abc") != InlineBytes<8>("abd"))
    }

    @Test("a UTF-8 character cut by truncation is dropped, not shown as garbage")
    func inlineBytesUTF8() {
        let cut = InlineBytes<5>("ab\u{00E9}\u{20AC}")  // a b é(2) €(3): cut inside €
        #expect(cut.count == 5)
        #expect(cut.text == "ab\u{00E9}")
        let whole = InlineBytes<4>("ab\u{00E9}")
        #expect(whole.text == "ab\u{00E9}")
    }

    @Test("a UUID's text form is sent on the wire in reverse byte order")
    func uuidWireOrder() {
        let ancs = UUID128("7905F431-B5CE-4E99-A40F-4B1E122D00D0")
        let wire: [UInt8] = [0xD0, 0x00, 0x2D, 0x12, 0x1E, 0x4B, 0x0F, 0xA4, 0x99, 0x4E, 0xCE, 0xB5, 0x31, 0xF4, 0x05, 0x79]
        #expect(ancs.matches(wire.span) == true)
        let decoded = UUID128(wireBytes: wire.span)
        #expect(decoded == ancs)
        let short = Array(wire.dropLast())
        #expect(ancs.matches(short.span) == false)
    }

    @Test("Instant arithmetic is in milliseconds and the earliest deadline wins")
    func instants() {
        let t = Instant(ms: 1_000)
        #expect(t.advanced(byMs: 250).ms(since: t) == 250)
        #expect(earliest(t, nil) == t)
        #expect(earliest(nil, nil) == nil)
        #expect(earliest(t.advanced(byMs: 5), t) == t)
    }
}
