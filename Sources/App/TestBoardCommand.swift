// SPDX-License-Identifier: Apache-2.0
// `wristlink test-board`: a wiring test for whoever just soldered the LEDs,
// the motor and the buttons. Each output is lit for `--on-ms` in turn, then
// each button is asked for in turn and its press and release watched,
// through the same line backends as `run` (libgpiod, or the simulated
// board whose presses come from stdin). Edges are debounced by the
// firmware's own ButtonGestures with the board's debounce-ms.
//
// Bounded: every wait has its deadline (on-ms, timeout-ms), SIGINT and
// SIGTERM arrive through a signalfd in the same poll, and every output is
// off at the end however it ends. It refuses to run while wristlink.service
// is active (the service holds the lines) or another process holds them.

import Bounded
import Config
import Feedback
import Platform
import PlatformLinux

public enum TestBoardCommand {
    public static let usage = """
        USAGE: wristlink test-board [--board FILE] [--gpio chip|sim] [--on-ms N] [--timeout-ms N]

          A wiring test: lights each output in turn for N ms ("led-notify on … off"), then asks for each
          button to be pressed and released ("press accept now") and says what it saw (debounced). A button
          whose line never changes: "accept: no change seen — check the wiring or the pull-up".
          Stop the service first (systemctl stop wristlink; it holds the lines), start it again afterwards.
          Ctrl-C stops the test with every output off.

          --board FILE      default /etc/wristlink/board.conf (with --gpio sim: board/sim/board.conf)
          --gpio chip       real lines through libgpiod (default)
          --gpio sim        simulated lines: outputs are printed, buttons pressed on stdin with
                            `press <button> <ms>`
          --on-ms N         how long each output stays on (50...10000, default 1000)
          --timeout-ms N    how long to wait for each button (100...120000, default 10000)

        Exit status: 0 every button was seen pressed and released, 1 a button was not (or the
        service is running, a line is held, or the test was interrupted), 2 bad command line,
        6 bad board file, 5 the lines could not be set up.
        """

    struct Options {
        var boardPath = "/etc/wristlink/board.conf"
        var simulatedGPIO = false
        var onMs: Int64 = 1_000
        var timeoutMs: Int64 = 10_000
    }

    static func parse(_ args: ArraySlice<String>) throws(UsageError) -> Options {
        let a = try Arguments(args, valued: ["--board", "--gpio", "--on-ms", "--timeout-ms"])
        var o = Options()
        if let gpio = a.value("--gpio"), !gpio.utf8Equals("chip") {
            guard gpio.utf8Equals("sim") else { throw UsageError("--gpio must be chip or sim (got '\(gpio)')") }
            o.simulatedGPIO = true
            o.boardPath = "board/sim/board.conf"
        }
        if let p = a.value("--board") { o.boardPath = p }
        if let ms = try RunCommand.milliseconds(a, "--on-ms", in: 50...10_000) { o.onMs = ms }
        if let ms = try RunCommand.milliseconds(a, "--timeout-ms", in: 100...120_000) { o.timeoutMs = ms }
        return o
    }

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        let o: Options
        do { o = try parse(args) } catch { return CLI.fail(error, command: "test-board") }
        guard let board = BoardFile.load(o.boardPath) else { return ExitCode.config }
        if !o.simulatedGPIO && board.simulated {
            Log.error("\(o.boardPath) is a simulated board (chip sim); use --gpio sim, or a board file for real lines")
            return ExitCode.usage
        }
        if let unit = SystemProbe.unit("wristlink.service"), unit.isActive {
            Log.error(
                "wristlink.service is running and holds the lines: systemctl stop wristlink, run this again, "
                    + "then systemctl start wristlink")
            return ExitCode.failure
        }
        let signals: Signals
        do { signals = try Signals() } catch {
            Log.error("\(error)")
            return ExitCode.setup
        }
        var lines: EitherLines
        if o.simulatedGPIO {
            lines = .simulated(SimLines(outputs: board.outputs.map { $0.name }, buttons: board.buttons.map { $0.name }, consoleFD: 0))
        } else {
            do throws(GPIOError) { lines = .gpiod(try GPIODLines(board: board.lines)) } catch {
                if error.reason == .busy {
                    Log.error("\(error) (is wristlink running? systemctl stop wristlink)")
                    return ExitCode.failure
                }
                Log.error("\(error)")
                return ExitCode.setup
            }
        }
        var test = WiringTest(board: board, signals: signals, simulated: o.simulatedGPIO)
        let status = test.run(&lines, onMs: o.onMs, timeoutMs: o.timeoutMs)
        lines.allOff()
        return status
    }
}

/// The test's steps and its one wait loop.
struct WiringTest: ~Copyable {
    let board: BoardConfig
    let signals: Signals
    let simulated: Bool
    private var set = PollSet()

    init(board: BoardConfig, signals: consuming Signals, simulated: Bool) {
        self.board = board
        self.signals = signals
        self.simulated = simulated
    }

    /// What ended a wait.
    enum Happening {
        case input(InputEvent)
        /// Woken without an input (a timer of the caller's may be due).
        case tick
        case deadline
        case interrupted
    }

