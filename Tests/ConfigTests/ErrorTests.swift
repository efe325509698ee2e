// SPDX-License-Identifier: Apache-2.0
import Config
import Testing
import TestSupport

/// Every mistake is reported with its line and a message that says what to
/// change. Messages are checked word for word where they are the only
/// guidance a wearer gets.
@Suite("Board file errors")
struct BoardErrorTests {
    @Test("unknown setting: named, with the settings that exist")
    func unknownSetting() {
        let e = boardError("name x\ncolour red\n")
        #expect(e == ConfigError(line: 2, .unknownKey, "unknown setting 'colour': a board file has name, bluetooth-name, battery, battery-poll-s, chip, output, button, debounce-ms, long-press-ms and double-press-ms"))
    }

    @Test("unknown option: outputs take no bias, buttons no kind")
    func unknownOption() {
        #expect(boardError("name x\noutput led bias=pull-up\n") == ConfigError(line: 2, .unknownKey, "unknown output option 'bias': use line=, chip=, active-low= or kind="))
        #expect(boardError("name x\noutput led\nbutton b kind=motor\n") == ConfigError(line: 3, .unknownKey, "unknown button option 'kind': use line=, chip=, active-low= or bias="))
    }

    @Test("an offset with no chip anywhere is a bad line")
    func offsetWithoutChip() {
        #expect(boardError("name x\noutput a line=17\nbutton b\n") == ConfigError(line: 2, .badLine, "line=17 is an offset on a chip, but no chip is given: add chip=gpiochip0 (see gpiodetect) or a `chip` line"))
    }

    @Test("bad values name the choices")
    func badValues() {
        #expect(boardError("name x\noutput a active-low=maybe\n") == ConfigError(line: 2, .badLine, "active-low takes yes or no, not 'maybe'"))
        #expect(boardError("name x\noutput a\nbutton b bias=up\n") == ConfigError(line: 3, .badLine, "bias takes pull-up, pull-down, disable or as-is, not 'up'"))
        #expect(boardError("name x\noutput a kind=buzzer\n") == ConfigError(line: 2, .badLine, "kind takes led or motor, not 'buzzer'"))
        #expect(boardError("name x\ndebounce-ms soon\n") == ConfigError(line: 2, .badLine, "debounce-ms needs a whole number, not 'soon'"))
        #expect(boardError("name two words\n") == ConfigError(line: 1, .badLine, "name takes one value: e.g. `name my-wearable`"))
        #expect(boardError("name x\noutput a b\n") == ConfigError(line: 2, .badLine, "unexpected 'b': output options are written key=value"))
        #expect(boardError("name x\noutput le/d\n") == ConfigError(line: 2, .badLine, "the output name 'le/d' may use only letters, digits, '-', '_' and '.'"))
    }

    @Test("an unclosed quote is a bad line")
    func unclosedQuote() {
        #expect(boardError("name x\n\noutput a line=\"GPIO 5\n") == ConfigError(line: 3, .badLine, "a double quote is not closed: end the text with \""))
    }

    @Test("too many buttons for the poll table")
    func tooManyButtons() {
        let e = boardError("name x\noutput a\n" + (1...5).map { "button b\($0)\n" }.joined())
        #expect(e == ConfigError(line: 7, .badLine, "a board has at most 4 buttons (each one takes a slot in the poll table)"))
    }

    @Test("the same output or button name twice is a duplicate, pointing at the first")
    func duplicateName() {
        #expect(boardError("name x\noutput led\noutput led\n") == ConfigError(line: 3, .duplicate, "led is already defined as an output on line 2"))
        #expect(boardError("name x\nbutton go\noutput go\n") == ConfigError(line: 3, .duplicate, "go is already defined as a button on line 2"))
    }

