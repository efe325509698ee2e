// SPDX-License-Identifier: Apache-2.0
// `wristlink pinout`: the Raspberry Pi's 40-pin header drawn in the
// terminal with the board file's lines marked, as gpiozero's `pinout` does,
// so a wearer can wire from the screen (or from the card's report) without
// a pin diagram at hand.
//
// Read-only and offline: it reads the board file and nothing else (no
// GPIO chip is opened), so it runs beside the service, on a laptop, or on
// the host build with a Pi's board file. A line given by name ("GPIO17",
// the device-tree name on every 40-pin Pi) or by offset on the header's
// chip (gpiochip0 or a pinctrl-* chip, where the offset is the BCM number)
// is placed on its pin; any other line (an expander, gpio-sim) is listed
// as "not on the header". The header is the same on the Zero 2 W, the 3,
// the 4 and the 5.

import Bounded
import Config
import Platform
import PlatformLinux

public enum PinoutCommand {
    public static let usage = """
        USAGE: wristlink pinout [--board FILE]

          Prints the Raspberry Pi's 40-pin header with the board file's outputs and buttons marked on
          their pins, then one line per output and button: its pin, its GPIO and how to wire it.
          Reads only the board file (no GPIO is touched): runs beside the service or on any computer.

          --board FILE      default /etc/wristlink/board.conf

        Exit status: 0 printed, 2 bad command line, 6 bad board file.
        """

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        let a: Arguments
        do { a = try Arguments(args, valued: ["--board"]) } catch { return CLI.fail(error, command: "pinout") }
        let path = a.value("--board") ?? "/etc/wristlink/board.conf"
        guard let board = BoardFile.load(path) else { return ExitCode.config }
        ProcessControl.writeOut(Pinout.render(board, path: path))
        return 0
    }
}

/// The header and the board's lines on it, as text.
public enum Pinout {
    /// What each of the 40 pins is, pin 1 first: a BCM GPIO number, or power
    /// and ground (Raspberry Pi's documentation of the 40-pin header).
    enum Pin: Equatable {
        case gpio(Int)
        case power3V3
        case power5V
        case ground
    }

    static let header: [Pin] = [
        .power3V3, .power5V, .gpio(2), .power5V, .gpio(3), .ground, .gpio(4), .gpio(14), .ground, .gpio(15),
        .gpio(17), .gpio(18), .gpio(27), .ground, .gpio(22), .gpio(23), .power3V3, .gpio(24), .gpio(10), .ground,
        .gpio(9), .gpio(25), .gpio(11), .gpio(8), .ground, .gpio(7), .gpio(0), .gpio(1), .gpio(5), .ground,
        .gpio(6), .gpio(12), .gpio(13), .ground, .gpio(19), .gpio(16), .gpio(26), .gpio(20), .ground, .gpio(21),
    ]

    /// The header pin (1...40) of BCM GPIO `bcm`, if it is on the header.
    static func pin(ofGPIO bcm: Int) -> Int? {
        for (i, p) in header.enumerated() where p == .gpio(bcm) { return i + 1 }
        return nil
    }

    /// The BCM number of a board line, when it is one of the header's: a
    /// name "GPIOn", or an offset on the header's chip.
    static func bcm(of spec: LineSpec, board: BoardConfig) -> Int? {
        switch spec.line {
        case .named(let name):
            let bytes = Array(name.utf8)
            guard bytes.count > 4, bytes.count <= 6, bytes[0..<4].elementsEqual("GPIO".utf8) else { return nil }
            var n = 0
            for b in bytes[4...] {
                guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
                n = n * 10 + Int(b - UInt8(ascii: "0"))
            }
            return n
        case .offset(let offset):
            guard let chip = spec.chip ?? board.chip else { return nil }
            let onHeaderChip = chip.utf8Equals("gpiochip0") || chip.utf8Equals("/dev/gpiochip0") || chip.utf8HasPrefix("pinctrl-")
            return onHeaderChip ? offset : nil
        }
    }

    static func label(_ pin: Pin) -> String {
        switch pin {
        case .gpio(let n): "GPIO\(n)"
        case .power3V3: "3V3"
        case .power5V: "5V"
        case .ground: "GND"
        }
    }

    static func wiring(_ spec: LineSpec, isButton: Bool) -> String {
        if isButton {
            let bias: String
            switch spec.bias {
            case .pullUp: bias = "internal pull-up"
            case .pullDown: bias = "internal pull-down"
            case .disable: bias = "no internal bias: fit a resistor"
            case .asIs: bias = "bias left as it is"
            }
            let to = spec.activeLow ? "GND" : "3V3"
            return "push button to a \(to) pin (active-\(spec.activeLow ? "low" : "high"), \(bias))"
        }
        switch spec.kind {
        case .motor: return "gate of a logic-level MOSFET (or a motor driver's IN), flyback diode across the motor"
        case .led: return spec.activeLow ? "LED + resistor from 3V3 (lit when low)" : "LED + resistor to a GND pin (lit when high)"
        }
    }

