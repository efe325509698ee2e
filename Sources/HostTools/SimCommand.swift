// SPDX-License-Identifier: Apache-2.0
// `wristlink sim`: the whole product in one terminal. It starts the firmware
// (`wristlink run --link unix:... --gpio sim --events -`) and the simulated
// phone (`wristlink phone --connect unix:...`) as child processes, draws the
// board from the firmware's own events stream (LEDs in colour, the motor),
// turns keys into button presses on the firmware's console and into
// notifications on the phone's console. What you see is exactly what a
// script reading --events would see.

import App
import Bounded
import Config
import PlatformLinux

public enum SimCommand {
    public static let usage = """
        USAGE: wristlink sim [--scenario FILE] [--board FILE] [--policy FILE] [--keep-alive-ms MS]
                             [--resubscribe-ms MS]

          Runs the firmware against a simulated iPhone and a simulated board in this terminal.
          Keys:  a  press accept (short)     A  hold accept (long)
                 r  press reject (short)     R  hold reject (long)
                 c  incoming call            m  message            e  email
                 x  the phone removes the newest notification       q  quit
          --scenario FILE  a phone scenario to play (see docs/scenarios.md)
          --board FILE     default board/sim/board.conf
          --policy FILE    default board/policy.conf
          --keep-alive-ms MS  passed to wristlink run (the keep-alive probe; default 15 minutes)
          --resubscribe-ms MS passed to wristlink run (subscribe again after that much Notification
                           Source silence; default 30 minutes)
        Without a terminal (stdin not a TTY) the same keys are read as lines, one per line.
        """

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        let a: Arguments
        do { a = try Arguments(args, valued: ["--scenario", "--board", "--policy", "--keep-alive-ms", "--resubscribe-ms"]) } catch {
            return CLI.fail(error, command: "sim")
        }
        let board = a.value("--board") ?? "board/sim/board.conf"
        let policy = a.value("--policy") ?? "board/policy.conf"
        // Checked here too, so a bad file is reported before anything starts.
        let outputNames: [String]
        switch ConfigFiles.load(ConfigFiles.Paths(board: board, policy: policy)) {
        case .success(let loaded): outputNames = loaded.board.outputs.map { $0.name }
        case .failure(let lines):
            for line in lines { Log.error(line) }
            return ExitCode.config
        }
        let dir = "/tmp/wristlink-sim-\(ProcessControl.processID)"
        ProcessControl.makeDirectory(dir)
        let socket = dir + "/phone.sock"
        let firmwareLog = dir + "/firmware.log"
        let phoneLog = dir + "/phone.log"
        let me = ChildProcess.selfPath

        let firmwareErr = ProcessControl.openForAppend(firmwareLog)
        let phoneErr = ProcessControl.openForAppend(phoneLog)
        var firmware: ChildProcess
        do {
            firmware = try ChildProcess.spawn(
                [me, "run", "--link", "unix:" + socket, "--gpio", "sim", "--board", board, "--policy", policy, "--events", "-"]
                    + (a.value("--keep-alive-ms").map { ["--keep-alive-ms", $0] } ?? [])
                    + (a.value("--resubscribe-ms").map { ["--resubscribe-ms", $0] } ?? []),
                pipeStdin: true, pipeStdout: true, stderrFD: firmwareErr)
        } catch {
            Log.error("cannot start the firmware: \(error)")
            return ExitCode.setup
        }
        guard ProcessControl.waitForPath(socket, timeoutMs: 5_000) else {
            _ = firmware.wait(timeoutMs: 1_000)
            Log.error("the firmware did not start; see \(firmwareLog)")
            return ExitCode.setup
        }
        var phoneArgs = [me, "phone", "--connect", "unix:" + socket]
        if let scenario = a.value("--scenario") { phoneArgs += ["--scenario", scenario] }
        var phone: ChildProcess
        do {
            phone = try ChildProcess.spawn(phoneArgs, pipeStdin: true, pipeStdout: true, stderrFD: phoneErr)
        } catch {
            Log.error("cannot start the simulated phone: \(error)")
            return ExitCode.setup
        }