    @Test("the same physical line twice is a duplicate, by name or by offset on the same chip")
    func duplicateLine() {
        #expect(boardError("name x\noutput a line=GPIO17\nbutton b line=GPIO17\n") == ConfigError(line: 3, .duplicate, "line GPIO17 is already used by output a on line 2: each output and button needs its own line"))
        #expect(boardError("name x\nchip gpiochip0\noutput a line=4\noutput b line=4 chip=gpiochip0\nbutton c\n") == ConfigError(line: 4, .duplicate, "line offset 4 is already used by output a on line 3: each output and button needs its own line"))
        #expect(boardError("name x\noutput a line=GPIO5 chip=c0\nbutton b line=GPIO5\n")?.kind == .duplicate)
    }

    @Test("a setting given twice is a duplicate")
    func duplicateSetting() {
        #expect(boardError("name a\nname b\n") == ConfigError(line: 2, .duplicate, "name is already set on line 1"))
        #expect(boardError("name a\noutput o line=1 line=2 chip=c\n") == ConfigError(line: 2, .duplicate, "line= is given twice"))
    }

    @Test("milliseconds and offsets out of range")
    func outOfRange() {
        #expect(boardError("name x\ndebounce-ms 500\n") == ConfigError(line: 2, .outOfRange, "debounce-ms 500 is out of range: use 0...200 ms"))
        #expect(boardError("name x\nlong-press-ms -1\n") == ConfigError(line: 2, .outOfRange, "long-press-ms -1 is out of range: use 300...10000 ms"))
        #expect(boardError("name x\ndouble-press-ms 2001\n")?.kind == .outOfRange)
        #expect(boardError("name x\noutput a line=5000 chip=c\n") == ConfigError(line: 2, .outOfRange, "line offset 5000 is out of range: use 0...1023"))
    }

    @Test("a file without a name, outputs or buttons says what to add")
    func missing() {
        #expect(boardError("output a\nbutton b\n") == ConfigError(line: 0, .missing, "the board file has no name: add a line like `name my-wearable`"))
        #expect(boardError("name x\nbutton b\n") == ConfigError(line: 0, .missing, "the board has no outputs: add e.g. `output led-notify line=GPIO17`"))
        #expect(boardError("name x\noutput a\n") == ConfigError(line: 0, .missing, "the board has no buttons: add e.g. `button accept line=GPIO22`"))
    }

    @Test("errors print as file:line: message")
    func located() {
        let e = ConfigError(line: 4, .badLine, "oops")
        #expect(e.description == "line 4: oops")
        #expect(e.located(in: "board/x.conf") == "board/x.conf:4: oops")
        #expect(ConfigError(line: 0, .missing, "none").located(in: "b.conf") == "b.conf: none")
    }
}

@Suite("Policy file errors")
struct PolicyErrorTests {
    @Test("unknown setting and unknown options")
    func unknownKeys() {
        #expect(policyError("alret Other\n") == ConfigError(line: 1, .unknownKey, "unknown setting 'alret': a policy file has pattern, alert, rule, unread, button, feedback, quiet, realert-on-modified, ring-limit-ms and phone-lost-ms"))
        #expect(policyError("unread led-notify colour=red\n") == ConfigError(line: 1, .unknownKey, "unknown unread option 'colour': use categories="))
        #expect(policyError("button accept double=positive\n") == ConfigError(line: 1, .unknownKey, "unknown button option 'double': use short=, long=, ringing-short= or ringing-long="))
        #expect(policyError("feedback paired led-notify=x\n") == ConfigError(line: 1, .unknownKey, "feedback is for action-failed, nothing-to-do, pairing, waiting-permission, settings-error, phone-lost, phone-back, status-connected, status-waiting-permission, status-not-connected, status-pairing, status-settings-error, status-battery-low, battery-low, battery-critical, update-done or update-failed: e.g. `feedback action-failed vibration=failure`"))
    }

