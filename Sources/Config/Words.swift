// Value parsers shared by the board and policy parsers: numbers, yes/no,
// names. Each takes the line number so its error can point at the line.
// They read a word's bytes (`Text`); only the messages make Strings.

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
