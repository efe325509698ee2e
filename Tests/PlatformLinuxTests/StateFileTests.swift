// SPDX-License-Identifier: Apache-2.0
import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

@Suite("Bond state file")
struct StateFileTests {
    func buffer(_ text: String) -> ByteBuffer {
        var b = ByteBuffer(capacity: 4096)
        b.append(string: text)
        return b
    }

    @Test("written atomically with mode 0600, read back byte for byte, no temporary file left")
    func roundTrip() throws {
        let dir = makeScratchDirectory("state")
        defer { removeTree(dir) }
        let path = StateFile.path(dir)
        try StateFile.write(path, buffer("wristlink-bonds 1\n"))
        #expect(StateFile.mode(path) == 0o600)
        #expect(try StateFile.read(path) == Array("wristlink-bonds 1\n".utf8))
        #expect(ProcessControl.exists(path + ".tmp") == false)
        try StateFile.write(path, buffer("wristlink-bonds 1\nirk c12233445566 02 00112233445566778899aabbccddeeff\n"))
        #expect(try StateFile.read(path)?.count == 71)
    }

    @Test("a umask cannot widen the mode: the file is 0600 even when the process allows more")
    func modeDespiteUmask() throws {
        let old = umask(0)
        defer { umask(old) }
        let dir = makeScratchDirectory("state")
        defer { removeTree(dir) }
        let path = StateFile.path(dir)
        try StateFile.write(path, buffer("x"))
        #expect(StateFile.mode(path) == 0o600)
    }

    @Test("a missing file is no bonds, not an error")
    func missing() throws {
        let dir = makeScratchDirectory("state")
        defer { removeTree(dir) }
        #expect(try StateFile.read(StateFile.path(dir)) == nil)
    }

    @Test("a corrupt file is moved aside, keeping it for inspection")
    func setAside() throws {
        let dir = makeScratchDirectory("state")
        defer { removeTree(dir) }
        let path = StateFile.path(dir)
        try StateFile.write(path, buffer("garbage"))
        let aside = StateFile.setAside(path)
        #expect(ProcessControl.exists(path) == false)
        #expect(ProcessControl.exists(aside) == true)
        #expect(aside.hasPrefix(path + ".corrupt-"))
    }

    @Test("a write whose temporary file cannot be created fails with a typed error and leaves the old file")
    func failedWriteKeepsOld() throws {
        let dir = makeScratchDirectory("state")
        defer { removeTree(dir) }
        let path = StateFile.path(dir)
        try StateFile.write(path, buffer("wristlink-bonds 1\n"))
        // A directory where the temporary file goes: its open(O_WRONLY)
        // fails (EISDIR, for root too).
        try #require(mkdir(path + ".tmp", 0o700) == 0)
        #expect(throws: SystemError.self) { try StateFile.write(path, buffer("wristlink-bonds 1\nirk c12233445566 02 00112233445566778899aabbccddeeff\n")) }
        #expect(try StateFile.read(path) == Array("wristlink-bonds 1\n".utf8))
        // A directory that does not exist fails the same way.
        #expect(throws: SystemError.self) { try StateFile.write("/proc/wristlink-cannot-exist/bonds", buffer("x")) }
    }
}