    @Test("an output the board does not have is a bad line naming the board's outputs")
    func unknownOutput() {
        #expect(policyError("pattern blink on 100\nalert Other led-rgb=blink\n") == ConfigError(line: 2, .badLine, "'led-rgb' is neither an output of board sim (outputs: led-notify, led-call, vibration) nor a key here (important, priority=, until=)"))
        #expect(policyError("\nunread led-rgb categories=Social\n") == ConfigError(line: 2, .badLine, "led-rgb is not an output of board sim (outputs: led-notify, led-call, vibration)"))
        #expect(policyError("button middle short=positive\n") == ConfigError(line: 1, .badLine, "middle is not a button of board sim (buttons: accept, reject)"))
    }

    @Test("other bad lines: a rule that matches nothing, an action that does not exist, an output with no pattern")
    func badLines() {
        #expect(policyError("pattern b on 1\nrule led-notify=b\n") == ConfigError(line: 2, .badLine, "a rule needs app=, title= or category= to say what it matches"))
        #expect(policyError("button accept short=answer\n") == ConfigError(line: 1, .badLine, "short takes positive, negative, silence, media-toggle, media-next, media-previous, volume-up, volume-down or none, not 'answer'"))
        #expect(policyError("alert Other led-notify\n") == ConfigError(line: 1, .badLine, "led-notify needs a pattern: write led-notify=<pattern>"))
        #expect(policyError("pattern p on 100 blink\n") == ConfigError(line: 1, .badLine, "unexpected 'blink' in pattern p: write steps like `on 200 off 800`, then optionally `repeat 3` or `repeat forever`, and `then on`"))
        #expect(policyError("pattern p repeat 2\n") == ConfigError(line: 1, .badLine, "pattern p has no steps: e.g. `pattern p on 200 off 800`"))
        #expect(policyError("pattern p on 1 repeat forever then off\n") == ConfigError(line: 1, .badLine, "pattern p repeats forever, so it never reaches its `then` level: give a repeat count or drop `then`"))
        #expect(policyError("pattern p on\n") == ConfigError(line: 1, .badLine, "'on' must be followed by a duration in ms"))
        #expect(policyError("pattern p " + String(repeating: "on 1 ", count: 17) + "\n") == ConfigError(line: 1, .badLine, "pattern p has more than 16 steps"))
    }

    @Test("a pattern that never ends where nothing stops it is a bad line on the line that uses it")
    func foreverWithoutStop() {
        let ring = "pattern ring on 600 off 400 repeat forever\n"
        #expect(policyError(ring + "alert IncomingCall vibration=ring\n") == ConfigError(line: 2, .badLine, "pattern ring repeats forever, so this alert would never stop: add until=removed to `alert IncomingCall` or give it a repeat count"))
        #expect(policyError(ring + "alert Social led-notify=ring until=removed\nalert Email important vibration=ring\n")?.line == 3)
        #expect(policyError(ring + "rule app=x vibration=ring\n") == ConfigError(line: 2, .badLine, "pattern ring repeats forever, so nothing would stop it: give it a repeat count, or add category= naming a category whose alert has until=removed"))
        #expect(policyError(ring + "alert IncomingCall led-call=ring until=removed\nrule category=IncomingCall title=Mom vibration=ring\n") == nil)
        #expect(policyError(ring + "feedback action-failed vibration=ring\n")?.line == 2)
        #expect(policyError(ring + "feedback pairing led-notify=ring\n") == nil)
        #expect(policyError(ring + "feedback waiting-permission led-notify=ring\n") == nil, "stopped when subscribed or the link ends")
        #expect(policyError(ring + "feedback waiting-permission led-notify=ring\nfeedback waiting-permission led-call=ring\n")?.kind == .duplicate)
        #expect(policyError(ring + "\nfeedback settings-error led-notify=ring\n")?.line == 3, "played once at start, nothing stops it")
    }

