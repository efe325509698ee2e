// SPDX-License-Identifier: Apache-2.0
import Bounded
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

/// The system's notice for the wrist: one keyword in `notice` in the state
/// directory, taken once (read, then removed); anything else refused with
/// a reason, never waited on.
@Suite("The system's notice file: one keyword, taken once")
struct NoticeFileTests {
    func put(_ path: String, _ text: String) {
        let f = fopen(path, "w")!
        _ = fputs(text, f)
        fclose(f)
    }

    func parse(_ text: String) -> SystemNotice.Parsed { SystemNotice.parse(Array(text.utf8).span) }

    @Test("the keywords, with an LF or a CRLF after them (an editor's), are the notices; nothing else is")
    func keywords() {
        #expect(parse("update-done") == .notice(.updateDone))
        #expect(parse("update-done\n") == .notice(.updateDone))
        #expect(parse("update-failed\r\n") == .notice(.updateFailed))
        for text in ["", "\n", "update-don", "update-done ", "update-done\n\n", "UPDATE-DONE", " update-failed", "update-failedx", "update-done\nupdate-failed", "update-failed\r", "update-done\n\r"] {
            #expect(parse(text) == .refused(.unknown), "\(text.debugDescription)")
        }
        #expect(parse(String(repeating: "x", count: 65)) == .refused(.tooLong))
        #expect(SystemNotice.parse(Array("update-done".utf8).span, truncated: true) == .refused(.tooLong))
    }

    @Test("a notice is read once: the file is removed, the next look finds none")
    func takenOnce() {
        let dir = makeScratchDirectory("notice")
        defer { removeTree(dir) }
        let file = NoticeFile(path: dir + "/notice")
        #expect(file.take() == .none, "no file: nothing")
        put(dir + "/notice", "update-failed\n")
        #expect(file.take() == .notice(.updateFailed))
        #expect(access(dir + "/notice", F_OK) != 0, "removed")
        #expect(file.take() == .none)
    }

    @Test("a file that is not a notice is refused with its reason and removed, so it never plays nor comes back")
    func refusedAndRemoved() {
        let dir = makeScratchDirectory("notice")
        defer { removeTree(dir) }
        let file = NoticeFile(path: dir + "/notice")
        put(dir + "/notice", "reboot now\n")
        #expect(file.take() == .refused("unknown"))
        #expect(access(dir + "/notice", F_OK) != 0)
        put(dir + "/notice", String(repeating: "update-done\n", count: 100))
        #expect(file.take() == .refused("too-long"))
        #expect(access(dir + "/notice", F_OK) != 0)
    }

    @Test("a FIFO or a symbolic link put there is refused without waiting or following, and removed; a link's target is untouched")
    func notAFile() {
        let dir = makeScratchDirectory("notice")
        defer { removeTree(dir) }
        let file = NoticeFile(path: dir + "/notice")
        #expect(mkfifo(dir + "/notice", 0o600) == 0)
        #expect(file.take() == .refused("not-a-file"), "a FIFO with no writer is not waited on")
        #expect(access(dir + "/notice", F_OK) != 0 && access(dir + "/notice.taken", F_OK) != 0)
        put(dir + "/target", "update-done\n")
        #expect(symlink(dir + "/target", dir + "/notice") == 0)
        #expect(file.take() == .refused("not-a-file"))
        #expect(access(dir + "/notice", F_OK) != 0)
        #expect((try? ProcessControl.readFile(dir + "/target")) == "update-done\n", "its target is untouched")
    }

    @Test("a notice taken but not removed (the firmware stopped in between) is taken at the next look; a newer notice wins over it")
    func leftoverTaken() {
        let dir = makeScratchDirectory("notice")
        defer { removeTree(dir) }
        let file = NoticeFile(path: dir + "/notice")
        put(dir + "/notice.taken", "update-failed\n")
        #expect(file.take() == .notice(.updateFailed))
        #expect(access(dir + "/notice.taken", F_OK) != 0)
        put(dir + "/notice.taken", "update-failed\n")
        put(dir + "/notice", "update-done\n")
        #expect(file.take() == .notice(.updateDone))
        #expect(file.take() == .none)
    }
}
