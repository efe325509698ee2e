// The Pi binary's entry point as a process: a scripted phone connects to its
// UNIX link, brings ANCS up, rings an incoming call, the console presses
// buttons, the call is removed, the phone hangs up, SIGTERM stops it. The
// events stream must be exactly the expected one.
//
// By default this runs the host build of the `wristlink-pi` product. With
// WRISTLINK_PI_COMMAND set (`make pi-test` sets it) it runs that command
// instead: the aarch64 Embedded Swift binary under qemu-aarch64, or the same
// Embedded build for x86_64, so every build of the one source tree is held
// to the same events. It prints the process's peak RSS (VmHWM; under qemu
// that is qemu's, emulator included).

import Bounded
import Glibc
import PlatformLinux
import Testing

@Suite("wristlink-pi as a process against a scripted phone")
struct PiBinaryTests {
    static let expected = [
        #"{"kind":"session","state":"advertising"}"#,
        #"{"kind":"session","state":"connected"}"#,
        #"{"kind":"mtu","mtu":185}"#,
        #"{"kind":"session","state":"discovered"}"#,
        #"{"kind":"session","state":"subscribed"}"#,
        #"{"kind":"notification","event":"added","uid":7,"category":"IncomingCall","flags":["Important","PositiveAction"],"count":1}"#,
        #"{"kind":"error","what":"press","detail":"already-pressed"}"#,
        #"{"kind":"error","what":"press","detail":"unknown-button"}"#,
        #"{"kind":"notification","event":"removed","uid":7,"category":"IncomingCall","flags":["Important","PositiveAction"],"count":0}"#,
        #"{"kind":"session","state":"ended","reason":"peer-closed"}"#,
        #"{"kind":"session","state":"stopping","reason":"SIGTERM"}"#,
    ]

    /// The command to run: WRISTLINK_PI_COMMAND (words separated by spaces,
    /// the first an absolute or relative path), else the host product
    /// beside this test binary.
    static var command: [String] {
        if let words = ProcessControl.environment("WRISTLINK_PI_COMMAND") {
            return words.split(separator: " ").map(String.init)
        }
        let me = ChildProcess.selfPath
        let directory = me.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return [directory + "/wristlink-pi"]
    }

    @Test("incoming call: the events stream, then a clean stop on SIGTERM")
    func incomingCall() throws {
        let socketPath = "/tmp/wristlink-pi-test-\(ProcessControl.processID).sock"
        defer { unlink(socketPath) }
        let command = Self.command
        var child = try ChildProcess.spawn(
            command + ["run", "--link", "unix:" + socketPath, "--gpio", "sim", "--events", "-", "--log-level", "warning"],
            pipeStdin: true, pipeStdout: true)
        var events = EventLines(fd: child.stdout)

        guard ProcessControl.waitForPath(socketPath, timeoutMs: 20_000) else {
            Issue.record("the firmware never listened on \(socketPath)")
            return
        }
        var phone = ScriptedPhone(connectingTo: socketPath)
        guard phone.isConnected else {
            Issue.record("could not connect to the firmware")
            return
        }
        guard phone.run(Script.bringUp), events.waitFor(#""state":"subscribed""#) else { return }
        phone.sends("1B 0D 00 00 0A 01 01 07 00 00 00")
        guard events.waitFor(#""event":"added""#) else { return }
        child.send(line: "press accept 5000\npress accept 10\npress nobody 1")
        guard events.waitFor(#""detail":"unknown-button""#) else { return }
        phone.sends("1B 0D 00 02 0A 01 00 07 00 00 00")
        guard events.waitFor(#""event":"removed""#) else { return }
        phone.hangUp()
        guard events.waitFor(#""state":"ended""#) else { return }

        if let peak = Self.peakRSSkB(child.pid) {
            print("wristlink-pi: \(command.joined(separator: " ")): peak RSS \(peak) kB")
        }
        child.signal(SIGTERM)
        let status = child.wait(timeoutMs: 20_000)
        events.readToEnd()
        #expect(status == 0)
        let got = events.withoutTime
        let ordered = events.timesAreOrdered
        #expect(got == Self.expected)
        #expect(ordered, "t_ms must not go backwards: \(events.lines)")
    }

    static func peakRSSkB(_ pid: pid_t) -> Int? {
        guard let status = try? ProcessControl.readFile("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}

/// The phone's end of the SOCK_SEQPACKET link, blocking with timeouts.
struct ScriptedPhone: ~Copyable {
    private var fd: Int32

    init(connectingTo path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let fd = self.fd
        let rc = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if rc != 0 {
            close(fd)
            self.fd = -1
        }
    }

    var isConnected: Bool { fd >= 0 }

    deinit { if fd >= 0 { close(fd) } }

    func sends(_ text: String) {
        let bytes = hex(text)
        let n = bytes.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        precondition(n == bytes.count, "phone send failed")
    }

    /// The next PDU from the firmware (hex), nil after `timeoutMs`.
    func received(timeoutMs: Int32 = 20_000) -> String? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeoutMs) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 600)
        let n = buffer.withUnsafeMutableBufferPointer { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? toHex(Array(buffer[0..<n])) : "EOF"
    }

    /// Plays `script`; false (and an issue recorded) at the first mismatch.
    func run(_ script: [Step]) -> Bool {
        for (i, step) in script.enumerated() {
            switch step {
            case .phone(let text):
                sends(text)
            case .firmware(let expected):
                let got = received()
                #expect(got == expected, "step \(i)")
                if got != expected { return false }
            }
        }
        return true
    }

    mutating func hangUp() {
        close(fd)
        fd = -1
    }
}

/// The child's events stream, read line by line as it comes.
struct EventLines: ~Copyable {
    private var reader: CommandReader
    private var line = ByteBuffer(capacity: 4096)
    private(set) var lines: [String] = []

    init(fd: Int32) { reader = CommandReader(fd: fd, maxLineBytes: 4096) }

    /// Reads until a line containing `fragment` arrives (true), or 20 s pass.
    mutating func waitFor(_ fragment: String) -> Bool {
        let start = Sys.monotonicMs()
        var checked = 0
        while Sys.monotonicMs() - start < 20_000 {
            for i in checked..<lines.count where lines[i].contains(fragment) { return true }
            checked = lines.count
            if !readAvailable(waitMs: 100) { break }
        }
        for i in checked..<lines.count where lines[i].contains(fragment) { return true }
        Issue.record("no event with \(fragment); got \(lines)")
        return false
    }

    mutating func readToEnd() {
        let start = Sys.monotonicMs()
        while Sys.monotonicMs() - start < 20_000, readAvailable(waitMs: 100) {}
    }

    /// Takes the complete lines available within `waitMs`; false at end of input.
    private mutating func readAvailable(waitMs: Int32) -> Bool {
        while let result = reader.next(into: &line) {
            switch result {
            case .command: lines.append(String(decoding: line.toArray(), as: UTF8.self))
            case .tooLong: lines.append("(too long)")
            case .endOfInput: return false
            }
        }
        var p = pollfd(fd: reader.fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, waitMs)
        return true
    }

    /// The lines with their leading `"t_ms":N,` removed.
    var withoutTime: [String] {
        lines.map { line in
            guard line.hasPrefix(#"{"t_ms":"#), let comma = line.firstIndex(of: ",") else { return line }
            return "{" + line[line.index(after: comma)...]
        }
    }

    var timesAreOrdered: Bool {
        var last = -1
        for line in lines {
            guard let t = Int(line.dropFirst(8).prefix { $0.isNumber }), t >= last else { return false }
            last = t
        }
        return true
    }
}
