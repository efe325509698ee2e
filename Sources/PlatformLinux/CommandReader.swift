// SPDX-License-Identifier: Apache-2.0
// Reads newline-terminated commands from a descriptor (the console) without
// blocking, a bounded line at a time. A line longer than `maxLineBytes` is
// discarded up to its newline and reported, never buffered.

import Bounded
import CLinux

public struct CommandReader: ~Copyable {
    public static let maxLineBytes = 256
    public let maxLineBytes: Int

    public enum Line {
        /// `line` holds one command (without the newline).
        case command
        case tooLong
        case endOfInput
    }

    public let fd: Int32
    public private(set) var isOpen = true
    private var buffer: ByteBuffer
    private var start = 0
    private var discarding = false

    public init(fd: Int32, maxLineBytes: Int = CommandReader.maxLineBytes) {
        self.fd = fd
        self.maxLineBytes = maxLineBytes
        try? Sys.setNonBlocking(fd)
        buffer = ByteBuffer(capacity: 2 * maxLineBytes)
    }

    /// The next complete line into `line`, or nil when none is ready.
    public mutating func next(into line: inout ByteBuffer) -> Line? {
        while isOpen {
            if let end = newline() {
                defer { consume(through: end) }
                if discarding {
                    discarding = false
                    return .tooLong
                }
                line.removeAll()
                for i in start..<end where buffer[i] != 0x0D { line.append(buffer[i]) }
                return .command
            }
            if buffer.count - start >= maxLineBytes {
                discarding = true
                start = buffer.count
            }
            compact()
            let fd = self.fd
            do {
                var read = 0
                try buffer.appendInPlace { (free) throws(SystemError) -> Int in
                    read = try Sys.call("read(console)") { CLinux.read(fd, free.baseAddress, free.count) }
                    return read
                }
                if read == 0 {
                    isOpen = false
                    return .endOfInput
                }
            } catch {
                if !error.wouldBlock { isOpen = false; return .endOfInput }
                return nil
            }
        }
        return nil
    }

    private func newline() -> Int? {
        var i = start
        while i < buffer.count {
            if buffer[i] == 0x0A { return i }
            i += 1
        }
        return nil
    }

    private mutating func consume(through end: Int) {
        start = end + 1
        compact()
    }

    /// Moves unread bytes to the front.
    private mutating func compact() {
        guard start > 0 else { return }
        let remaining = buffer.count - start
        for i in 0..<remaining { buffer[i] = buffer[start + i] }
        buffer.truncate(to: remaining)
        start = 0
    }
}
