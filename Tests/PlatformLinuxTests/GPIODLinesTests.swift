// SPDX-License-Identifier: Apache-2.0
import Bounded
import Config
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

private func writeText(_ path: String, _ text: String) -> Bool {
    guard let file = fopen(path, "w") else { return false }
    defer { fclose(file) }
    return fputs(text, file) >= 0
}

private func parseBoard(_ text: String) throws -> BoardConfig { try BoardConfig.parse(text) }

/// The error starting `board` gives; nil if it started.
private func startError(_ board: BoardConfig) -> GPIOError? {
    do {
        _ = try GPIODLines(board: board.lines)
        return nil
    } catch {
        return error
    }
}

private let hasGPIOChip = exists("/dev/gpiochip0")
private let hasSimChip = hasGPIOChip && GPIODLines.chipExists("wristlink-vm")
private let noChipsHint = exists("/dev/gpiochip0") ? "" : " (this machine has no /dev/gpiochip*)"

@Suite("libgpiod lines: start-up errors")
struct GPIODStartupTests {
    @Test("a line that does not exist stops start-up naming the line and what to check")
    func missingLine() throws {
        let board = try parseBoard("name t\noutput led-notify line=wristlink-no-such-line\nbutton accept line=wristlink-no-such-button\n")
        let error = try #require(startError(board))
        #expect(error.reason == .noSuchLine)
        #expect(error.name == "led-notify")
        #expect(error.chip == nil)
        #expect(error.description == "output led-notify: no line named wristlink-no-such-line on any GPIO chip: check line= in the board file against `gpioinfo`" + noChipsHint)
    }

    @Test("a chip that does not exist stops start-up naming the chip and what to check")
    func missingChip() throws {
        let board = try parseBoard("name t\nchip wristlink-no-such-chip\noutput led line=3\nbutton b line=4\n")
        let error = try #require(startError(board))
        #expect(error.reason == .noSuchChip)
        #expect(error.description == "output led: no GPIO chip wristlink-no-such-chip: check `chip` in the board file against `gpiodetect`" + noChipsHint)
    }

    @Test("busy and permission errors say how to fix them")
    func busyAndPermissionMessages() {
        let busy = GPIOError(
            role: "button", name: "accept", line: .named("GPIO22"), chip: "gpiochip0", chipLabel: "pinctrl-bcm2835", reason: .busy,
            underlying: SystemError("gpiod_line_request", errno: EBUSY), noChips: false)
        #expect(busy.description == "button accept: line GPIO22 on gpiochip0 [pinctrl-bcm2835] is busy: another process holds it; see `gpioinfo gpiochip0` (look for [used]) and stop that process")
        let denied = GPIOError(
            role: "output", name: "led-notify", line: .offset(17), chip: "gpiochip0", reason: .permission,
            underlying: SystemError("gpiod_chip_open_lookup", errno: EACCES), noChips: false)
        #expect(denied.description == "output led-notify: permission denied for offset 17 on gpiochip0: add the user to group gpio (or run as root)")
    }

    @Test("an edge's kernel timestamp is used when it is monotonic and recent, else the time it was read")
    func timestamps() {
        let now = Instant(ms: 100_000)
        #expect(GPIODLines.instant(timespec(tv_sec: 99, tv_nsec: 987_654_321), now: now) == Instant(ms: 99_987))
        #expect(GPIODLines.instant(timespec(tv_sec: 1_700_000_000, tv_nsec: 0), now: now) == now)
        #expect(GPIODLines.instant(timespec(tv_sec: 10, tv_nsec: 0), now: now) == now)
    }
}

@Suite("libgpiod 2 sequence numbers: lost edges")
struct EdgeSequenceTests {
    @Test("consecutive sequence numbers lose nothing; a gap counts the edges the kernel dropped")
    func gapIsCounted() {
        var sequence = EdgeSequence()
        #expect(sequence.observe(1) == 0)
        #expect(sequence.observe(2) == 0)
        #expect(sequence.observe(6) == 3)
        #expect(sequence.observe(7) == 0)
        #expect(sequence.observe(9) == 1)
        #expect(sequence.lost == 4)
        #expect(sequence.last == 9)
    }

    @Test("a first event numbered past 1 means the edges before it were dropped")
    func firstEventPastOne() {
        var sequence = EdgeSequence()
        #expect(sequence.observe(5) == 4)
        #expect(sequence.lost == 4)
    }

    @Test("a number that does not move forward is no loss: the count goes on from it")
    func backwardsIsNoLoss() {
        var sequence = EdgeSequence()
        _ = sequence.observe(10)
        #expect(sequence.observe(3) == 0)
        #expect(sequence.observe(3) == 0)
        #expect(sequence.observe(4) == 0)
        #expect(sequence.lost == 9)
    }
}

