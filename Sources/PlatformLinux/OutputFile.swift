// SPDX-License-Identifier: Apache-2.0
// A file or standard output that takes whole lines from a fixed buffer
// (the events stream). The file is the wearer's alone (PrivateFile.swift:
// 0600, no symbolic link followed). Writes are retried on EINTR and short
// writes; a failing file is reported once and then ignored, never fatal.

import Bounded
import CLinux

public struct OutputFile: ~Copyable {
    private let fd: Int32
    private let owned: Bool
    private let name: String
    public private(set) var failed = false

    /// `path` "-" is standard output.
    public init(path: String) throws(SystemError) {
        if path.utf8Equals("-") {
            fd = 1
            owned = false
        } else {
            fd = try PrivateFile.openForWriting(path)
            owned = true
        }
        name = path
    }

    deinit { if owned { _ = CLinux.close(fd) } }

    /// Writes the buffer's bytes as they are.
    public mutating func write(_ line: borrowing ByteBuffer) {
        guard !failed else { return }
        let ok = line.span.withUnsafeBufferPointer { Sys.writeAll(fd, $0) }
        if !ok {
            failed = true
            Log.error("\(name): write failed; no more events are written there")
        }
    }
}