    @Test("a feedback pattern that ends `then on` or `then off` holds its output where nothing stops it: a bad line on the feedback line")
    func heldLevelWithoutStop() {
        let held = "pattern glow on 100 off 100 repeat 3 then on\npattern dark on 100 then off\n"
        for event in ["action-failed", "nothing-to-do", "settings-error", "phone-lost", "phone-back"] {
            #expect(
                policyError(held + "\nfeedback \(event) led-notify=glow\n")
                    == ConfigError(line: 4, .badLine, "pattern glow ends `then on`, which holds led-notify on until stopped, so the feedback would never stop: drop `then on`"),
                "\(event)")
            #expect(
                policyError(held + "feedback \(event) vibration=dark\n")
                    == ConfigError(line: 3, .badLine, "pattern dark ends `then off`, which holds vibration off until stopped, so the feedback would never stop: drop `then off`"),
                "\(event)")
        }
        // Where an owner stops the held level, it is what `then` is for.
        #expect(policyError(held + "feedback pairing led-notify=glow\n") == nil, "stopped when pairing ends")
        #expect(policyError(held + "feedback waiting-permission led-notify=glow\n") == nil, "stopped when subscribed or the link ends")
        #expect(policyError(held + "alert Social led-notify=glow\n") == nil, "held until the notification is removed")
        #expect(policyError(held + "alert IncomingCall vibration=glow until=removed\n") == nil, "held until the call ends")
        #expect(policyError(held + "rule app=x led-notify=glow\n") == nil, "held until the notification is removed")
    }

    @Test("an unknown pattern says how to define it")
    func unknownPattern() {
        #expect(policyError("alert Other led-notify=blnk\n") == ConfigError(line: 1, .unknownPattern, "no pattern named 'blnk': define it with a line like `pattern blnk on 200 off 800` (patterns: none)"))
        #expect(policyError("pattern blink on 1\n\nfeedback pairing led-notify=blnk\n") == ConfigError(line: 3, .unknownPattern, "no pattern named 'blnk': define it with a line like `pattern blnk on 200 off 800` (patterns: blink)"))
    }

    @Test("a category name that is not the spec's is named, with the ones that exist")
    func badCategory() {
        let all = "Other, IncomingCall, MissedCall, Voicemail, Social, Schedule, Email, News, HealthAndFitness, BusinessAndFinance, Location, Entertainment"
        #expect(policyError("alert Calls\n") == ConfigError(line: 1, .badCategory, "unknown category 'Calls': use one of \(all)"))
        #expect(policyError("\n\nunread led-notify categories=Social,Mail\n") == ConfigError(line: 3, .badCategory, "unknown category 'Mail': use one of \(all)"))
        #expect(policyError("rule category=incomingcall\n")?.kind == .badCategory)
    }

    @Test("milliseconds, repeats and priorities out of range")
    func outOfRange() {
        #expect(policyError("pattern p on 0\n") == ConfigError(line: 1, .outOfRange, "on 0 is out of range: use 1...60000 ms"))
        #expect(policyError("pattern p on 100 off 60001\n") == ConfigError(line: 1, .outOfRange, "off 60001 is out of range: use 1...60000 ms"))
        #expect(policyError("pattern p on 100 repeat 0\n") == ConfigError(line: 1, .outOfRange, "repeat 0 is out of range: use 1...10000"))
        #expect(policyError("pattern p on 1\nalert Other led-notify=p priority=300\n") == ConfigError(line: 2, .outOfRange, "priority 300 is out of range: use 0...255"))
    }

    @Test("duplicates point at the first definition")
    func duplicates() {
        #expect(policyError("pattern p on 1\npattern p on 2\n") == ConfigError(line: 2, .duplicate, "pattern p is already defined on line 1"))
        #expect(policyError("pattern p on 1\nalert Email led-notify=p\nalert Email led-call=p\n") == ConfigError(line: 3, .duplicate, "alert Email is already set on line 2"))
        #expect(policyError("pattern p on 1\nalert Email important led-notify=p\nalert Email important led-call=p\n") == ConfigError(line: 3, .duplicate, "alert Email important is already set on line 2"))
        #expect(policyError("pattern p on 1\nalert Email led-notify=p led-notify=p\n") == ConfigError(line: 2, .duplicate, "output led-notify is given twice on this line"))
        #expect(policyError("pattern p on 1\nrule app=a led-notify=p\nrule app=a vibration=p\n") == ConfigError(line: 3, .duplicate, "this rule matches the same notifications as the rule on line 2, which comes first and wins: merge them"))
        #expect(policyError("button accept short=none\nbutton accept long=none\n") == ConfigError(line: 2, .duplicate, "button accept is already set on line 1"))
        #expect(policyError("unread led-notify categories=Social\nunread led-call categories=Email\n") == ConfigError(line: 2, .duplicate, "unread is already set on line 1"))
        #expect(policyError("realert-on-modified yes\nrealert-on-modified no\n") == ConfigError(line: 2, .duplicate, "realert-on-modified is already set on line 1"))
        #expect(policyError("pattern p on 1 repeat 2 repeat 3\n") == ConfigError(line: 1, .duplicate, "repeat is given twice"))
    }

    @Test("priority and until belong on the main alert line, not the important one")
    func importantLineKeys() {
        #expect(policyError("pattern p on 1\nalert Email important led-notify=p priority=3\n") == ConfigError(line: 2, .badLine, "priority= goes on the `alert Email` line; the important line lists only output=pattern"))
    }
}

