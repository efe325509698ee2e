// SPDX-License-Identifier: Apache-2.0
import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

/// The `--trace` btsnoop file holds every title and message the phone
/// sends, the `--events` file what the wearable did with them: both are the
/// wearer's alone, whatever was at the path before.
@Suite("Private output files: the trace and the events stream")
struct PrivateOutputTests {
    static let btsnoopHeader: [UInt8] = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA]

    /// The file's bytes as they are (not through a String: a btsnoop header
    /// is not UTF-8).
    func contents(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while true {
            let n = chunk.withUnsafeMutableBufferPointer { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return bytes }
            bytes += chunk[0..<n]
        }
    }

    func writeFile(_ path: String, _ text: String, mode: mode_t) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        precondition(fd >= 0, "scratch file")
        _ = text.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        chmod(path, mode)
    }

    @Test("a new trace file is created 0600 even when the umask allows more")
    func newTraceIsPrivate() throws {
        let old = umask(0)
        defer { umask(old) }
        let dir = makeScratchDirectory("trace")
        defer { removeTree(dir) }
        let path = dir + "/trace.btsnoop"
        do {
            let writer = try BtsnoopWriter(path: path)
            _ = consume writer
        }
        #expect(StateFile.mode(path) == 0o600)
        #expect(contents(path) == Self.btsnoopHeader)
    }

    @Test("an old 0644 trace file at the path ends 0600, holding only the new trace")
    func oldTraceBecomesPrivate() throws {
        let dir = makeScratchDirectory("trace")
        defer { removeTree(dir) }
        let path = dir + "/trace.btsnoop"
        writeFile(path, "an older, longer trace with titles in it", mode: 0o644)
        #expect(StateFile.mode(path) == 0o644)
        do {
            let writer = try BtsnoopWriter(path: path)
            _ = consume writer
        }
        #expect(StateFile.mode(path) == 0o600)
        #expect(contents(path) == Self.btsnoopHeader)
    }

    @Test("a symbolic link at the trace path is refused with an error naming it, and its target is left alone")
    func traceSymlinkRefused() throws {
        let dir = makeScratchDirectory("trace")
        defer { removeTree(dir) }
        let target = dir + "/elsewhere"
        writeFile(target, "someone else's file", mode: 0o644)
        let path = dir + "/trace.btsnoop"
        #expect(symlink(target, path) == 0)
        var refused: SystemError? = nil
        do {
            let writer = try BtsnoopWriter(path: path)
            _ = consume writer
        } catch {
            refused = error
        }
        #expect(refused?.errno == ELOOP)
        #expect(refused?.description.hasPrefix("\(path) is a symbolic link") == true, "\(String(describing: refused))")
        #expect(contents(target) == Array("someone else's file".utf8))
        #expect(StateFile.mode(target) == 0o644)
    }

    @Test("the events file: created 0600, an old 0644 one made 0600 and emptied, a symbolic link refused")
    func eventsFile() throws {
        let dir = makeScratchDirectory("events")
        defer { removeTree(dir) }
        let path = dir + "/events.jsonl"
        writeFile(path, "{\"kind\":\"old\"}\n", mode: 0o644)
        do {
            let file = try OutputFile(path: path)
            _ = consume file
        }
        #expect(StateFile.mode(path) == 0o600)
        #expect(contents(path) == [])
        let link = dir + "/link.jsonl"
        #expect(symlink(path, link) == 0)
        var refused: SystemError? = nil
        do {
            let file = try OutputFile(path: link)
            _ = consume file
        } catch {
            refused = error
        }
        #expect(refused?.errno == ELOOP)
    }

    @Test("a FIFO at the trace path is written to as it is (a live capture), its mode untouched")
    func fifoKept() throws {
        let dir = makeScratchDirectory("trace")
        defer { removeTree(dir) }
        let path = dir + "/live"
        #expect(mkfifo(path, 0o640) == 0)
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        do {
            let writer = try BtsnoopWriter(path: path)
            _ = consume writer
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBufferPointer { read(reader, $0.baseAddress, $0.count) }
        #expect(n == Self.btsnoopHeader.count)
        #expect(StateFile.mode(path) == 0o640)
    }
}
