// SPDX-License-Identifier: Apache-2.0
import Config
import Testing
import TestSupport

/// The parsers work on the file's UTF-8 bytes. A file is read with
/// `String(decoding:as:)`, so a byte that is not UTF-8 arrives as U+FFFD
/// (three bytes, EF BF BD); these pin down what happens to it, and that
/// names compare byte for byte.
@Suite("Bytes in the files")
struct ByteTests {
    /// The text the firmware gets from a file holding `bytes`.
    private func decoded(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private static let rest = Array("chip sim\noutput a\nbutton b\n".utf8)

    @Test("a non-UTF-8 byte in one of our names is refused on its line, shown as U+FFFD")
    func badByteInName() {
        let text = decoded(Array("name caf".utf8) + [0xFF] + [0x0A] + Self.rest)
        #expect(boardError(text) == ConfigError(line: 1, .badLine, "the board name 'caf\u{FFFD}' may use only letters, digits, '-', '_' and '.'"))
    }

    @Test("a non-UTF-8 byte in a kernel line name is kept as U+FFFD, three bytes long")
    func badByteInLineName() throws {
        let good = decoded(Array("name x\nchip sim\noutput a line=GPIO".utf8) + [0xFE] + Array("\nbutton b\n".utf8))
        #expect(try board(good).outputs[0].line == .named("GPIO\u{FFFD}"))
        // 29 ASCII bytes and one bad byte: 32 bytes once decoded.
        let long = decoded(Array("name x\noutput a line=".utf8) + [UInt8](repeating: 0x41, count: 29) + [0xFE] + Array("\nbutton b\n".utf8))
        #expect(boardError(long) == ConfigError(line: 2, .badLine, "line name '\(String(repeating: "A", count: 29))\u{FFFD}' is longer than 31 bytes, so no such line or chip can exist"))
    }

    @Test("a cut-off UTF-8 sequence before a newline does not move the line numbers")
    func truncatedSequence() {
        let text = decoded(Array("name x\n# caf".utf8) + [0xC3] + Array("\ncolour red\n".utf8))
        #expect(boardError(text) == ConfigError(line: 3, .unknownKey, "unknown setting 'colour': a board file has name, bluetooth-name, battery, battery-poll-s, chip, output, button, debounce-ms, long-press-ms and double-press-ms"))
    }

    @Test("an unknown setting in non-ASCII text is quoted back as written")
    func nonASCIISetting() {
        #expect(boardError("name x\ncouleur→ rouge\n") == ConfigError(line: 2, .unknownKey, "unknown setting 'couleur→': a board file has name, bluetooth-name, battery, battery-poll-s, chip, output, button, debounce-ms, long-press-ms and double-press-ms"))
        #expect(policyError("alert Social led-notify=\"clignoté\"\n") == ConfigError(line: 1, .unknownPattern, "no pattern named 'clignoté': define it with a line like `pattern clignoté on 200 off 800` (patterns: none)"))
    }

    @Test("a NUL byte is an ordinary byte: refused in our names, kept in kernel names")
    func nulByte() throws {
        #expect(boardError("name a\u{0}b\n") == ConfigError(line: 1, .badLine, "the board name 'a\u{0}b' may use only letters, digits, '-', '_' and '.'"))
        #expect(try board("name x\nchip sim\noutput a line=G\u{0}1\nbutton b\n").outputs[0].line == .named("G\u{0}1"))
    }

    /// `text` as Windows Notepad saves it ("UTF-8 with BOM"): EF BB BF
    /// first, CRLF line ends.
    private func notepad(_ text: String) -> String {
        decoded([0xEF, 0xBB, 0xBF] + Array(text.utf8).flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] })
    }

    @Test("a board or policy file saved as UTF-8 with BOM and CRLF (Windows Notepad) reads as the same file without them", arguments: shippedBoards)
    func byteOrderMark(path: String) throws {
        let boardText = readRepositoryFile(path)
        let policyText = readRepositoryFile("board/policy.conf")
        #expect(try board(notepad(boardText)) == board(boardText))
        let b = try board(boardText)
        #expect(try PolicyConfig.parse(notepad(policyText), board: b) == PolicyConfig.parse(policyText, board: b))
        // A file whose first line is a comment, or blank, as well.
        #expect(try board(notepad("# my wearable\n" + boardText)) == b)
        #expect(try board(notepad("\n" + boardText)) == b)
    }

    @Test("a byte-order mark anywhere but at the very start is text, quoted back in the message")
    func byteOrderMarkElsewhere() {
        #expect(boardError("name x\n\u{FEFF}output a\n") == ConfigError(line: 2, .unknownKey, "unknown setting '\u{FEFF}output': a board file has name, bluetooth-name, battery, battery-poll-s, chip, output, button, debounce-ms, long-press-ms and double-press-ms"))
        #expect(boardError("\u{FEFF}\u{FEFF}name x\n")?.kind == .unknownKey, "only one mark is the encoding's")
    }

    @Test("rule values keep their bytes, quotes and escapes removed")
    func ruleBytes() throws {
        let policy = try PolicyConfig.parse(
            "pattern p on 100\nrule app=\"com.example.a b\" title=\"sa\\\"y \\\\ é\" led-notify=p\n", board: simBoard)
        #expect(policy.rules[0].app == "com.example.a b")
        #expect(Array(policy.rules[0].titleContains?.utf8 ?? "".utf8) == Array("sa\"y \\ é".utf8))
    }

    @Test("names and rule values compare as bytes: text that is canonically equivalent but spelt differently is different")
    func bytesNotCanonicalEquivalence() throws {
        // é as one scalar (C3 A9) and as e + U+0301 (65 CC 81): `String`'s
        // `==` holds them equal; the rule matcher compares bytes, so they
        // are two rules (the parser once called them the same rule).
        let policy = try PolicyConfig.parse("pattern p on 100\nrule title=caf\u{E9} led-notify=p\nrule title=cafe\u{301} vibration=p\n", board: simBoard)
        #expect(policy.rules.count == 2)
        #expect(policyError("pattern p on 100\nrule title=caf\u{E9} led-notify=p\nrule title=caf\u{E9} vibration=p\n")?.kind == .duplicate)
        // A kernel line name likewise.
        #expect(try board("name x\nchip sim\noutput a line=caf\u{E9}\nbutton b line=cafe\u{301}\n").buttons.count == 1)
        #expect(simBoard.outputIndex(named: "vibration") == 2)
        #expect(simBoard.outputIndex(named: "vibratio") == nil)
    }
}