@Suite("Policy: silence and the ring limit")
struct RingPolicyTests {
    @Test("a two-button board's reject silences a ringing call on a long press by default; one-button boards keep long = negative")
    func defaultRingingActions() throws {
        let policy = try PolicyConfig.parse("", board: simBoard)
        let reject = simBoard.buttonIndex(named: "reject")!
        let accept = simBoard.buttonIndex(named: "accept")!
        #expect(policy.ringingLongPress[reject] == .silence)
        #expect(policy.ringingLongPress[accept] == nil)
        #expect(policy.ringingShortPress[reject] == nil, "a short reject still declines")
        #expect(policy.ringLimitMs == 60_000)
    }

    @Test("ringing-short= and ringing-long= take the actions short= and long= take, silence included")
    func ringingOptionsParse() throws {
        let policy = try PolicyConfig.parse("button accept ringing-long=silence ringing-short=positive\nbutton reject ringing-long=none\n", board: simBoard)
        #expect(policy.ringingLongPress[simBoard.buttonIndex(named: "accept")!] == .silence)
        #expect(policy.ringingShortPress[simBoard.buttonIndex(named: "accept")!] == .positive)
        #expect(policy.ringingLongPress[simBoard.buttonIndex(named: "reject")!] == ButtonAction.none)
    }

    @Test("ring-limit-ms: a whole number of ms in 0...3600000, once; anything else names the line")
    func ringLimitErrors() {
        #expect(policyError("ring-limit-ms 90000\n") == nil)
        #expect(policyError("\nring-limit-ms -1\n") == ConfigError(line: 2, .outOfRange, "ring-limit-ms -1 is out of range: use 0...3600000 ms (0: no limit)"))
        #expect(policyError("ring-limit-ms 3600001\n") == ConfigError(line: 1, .outOfRange, "ring-limit-ms 3600001 is out of range: use 0...3600000 ms (0: no limit)"))
        #expect(policyError("ring-limit-ms soon\n") == ConfigError(line: 1, .badLine, "ring-limit-ms needs a whole number, not 'soon'"))
        #expect(policyError("ring-limit-ms\n") == ConfigError(line: 1, .badLine, "ring-limit-ms takes one value: e.g. `ring-limit-ms 60000` (0: no limit)"))
        #expect(policyError("ring-limit-ms 1000\nring-limit-ms 2000\n") == ConfigError(line: 2, .duplicate, "ring-limit-ms is already set on line 1"))
        #expect(policyError("button reject ringing-long=mute\n") == ConfigError(line: 1, .badLine, "ringing-long takes positive, negative, silence, media-toggle, media-next, media-previous, volume-up, volume-down or none, not 'mute'"))
    }
}

