// SPDX-License-Identifier: Apache-2.0
// The product as a user runs it: `wristlink run` and `wristlink phone` as
// two processes on a UNIX link, the firmware's events stream read as JSON
// lines, the button pressed on its console, the trace decoded by tshark.

import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

/// The `wristlink` binary next to this test bundle.
let wristlink: String = {
    var parts = ChildProcess.selfPath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast()
    return parts.joined(separator: "/") + "/wristlink"
}()

/// Reads a child's stdout as lines, waiting up to a deadline for a match.
struct LineWatcher: ~Copyable {
    var reader: CommandReader
    var lines: [String] = []
    var line = ByteBuffer(capacity: 16_384)

    init(fd: Int32) { reader = CommandReader(fd: fd, maxLineBytes: 8192) }

    mutating func drain() {
        while let result = reader.next(into: &line) {
            if case .command = result { lines.append(String(decoding: line.toArray(), as: UTF8.self)) }
        }
    }

    /// Waits until a line containing every fragment has appeared.
    mutating func waitFor(_ fragments: [String], timeoutMs: Int64 = 10_000) -> Bool {
        let start = Sys.monotonicMs()
        while Sys.monotonicMs() - start < timeoutMs {
            drain()
            if lines.contains(where: { l in fragments.allSatisfy { l.contains($0) } }) { return true }
            ProcessControl.sleep(ms: 10)
        }
        return false
    }
}