    private var polled = false

    static func now() -> Instant { Instant(ms: Sys.monotonicMs()) }

    mutating func run(_ lines: inout EitherLines, onMs: Int64, timeoutMs: Int64) -> Int32 {
        let how = simulated ? "simulated: outputs are printed, type `press <button> <ms>` for a button" : "libgpiod"
        ProcessControl.writeOut("test-board: \(board.name), \(board.outputs.count) outputs, \(board.buttons.count) buttons (\(how))\n")
        for (i, output) in board.outputs.enumerated() {
            lines.setOutput(i, on: true)
            ProcessControl.writeOut("\(output.name) on")
            let deadline = Self.now().advanced(byMs: onMs)
            var stopped = false
            waiting: while true {
                switch next(&lines, until: deadline, wakeAt: nil) {
                case .interrupted: stopped = true; break waiting
                case .deadline: break waiting
                case .tick: break
                case .input(let input): report(input)
                }
            }
            lines.setOutput(i, on: false)
            ProcessControl.writeOut(" … off\n")
            if stopped { return interrupted(&lines) }
        }
        var missed = 0
        for b in board.buttons.indices {
            let name = board.buttons[b].name
            ProcessControl.writeOut("press \(name) now\n")
            var config = board.gestures
            config.chord = nil
            var gestures = ButtonGestures(buttonCount: board.buttons.count, config: config)
            for i in board.buttons.indices { gestures.setDoublePress(enabled: false, button: i) }
            var events = RingBuffer<GestureEvent>(capacity: 8, policy: .dropOldest)
            var pressedAt: Instant? = nil
            var releasedAt: Instant? = nil
            var others: [Int] = []
            let deadline = Self.now().advanced(byMs: timeoutMs)
            waiting: while releasedAt == nil {
                switch next(&lines, until: deadline, wakeAt: gestures.nextDeadline) {
                case .interrupted: return interrupted(&lines)
                case .deadline: break waiting
                case .tick: gestures.advance(now: Self.now(), into: &events)
                case .input(let input):
                    if case .edge(let button, let pressed, let at) = input {
                        if button != b && pressed && !others.contains(button) { others.append(button) }
                        gestures.edge(button: button, pressed: pressed, at: at, into: &events)
                    } else {
                        report(input)
                    }
                }
                events.removeAll()
                if pressedAt == nil && gestures.isPressed(b) { pressedAt = Self.now() }
                if pressedAt != nil && !gestures.isPressed(b) { releasedAt = Self.now() }
            }
            if let pressedAt, let releasedAt {
                ProcessControl.writeOut("\(name): pressed and released (held \(releasedAt.ms(since: pressedAt)) ms)\n")
            } else if pressedAt != nil {
                missed += 1
                ProcessControl.writeOut(
                    "\(name): pressed, but not released within \(timeoutMs) ms — a line stuck at the pressed level: "
                        + "check for a short, and active-low= in the board file\n")
            } else {
                missed += 1
                let swapped = others.map { board.buttons[$0].name }.joined(separator: ", ")
                ProcessControl.writeOut(
                    "\(name): no change seen — check the wiring or the pull-up"
                        + (swapped.isEmpty ? "" : " (\(swapped) changed instead: are the lines swapped in the board file?)") + "\n")
            }
        }
        let seen = board.buttons.count - missed
        ProcessControl.writeOut(
            "test-board: \(board.outputs.count) outputs shown, \(seen) of \(board.buttons.count) buttons seen; every output off\n")
        return missed == 0 ? ExitCode.ok : ExitCode.failure
    }

    /// A console line the simulated board could not take.
    private func report(_ input: InputEvent) {
        if case .rejected(let what, let reason) = input { Log.warning("\(what): \(reason)") }
    }

    private mutating func interrupted(_ lines: inout EitherLines) -> Int32 {
        lines.allOff()
        ProcessControl.writeOut("\ntest-board: interrupted; every output off\n")
        return ExitCode.failure
    }

    /// The next input before `deadline`, or why there is none: the
    /// deadline passed, a signal came, or the wait woke for `wakeAt` (a
    /// debounce window closing; 1 ms after it, as the gestures want).
    /// Inputs already read are handed out before waiting again.
    private mutating func next(_ lines: inout EitherLines, until deadline: Instant, wakeAt: Instant?) -> Happening {
        if polled, let input = lines.nextInput(now: Self.now(), ready: set) { return .input(input) }
        polled = false
        let now = Self.now()
        if now >= deadline { return .deadline }
        set.removeAll()
        set.add(signals.fd, events: ProcessControl.pollIn)
        lines.addDescriptors(to: &set)
        let wake = earliest(earliest(deadline, lines.deadline), wakeAt.map { $0.advanced(byMs: 1) })
        do { try set.wait(timeoutMs: PollSet.timeoutMs(until: wake, now: now)) } catch { return .interrupted }
        if set.revents(of: signals.fd) & ProcessControl.pollIn != 0, signals.next() != nil { return .interrupted }
        polled = true
        if let input = lines.nextInput(now: Self.now(), ready: set) { return .input(input) }
        return .tick
    }
}
