// SPDX-License-Identifier: Apache-2.0
// The phone's prepared-write queue (Core Vol 3 Part F 3.4.6): the parts of
// long writes, held per link until Execute Write writes or drops them.
//
// Bounded twice, as a server's queue is: a number of parts and a number of
// bytes (512 by default, the longest attribute value); a part beyond either
// is refused and the caller answers Prepare Queue Full (0x09). Offsets are
// checked when the queue is executed, as the spec says (3.4.6.1): the parts
// are written in the order they came, each at its offset into the value
// built so far. A part starting past the end of that value is Invalid
// Offset (0x07); a value that would exceed the byte bound is Invalid
// Attribute Value Length (0x0D). Either way nothing is written.

import ATT
import Bounded

struct PrepareWriteQueue: ~Copyable {
    struct Part {
        var handle: UInt16
        var offset: UInt16
        /// Where the part's bytes start in `bytes`.
        var start: Int
        var byteCount: Int
    }

    /// Why an execution wrote nothing: the handle and ATT code to answer.
    struct Refusal: Equatable {
        var handle: UInt16
        var code: UInt8
    }

    private var parts: FixedArray<Part>
    private var bytes: ByteBuffer
    private var joined: ByteBuffer

    init(partCapacity: Int, byteCapacity: Int) {
        parts = FixedArray(capacity: partCapacity)
        bytes = ByteBuffer(capacity: byteCapacity)
        joined = ByteBuffer(capacity: byteCapacity)
    }

    var isEmpty: Bool { parts.isEmpty }
    var byteCount: Int { bytes.count }

    /// Queues a part; false when either bound would be passed.
    mutating func push(handle: UInt16, offset: UInt16, value: Span<UInt8>) -> Bool {
        guard !parts.isFull, value.count <= bytes.freeCount else { return false }
        parts.append(Part(handle: handle, offset: offset, start: bytes.count, byteCount: value.count))
        bytes.append(contentsOf: value)
        return true
    }

    mutating func removeAll() {
        parts.removeAll()
        bytes.removeAll()
    }

    /// Builds the value the queued parts write into `out` and empties the
    /// queue. Every part must be for `handle` (the phone queues only the
    /// Control Point). Nil on success, else what to answer.
    mutating func execute<let N: Int>(handle: UInt16, into out: inout InlineBytes<N>) -> Refusal? {
        defer { removeAll() }
        joined.removeAll()
        for i in 0..<parts.count {
            let part = parts[i]
            guard part.handle == handle else { return Refusal(handle: part.handle, code: ATTErrorCode.writeNotPermitted) }
            let offset = Int(part.offset)
            guard offset <= joined.count else { return Refusal(handle: handle, code: ATTErrorCode.invalidOffset) }
            let end = offset + part.byteCount
            guard end <= joined.capacity, end <= N else {
                return Refusal(handle: handle, code: ATTErrorCode.invalidAttributeValueLength)
            }
            for j in 0..<part.byteCount {
                let byte = bytes[part.start + j]
                if offset + j < joined.count { joined[offset + j] = byte } else { joined.append(byte) }
            }
        }
        out.removeAll()
        out.append(joined.span)
        return nil
    }
}
