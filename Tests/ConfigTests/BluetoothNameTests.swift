// SPDX-License-Identifier: Apache-2.0
import Config
import Platform
import Testing
import TestSupport

@Suite("Board file: bluetooth-name, the name the iPhone lists")
struct BluetoothNameTests {
    @Test("without bluetooth-name the wearable is called Wristlink")
    func defaultName() throws {
        #expect(try board("name x\noutput a\nbutton b\n").bluetoothName == "Wristlink")
    }

    @Test("a quoted name keeps its spaces and its UTF-8 bytes")
    func quotedUTF8Name() throws {
        let b = try board("name x\nbluetooth-name \"Chloë's watch\"\noutput a\nbutton b\n")
        #expect(Array(b.bluetoothName.utf8) == hex("43 68 6C 6F C3 AB 27 73 20 77 61 74 63 68"))
    }

    @Test("29 bytes fit the scan response; 30 is a bad line naming the limit")
    func byteBound() throws {
        let fits = String(repeating: "é", count: 14) + "a"
        #expect(fits.utf8.count == 29)
        #expect(try board("name x\nbluetooth-name \(fits)\noutput a\nbutton b\n").bluetoothName == fits)
        let long = String(repeating: "é", count: 15)
        #expect(
            boardError("name x\noutput a\nbluetooth-name \(long)\nbutton b\n")
                == ConfigError(
                    line: 3, .badLine,
                    "bluetooth-name is 30 bytes: at most 29 fit the scan response (a character outside ASCII takes 2 to 4)"))
    }

    @Test("bytes that were not UTF-8 (read as U+FFFD) are a bad line with its number")
    func notUTF8() {
        // A Latin-1 "é" (0xE9) decodes as U+FFFD when the file is read.
        let text = String(decoding: Array("name x\n\nbluetooth-name Ren".utf8) + [0xE9] + Array("\noutput a\nbutton b\n".utf8), as: UTF8.self)
        #expect(boardError(text) == ConfigError(line: 3, .badLine, "bluetooth-name is not valid UTF-8 (byte 4): save the file as UTF-8"))
    }

    @Test("a control character is refused")
    func controlCharacter() {
        #expect(
            boardError("name x\nbluetooth-name \"a\u{7}b\"\noutput a\nbutton b\n")
                == ConfigError(line: 2, .badLine, "bluetooth-name has a control character (byte 2): use printable text"))
    }

    @Test("bluetooth-name given twice points at the first; an empty one needs a value")
    func duplicateAndEmpty() {
        #expect(
            boardError("name x\nbluetooth-name a\nbluetooth-name b\noutput a\nbutton b\n")
                == ConfigError(line: 3, .duplicate, "bluetooth-name is already set on line 2"))
        #expect(
            boardError("name x\nbluetooth-name \"\"\noutput a\nbutton b\n")
                == ConfigError(line: 2, .badLine, "bluetooth-name takes one value: e.g. `bluetooth-name \"Anna's wristlink\"`"))
    }

    @Test("the shipped boards leave the name at its default (the line is a comment)", arguments: shippedBoards)
    func shippedDefault(path: String) throws {
        #expect(try board(readRepositoryFile(path)).bluetoothName == "Wristlink")
    }
}

@Suite("Board file: battery, the power supply that is the wearable's battery")
struct BatterySettingTests {
    @Test("battery is auto without the line; auto, none and a supply's name are read")
    func values() throws {
        #expect(try board("name x\noutput a\nbutton b\n").battery == .auto)
        #expect(try board("name x\nbattery none\noutput a\nbutton b\n").battery == BatteryChoice.none)
        #expect(try board("name x\nbattery auto\noutput a\nbutton b\n").battery == .auto)
        #expect(try board("name x\nbattery max17048-0\noutput a\nbutton b\n").battery == .named("max17048-0"))
    }

    @Test("a path, two values or a second line is a mistake with its line")
    func mistakes() {
        #expect(
            boardError("name x\nbattery ../BAT0\noutput a\nbutton b\n")
                == ConfigError(line: 2, .badLine, "battery takes auto, none or a supply's name in /sys/class/power_supply, not a path"))
        #expect(boardError("name x\nbattery a b\noutput a\nbutton b\n") == ConfigError(line: 2, .badLine, "battery takes one value: e.g. `battery auto`"))
        #expect(
            boardError("name x\nbattery auto\nbattery none\noutput a\nbutton b\n")
                == ConfigError(line: 3, .duplicate, "battery is already set on line 2"))
    }
}