        let terminal = Terminal()
        var screen = SimScreen(interactive: terminal.isInteractive, columns: terminal.columns, outputs: outputNames)
        var keys = CommandReader(fd: 0)
        var events = CommandReader(fd: firmware.stdout, maxLineBytes: 8192)
        var phoneOut = CommandReader(fd: phone.stdout, maxLineBytes: 2048)
        var line = ByteBuffer(capacity: 16_384)
        var poll = PollSet()
        var running = true
        terminal.write(screen.render())
        while running {
            poll.removeAll()
            if terminal.isInteractive || keys.isOpen { poll.add(0, events: ProcessControl.pollIn) }
            if events.isOpen { poll.add(firmware.stdout, events: ProcessControl.pollIn) }
            if phoneOut.isOpen { poll.add(phone.stdout, events: ProcessControl.pollIn) }
            _ = try? poll.wait(timeoutMs: 500)
            var changed = false
            if terminal.isInteractive {
                for key in ProcessControl.readKeys(fd: 0) {
                    if !handle(key: key, firmware: firmware, phone: phone, screen: &screen) { running = false }
                    changed = true
                }
            } else {
                while let result = keys.next(into: &line) {
                    if case .endOfInput = result { running = false; break }
                    guard case .command = result, let key = String(decoding: line.toArray(), as: UTF8.self).first else { continue }
                    if !handle(key: key, firmware: firmware, phone: phone, screen: &screen) { running = false }
                    changed = true
                }
            }
            while let result = events.next(into: &line) {
                guard case .command = result else { continue }
                screen.firmwareEvent(FlatJSON.parse(line.toArray()))
                changed = true
            }
            while let result = phoneOut.next(into: &line) {
                guard case .command = result else { continue }
                screen.phoneLine(String(decoding: line.toArray(), as: UTF8.self))
                changed = true
            }
            if firmware.poll() != nil {
                screen.note("the firmware stopped (see \(firmwareLog))")
                running = false
            }
            if phone.poll() != nil && !screen.phoneGone {
                screen.phoneGone = true
                screen.note("the simulated phone stopped")
                changed = true
            }
            if changed { terminal.write(screen.render()) }
        }
        phone.signal(15)
        firmware.signal(15)
        let phoneStatus = phone.wait(timeoutMs: 3_000)
        let firmwareStatus = firmware.wait(timeoutMs: 3_000)
        while let result = events.next(into: &line) {
            if case .command = result { screen.firmwareEvent(FlatJSON.parse(line.toArray())) }
        }
        terminal.write(screen.render(final: true))
        print("firmware exited \(firmwareStatus), phone exited \(phoneStatus); logs in \(dir)")
        return firmwareStatus == 0 ? ExitCode.ok : ExitCode.failure
    }

    /// Returns false for quit.
    static func handle(key: Character, firmware: borrowing ChildProcess, phone: borrowing ChildProcess, screen: inout SimScreen) -> Bool {
        switch key {
        case "a": firmware.send(line: "press accept 120")
        case "A": firmware.send(line: "press accept 1200")
        case "r": firmware.send(line: "press reject 120")
        case "R": firmware.send(line: "press reject 1200")
        case "c": phone.send(line: "call \"Alice\"")
        case "m": phone.send(line: "message \"Bob\" \"Lunch at noon?\"")
        case "e": phone.send(line: "email \"Carol\" \"Quarterly report\"")
        case "x":
            if let uid = screen.present.last { phone.send(line: "remove \(uid)") } else { screen.note("nothing to remove") }
        case "q", "\u{03}", "\u{04}": return false
        default: screen.note("keys: a A r R c m e x q")
        }
        return true
    }
}
