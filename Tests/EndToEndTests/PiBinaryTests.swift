// SPDX-License-Identifier: Apache-2.0
// Issue 9's check of the Pi binary: `wristlink run --link unix:... --gpio
// sim --events -` of the Pi build against the host's `wristlink phone`
// playing the incoming-call scenario; the button is pressed on its console.
// By default the host build of the Pi entry point (`wristlink-pi`) runs;
// with WRISTLINK_PI_COMMAND (`make pi-test` sets it) that command runs
// instead: the aarch64 Embedded Swift binary under qemu-aarch64. Every build
// of the one source tree is held to the same events.

import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

@Suite("The Pi binary against the simulated phone")
struct PiBinaryTests {
    static var firmware: [String] {
        if let words = ProcessControl.environment("WRISTLINK_PI_COMMAND") {
            return words.split(separator: " ").map(String.init)
        }
        var parts = wristlink.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast()
        return [parts.joined(separator: "/") + "/wristlink-pi"]
    }

    /// In order; other events may come between them (the ring's on/off count
    /// depends on when the press lands).
    static let expected: [[String]] = [
        ["\"kind\":\"session\"", "\"state\":\"advertising\""],
        ["\"kind\":\"session\"", "\"state\":\"connected\""],
        ["\"kind\":\"mtu\"", "\"mtu\":185"],
        ["\"kind\":\"session\"", "\"state\":\"subscribed\""],
        ["\"kind\":\"notification\"", "\"event\":\"added\"", "\"uid\":7", "\"category\":\"IncomingCall\"", "\"flags\":[\"PositiveAction\",\"NegativeAction\"]"],
        ["\"kind\":\"gpio\"", "\"line\":\"led-call\"", "\"value\":1"],
        ["\"kind\":\"button\"", "\"button\":\"accept\"", "\"gesture\":\"short\""],
        ["\"kind\":\"action\"", "\"uid\":7", "\"action\":\"positive\"", "\"result\":\"queued\""],
        ["\"kind\":\"action\"", "\"uid\":7", "\"action\":\"positive\"", "\"result\":\"sent\""],
        ["\"kind\":\"notification\"", "\"event\":\"removed\"", "\"uid\":7"],
        ["\"kind\":\"gpio\"", "\"line\":\"led-call\"", "\"value\":0"],
        ["\"kind\":\"session\"", "\"state\":\"ended\"", "\"reason\":\"peer-closed\""],
        ["\"kind\":\"session\"", "\"state\":\"stopping\"", "\"reason\":\"SIGTERM\""],
    ]

    @Test("incoming call: ring, press, Perform Notification Action, removal, clean stop")
    func incomingCall() throws {
        let dir = makeScratchDirectory("e2e-pi")
        defer { removeTree(dir) }
        let socket = dir + "/phone.sock"
        writeFile(dir + "/call.scn", """
            wait-subscribed 60000
            call "Bob" uid=7
            wait-action 7 60000
            sleep 300
            quit
            """)
        var firmware = try ChildProcess.spawn(
            Self.firmware + ["run", "--link", "unix:" + socket, "--gpio", "sim", "--board", repositoryRoot + "/board/sim/board.conf",
                             "--policy", repositoryRoot + "/board/policy.conf", "--events", "-"],
            pipeStdin: true, pipeStdout: true, stderrFD: ProcessControl.openForAppend(dir + "/firmware.log"))
        var events = LineWatcher(fd: firmware.stdout)
        #expect(events.waitFor(["\"state\":\"advertising\""], timeoutMs: 30_000) == true)
        var phone = try ChildProcess.spawn(
            [wristlink, "phone", "--connect", "unix:" + socket, "--scenario", dir + "/call.scn"], pipeStdin: false, pipeStdout: false,
            stderrFD: ProcessControl.openForAppend(dir + "/phone.log"))
        #expect(events.waitFor(["\"line\":\"led-call\"", "\"value\":1"], timeoutMs: 30_000) == true)
        firmware.send(line: "press accept 150")
        #expect(phone.wait(timeoutMs: 30_000) == 0, "the phone saw the action and quit")
        #expect(events.waitFor(["\"state\":\"ended\""], timeoutMs: 10_000) == true)
        let rss = Self.peakRSSkB(firmware.pid)
        firmware.signal(SIGTERM)
        #expect(firmware.wait(timeoutMs: 10_000) == 0)
        events.drain()
        var next = 0
        for line in events.lines where next < Self.expected.count {
            if Self.expected[next].allSatisfy({ line.contains($0) }) { next += 1 }
        }
        #expect(next == Self.expected.count, "missing from the events: \(next < Self.expected.count ? Self.expected[next].joined() : "")\n\(events.lines.joined(separator: "\n"))")
        if let rss { print("pi-binary: \(Self.firmware.joined(separator: " ")): peak RSS \(rss) kB") }
    }

    /// VmHWM of a running process (under qemu: qemu's, emulator included).
    static func peakRSSkB(_ pid: Int32) -> Int? {
        let status = (try? ProcessControl.readFile("/proc/\(pid)/status")) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}
