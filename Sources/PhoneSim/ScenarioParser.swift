// SPDX-License-Identifier: Apache-2.0
// Parsing one scenario line into a `ScenarioCommand`, without allocating:
// the line is tokenised into ranges of the caller's bytes (at most
// `maxTokens`), values are copied straight into the command's inline
// storage, and every refusal is a `ScenarioError` naming line and column.
//
// Tokens are separated by spaces or tabs. A token is a bare word, a quoted
// string ("..." with \" \\ \n \t), or key=value where the value is bare or
// quoted. `#` at the start of a token begins a comment. Words (commands,
// keys, categories, flags) match case-insensitively.

import AMS
import ANCS
import ATT
import Bounded
import CTS

public enum ScenarioParser {
    public static let maxLineBytes = 2048
    public static let maxTokens = 24
    /// The date a notification gets when its line names none.
    public static let defaultDate: StaticString = "20260101T120000"
    /// Longest `sleep` or wait timeout: one day.
    public static let maxDurationMs: UInt64 = 86_400_000
    /// Most notifications one line may post (`count=`).
    public static let maxCount: UInt64 = 1_000

    /// Parses one line (without its newline). Nil for a blank or comment line.
    public static func parse(_ line: Span<UInt8>, lineNumber: Int) throws(ScenarioError) -> ScenarioCommand? {
        guard line.count <= maxLineBytes else { throw ScenarioError(line: lineNumber, column: maxLineBytes + 1, kind: .lineTooLong) }
        let tokens = try tokenize(line, lineNumber: lineNumber)
        guard tokens.count > 0 else { return nil }
        let p = Arguments(tokens: tokens, lineNumber: lineNumber)
        let verb = tokens[0]
        guard !verb.hasKey, !verb.quoted else { throw p.error(.unknownCommand, at: verb) }

        if matches(line, verb, "existing") || matches(line, verb, "notify") {
            var spec = NotificationSpec(category: try category(line, try p.positional(0, what: "category"), p))
            try p.expectPositionals(1)
            try options(line, p, into: &spec)
            return matches(line, verb, "existing") ? .existing(spec) : .notify(spec)
        }
        if matches(line, verb, "call") {
            var spec = NotificationSpec(category: .incomingCall, flags: [.positiveAction, .negativeAction])
            copy(line, try p.positional(0, what: "name"), into: &spec.content.title)
            assign(&spec.content.appIdentifier, "com.apple.mobilephone")
            assign(&spec.content.message, "Incoming Call")
            assign(&spec.content.positiveLabel, "Answer")
            assign(&spec.content.negativeLabel, "Decline")
            try p.expectPositionals(1)
            try options(line, p, into: &spec)
            return .notify(spec)
        }
        if matches(line, verb, "message") {
            var spec = NotificationSpec(category: .social, flags: [.negativeAction])
            copy(line, try p.positional(0, what: "name"), into: &spec.content.title)
            copy(line, try p.positional(1, what: "text"), into: &spec.content.message)
            assign(&spec.content.appIdentifier, "com.apple.MobileSMS")
            assign(&spec.content.negativeLabel, "Clear")
            try p.expectPositionals(2)
            try options(line, p, into: &spec)
            return .notify(spec)
        }
        if matches(line, verb, "email") {
            var spec = NotificationSpec(category: .email, flags: [.negativeAction])
            copy(line, try p.positional(0, what: "name"), into: &spec.content.title)
            copy(line, try p.positional(1, what: "subject"), into: &spec.content.subtitle)
            assign(&spec.content.appIdentifier, "com.apple.mobilemail")
            assign(&spec.content.negativeLabel, "Clear")
            try p.expectPositionals(2)
            try options(line, p, into: &spec)
            return .notify(spec)
        }
        if matches(line, verb, "remove") {
            let uid = try number(line, try p.positional(0, what: "uid"), max: UInt64(UInt32.max), p)
            try p.expectOnly(positionals: 1)
            return .remove(uid: UInt32(uid))
        }
        if matches(line, verb, "app") {
            var id = AppIdentifier()
            var name = AppDisplayName()
            copy(line, try p.positional(0, what: "app-id"), into: &id)
            copy(line, try p.positional(1, what: "display-name"), into: &name)
            try p.expectOnly(positionals: 2)
            return .app(id, name)
        }
        if matches(line, verb, "sleep") {
            let ms = try number(line, try p.positional(0, what: "ms"), max: maxDurationMs, p)
            try p.expectOnly(positionals: 1)
            return .sleep(ms: Int64(ms))
        }
        if matches(line, verb, "wait-subscribed") {
            var timeoutMs: Int64? = nil
            if let t = p.optionalPositional(0) { timeoutMs = Int64(try number(line, t, max: maxDurationMs, p)) }
            try p.expectOnly(positionals: 1)
            return .waitSubscribed(timeoutMs: timeoutMs)
        }
        if matches(line, verb, "wait-action") {
            let uid = try number(line, try p.positional(0, what: "uid"), max: UInt64(UInt32.max), p)
            var timeoutMs: Int64? = nil
            if let t = p.optionalPositional(1) { timeoutMs = Int64(try number(line, t, max: maxDurationMs, p)) }
            try p.expectOnly(positionals: 2)
            return .waitAction(uid: UInt32(uid), timeoutMs: timeoutMs)
        }
        if matches(line, verb, "error") {
            let code = try number(line, try p.positional(0, what: "code"), max: 0xFF, p)
            var count = 1
            if let t = p.optionalPositional(1) { count = Int(try number(line, t, max: 1000, p)) }
            guard count > 0 else { throw p.error(.numberOutOfRange, at: p.optionalPositional(1) ?? verb) }
            try p.expectOnly(positionals: 2)
            return .error(code: UInt8(code), count: count)
        }
        if matches(line, verb, "lose-response") {
            var count = 1
            if let t = p.optionalPositional(0) { count = Int(try number(line, t, max: 1000, p)) }
            guard count > 0 else { throw p.error(.numberOutOfRange, at: p.optionalPositional(0) ?? verb) }
            try p.expectOnly(positionals: 1)
            return .loseResponses(count: count)
        }
        if matches(line, verb, "replay-flag") {
            let t = try p.positional(0, what: "on|off")
            try p.expectOnly(positionals: 1)
            if matches(line, t, "on") { return .replayFlag(on: true) }
            if matches(line, t, "off") { return .replayFlag(on: false) }
            throw p.error(.unknownWord, at: t)
        }
        if matches(line, verb, "mtu") {
            let t = try p.positional(0, what: "mtu")
            let mtu = try number(line, t, max: UInt64(ATTMTU.maximum), p)
            guard mtu >= UInt64(ATTMTU.minimum) else { throw p.error(.numberOutOfRange, at: t) }
            try p.expectOnly(positionals: 1)
            return .mtu(Int(mtu))
        }
        if matches(line, verb, "share") {
            let word = try p.positional(0, what: "on|off")
            if matches(line, word, "on") {
                try p.expectOnly(positionals: 1)
                return .share(refusal: 0)
            }
            guard matches(line, word, "off") else { throw p.error(.unknownWord, at: word) }
            var code: UInt64 = 0x08
            if let t = p.optionalPositional(1) {
                code = try number(line, t, max: 0xFF, p)
                guard code != 0 else { throw p.error(.numberOutOfRange, at: t) }
            }
            try p.expectOnly(positionals: 2)
            return .share(refusal: UInt8(code))
        }
        if matches(line, verb, "hide-ancs") {
            let word = try p.positional(0, what: "encrypted|bonded|off")
            try p.expectOnly(positionals: 1)
            if matches(line, word, "encrypted") { return .hideANCS(.untilEncrypted) }
            if matches(line, word, "bonded") { return .hideANCS(.untilBonded) }
            if matches(line, word, "off") { return .hideANCS(.never) }
            throw p.error(.unknownWord, at: word)
        }
        if matches(line, verb, "encrypt-delay") {
            let ms = try number(line, try p.positional(0, what: "ms"), max: maxDurationMs, p)
            try p.expectOnly(positionals: 1)
            return .encryptDelay(ms: Int64(ms))
        }
        if matches(line, verb, "media") {
            let word = try p.positional(0, what: "play|pause|unavailable")
            try p.expectOnly(positionals: 1)
            if matches(line, word, "play") { return .media(.playing) }
            if matches(line, word, "pause") { return .media(.paused) }
            if matches(line, word, "unavailable") { return .media(.unavailable) }
            throw p.error(.unknownWord, at: word)
        }
        if matches(line, verb, "wait-media") {
            let word = try p.positional(0, what: "command")
            var found: RemoteCommandID? = nil
            for raw in 0..<UInt8(14) {
                if let c = RemoteCommandID(rawValue: raw), matches(line, word, c.name) { found = c }
            }
            guard let command = found else { throw p.error(.unknownWord, at: word) }
            var timeoutMs: Int64? = nil
            if let t = p.optionalPositional(1) { timeoutMs = Int64(try number(line, t, max: maxDurationMs, p)) }
            try p.expectOnly(positionals: 2)
            return .waitMedia(command: command, timeoutMs: timeoutMs)
        }
        if matches(line, verb, "time") {
            let t = try p.positional(0, what: "YYYY-MM-DDTHH:MM:SS")
            try p.expectOnly(positionals: 1)
            let (local, offset) = try time(line, t, p)
            return .time(local, utcOffsetMin: offset)
        }
        let command: ScenarioCommand
        if matches(line, verb, "no-ams") {
            command = .noAMS
        } else if matches(line, verb, "no-cts") {
            command = .noCTS
        } else if matches(line, verb, "drop-subscription") {
            command = .dropSubscription
        } else if matches(line, verb, "ns-dead") {
            command = .notificationSourceDead
        } else if matches(line, verb, "service-changed") {
            command = .serviceChanged
        } else if matches(line, verb, "remove-ancs") {
            command = .removeANCS
        } else if matches(line, verb, "add-ancs") {
            command = .addANCS
        } else if matches(line, verb, "connect") {
            command = .connect
        } else if matches(line, verb, "disconnect") {
            command = .disconnect
        } else if matches(line, verb, "forget") {
            command = .forget
        } else if matches(line, verb, "quit") {
            command = .quit
        } else {
            throw p.error(.unknownCommand, at: verb)
        }
        try p.expectOnly(positionals: 0)
        return command
    }

