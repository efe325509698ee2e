// SPDX-License-Identifier: Apache-2.0
// The scenario language's tokens (ScenarioParser.swift has the grammar):
// a line split into at most 24 words in a fixed array (no allocation),
// `key=value` and double-quoted words, and the byte helpers the commands
// use to compare and copy them.

import AMS
import ANCS
import ATT
import Bounded
import CTS

extension ScenarioParser {
    // MARK: Tokens

    struct Token {
        var hasKey = false
        var keyStart = 0
        var keyEnd = 0
        /// The value (inside the quotes for a quoted one).
        var start = 0
        var end = 0
        var quoted = false
        /// 1-based column of the token's first byte.
        var column = 0
    }

    struct Tokens {
        var storage = InlineArray<24, Token>(repeating: Token())
        var count = 0

        subscript(i: Int) -> Token { storage[i] }

        mutating func append(_ t: Token) {
            storage[count] = t
            count += 1
        }
    }

    /// The tokens after the command word, split into positional and keyed.
    struct Arguments {
        let tokens: Tokens
        let lineNumber: Int

        func error(_ kind: ScenarioError.Kind, at t: Token) -> ScenarioError {
            ScenarioError(line: lineNumber, column: t.column, kind: kind)
        }

        /// Positional argument `index` (0 is the first after the command).
        func optionalPositional(_ index: Int) -> Token? {
            var n = 0
            for i in 1..<tokens.count where !tokens[i].hasKey {
                if n == index { return tokens[i] }
                n += 1
            }
            return nil
        }

        func positional(_ index: Int, what: Name) throws(ScenarioError) -> Token {
            guard let t = optionalPositional(index) else {
                let last = tokens[tokens.count - 1]
                throw ScenarioError(line: lineNumber, column: last.column, kind: .missingArgument(what: what))
            }
            return t
        }

        /// No more than `count` positional arguments.
        func expectPositionals(_ count: Int) throws(ScenarioError) {
            if let extra = optionalPositional(count) { throw error(.unexpectedArgument, at: extra) }
        }

        /// No more than `count` positional arguments and no options.
        func expectOnly(positionals count: Int) throws(ScenarioError) {
            try expectPositionals(count)
            for i in 1..<max(1, tokens.count) where tokens[i].hasKey { throw error(.unexpectedArgument, at: tokens[i]) }
        }
    }

    static func tokenize(_ line: Span<UInt8>, lineNumber: Int) throws(ScenarioError) -> Tokens {
        var tokens = Tokens()
        var i = 0
        let n = line.count
        while true {
            while i < n, isSpace(line[i]) { i += 1 }
            if i >= n || line[i] == ASCII.hash { break }
            guard tokens.count < maxTokens else { throw ScenarioError(line: lineNumber, column: i + 1, kind: .tooManyArguments) }
            var t = Token()
            t.column = i + 1
            if line[i] == ASCII.quote {
                let close = try closingQuote(line, openingAt: i, lineNumber: lineNumber)
                t.start = i + 1
                t.end = close
                t.quoted = true
                i = close + 1
            } else {
                var j = i
                while j < n, !isSpace(line[j]), line[j] != ASCII.equals, line[j] != ASCII.quote { j += 1 }
                if j < n, line[j] == ASCII.equals {
                    guard j > i else { throw ScenarioError(line: lineNumber, column: i + 1, kind: .expectedSpace) }
                    t.hasKey = true
                    t.keyStart = i
                    t.keyEnd = j
                    j += 1
                    if j < n, line[j] == ASCII.quote {
                        let close = try closingQuote(line, openingAt: j, lineNumber: lineNumber)
                        t.start = j + 1
                        t.end = close
                        t.quoted = true
                        i = close + 1
                    } else {
                        let s = j
                        while j < n, !isSpace(line[j]), line[j] != ASCII.quote { j += 1 }
                        guard j > s else { throw ScenarioError(line: lineNumber, column: s + 1, kind: .missingValue) }
                        t.start = s
                        t.end = j
                        i = j
                    }
                } else {
                    t.start = i
                    t.end = j
                    i = j
                }
            }
            if i < n, !isSpace(line[i]), line[i] != ASCII.hash { throw ScenarioError(line: lineNumber, column: i + 1, kind: .expectedSpace) }
            tokens.append(t)
        }
        return tokens
    }

    /// The index of the quote closing the string that opens at `q`.
    static func closingQuote(_ line: Span<UInt8>, openingAt q: Int, lineNumber: Int) throws(ScenarioError) -> Int {
        var k = q + 1
        while k < line.count {
            let c = line[k]
            if c == ASCII.backslash {
                let e: UInt8 = k + 1 < line.count ? line[k + 1] : 0
                guard e == ASCII.quote || e == ASCII.backslash || e == UInt8(ascii: "n") || e == UInt8(ascii: "t") else {
                    throw ScenarioError(line: lineNumber, column: k + 1, kind: .badEscape)
                }
                k += 2
                continue
            }
            if c == ASCII.quote { return k }
            k += 1
        }
        throw ScenarioError(line: lineNumber, column: q + 1, kind: .unterminatedQuote)
    }

    // MARK: Bytes

    /// Copies a token's value, resolving escapes in a quoted one; what does
    /// not fit is cut and flagged by `InlineBytes`.
    static func copy<let N: Int>(_ line: Span<UInt8>, _ t: Token, into out: inout InlineBytes<N>) {
        var k = t.start
        while k < t.end {
            var b = line[k]
            if t.quoted, b == ASCII.backslash {
                k += 1
                b = line[k]
                if b == UInt8(ascii: "n") { b = 0x0A } else if b == UInt8(ascii: "t") { b = 0x09 }
            }
            out.append(b)
            k += 1
        }
    }

    static func assign<let N: Int>(_ out: inout InlineBytes<N>, _ text: StaticString) {
        out.removeAll()
        text.withUTF8Buffer { for b in $0 { out.append(b) } }
    }

    static func matches(_ line: Span<UInt8>, _ t: Token, _ text: StaticString) -> Bool {
        !t.hasKey && !t.quoted && equalsIgnoringCase(line, t.start..<t.end, text)
    }

    static func matchesKey(_ line: Span<UInt8>, _ t: Token, _ text: StaticString) -> Bool {
        t.hasKey && equalsIgnoringCase(line, t.keyStart..<t.keyEnd, text)
    }

    static func equalsIgnoringCase(_ line: Span<UInt8>, _ range: Range<Int>, _ text: StaticString) -> Bool {
        text.withUTF8Buffer { word in
            guard word.count == range.count else { return false }
            for i in 0..<word.count where lower(line[range.lowerBound + i]) != lower(word[i]) { return false }
            return true
        }
    }

    static func lower(_ c: UInt8) -> UInt8 { c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c }
    static func isSpace(_ c: UInt8) -> Bool { c == ASCII.space || c == ASCII.tab || c == ASCII.cr || c == ASCII.newline }
    static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}


enum ASCII {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let hash: UInt8 = 0x23
    static let comma: UInt8 = 0x2C
    static let equals: UInt8 = 0x3D
    static let backslash: UInt8 = 0x5C
}
