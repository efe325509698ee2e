// SPDX-License-Identifier: Apache-2.0
// `wristlink run` and the system's notice (docs/updates.md, "The outcome on
// the wrist"): the file `notice` in the state directory, as the SD-card
// image's trial-end writes it, taken at start and on SIGUSR1, shown once
// on the simulated lines and reported, then removed.

import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

@Suite("The system's notice: taken at start and on SIGUSR1 by the running firmware", .serialized)
struct NoticeEndToEndTests {
    /// Writes the notice as trial-end does: a new file renamed over.
    func leave(_ text: String, in dir: String) {
        writeFile(dir + "/notice.new", text)
        #expect(rename(dir + "/notice.new", dir + "/notice") == 0)
    }

    /// Waits up to `ms` for an events line containing `text`.
    func waitForEvent(_ text: String, in path: String, ms: Int64 = 5_000) -> Bool {
        let start = Sys.monotonicMs()
        while Sys.monotonicMs() - start < ms {
            if readText(path).contains(text) { return true }
            ProcessControl.sleep(ms: 20)
        }
        return false
    }

    func lineChanges(_ name: String, in path: String) -> Int {
        readText(path).split(separator: "\n").filter { $0.contains("\"line\":\"\(name)\"") }.count
    }

    @Test("a notice left before the start plays at start; one left later plays on SIGUSR1; each file is removed once taken")
    func startAndSignal() throws {
        let dir = makeScratchDirectory("notice-e2e")
        defer { removeTree(dir) }
        let events = dir + "/events"
        leave("update-failed\n", in: dir)
        var child = try ChildProcess.spawn(
            [wristlink, "run", "--link", "unix:\(dir)/s", "--gpio", "sim", "--events", events, "--state-dir", dir,
             "--board", repositoryRoot + "/board/sim/board.conf", "--policy", repositoryRoot + "/board/policy.conf"],
            pipeStdin: true, pipeStdout: false, stderrFD: ProcessControl.openForAppend(dir + "/err"))
        defer { if child.poll() == nil { child.signal(SIGKILL); _ = child.wait(timeoutMs: 5_000) } }
        #expect(waitForEvent("\"kind\":\"update\",\"state\":\"failed\"", in: events), "\(readText(dir + "/err"))")
        #expect(access(dir + "/notice", F_OK) != 0, "taken: removed")
        // The shipped update-failed: led-call flickers 2 s (20 changes), the motor the failure triple (6).
        ProcessControl.sleep(ms: 2_300)
        #expect(lineChanges("led-call", in: events) == 20)
        #expect(lineChanges("vibration", in: events) == 6)
        #expect(lineChanges("led-notify", in: events) == 0)

        leave("update-done\n", in: dir)
        ProcessControl.sleep(ms: 300)
        #expect(!readText(events).contains("\"state\":\"done\""), "not looked for until asked")
        child.signal(SIGUSR1)
        #expect(waitForEvent("\"kind\":\"update\",\"state\":\"done\"", in: events), "\(readText(dir + "/err"))")
        #expect(access(dir + "/notice", F_OK) != 0)
        ProcessControl.sleep(ms: 1_700)
        #expect(lineChanges("led-notify", in: events) == 6, "three blinks")

        // A signal with no notice, and a file that is not one: the firmware runs on.
        child.signal(SIGUSR1)
        leave("reboot\n", in: dir)
        child.signal(SIGUSR1)
        #expect(waitForEvent("\"kind\":\"error\",\"what\":\"notice\",\"detail\":\"unknown\"", in: events))
        #expect(child.poll() == nil, "still running")
        child.signal(SIGTERM)
        #expect(child.wait(timeoutMs: 5_000) == 0)
        let log = readText(dir + "/err")
        #expect(log.contains("update failed") && log.contains("update done"), "\(log)")
    }

    @Test("SIGUSR1 with no notice file does not end the firmware")
    func signalWithoutNotice() throws {
        let dir = makeScratchDirectory("notice-e2e")
        defer { removeTree(dir) }
        var child = try ChildProcess.spawn(
            [wristlink, "run", "--link", "unix:\(dir)/s", "--gpio", "sim", "--events", dir + "/events", "--state-dir", dir,
             "--board", repositoryRoot + "/board/sim/board.conf", "--policy", repositoryRoot + "/board/policy.conf"],
            pipeStdin: true, pipeStdout: false, stderrFD: ProcessControl.openForAppend(dir + "/err"))
        // At once (while it starts) and once it runs: held, then taken by the loop.
        child.signal(SIGUSR1)
        ProcessControl.sleep(ms: 500)
        child.signal(SIGUSR1)
        ProcessControl.sleep(ms: 300)
        #expect(child.poll() == nil, "SIGUSR1 does not end it")
        child.signal(SIGTERM)
        #expect(child.wait(timeoutMs: 5_000) == 0)
        #expect(!readText(dir + "/events").contains("\"kind\":\"update\""))
    }
}