    /// Text is assembled as UTF-8 bytes and measured in bytes (names are
    /// ASCII in practice; a wider one only shifts its own row): `String`'s
    /// Character-based operations would link the Unicode tables into the
    /// Pi binary (docs/pi-build.md, "Size").
    static func append(_ out: inout [UInt8], _ s: String) { out.append(contentsOf: s.utf8) }

    static func append(_ out: inout [UInt8], _ s: String, padLeftTo width: Int) {
        let n = s.utf8.count
        if n < width { out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width - n)) }
        out.append(contentsOf: s.utf8)
    }

    static func append(_ out: inout [UInt8], _ s: String, padRightTo width: Int) {
        out.append(contentsOf: s.utf8)
        let n = s.utf8.count
        if n < width { out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width - n)) }
    }

    /// The whole screen: a title, the header (odd pins on the left as on
    /// the board, even on the right) with each line's name beside its pin,
    /// then one line per output and button.
    public static func render(_ board: BoardConfig, path: String) -> String {
        var marks = [String](repeating: "", count: 41)
        var placed: [(spec: LineSpec, isButton: Bool, pin: Int, bcm: Int)] = []
        var off: [(spec: LineSpec, isButton: Bool)] = []
        var nameWidth = 1
        for spec in board.outputs where spec.name.utf8.count > nameWidth { nameWidth = spec.name.utf8.count }
        for spec in board.buttons where spec.name.utf8.count > nameWidth { nameWidth = spec.name.utf8.count }
        for (spec, isButton) in board.outputs.map({ ($0, false) }) + board.buttons.map({ ($0, true) }) {
            if let bcm = bcm(of: spec, board: board), let pin = pin(ofGPIO: bcm) {
                marks[pin] = marks[pin].isEmpty ? spec.name : marks[pin] + "+" + spec.name
                placed.append((spec, isButton, pin, bcm))
            } else {
                off.append((spec, isButton))
            }
        }
        var out: [UInt8] = []
        append(&out, "Raspberry Pi 40-pin header (Zero 2 W, 3, 4, 5), board \(board.name) (\(path))\n")
        if board.simulated { append(&out, "A simulated board: its lines are not on any header.\n") }
        append(&out, "Pin 1 (3V3) has the square pad; odd pins are the inner row, even pins the row along the board's edge.\n")
        for row in 0..<20 {
            let left = 2 * row + 1, right = left + 1
            let l = marks[left].isEmpty ? label(header[left - 1]) : marks[left] + " > " + label(header[left - 1])
            append(&out, l, padLeftTo: nameWidth + 9)
            append(&out, " (")
            append(&out, String(left), padLeftTo: 2)
            append(&out, ") (")
            append(&out, String(right), padLeftTo: 2)
            append(&out, ") " + label(header[right - 1]))
            if !marks[right].isEmpty { append(&out, " < " + marks[right]) }
            out.append(UInt8(ascii: "\n"))
        }
        append(&out, "\nLines:\n")
        for line in placed {
            append(&out, "  ")
            append(&out, line.spec.name, padRightTo: nameWidth)
            append(&out, line.isButton ? "  button  pin " : "  output  pin ")
            append(&out, String(line.pin), padLeftTo: 2)
            append(&out, "  ")
            append(&out, "GPIO\(line.bcm)", padRightTo: 6)
            append(&out, "  " + wiring(line.spec, isButton: line.isButton) + "\n")
        }
        for line in off {
            append(&out, "  ")
            append(&out, line.spec.name, padRightTo: nameWidth)
            append(&out, line.isButton ? "  button" : "  output")
            append(&out, "  not on the 40-pin header (" + describe(line.spec, board: board) + ")\n")
        }
        append(&out, "Ground: pins 6, 9, 14, 20, 25, 30, 34, 39. 3V3: pins 1, 17. Never wire a motor straight to a GPIO.\n")
        return String(decoding: out, as: UTF8.self)
    }

    static func describe(_ spec: LineSpec, board: BoardConfig) -> String {
        let chip = spec.chip ?? board.chip
        switch spec.line {
        case .named(let name): return chip.map { "line \(name) on \($0)" } ?? "line \(name)"
        case .offset(let offset): return "offset \(offset) on \(chip ?? "?")"
        }
    }
}
