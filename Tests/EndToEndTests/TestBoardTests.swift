// SPDX-License-Identifier: Apache-2.0
// `wristlink test-board` and `wristlink doctor` as a person runs them: the
// built binary, the simulated board's buttons pressed on its stdin after it
// asks for them, its output read line by line.

import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

@Suite("wristlink test-board and doctor, run as processes", .serialized)
struct TestBoardTests {
    static let simBoard = repositoryRoot + "/board/sim/board.conf"

    func start(_ arguments: [String], log: String) throws -> ChildProcess {
        try ChildProcess.spawn([wristlink] + arguments, pipeStdin: true, pipeStdout: true, stderrFD: ProcessControl.openForAppend(log))
    }

    @Test("every output lit in turn and both buttons pressed when asked: each seen pressed and released, exit 0")
    func allButtonsSeen() throws {
        let dir = makeScratchDirectory("testboard")
        defer { removeTree(dir) }
        var child = try start(
            ["test-board", "--gpio", "sim", "--board", Self.simBoard, "--on-ms", "50", "--timeout-ms", "5000"], log: dir + "/err.log")
        var out = LineWatcher(fd: child.stdout)
        for button in ["accept", "reject"] {
            #expect(out.waitFor(["press \(button) now"]) == true)
            child.send(line: "press \(button) 150")
            #expect(out.waitFor(["\(button): pressed and released (held "]) == true)
        }
        #expect(child.wait(timeoutMs: 5_000) == 0)
        out.drain()
        for output in ["led-notify", "led-call", "vibration"] { #expect(out.lines.contains("\(output) on … off"), "\(out.lines)") }
        #expect(out.lines.last == "test-board: 3 outputs shown, 2 of 2 buttons seen; every output off")
    }

    @Test("a button never pressed within --timeout-ms: its check-the-wiring line and exit 1")
    func buttonNeverPressed() throws {
        let dir = makeScratchDirectory("testboard")
        defer { removeTree(dir) }
        var child = try start(
            ["test-board", "--gpio", "sim", "--board", Self.simBoard, "--on-ms", "50", "--timeout-ms", "400"], log: dir + "/err.log")
        var out = LineWatcher(fd: child.stdout)
        #expect(out.waitFor(["press accept now"]) == true)
        child.send(line: "press accept 100")
        #expect(out.waitFor(["press reject now"]) == true)
        #expect(out.waitFor(["reject: no change seen — check the wiring or the pull-up"]) == true)
        #expect(child.wait(timeoutMs: 5_000) == 1)
        out.drain()
        #expect(out.lines.contains { $0.hasPrefix("accept: pressed and released") })
        #expect(out.lines.last == "test-board: 3 outputs shown, 1 of 2 buttons seen; every output off")
    }

    @Test("the other button pressed instead is named: are the lines swapped?")
    func swappedButtons() throws {
        let dir = makeScratchDirectory("testboard")
        defer { removeTree(dir) }
        var child = try start(
            ["test-board", "--gpio", "sim", "--board", Self.simBoard, "--on-ms", "50", "--timeout-ms", "600"], log: dir + "/err.log")
        var out = LineWatcher(fd: child.stdout)
        #expect(out.waitFor(["press accept now"]) == true)
        child.send(line: "press reject 100")
        #expect(out.waitFor([
            "accept: no change seen — check the wiring or the pull-up (reject changed instead: are the lines swapped in the board file?)"
        ]) == true)
        child.closeStdin()
        #expect(child.wait(timeoutMs: 5_000) == 1)
    }

    @Test("SIGINT while an output is lit: every output off, exit 1")
    func interrupted() throws {
        let dir = makeScratchDirectory("testboard")
        defer { removeTree(dir) }
        var child = try start(["test-board", "--gpio", "sim", "--board", Self.simBoard, "--on-ms", "5000"], log: dir + "/err.log")
        var out = LineWatcher(fd: child.stdout)
        #expect(out.waitFor(["test-board: sim, 3 outputs, 2 buttons"]) == true)
        ProcessControl.sleep(ms: 200)
        child.signal(SIGINT)
        #expect(child.wait(timeoutMs: 5_000) == 1)
        out.drain()
        #expect(out.lines.contains("led-notify on … off"))
        #expect(out.lines.last == "test-board: interrupted; every output off")
    }

    @Test("bad flags are usage errors (exit 2)")
    func usage() throws {
        var child = try ChildProcess.spawn([wristlink, "test-board", "--on-ms", "5"], pipeStdin: false, pipeStdout: true,
                                           stderrFD: ProcessControl.openForAppend("/dev/null"))
        #expect(child.wait(timeoutMs: 5_000) == 2)
        var doctor = try ChildProcess.spawn([wristlink, "doctor", "--gpio", "maybe"], pipeStdin: false, pipeStdout: true,
                                            stderrFD: ProcessControl.openForAppend("/dev/null"))
        #expect(doctor.wait(timeoutMs: 5_000) == 2)
    }

    @Test("doctor on this machine with the simulated board: one tagged line per check, the lines skipped, the files parsed")
    func doctorRuns() throws {
        let dir = makeScratchDirectory("doctor")
        defer { removeTree(dir) }
        var child = try ChildProcess.spawn(
            [wristlink, "doctor", "--gpio", "sim", "--board", Self.simBoard, "--policy", repositoryRoot + "/board/policy.conf", "--state-dir", dir],
            pipeStdin: false, pipeStdout: true, stderrFD: ProcessControl.openForAppend(dir + "/err.log"))
        var out = LineWatcher(fd: child.stdout)
        #expect(out.waitFor(["libgpiod: libgpiod "]) == true)
        let status = child.wait(timeoutMs: 15_000)
        out.drain()
        #expect(status == 0 || status == 1)
        #expect(out.lines.count >= 13)
        // The report opens with the version line, as `wristlink version` prints it.
        #expect(out.lines.first.map { $0.hasPrefix("wristlink ") && $0.hasSuffix(", licence Apache-2.0") } == true, "\(out.lines.first ?? "")")
        for line in out.lines.dropFirst() {
            #expect(["ok   ", "FAIL ", "skip ", "note "].contains { line.hasPrefix($0) }, "\(line)")
        }
        #expect(out.lines.contains("ok   board \(Self.simBoard): sim, 3 outputs, 2 buttons"))
        #expect(out.lines.contains("ok   policy \(repositoryRoot)/board/policy.conf: parses"))
        #expect(out.lines.contains("skip lines: simulated board (--gpio sim): no GPIO lines to look at"))
        #expect(out.lines.contains("ok   state directory \(dir): mode 0700, owner root") == (geteuid() == 0))
        #expect(out.lines.contains("ok   bonds \(dir)/bonds: none yet: the wearable is in pairing mode when it starts"))
        #expect(status == (out.lines.contains { $0.hasPrefix("FAIL ") } ? 1 : 0))
    }

    @Test("doctor names every error of the board file, one FAIL line each, and reads a bond file saved with a BOM and CRLF")
    func doctorEveryError() throws {
        let dir = makeScratchDirectory("doctor")
        defer { removeTree(dir) }
        _ = chmod(dir, 0o700)
        writeFile(dir + "/board.conf", "name x\ncolour red\noutput a active-low=maybe\nbutton b\n")
        writeFile(
            dir + "/bonds",
            "\u{FEFF}wristlink-bonds 1\r\nirk 001b63aabbcc 01 0f0e0d0c0b0a09080706050403020100\r\n")
        var child = try ChildProcess.spawn(
            [wristlink, "doctor", "--gpio", "sim", "--board", dir + "/board.conf", "--state-dir", dir],
            pipeStdin: false, pipeStdout: true, stderrFD: ProcessControl.openForAppend(dir + "/err.log"))
        var out = LineWatcher(fd: child.stdout)
        #expect(out.waitFor(["libgpiod: libgpiod "]) == true)
        _ = child.wait(timeoutMs: 15_000)
        out.drain()
        let board = out.lines.filter { $0.hasPrefix("FAIL board: ") }
        #expect(board.count == 2, "\(out.lines)")
        #expect(board.first?.hasPrefix("FAIL board: \(dir)/board.conf:2: unknown setting 'colour'") == true, "\(board)")
        #expect(board.last?.hasPrefix("FAIL board: \(dir)/board.conf:3: active-low takes yes or no, not 'maybe'") == true, "\(board)")
        #expect(out.lines.contains { $0.hasPrefix("ok   bonds \(dir)/bonds: 1 bonded phone,") }, "\(out.lines)")
    }
}