@Suite("Every mistake of a file")
struct EveryErrorTests {
    func boardErrors(_ text: String) -> ConfigErrors? {
        do throws(ConfigErrors) {
            _ = try BoardConfig.parseReportingAll(text)
            return nil
        } catch {
            return error
        }
    }

    func policyErrors(_ text: String) -> ConfigErrors? {
        do throws(ConfigErrors) {
            _ = try PolicyConfig.parseReportingAll(text, board: simBoard)
            return nil
        } catch {
            return error
        }
    }

    func all(_ errors: ConfigErrors?) -> [ConfigError] { errors.map { e in (0..<e.count).map { e[$0] } } ?? [] }

    @Test("a board file's mistakes are all reported, in line order; parse still throws the first")
    func board() {
        let text = "name x\ncolour red\noutput a active-low=maybe\noutput b\nbutton c\n\"open\n"
        #expect(all(boardErrors(text)) == [
            ConfigError(line: 2, .unknownKey, "unknown setting 'colour': a board file has name, bluetooth-name, battery, battery-poll-s, chip, output, button, debounce-ms, long-press-ms and double-press-ms"),
            ConfigError(line: 3, .badLine, "active-low takes yes or no, not 'maybe'"),
            ConfigError(line: 6, .badLine, "a double quote is not closed: end the text with \""),
        ])
        #expect(boardError(text) == ConfigError(line: 2, .unknownKey, "unknown setting 'colour': a board file has name, bluetooth-name, battery, battery-poll-s, chip, output, button, debounce-ms, long-press-ms and double-press-ms"))
        #expect(boardErrors("name x\noutput a\nbutton b\n") == nil)
    }

    @Test("what a line with a mistake would have given is not reported missing too; the whole-file checks still run for the rest")
    func noCascadeInBoard() {
        // The only output line is wrong: no "the board has no outputs".
        #expect(all(boardErrors("name x\noutput a kind=buzzer\nbutton b\n")).map(\.line) == [2])
        // No name line at all, and two buttons on one line: both.
        #expect(all(boardErrors("chip sim\noutput a\nbutton b line=L\nbutton c line=L\n")).map(\.kind) == [.duplicate, .missing])
    }

    @Test("a policy file's mistakes are all reported in line order, though patterns are read first; the whole-file checks add theirs")
    func policy() {
        let text = """
            alert News led-notify=blink priority=300
            pattern blink on 100
            pattern endless on 1 repeat forever
            feedback nothing-to-do vibration=endless

            phone-lost-ms soon
            pattern broken on 0
            wobble 2
            """
        #expect(all(policyErrors(text)).map(\.line) == [1, 4, 6, 7, 8])
        #expect(policyError(text)?.line == 1, "parse throws the file's first")
    }

    @Test("the uses of a pattern whose own line has a mistake are not reported as undefined")
    func noCascadeInPolicy() {
        let errors = all(policyErrors("alert Social led-notify=blink\npattern blink on 0\nrule app=x vibration=blink\nalert Email led-call=blnk\n"))
        #expect(errors.map(\.line) == [2, 4])
        #expect(errors.last?.kind == .unknownPattern)
        #expect(all(policyErrors("pattern blink on 0\npattern blink on 100\n")).map(\.kind) == [.outOfRange, .duplicate])
    }

    @Test("past 16 mistakes the rest are counted, and printed as one more line")
    func bounded() {
        let text = (1...20).map { "wobble \($0)\n" }.joined()
        guard let errors = policyErrors(text) else {
            Issue.record("no errors")
            return
        }
        #expect(errors.count == 16 && errors.notKept == 4)
        let lines = errors.located(in: "p.conf")
        #expect(lines.count == 17)
        #expect(lines.first?.hasPrefix("p.conf:1: unknown setting 'wobble'") == true)
        #expect(lines.last == "p.conf: 4 more errors after these")
    }
}