func writeFile(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    _ = Array(text.utf8).withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func readText(_ path: String) -> String { (try? ProcessControl.readFile(path)) ?? "" }

@Suite("End to end: wristlink run + wristlink phone", .serialized)
struct EndToEndTests {
    @Test("an incoming call rings; a press answers it with 02 UID 00; the phone removes it and the lines go off")
    func incomingCallAnswered() throws {
        let dir = makeScratchDirectory("e2e")
        defer { removeTree(dir) }
        try answerIncomingCall(in: dir)
    }

    @Test("the answer's Control Point write (02 UID 00) is in the firmware's trace as tshark decodes it",
          .enabled(if: tsharkPresent, "tshark is not installed (make test installs it)"))
    func answerInTrace() throws {
        let dir = makeScratchDirectory("e2e")
        defer { removeTree(dir) }
        try answerIncomingCall(in: dir)
        // The phone's Control Point: 0x0015.
        let (status, rows) = capture("tshark -r \(dir)/trace.btsnoop -Y 'btatt.opcode == 0x12 && btatt.handle == 0x0015' -T fields -e btatt.value")
        #expect(status == 0)
        #expect(rows.contains("020700000000"), "trace: \(rows)")
    }

    /// `wristlink run` (tracing to `dir`/trace.btsnoop) and `wristlink phone`
    /// through an incoming call that a press answers, checking the events
    /// stream on the way.
    func answerIncomingCall(in dir: String) throws {
        let socket = dir + "/phone.sock"
        writeFile(dir + "/call.scn", """
            wait-subscribed 10000
            call "Bob" uid=7
            wait-action 7 10000
            sleep 200
            quit
            """)
        var firmware = try ChildProcess.spawn(
            [wristlink, "run", "--link", "unix:" + socket, "--gpio", "sim", "--board", repositoryRoot + "/board/sim/board.conf",
             "--policy", repositoryRoot + "/board/policy.conf", "--events", "-", "--trace", dir + "/trace.btsnoop"],
            pipeStdin: true, pipeStdout: true, stderrFD: ProcessControl.openForAppend(dir + "/firmware.log"))
        var events = LineWatcher(fd: firmware.stdout)
        #expect(events.waitFor(["\"kind\":\"session\"", "\"state\":\"advertising\""]) == true)
        var phone = try ChildProcess.spawn(
            [wristlink, "phone", "--connect", "unix:" + socket, "--scenario", dir + "/call.scn"], pipeStdin: false, pipeStdout: true,
            stderrFD: ProcessControl.openForAppend(dir + "/phone.log"))
        #expect(events.waitFor(["\"state\":\"subscribed\""]) == true)
        #expect(events.waitFor(["\"kind\":\"notification\"", "\"uid\":7", "\"category\":\"IncomingCall\""]) == true)
        #expect(events.waitFor(["\"kind\":\"gpio\"", "\"line\":\"led-call\"", "\"value\":1"]) == true)
        #expect(events.waitFor(["\"kind\":\"gpio\"", "\"line\":\"vibration\"", "\"value\":1"]) == true)
        firmware.send(line: "press accept 150")
        #expect(events.waitFor(["\"kind\":\"button\"", "\"button\":\"accept\"", "\"gesture\":\"short\""]) == true)
        #expect(events.waitFor(["\"kind\":\"action\"", "\"uid\":7", "\"action\":\"positive\"", "\"result\":\"sent\""]) == true)
        #expect(events.waitFor(["\"event\":\"removed\"", "\"uid\":7"]) == true)
        #expect(phone.wait(timeoutMs: 10_000) == 0, "the phone's scenario finished")
        events.drain()
        // After the removal, both ring lines are off.
        let afterRemoval = events.lines.drop { !$0.contains("\"event\":\"removed\"") }
        #expect(afterRemoval.contains { $0.contains("\"line\":\"led-call\"") && $0.contains("\"value\":0") })
        #expect(afterRemoval.contains { $0.contains("\"line\":\"vibration\"") && $0.contains("\"value\":0") })
        firmware.signal(SIGTERM)
        #expect(firmware.wait(timeoutMs: 5_000) == 0, "SIGTERM: clean exit")
        events.drain()
        #expect(events.lines.last?.contains("\"state\":\"stopping\"") == true)
        // Every line is an object with t_ms and kind, the first the hello.
        for line in events.lines { #expect(line.hasPrefix("{\"t_ms\":") && line.contains("\"kind\":")) }
        #expect(events.lines.first?.hasPrefix("{\"t_ms\":0,\"kind\":\"hello\",\"version\":\"") == true, "\(events.lines.first ?? "")")
        #expect(events.lines.first?.hasSuffix(",\"events_format\":1}") == true)
    }

    @Test("titles and messages never reach the log at the default level, though the events stream has them")
    func contentsStayOutOfLogs() throws {
        let dir = makeScratchDirectory("e2e")
        defer { removeTree(dir) }
        let socket = dir + "/phone.sock"
        // A title rule makes the firmware fetch titles.
        writeFile(dir + "/policy.conf", readText(repositoryRoot + "/board/policy.conf") + "\nrule title=\"Mom\" led-call=blink\n")
        writeFile(dir + "/secret.scn", """
            wait-subscribed 10000
            sleep 3500
            message "Zanzibar-Title-4711" "Quokka-Message-0815" uid=3
            sleep 1000
            quit
            """)
        var firmware = try ChildProcess.spawn(
            [wristlink, "run", "--link", "unix:" + socket, "--gpio", "sim", "--board", repositoryRoot + "/board/sim/board.conf",
             "--policy", dir + "/policy.conf", "--events", dir + "/events.jsonl"],
            pipeStdin: true, pipeStdout: false, stderrFD: ProcessControl.openForAppend(dir + "/firmware.log"))
        #expect(ProcessControl.waitForPath(socket, timeoutMs: 5_000))
        var phone = try ChildProcess.spawn(
            [wristlink, "phone", "--connect", "unix:" + socket, "--scenario", dir + "/secret.scn"], pipeStdin: false, pipeStdout: false,
            stderrFD: ProcessControl.openForAppend(dir + "/phone.log"))
        #expect(phone.wait(timeoutMs: 15_000) == 0)
        firmware.signal(SIGTERM)
        #expect(firmware.wait(timeoutMs: 5_000) == 0)
        let events = readText(dir + "/events.jsonl")
        let log = readText(dir + "/firmware.log")
        #expect(events.contains("Zanzibar-Title-4711"), "the title was fetched (so the check below means something)")
        #expect(!log.contains("Zanzibar"), "title in the log")
        #expect(!log.contains("Quokka"), "message in the log")
        #expect(log.contains("session subscribed"), "the log is not empty")
    }

    @Test("bad flags and bad files: one clear line and the documented exit code")
    func cliErrors() throws {
        func run(_ args: [String]) throws -> (Int32, String) {
            let dir = makeScratchDirectory("e2e")
            defer { removeTree(dir) }
            var child = try ChildProcess.spawn([wristlink] + args, pipeStdin: false, pipeStdout: false, stderrFD: ProcessControl.openForAppend(dir + "/err"))
            let status = child.wait(timeoutMs: 5_000)
            return (status, readText(dir + "/err"))
        }
        let (usage, usageText) = try run(["run", "--link", "tcp:1"])
        #expect(usage == 2)
        #expect(usageText.contains("--link must be bluez, bluez:hciN or unix:PATH"))
        let (window, windowText) = try run(["run", "--gpio", "sim", "--replay-window-ms", "99999"])
        #expect(window == 2)
        #expect(windowText.contains("--replay-window-ms must be a number of milliseconds from 0 to 30000"))
        let (keepAlive, keepAliveText) = try run(["run", "--gpio", "sim", "--keep-alive-ms", "5"])
        #expect(keepAlive == 2)
        #expect(keepAliveText.contains("--keep-alive-ms must be a number of milliseconds from 10000 to 3600000"))
        let dir = makeScratchDirectory("e2e")
        defer { removeTree(dir) }
        writeFile(dir + "/bad.conf", "name x\nchip sim\noutput a\nbutton b\nwobble 3\n")
        let (config, configText) = try run(["run", "--link", "unix:\(dir)/s", "--gpio", "sim", "--board", dir + "/bad.conf"])
        #expect(config == 6)
        #expect(configText.contains("bad.conf:5:"))
        let (unknown, _) = try run(["frobnicate"])
        #expect(unknown == 2)
        let (help, _) = try run(["run", "--help"])
        #expect(help == 0)
    }
}
