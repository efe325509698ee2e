// SPDX-License-Identifier: Apache-2.0
// `wristlink phone`: the simulated iPhone (PhoneSim) on a UNIX SOCK_SEQPACKET
// link to `wristlink run --link unix:PATH`. A scenario file runs first; lines
// typed on stdin are scenario commands too (that is how `wristlink sim`
// drives it). Every phone event is printed on stdout, one line each.

import App
import ATT
import Bounded
import PhoneSim
import PlatformLinux

public enum PhoneCommand {
    public static let usage = """
        USAGE: wristlink phone --connect unix:PATH [--scenario FILE] [--no-security] [--mtu N] [--log-level LEVEL]

          A simulated iPhone (ANCS Notification Provider) for `wristlink run --link unix:PATH`:
          a GATT server with ANCS, Generic Attribute and GAP; answers 0x05 until the link is
          secured; splits Data Source responses at the MTU; replays existing notifications as
          PreExisting; performs actions by removing the notification; 0xA2 for unknown UIDs.
          --scenario FILE  commands to play (docs/scenarios.md); stdin takes the same commands
          --no-security    never answer Insufficient Authentication
          --mtu N          the largest ATT MTU the phone agrees to, 23-517 (default 185)
        Exit: 0 after `quit` or SIGINT/SIGTERM, 1 when a scenario step failed, 6 bad scenario, 5 cannot connect.
        """

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        let a: Arguments
        do { a = try Arguments(args, valued: ["--connect", "--scenario", "--mtu", "--log-level"], boolean: ["--no-security"]) } catch {
            return CLI.fail(error, command: "phone")
        }
        guard let target = a.value("--connect"), target.utf8HasPrefix("unix:"), target.utf8.count > 5 else {
            return CLI.fail(UsageError("--connect unix:PATH is required"), command: "phone")
        }
        if let level = a.value("--log-level") {
            guard let l = LogLevel(name: level) else { return CLI.fail(UsageError("bad --log-level"), command: "phone") }
            Log.level = l
        }
        let path = target.utf8Dropping(first: 5)
        var config = PhoneConfig()
        if a.flag("--no-security") { config.requiresSecurity = false }
        if let text = a.value("--mtu") {
            guard let mtu = Int(text), mtu >= ATTMTU.minimum, mtu <= ATTMTU.maximum else {
                return CLI.fail(UsageError("--mtu takes 23 to 517"), command: "phone")
            }
            config.bearer.maxMTU = mtu
        }
        var phone = PhoneCore(config: config)
        let start = Instant(ms: Sys.monotonicMs())
        if let scenario = a.value("--scenario") {
            let text: String
            do { text = try ProcessControl.readFile(scenario) } catch {
                Log.error("cannot read scenario: \(error)")
                return ExitCode.config
            }
            var bytes = Array(text.utf8)
            do {
                try bytes.withUnsafeMutableBufferPointer { (b) throws(ScenarioError) in
                    try phone.load(script: Span(_unsafeElements: UnsafeBufferPointer(b)), now: start)
                }
            } catch {
                var line = ByteBuffer(capacity: 512)
                error.write(into: &line)
                Log.error("\(scenario): \(String(decoding: line.toArray(), as: UTF8.self))")
                return ExitCode.config
            }
            bytes.removeAll()
        }
        guard var link = connect(path, timeoutMs: 5_000) else {
            Log.error("cannot connect to \(path): is `wristlink run --link unix:\(path)` running?")
            return ExitCode.setup
        }
        return PhoneLoop.run(phone: &phone, link: &link, path: path)
    }

    /// Connects, retrying while the firmware starts.
    static func connect(_ path: String, timeoutMs: Int64) -> UnixLink? {
        let start = Sys.monotonicMs()
        while true {
            if let link = try? UnixLink.connecting(to: path) { return link }
            if Sys.monotonicMs() - start > timeoutMs { return nil }
            ProcessControl.sleep(ms: 50)
        }
    }
}

enum PhoneLoop {
    static func run(phone: inout PhoneCore, link: inout UnixLink, path: String) -> Int32 {
        let signals: Signals
        do { signals = try Signals() } catch {
            Log.error("\(error)")
            return ExitCode.setup
        }
        var console = CommandReader(fd: 0, maxLineBytes: 2048)
        var poll = PollSet()
        var pdu = ByteBuffer(capacity: UnixLink.maxPacketBytes)
        var out = ByteBuffer(capacity: UnixLink.maxPacketBytes)
        var line = ByteBuffer(capacity: 2048)
        var text = ByteBuffer(capacity: 1024)
        var stdout = try! OutputFile(path: "-")
        var failed = false
        while true {
            var now = Instant(ms: Sys.monotonicMs())
            poll.removeAll()
            link.addDescriptors(to: &poll)
            if console.isOpen { poll.add(0, events: ProcessControl.pollIn) }
            poll.add(signals.fd, events: ProcessControl.pollIn)
            _ = try? poll.wait(timeoutMs: PollSet.timeoutMs(until: phone.deadline, now: now))
            now = Instant(ms: Sys.monotonicMs())
            if let signal = signals.next() {
                _ = signal
                return failed ? ExitCode.failure : ExitCode.ok
            }
            for _ in 0..<64 {
                switch link.nextInput(into: &pdu, ready: poll) {
                case .none: break
                case .connected: phone.linkUp(now: now); continue
                case .pdu: phone.receive(pdu, now: now); continue
                case .securityChanged: continue
                case .disconnected(let reason): phone.linkDown(reason: reason, now: now); continue
                }
                break
            }
            while let result = console.next(into: &line) {
                guard case .command = result else { continue }
                do { try phone.command(line.span, now: now) } catch {
                    text.removeAll()
                    error.write(into: &text)
                    Log.warning("phone: \(String(decoding: text.toArray(), as: UTF8.self))")
                }
            }
            if let due = phone.deadline, due <= now { phone.advance(now: now) }
            while phone.popOutgoing(into: &out) { link.send(out) }
            while let action = phone.nextAction() {
                switch action {
                case .connect:
                    if !link.isConnected, let fresh = PhoneCommand.connect(path, timeoutMs: 5_000) { link = fresh }
                case .disconnect(let reason):
                    link.disconnect()
                    phone.linkDown(reason: reason, now: now)
                case .quit:
                    flush(&phone, &text, &stdout)
                    return failed ? ExitCode.failure : ExitCode.ok
                }
            }
            while let event = phone.nextEvent() {
                if case .stepFailed = event { failed = true }
                text.removeAll()
                event.write(into: &text)
                text.append(0x0A)
                stdout.write(text)
            }
        }
    }

    static func flush(_ phone: inout PhoneCore, _ text: inout ByteBuffer, _ stdout: inout OutputFile) {
        while let event = phone.nextEvent() {
            text.removeAll()
            event.write(into: &text)
            text.append(0x0A)
            stdout.write(text)
        }
    }
}
