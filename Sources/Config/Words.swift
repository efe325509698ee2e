// SPDX-License-Identifier: Apache-2.0
// Value parsers shared by the board and policy parsers: numbers, yes/no,
// names, times of day. Each takes the line number so its error can point at
// the line. They read a word's bytes (`Text`); only the messages make
// Strings.

import Bounded

enum Words {
    /// The longest name the kernel keeps for a line, chip or consumer (32
    /// bytes with the terminating NUL); our own names follow the same limit
    /// so they fit in logs and in the simulator's console.
    static let maxNameBytes = 31

    /// A decimal integer, optionally negative (so a negative duration is
    /// reported as out of range rather than as "not a number").
    static func integer(_ text: Text) -> Int64? {
        let bytes = text.bytes
        let negative = bytes.first == Byte.minus
        let start = negative ? 1 : 0
        guard bytes.count > start, bytes.count - start <= 18 else { return nil }
        var value: Int64 = 0
        for byte in bytes[start...] {
            guard byte >= Byte.zero && byte <= Byte.nine else { return nil }
            value = value * 10 + Int64(byte - Byte.zero)
        }
        return negative ? -value : value
    }

    /// `text` as a number in `range`, for the setting `what`.
    static func integer(
        _ text: Text, in range: ClosedRange<Int64>, what: String, unit: String = "", line: Int
    ) throws(ConfigError) -> Int64 {
        guard let value = integer(text) else {
            throw ConfigError(line: line, .badLine, "\(what) needs a whole number, not '\(text)'")
        }
        guard range.contains(value) else {
            throw ConfigError(
                line: line, .outOfRange,
                "\(what) \(value) is out of range: use \(range.lowerBound)...\(range.upperBound)\(unit)")
        }
        return value
    }

    static func yesNo(_ text: Text, what: String, line: Int) throws(ConfigError) -> Bool {
        switch text {
        case "yes": return true
        case "no": return false
        default: throw ConfigError(line: line, .badLine, "\(what) takes yes or no, not '\(text)'")
        }
    }

    /// `H:MM-H:MM` or `HH:MM-HH:MM`, local time: hours 0...23 in one or two
    /// digits, minutes 00...59 in two; the end may come before the start
    /// (the window wraps midnight), but not equal it.
    static func dailyWindow(_ text: Text, what: String, line: Int) throws(ConfigError) -> DailyWindow {
        let bytes = text.bytes
        let malformed = ConfigError(line: line, .badLine, "\(what) needs a time range HH:MM-HH:MM, e.g. 22:30-07:00, not '\(text)'")
        guard let dash = bytes.firstIndex(of: Byte.minus) else { throw malformed }
        guard let start = clock(bytes[..<dash]), let end = clock(bytes[(dash + 1)...]) else { throw malformed }
        for (hour, minute) in [start, end] {
            guard hour <= 23 else {
                throw ConfigError(line: line, .outOfRange, "hour \(hour) in \(text) is out of range: use 00...23 (midnight is 00:00)")
            }
            guard minute <= 59 else {
                throw ConfigError(line: line, .outOfRange, "minute \(minute) in \(text) is out of range: use 00...59")
            }
        }
        guard let window = DailyWindow(startMinute: start.hour * 60 + start.minute, endMinute: end.hour * 60 + end.minute) else {
            throw ConfigError(line: line, .badLine, "\(what) \(text) starts and ends at the same time: give two different times")
        }
        return window
    }

    /// `H:MM` or `HH:MM` as digits, not yet range-checked; nil otherwise.
    private static func clock(_ bytes: ArraySlice<UInt8>) -> (hour: Int, minute: Int)? {
        guard let colon = bytes.firstIndex(of: Byte.colon) else { return nil }
        let hours = bytes[..<colon]
        let minutes = bytes[(colon + 1)...]
        guard (1...2).contains(hours.count), minutes.count == 2 else { return nil }
        var hour = 0
        for byte in hours {
            guard byte >= Byte.zero && byte <= Byte.nine else { return nil }
            hour = hour * 10 + Int(byte - Byte.zero)
        }
        var minute = 0
        for byte in minutes {
            guard byte >= Byte.zero && byte <= Byte.nine else { return nil }
            minute = minute * 10 + Int(byte - Byte.zero)
        }
        return (hour, minute)
    }

    /// Our own names (outputs, buttons, patterns, the board): letters,
    /// digits, `-`, `_` and `.`, at most `maxNameBytes` bytes.
    static func checkName(_ name: Text, what: String, line: Int) throws(ConfigError) {
        guard !name.isEmpty else { throw ConfigError(line: line, .badLine, "\(what) needs a name") }
        guard name.byteCount <= maxNameBytes else {
            throw ConfigError(line: line, .badLine, "\(what) name '\(name)' is longer than \(maxNameBytes) bytes")
        }
        for byte in name.bytes {
            let ok =
                (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= Byte.zero && byte <= Byte.nine)
                || byte == Byte.minus || byte == Byte.underscore || byte == Byte.dot
            guard ok else {
                throw ConfigError(
                    line: line, .badLine, "\(what) name '\(name)' may use only letters, digits, '-', '_' and '.'")
            }
        }
    }

    /// A word that must be a bare name (no `=value`).
    static func bare(_ word: Word, what: String, line: Int) throws(ConfigError) -> Text {
        guard word.value == nil else {
            throw ConfigError(line: line, .badLine, "\(what) comes first, before any key=value: found '\(word.key)=...'")
        }
        return word.key
    }

    /// The value of `key=value`; a bare `key` is an error naming the form.
    static func value(_ word: Word, line: Int) throws(ConfigError) -> Text {
        guard let value = word.value, !value.isEmpty else {
            throw ConfigError(line: line, .badLine, "\(word.key) needs a value: write \(word.key)=...")
        }
        return value
    }

    static func list(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.joined(separator: ", ")
    }

    static func string(_ name: StaticString) -> String {
        name.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }

    /// The index of the first name in `names` whose UTF-8 is `name`'s bytes.
    static func index(of name: Text, in names: [String]) -> Int? {
        names.firstIndex { name.matches($0) }
    }
}