    // MARK: Notification options

    struct Key: OptionSet {
        var rawValue: UInt16
        static let uid = Key(rawValue: 1 << 0)
        static let app = Key(rawValue: 1 << 1)
        static let title = Key(rawValue: 1 << 2)
        static let subtitle = Key(rawValue: 1 << 3)
        static let message = Key(rawValue: 1 << 4)
        static let date = Key(rawValue: 1 << 5)
        static let flags = Key(rawValue: 1 << 6)
        static let positiveLabel = Key(rawValue: 1 << 7)
        static let negativeLabel = Key(rawValue: 1 << 8)
        static let count = Key(rawValue: 1 << 9)
    }

    static func options(_ line: Span<UInt8>, _ p: Arguments, into spec: inout NotificationSpec) throws(ScenarioError) {
        var seen: Key = []
        for i in 1..<p.tokens.count where p.tokens[i].hasKey {
            let t = p.tokens[i]
            let k: Key
            if matchesKey(line, t, "uid") {
                k = .uid
                spec.uid = UInt32(try number(line, t, max: UInt64(UInt32.max), p))
            } else if matchesKey(line, t, "app") {
                k = .app
                spec.content.appIdentifier.removeAll()
                copy(line, t, into: &spec.content.appIdentifier)
            } else if matchesKey(line, t, "title") {
                k = .title
                spec.content.title.removeAll()
                copy(line, t, into: &spec.content.title)
            } else if matchesKey(line, t, "subtitle") {
                k = .subtitle
                spec.content.subtitle.removeAll()
                copy(line, t, into: &spec.content.subtitle)
            } else if matchesKey(line, t, "message") {
                k = .message
                spec.content.message.removeAll()
                copy(line, t, into: &spec.content.message)
            } else if matchesKey(line, t, "date") {
                k = .date
                spec.content.date.removeAll()
                copy(line, t, into: &spec.content.date)
                guard isDate(line, t) else { throw p.error(.badDate, at: t) }
            } else if matchesKey(line, t, "flags") {
                k = .flags
                spec.flags = try flags(line, t, p)
            } else if matchesKey(line, t, "positive-label") {
                k = .positiveLabel
                spec.content.positiveLabel.removeAll()
                copy(line, t, into: &spec.content.positiveLabel)
            } else if matchesKey(line, t, "count") {
                k = .count
                spec.count = Int(try number(line, t, max: maxCount, p))
                guard spec.count > 0 else { throw p.error(.numberOutOfRange, at: t) }
            } else if matchesKey(line, t, "negative-label") {
                k = .negativeLabel
                spec.content.negativeLabel.removeAll()
                copy(line, t, into: &spec.content.negativeLabel)
            } else {
                throw p.error(.unknownKey, at: t)
            }
            guard !seen.contains(k) else { throw p.error(.duplicateKey, at: t) }
            seen.insert(k)
        }
        if !seen.contains(.date) { assign(&spec.content.date, defaultDate) }
    }

