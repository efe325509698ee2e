// SPDX-License-Identifier: Apache-2.0
// Config: the two text files that say what the wearable is wired to (the
// board file) and how it should behave (the policy file). Syntax, defaults
// and every check: docs/config.md.
//
// Design: parsed once at start-up into plain values that the rest of the
// firmware indexes (outputs, buttons and patterns become array indices), so
// nothing after start-up looks a name up or allocates. The parser works on
// UTF-8 bytes with the standard library only, so the module also builds with
// Embedded Swift; Strings and Arrays are fine here because this runs once.
// Every mistake in a file is a `ConfigError` value carrying the file's line
// number and a one-line message that says what to change. A file with a
// mistake is not used (a firmware that half-understood its wiring must not
// start), but reading goes on past it: a line with a mistake is left out,
// and every mistake of the file is reported (`ConfigErrors`: the first 16
// in file order, then a count), so the wearer fixes them in one go. What a
// failed line would have given is not reported again (a pattern whose line
// has a mistake is not also "undefined" where it is used; a board whose
// only output line has one does not also "have no outputs"). `parse`
// throws the file's first mistake, for callers that report one.
// A file may start with a UTF-8 byte-order mark (Windows Notepad's "UTF-8
// with BOM"), which is not text; CRLF line ends are whitespace.
//
//   Config.swift        this overview and `ConfigError`
//   Lexer.swift         lines to words: comments, quotes, key=value
//   Words.swift         shared value parsers (numbers, yes/no, names)
//   Board.swift         `BoardConfig` (its lines are Platform's `BoardLines`) and the board file parser
//   Policy.swift        `PolicyConfig` and its parts
//   PolicyParser.swift  the policy file parser

import Bounded

/// A mistake in a configuration file.
public struct ConfigError: LineError, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// A setting or option the file format does not have.
        case unknownKey
        /// A line that cannot be understood, or names something the board
        /// does not have (an output, a button).
        case badLine
        /// The same name, physical line or setting given twice.
        case duplicate
        /// A number outside its allowed range (milliseconds, priorities,
        /// repeat counts, line offsets).
        case outOfRange
        /// A pattern name that no `pattern` line defines.
        case unknownPattern
        /// A name that is not one of the ANCS categories.
        case badCategory
        /// Something the file must contain is absent (line 0: the file as a
        /// whole).
        case missing
    }

    /// 1-based line in the file; 0 when the mistake is about the whole file.
    public var line: Int
    public var kind: Kind
    /// One line saying what is wrong and what to do about it.
    public var message: String

    public init(line: Int, _ kind: Kind, _ message: String) {
        self.line = line
        self.kind = kind
        self.message = message
    }

    public var description: String { line > 0 ? "line \(line): \(message)" : message }

    /// "board/pi4/board.conf:12: message", the way compilers report, so
    /// editors can jump to the line.
    public func located(in path: String) -> String {
        line > 0 ? "\(path):\(line): \(message)" : "\(path): \(message)"
    }
}

/// Every mistake of one file (up to `ConfigErrors.capacity`, in file order).
public typealias ConfigErrors = FileErrors<ConfigError>

extension FileErrors where E == ConfigError {
    /// One line per mistake, as `ConfigError.located(in:)` prints it, and
    /// one more with how many were not kept.
    public func located(in path: String) -> [String] {
        var lines: [String] = []
        for i in 0..<count { lines.append(self[i].located(in: path)) }
        if notKept > 0 { lines.append("\(path): \(notKept) more error\(notKept == 1 ? "" : "s") after these") }
        return lines
    }
}
