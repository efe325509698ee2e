// SPDX-License-Identifier: Apache-2.0
// `wristlink run --fallback-board/--fallback-policy`: the SD-card image's
// settings on the boot partition (docs/sd-image.md). A wearer's file with an
// error is named with its line, the shipped defaults run instead, and the
// defaults' settings-error feedback (led-notify flickering, board/policy.conf)
// says so on the wrist; a file that is simply not there falls back quietly.

import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

@Suite("Settings with fallbacks: a bad file on the card, the defaults instead", .serialized)
struct SettingsFallbackTests {
    struct Run {
        var status: Int32
        var log: String
        var events: [String]
        /// led-notify's changes in the events stream.
        var notifyChanges: Int { events.filter { $0.contains("\"line\":\"led-notify\"") }.count }
    }

    /// Runs the firmware on a UNIX link with simulated lines for `ms`, then
    /// stops it with SIGTERM.
    func run(_ args: [String], in dir: String, ms: Int64 = 1_500) throws -> Run {
        var child = try ChildProcess.spawn(
            [wristlink, "run", "--link", "unix:\(dir)/s", "--gpio", "sim", "--events", dir + "/events"] + args,
            pipeStdin: true, pipeStdout: false, stderrFD: ProcessControl.openForAppend(dir + "/err"))
        let start = Sys.monotonicMs()
        while child.poll() == nil, Sys.monotonicMs() - start < ms { ProcessControl.sleep(ms: 10) }
        if child.poll() == nil { child.signal(SIGTERM) }
        let status = child.wait(timeoutMs: 5_000)
        let events = readText(dir + "/events").split(separator: "\n").map(String.init)
        return Run(status: status, log: readText(dir + "/err"), events: events)
    }

    let simBoard = repositoryRoot + "/board/sim/board.conf"
    let defaults = repositoryRoot + "/board/policy.conf"

    @Test("a policy with an error: its file and line are logged, the defaults run, led-notify flickers the settings error")
    func badPolicyFallsBack() throws {
        let dir = makeScratchDirectory("fallback")
        defer { removeTree(dir) }
        writeFile(dir + "/policy.conf", readText(defaults) + "\nalert News led-notfy=flicker\n")
        let r = try run(["--board", simBoard, "--policy", dir + "/policy.conf", "--fallback-policy", defaults], in: dir)
        #expect(r.status == 0, "stopped by SIGTERM: \(r.log)")
        #expect(r.log.contains("policy.conf:"), "the file and line are named: \(r.log)")
        #expect(r.log.contains("'led-notfy'"))
        #expect(r.log.contains("using the defaults in \(defaults)"))
        // settings-error-blink: on 80 off 80, five times per 2 s: ten changes in the first 0.8 s.
        #expect(r.notifyChanges >= 10, "\(r.events.prefix(12))")
    }

    @Test("a board and policy saved by Windows Notepad (UTF-8 with BOM, CRLF) are the wearer's settings: no error, no fallback, no settings-error feedback")
    func notepadFilesAreUsed() throws {
        let dir = makeScratchDirectory("fallback")
        defer { removeTree(dir) }
        func notepad(_ text: String) -> String { "\u{FEFF}" + text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n") }
        writeFile(dir + "/board.conf", notepad(readText(simBoard)))
        writeFile(dir + "/policy.conf", notepad(readText(defaults)))
        let r = try run(
            ["--board", dir + "/board.conf", "--fallback-board", simBoard, "--policy", dir + "/policy.conf", "--fallback-policy", defaults], in: dir)
        #expect(r.status == 0, "\(r.log)")
        #expect(!r.log.contains("error:") && !r.log.contains("using the defaults"), "\(r.log)")
        #expect(r.notifyChanges == 0, "\(r.events)")
    }

    @Test("a policy with several errors: every one is logged with its file and line, then the defaults run")
    func everyErrorLogged() throws {
        let dir = makeScratchDirectory("fallback")
        defer { removeTree(dir) }
        writeFile(dir + "/policy.conf", "pattern blink on 100\nalert News led-notfy=blink\n\nphone-lost-ms soon\nwobble 2\n")
        let r = try run(["--board", simBoard, "--policy", dir + "/policy.conf", "--fallback-policy", defaults], in: dir)
        #expect(r.status == 0, "\(r.log)")
        for line in [2, 4, 5] { #expect(r.log.contains("policy.conf:\(line): "), "line \(line): \(r.log)") }
        #expect(r.log.contains("using the defaults in \(defaults)"))
    }

    @Test("a board with an error: the fallback board and the wearer's policy if it fits it, with the settings error")
    func badBoardFallsBack() throws {
        let dir = makeScratchDirectory("fallback")
        defer { removeTree(dir) }
        writeFile(dir + "/board.conf", readText(simBoard) + "\nwobble 3\n")
        let r = try run(
            ["--board", dir + "/board.conf", "--fallback-board", simBoard, "--policy", defaults, "--fallback-policy", defaults], in: dir)
        #expect(r.status == 0, "\(r.log)")
        #expect(r.log.contains("board.conf:") && r.log.contains("wobble"), "\(r.log)")
        #expect(r.log.contains("using the defaults in \(simBoard)"))
        #expect(r.notifyChanges >= 10)
    }

    @Test("a settings file that is not there: its fallback with a notice, and no error feedback")
    func missingFileFallsBackQuietly() throws {
        let dir = makeScratchDirectory("fallback")
        defer { removeTree(dir) }
        let r = try run(["--board", simBoard, "--policy", dir + "/none.conf", "--fallback-policy", defaults], in: dir)
        #expect(r.status == 0, "\(r.log)")
        #expect(r.log.contains("notice:") && r.log.contains("none.conf"), "\(r.log)")
        #expect(!r.log.contains("error:"), "\(r.log)")
        #expect(r.notifyChanges == 0, "\(r.events)")
    }

    @Test("without fallbacks the same bad policy stops the firmware with exit code 6 (LSB: not configured), as before")
    func noFallbackStillFails() throws {
        let dir = makeScratchDirectory("fallback")
        defer { removeTree(dir) }
        writeFile(dir + "/policy.conf", "frobnicate 1\n")
        let r = try run(["--board", simBoard, "--policy", dir + "/policy.conf"], in: dir)
        #expect(r.status == 6)
        #expect(r.log.contains("policy.conf:1:"))
    }

    @Test("a fallback that fails too: exit code 6 naming both files")
    func brokenFallbackFails() throws {
        let dir = makeScratchDirectory("fallback")
        defer { removeTree(dir) }
        writeFile(dir + "/policy.conf", "frobnicate 1\n")
        writeFile(dir + "/defaults.conf", "wobble 2\n")
        let r = try run(["--board", simBoard, "--policy", dir + "/policy.conf", "--fallback-policy", dir + "/defaults.conf"], in: dir)
        #expect(r.status == 6)
        #expect(r.log.contains("policy.conf:1:") && r.log.contains("defaults.conf:1:"), "\(r.log)")
    }
}
