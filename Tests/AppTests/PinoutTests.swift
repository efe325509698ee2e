// SPDX-License-Identifier: Apache-2.0
// `wristlink pinout`: the 40-pin header with the board file's lines on
// their pins, from the shipped board files and from lines that are not on
// the header.

import App
import Config
import Testing
import TestSupport

@Suite("wristlink pinout")
struct PinoutTests {
    func screen(_ boardText: String) throws -> [String] {
        Pinout.render(try BoardConfig.parse(boardText), path: "board.conf").split(separator: "\n").map(String.init)
    }

    @Test("the Zero 2 W's board: each line beside its header pin, odd pins left and even right, and one wiring line each")
    func zero2W() throws {
        let lines = try screen(readRepositoryFile("board/pi-zero-2w/board.conf"))
        #expect(lines.contains("led-notify > GPIO17 (11) (12) GPIO18 < vibration"))
        #expect(lines.contains("  led-call > GPIO27 (13) (14) GND"))
        #expect(lines.contains("    accept > GPIO22 (15) (16) GPIO23 < reject"))
        #expect(lines.contains("                3V3 ( 1) ( 2) 5V"))
        #expect(lines.contains("                GND (39) (40) GPIO21"))
        #expect(lines.contains("  vibration   output  pin 12  GPIO18  gate of a logic-level MOSFET (or a motor driver's IN), flyback diode across the motor"))
        #expect(lines.contains("  reject      button  pin 16  GPIO23  push button to a GND pin (active-low, internal pull-up)"))
        #expect(lines.filter { $0.contains(" (") && $0.contains(") (") }.count == 20, "twenty rows of two pins")
    }

    @Test("the Pi 5 board puts its lines on the Zero 2 W's pins; the Pi 4's common-anode RGB LED swaps the two LEDs and lights low")
    func otherBoards() throws {
        func marked(_ path: String) throws -> [String] {
            try screen(readRepositoryFile(path)).filter { $0.contains(" > ") || $0.contains(" < ") }
        }
        #expect(try marked("board/pi5/board.conf") == marked("board/pi-zero-2w/board.conf"))
        let pi4 = try screen(readRepositoryFile("board/pi4/board.conf"))
        #expect(pi4.contains("  led-call > GPIO17 (11) (12) GPIO18 < vibration"))
        #expect(pi4.contains("led-notify > GPIO27 (13) (14) GND"))
        #expect(pi4.contains("  led-notify  output  pin 13  GPIO27  LED + resistor from 3V3 (lit when low)"))
    }

    @Test("an offset on gpiochip0 is its BCM number; a line on another chip or a GPIO the header lacks is listed as not on it")
    func offsetsAndStrangers() throws {
        let lines = try screen("""
            name mixed
            output a line=5 chip=gpiochip0
            output b line=3 chip=gpio-expander
            output c line=GPIO45
            button d line=GPIO26 active-low=no bias=pull-down
            """)
        #expect(lines.contains(" a > GPIO5 (29) (30) GND"))
        #expect(lines.contains("  b  output  not on the 40-pin header (offset 3 on gpio-expander)"))
        #expect(lines.contains("  c  output  not on the 40-pin header (line GPIO45)"))
        #expect(lines.contains("  d  button  pin 37  GPIO26  push button to a 3V3 pin (active-high, internal pull-down)"))
    }

    @Test("the simulated board says it has no header")
    func simulated() throws {
        let lines = try screen(readRepositoryFile("board/sim/board.conf"))
        #expect(lines.contains("A simulated board: its lines are not on any header."))
        #expect(!lines.contains { $0.contains(" > ") })
    }
}
