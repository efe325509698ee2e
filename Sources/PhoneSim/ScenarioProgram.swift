// SPDX-License-Identifier: Apache-2.0
// The queue of scenario lines still to run, kept as text. A script is
// checked whole when loaded (so a bad line is reported before anything
// runs) and a typed command when it is entered; each line is parsed again
// when its turn comes. Keeping text rather than parsed commands keeps the
// queue small (a parsed notification is about 1 KB) and lets typed commands
// be appended at run time without allocating: a fixed byte buffer and a ring
// of line references, compacted when the end of the buffer is reached.

import Bounded

struct ScenarioProgram: ~Copyable {
    struct Line {
        var start: Int
        var length: Int
        var number: Int
    }

    private var text: ByteBuffer
    private var lines: RingBuffer<Line>

    init(capacityBytes: Int, lineCapacity: Int) {
        text = ByteBuffer(capacity: capacityBytes)
        lines = RingBuffer(capacity: lineCapacity, policy: .refuseNewest)
    }

    var isEmpty: Bool { lines.isEmpty }
    var count: Int { lines.count }
    var freeLineCount: Int { lines.capacity - lines.count }

    /// Bytes that can still be appended (after compaction).
    var freeByteCount: Int {
        text.capacity - text.count + (lines.first?.start ?? text.count)
    }

    /// Appends one checked line; false when it does not fit.
    mutating func append(_ line: Span<UInt8>, number: Int) -> Bool {
        guard !lines.isFull, line.count <= freeByteCount else { return false }
        if text.freeCount < line.count { compact() }
        let start = text.count
        text.append(contentsOf: line)
        lines.push(Line(start: start, length: line.count, number: number))
        return true
    }

    /// Calls `body` with the first line and its number.
    func withFirst<R>(_ body: (Span<UInt8>, Int) -> R) -> R? {
        guard let line = lines.first else { return nil }
        return body(text.span.extracting(line.start..<line.start + line.length), line.number)
    }

    mutating func removeFirst() {
        _ = lines.popFirst()
        if lines.isEmpty { text.removeAll() }
    }

    mutating func removeAll() {
        lines.removeAll()
        text.removeAll()
    }

    /// Moves the queued lines to the front of the buffer.
    private mutating func compact() {
        guard let first = lines.first else {
            text.removeAll()
            return
        }
        let offset = first.start
        guard offset > 0 else { return }
        let kept = text.count - offset
        for i in 0..<kept { text[i] = text[i + offset] }
        text.truncate(to: kept)
        for k in 0..<lines.count { lines[k].start -= offset }
    }
}