/// Runs only where a gpio-sim chip labelled wristlink-vm exists, created as
/// Tests/VM/guest.sh does: lines 0-4 are led-notify, led-call, vibration,
/// accept, reject. `make test` does not run this bundle in the VM (its suite
/// drives the same lines through the wristlink binary); it is run by hand in
/// the guest (Tests/VM/NOTES.md, "Swift `GPIODLines` against gpio-sim").
/// Serialized: the tests request the same lines.
@Suite(
    "libgpiod lines on the gpio-sim chip", .serialized,
    .enabled(if: hasGPIOChip, "no /dev/gpiochip0 on this machine: run these by hand in the VM guest with the gpio-sim chip wristlink-vm (Tests/VM/NOTES.md, \"Swift GPIODLines against gpio-sim\"); make test's VM suite exercises GPIODLines only through the wristlink binary"),
    .enabled(if: hasSimChip, "/dev/gpiochip0 exists but no chip is labelled wristlink-vm: create the gpio-sim chip as Tests/VM/guest.sh does"))
struct GPIODSimChipTests {

    /// `/sys/devices/platform/gpio-sim.*/gpiochipN/sim_gpio<offset>/<file>`:
    /// the simulator's side of a line (the VM suite creates one sim chip).
    static func simFile(_ offset: Int, _ file: String) -> String? {
        var g = glob_t()
        defer { globfree(&g) }
        guard glob("/sys/devices/platform/gpio-sim.*/gpiochip*/sim_gpio\(offset)", 0, nil, &g) == 0, g.gl_pathc > 0 else {
            return nil
        }
        return String(cString: g.gl_pathv[0]!) + "/" + file
    }

    static func vmBoard() throws -> BoardConfig {
        try BoardConfig.parse(try ProcessControl.readFile(repositoryRoot + "/board/vm/board.conf"))
    }

    @Test("outputs drive the lines, a simulated press arrives as edges through poll, allOff clears")
    func simChip() throws {
        var lines = try GPIODLines(board: try Self.vmBoard().lines)
        for output in 0..<3 {
            let value = try #require(Self.simFile(output, "value"))
            lines.setOutput(output, on: true)
            #expect(try ProcessControl.readFile(value).hasPrefix("1"))
            lines.setOutput(output, on: false)
            #expect(try ProcessControl.readFile(value).hasPrefix("0"))
        }
        let pull = try #require(Self.simFile(3, "pull"))
        var edges: [(button: Int, pressed: Bool)] = []
        for level in ["pull-up", "pull-down"] {
            let beforeMs = Sys.monotonicMs()
            #expect(writeText(pull, level))
            var poll = PollSet()
            lines.addDescriptors(to: &poll)
            _ = try poll.wait(timeoutMs: 2_000)
            let afterMs = Sys.monotonicMs()
            // Read as if 30 s later: an edge stamped with CLOCK_MONOTONIC
            // keeps its own time; one that could not be would become `now`.
            let now = Instant(ms: afterMs + 30_000)
            while let event = lines.nextInput(now: now, ready: poll) {
                guard case .edge(let button, let pressed, let at) = event else { continue }
                #expect(at.ms >= beforeMs && at.ms <= afterMs, "edge at \(at.ms), between \(beforeMs) and \(afterMs)?")
                edges.append((button, pressed))
            }
        }
        #expect(edges.map(\.button) == [0, 0])
        #expect(edges.map(\.pressed) == [true, false])
        lines.setOutput(1, on: true)
        lines.allOff()
        #expect(try ProcessControl.readFile(try #require(Self.simFile(1, "value"))).hasPrefix("0"))
    }

    @Test("a line already held stops a second start-up as busy, naming the chip; released lines can be had again")
    func busy() throws {
        let board = try Self.vmBoard()
        do {
            let first = try GPIODLines(board: board.lines)
            let error = try #require(startError(board))
            #expect(error.reason == .busy)
            let chip = try #require(error.chip)
            #expect(chip.hasPrefix("gpiochip") && error.chipLabel == "wristlink-vm")
            #expect(error.description == "output led-notify: line led-notify on \(chip) [wristlink-vm] is busy: another process holds it; see `gpioinfo \(chip)` (look for [used]) and stop that process")
            _ = consume first
        }
        #expect(startError(board) == nil)
    }

    @Test("a line name the chip does not have stops start-up naming the chip")
    func missingLineOnChip() throws {
        let board = try parseBoard("name t\nchip wristlink-vm\noutput led line=GPIO17\nbutton b line=accept\n")
        let error = try #require(startError(board))
        #expect(error.description == "output led: no line named GPIO17 on wristlink-vm: check line= in the board file against `gpioinfo wristlink-vm`")
    }

    @Test("an active-low output starts at the high level (off) and is driven low when on")
    func activeLowOutput() throws {
        let board = try parseBoard("name t\nchip wristlink-vm\noutput led line=led-call active-low=yes\nbutton b line=accept\n")
        var lines = try GPIODLines(board: board.lines)
        let value = try #require(Self.simFile(1, "value"))
        #expect(try ProcessControl.readFile(value).hasPrefix("1"))
        lines.setOutput(0, on: true)
        #expect(try ProcessControl.readFile(value).hasPrefix("0"))
        lines.allOff()
        #expect(try ProcessControl.readFile(value).hasPrefix("1"))
    }
}
