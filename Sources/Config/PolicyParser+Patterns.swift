// SPDX-License-Identifier: Apache-2.0
// The policy parser's pattern lines (`pattern NAME steps…`), read before
// every other line so any line may use a pattern defined further down.

import ANCS
import Bounded
import Feedback

extension PolicyParser {
    // MARK: Patterns

    mutating func takePattern(_ line: ConfigLine) throws(ConfigError) {
        let number = line.number
        // `on=200` reads as `on 200`: the tokens are the words' keys and values.
        var tokens: [Text] = []
        for word in line.arguments {
            tokens.append(word.key)
            if let value = word.value { tokens.append(value) }
        }
        guard let name = tokens.first else {
            throw ConfigError(line: number, .badLine, "pattern needs a name and steps: e.g. `pattern blink on 200 off 800`")
        }
        try Words.checkName(name, what: "the pattern", line: number)
        if let i = patterns.firstIndex(where: { name.matches($0.name) }) {
            throw ConfigError(line: number, .duplicate, "pattern \(name) is already defined on line \(patternLines[i])")
        }
        guard patterns.count < PolicyConfig.maxPatterns else {
            throw ConfigError(line: number, .badLine, "a policy has at most \(PolicyConfig.maxPatterns) patterns")
        }
        let pattern: Pattern
        do throws(ConfigError) { pattern = try Self.pattern(tokens, name: name, line: number) } catch {
            // The name is defined all the same, by a stand-in that ends by
            // itself, so the lines that use it are not reported again: this
            // line's mistake says what to fix.
            patterns.append(NamedPattern(name: name.description, pattern: try! Pattern([.on(1)], repeats: .times(1))))
            patternLines.append(number)
            throw error
        }
        patterns.append(NamedPattern(name: name.description, pattern: pattern))
        patternLines.append(number)
    }

    /// The steps, repeat and final level after a pattern's name.
    private static func pattern(_ tokens: [Text], name: Text, line number: Int) throws(ConfigError) -> Pattern {
        var steps: [PatternStep] = []
        var repeats: PatternRepeat? = nil
        var finalLevel: OutputLevel? = nil
        var i = 1
        func next(after keyword: Text, expecting: String) throws(ConfigError) -> Text {
            guard i + 1 < tokens.count else {
                throw ConfigError(line: number, .badLine, "'\(keyword)' must be followed by \(expecting)")
            }
            i += 1
            return tokens[i]
        }
        while i < tokens.count {
            let token = tokens[i]
            switch token {
            case "on", "off":
                let text = try next(after: token, expecting: "a duration in ms")
                let ms = try Words.integer(text, in: Pattern.durationRangeMs, what: token.description, unit: " ms", line: number)
                guard steps.count < Pattern.maxSteps else {
                    throw ConfigError(line: number, .badLine, "pattern \(name) has more than \(Pattern.maxSteps) steps")
                }
                steps.append(PatternStep(token.matches("on") ? .on : .off, durationMs: ms))
            case "repeat":
                guard repeats == nil else { throw ConfigError(line: number, .duplicate, "repeat is given twice") }
                let text = try next(after: token, expecting: "a count or `forever`")
                if text.matches("forever") {
                    repeats = .untilStopped
                } else {
                    let range = Int64(Pattern.repeatCountRange.lowerBound)...Int64(Pattern.repeatCountRange.upperBound)
                    repeats = .times(Int(try Words.integer(text, in: range, what: "repeat", line: number)))
                }
            case "then":
                guard finalLevel == nil else { throw ConfigError(line: number, .duplicate, "then is given twice") }
                switch try next(after: token, expecting: "on or off") {
                case "on": finalLevel = .on
                case "off": finalLevel = .off
                case let other: throw ConfigError(line: number, .badLine, "then takes on or off, not '\(other)'")
                }
            default:
                throw ConfigError(
                    line: number, .badLine,
                    "unexpected '\(token)' in pattern \(name): write steps like `on 200 off 800`, then optionally `repeat 3` or `repeat forever`, and `then on`"
                )
            }
            i += 1
        }
        do throws(PatternError) {
            return try Pattern(steps, repeats: repeats ?? .times(1), finalLevel: finalLevel)
        } catch {
            throw ConfigError(line: number, .badLine, Self.message(error, pattern: name.description))
        }
    }

    private static func message(_ error: PatternError, pattern name: String) -> String {
        switch error {
        case .empty: "pattern \(name) has no steps: e.g. `pattern \(name) on 200 off 800`"
        case .tooManySteps(let count): "pattern \(name) has \(count) steps: at most \(Pattern.maxSteps)"
        case .durationOutOfRange(let index, let ms): "step \(index + 1) of pattern \(name) lasts \(ms) ms: use 1...60000"
        case .repeatCountOutOfRange(let count): "pattern \(name) repeats \(count) times: use 1...10000 or forever"
        case .finalLevelWithoutEnd: "pattern \(name) repeats forever, so it never reaches its `then` level: give a repeat count or drop `then`"
        }
    }
}