    static func category(_ line: Span<UInt8>, _ t: Token, _ p: Arguments) throws(ScenarioError) -> CategoryID {
        if t.end > t.start, isDigit(line[t.start]) {
            return CategoryID(rawValue: UInt8(try number(line, t, max: 0xFF, p)))
        }
        for raw in 0..<UInt8(CategoryID.knownCount) {
            let candidate = CategoryID(rawValue: raw)
            if equalsIgnoringCase(line, t.start..<t.end, candidate.name) { return candidate }
        }
        throw p.error(.unknownCategory, at: t)
    }

    static func flags(_ line: Span<UInt8>, _ t: Token, _ p: Arguments) throws(ScenarioError) -> EventFlags {
        var result: EventFlags = []
        var start = t.start
        while start <= t.end {
            var end = start
            while end < t.end, line[end] != ASCII.comma { end += 1 }
            let piece = start..<end
            if equalsIgnoringCase(line, piece, "important") {
                result.insert(.important)
            } else if equalsIgnoringCase(line, piece, "silent") {
                result.insert(.silent)
            } else if equalsIgnoringCase(line, piece, "positive") {
                result.insert(.positiveAction)
            } else if equalsIgnoringCase(line, piece, "negative") {
                result.insert(.negativeAction)
            } else if !(equalsIgnoringCase(line, piece, "none") && t.end - t.start == 4) {
                throw ScenarioError(line: p.lineNumber, column: start + 1, kind: .unknownFlag)
            }
            start = end + 1
        }
        return result
    }

    static func isDate(_ line: Span<UInt8>, _ t: Token) -> Bool {
        guard t.end - t.start == 15 else { return false }
        for i in 0..<15 {
            let c = line[t.start + i]
            if i == 8 {
                guard c == UInt8(ascii: "T") else { return false }
            } else if !isDigit(c) {
                return false
            }
        }
        return true
    }

    /// `YYYY-MM-DDTHH:MM:SS` and an optional `+HH:MM` or `-HH:MM`: a local
    /// time and its UTC offset in minutes. A refusal names the column of
    /// the field at fault.
    static func time(_ line: Span<UInt8>, _ t: Token, _ p: Arguments) throws(ScenarioError) -> (CivilDateTime, Int?) {
        let length = t.end - t.start
        let fail = { (offset: Int) in ScenarioError(line: p.lineNumber, column: t.column + min(offset, length), kind: .badTime) }
        // Field by field: where it starts in the token, its digits, the byte after it.
        var values = InlineArray<8, Int>(repeating: 0)
        let layout: InlineArray<8, (at: Int, width: Int, then: UInt8)> = [
            (0, 4, UInt8(ascii: "-")), (5, 2, UInt8(ascii: "-")), (8, 2, UInt8(ascii: "T")), (11, 2, UInt8(ascii: ":")),
            (14, 2, UInt8(ascii: ":")), (17, 2, 0), (20, 2, UInt8(ascii: ":")), (23, 2, 0),
        ]
        for f in 0..<8 {
            if f == 6 {
                guard length > 19 else { break }
                let sign = line[t.start + 19]
                guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { throw fail(19) }
            }
            let (at, width, then) = layout[f]
            guard let value = digits(line, t.start + at, width, end: t.end) else { throw fail(at) }
            values[f] = value
            if then != 0 {
                guard at + width < length, lower(line[t.start + at + width]) == lower(then) else { throw fail(at + width) }
            }
        }
        guard length == 19 || length == 25 else { throw fail(length == 19 ? 19 : 25) }
        guard let local = CivilDateTime(year: values[0], month: values[1], day: values[2], hour: values[3], minute: values[4], second: values[5])
        else { throw fail(0) }
        guard length == 25 else { return (local, nil) }
        let magnitude = values[6] * 60 + values[7]
        let offset = line[t.start + 19] == UInt8(ascii: "-") ? -magnitude : magnitude
        guard values[7] < 60, offset % 15 == 0, (-12 * 60...14 * 60).contains(offset) else { throw fail(19) }
        return (local, offset)
    }

    /// The decimal number of `width` digits at `start`; nil when one is not
    /// a digit or the token ends first.
    static func digits(_ line: Span<UInt8>, _ start: Int, _ width: Int, end: Int) -> Int? {
        guard start + width <= end else { return nil }
        var value = 0
        for i in start..<start + width {
            guard isDigit(line[i]) else { return nil }
            value = value * 10 + Int(line[i] - UInt8(ascii: "0"))
        }
        return value
    }

    /// Decimal, or hexadecimal after `0x`.
    static func number(_ line: Span<UInt8>, _ t: Token, max: UInt64, _ p: Arguments) throws(ScenarioError) -> UInt64 {
        var i = t.start
        var radix: UInt64 = 10
        if t.end - t.start > 2, line[i] == UInt8(ascii: "0"), line[i + 1] | 0x20 == UInt8(ascii: "x") {
            radix = 16
            i += 2
        }
        guard i < t.end else { throw p.error(.badNumber, at: t) }
        var value: UInt64 = 0
        while i < t.end {
            let c = line[i]
            let digit: UInt64
            if isDigit(c) {
                digit = UInt64(c - UInt8(ascii: "0"))
            } else if radix == 16, c | 0x20 >= UInt8(ascii: "a"), c | 0x20 <= UInt8(ascii: "f") {
                digit = UInt64((c | 0x20) - UInt8(ascii: "a") + 10)
            } else {
                throw p.error(.badNumber, at: t)
            }
            value = value * radix + digit
            guard value <= max else { throw p.error(.numberOutOfRange, at: t) }
            i += 1
        }
        return value
    }
}
