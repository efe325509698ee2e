// SPDX-License-Identifier: Apache-2.0
import ANCS
import Config
import Feedback
import Platform
import Testing
import TestSupport

@Suite("Board file syntax and defaults")
struct BoardSyntaxTests {
    @Test("defaults: line named after the output, active-high, bias as-is, timing 20/800/300, vibration is the motor")
    func defaults() throws {
        let b = try board("name x\noutput led-notify\noutput vibration\nbutton accept\n")
        #expect(b.outputs[0] == LineSpec(name: "led-notify", line: .named("led-notify"), kind: .led))
        #expect(b.outputs[1].kind == .motor)
        #expect(b.buttons[0] == LineSpec(name: "accept", line: .named("accept")))
        #expect(!b.simulated && b.chip == nil)
        #expect(b.gestures == GestureConfig())
    }

    @Test("options: chip, offsets, active-low, kind, bias; key=value directives; comments and blank lines")
    func options() throws {
        let b = try board(
            """
            # a comment
            name=bench   # trailing comment

            chip gpiochip1
            output led line=17 active-low=yes kind=motor
            output lamp line=GPIO5 chip=gpiochip0 kind=led
            button a line=22 bias=pull-down
            button b line="my line" bias=disable active-low=no
            debounce-ms=5
            long-press-ms 1200
            double-press-ms 0
            """)
        #expect(b.name == "bench")
        #expect(b.chip == "gpiochip1")
        #expect(b.outputs[0] == LineSpec(name: "led", line: .offset(17), activeLow: true, kind: .motor))
        #expect(b.outputs[1] == LineSpec(name: "lamp", line: .named("GPIO5"), chip: "gpiochip0"))
        #expect(b.chip(of: b.outputs[0]) == "gpiochip1" && b.chip(of: b.outputs[1]) == "gpiochip0")
        #expect(b.buttons[0].bias == .pullDown && b.buttons[0].line == .offset(22))
        #expect(b.buttons[1].line == .named("my line") && b.buttons[1].bias == .disable)
        #expect(b.debounceMs == 5 && b.longPressMs == 1200 && b.doublePressGapMs == 0)
        #expect(b.gestures.longPressMs == 1200)
        #expect(b.outputIndex(named: "lamp") == 1 && b.buttonIndex(named: "b") == 1 && b.outputIndex(named: "a") == nil)
    }

    @Test("Windows line endings and tabs are whitespace")
    func crlf() throws {
        let b = try board("name\tx\r\noutput\tled\r\nbutton go\r\n")
        #expect(b.name == "x" && b.outputs[0].name == "led" && b.buttons[0].name == "go")
    }

    @Test("`chip sim` makes a simulated board whose offsets need no chip")
    func simulated() throws {
        let b = try board("name s\nchip sim\noutput a line=3\nbutton b\n")
        #expect(b.simulated && b.chip == nil)
    }

    @Test("the same named line on two explicitly different chips is two lines")
    func sameNameOtherChip() throws {
        let b = try board("name s\noutput a line=X chip=c0\nbutton b line=X chip=c1\n")
        #expect(b.outputs[0].line == b.buttons[0].line)
    }
}

@Suite("Policy file syntax and defaults")
struct PolicySyntaxTests {
    static let patterns = """
        pattern blink on 100
        pattern ring on 600 off 400 repeat forever
        """

    @Test("patterns: steps, repeat count, forever, final level, key=value steps; used before their line")
    func patterns() throws {
        let policy = try PolicyConfig.parse(
            """
            alert Other led-notify=later
            pattern a on 100 off 200 on 300
            pattern b on=50 off=50 repeat=3 then=on
            pattern c off 10 on 20 repeat forever
            pattern later on 1
            """, board: simBoard)
        // The file's patterns in file order, then the built-in ones of the
        // system notices it has no feedback line for (NoticeFeedbackTests).
        #expect(policy.patterns.map(\.name).prefix(4) == ["a", "b", "c", "later"])
        let a = policy.patterns[0].pattern
        #expect(a.stepCount == 3 && a.repeats == .times(1) && a.finalLevel == nil && a.cycleMs == 600)
        let b = policy.patterns[1].pattern
        #expect(b.repeats == .times(3) && b.finalLevel == .on && b[step: 1] == .off(50))
        #expect(policy.patterns[2].pattern.repeats == .untilStopped)
        #expect(policy.alert(for: .other).outputs == [OutputPattern(output: 0, pattern: 3)])
    }

    @Test("alerts: outputs, priority, until=removed, an important override that replaces and adds outputs")
    func alerts() throws {
        let policy = try PolicyConfig.parse(
            Self.patterns + """

            alert IncomingCall important vibration=ring led-notify=blink
            alert IncomingCall led-call=ring vibration=blink priority=9 until=removed
            alert Email led-notify=blink until=end
            """, board: simBoard)
        let call = try #require(policy.alerts[1])
        #expect(call.outputs == [OutputPattern(output: 1, pattern: 1), OutputPattern(output: 2, pattern: 0)])
        #expect(call.important == [OutputPattern(output: 2, pattern: 1), OutputPattern(output: 0, pattern: 0)])
        #expect(call.priority == 9 && call.untilRemoved)
        #expect(call.importantOutputs == [OutputPattern(output: 1, pattern: 1), OutputPattern(output: 2, pattern: 1), OutputPattern(output: 0, pattern: 0)])
        let email = try #require(policy.alerts[6])
        #expect(email.priority == Alert.defaultPriority && !email.untilRemoved)
    }

    @Test("an important line without its category's main line refines Other's alert instead of silencing the category")
    func importantLineAlone() throws {
        let policy = try PolicyConfig.parse(
            Self.patterns + """

            alert Email important vibration=blink
            alert Other led-notify=blink priority=4
            """, board: simBoard)
        let email = policy.alert(for: .email)
        #expect(email.outputs == [OutputPattern(output: 0, pattern: 0)], "plain email plays Other's alert")
        #expect(email.priority == 4)
        #expect(email.importantOutputs == [OutputPattern(output: 0, pattern: 0), OutputPattern(output: 2, pattern: 0)])
        #expect(policy.alert(for: .other).importantOutputs == [OutputPattern(output: 0, pattern: 0)], "Other keeps no override")
    }

    @Test("defaults: no alerts means Other plays nothing and every category uses it; reserved categories too")
    func alertDefaults() throws {
        let policy = try PolicyConfig.parse("", board: simBoard)
        #expect(policy.alerts.count == CategoryID.knownCount)
        #expect(policy.alerts[0] == Alert(outputs: []))
        #expect(policy.alerts.dropFirst().allSatisfy { $0 == nil })
        #expect(policy.alert(for: .social) == Alert(outputs: []))
        #expect(policy.alert(for: CategoryID(rawValue: 200)) == Alert(outputs: []))
        #expect(policy.rules.isEmpty && policy.unread == nil && !policy.realertOnModified)
        #expect(policy.actionFailed.isEmpty && policy.nothingToDo.isEmpty && policy.pairing.isEmpty)
        #expect(policy.attributesNeeded(for: .other) == [])
    }

    @Test("button defaults: accept is positive and reject negative on a short press; long presses do nothing")
    func acceptRejectDefaults() throws {
        let policy = try PolicyConfig.parse("", board: simBoard)
        #expect(policy.shortPress == [.positive, .negative])
        #expect(policy.longPress == [.none, .none])
    }

    @Test("button defaults: a single button is positive on a short press and negative on a long one")
    func singleButtonDefaults() throws {
        let one = try board("name one\noutput led\nbutton only\n")
        let policy = try PolicyConfig.parse("", board: one)
        #expect(policy.shortPress == [.positive] && policy.longPress == [.negative])
    }

    @Test("button defaults: buttons with other names do nothing until configured")
    func otherButtonDefaults() throws {
        let two = try board("name two\noutput led\nbutton left\nbutton right\n")
        let policy = try PolicyConfig.parse("button right long=negative\n", board: two)
        #expect(policy.shortPress == [.none, .none] && policy.longPress == [.none, .negative])
    }

    @Test("a button line changes only the presses it names")
    func buttonOverride() throws {
        let policy = try PolicyConfig.parse("button accept long=negative\nbutton reject short=none", board: simBoard)
        #expect(policy.shortPress == [.positive, .none])
        #expect(policy.longPress == [.negative, .none])
    }

    @Test("rules: app, quoted title with spaces and #, category, priority; first match order; a rule without outputs silences")
    func rules() throws {
        let policy = try PolicyConfig.parse(
            Self.patterns + """

            alert IncomingCall led-call=ring until=removed
            rule app=com.apple.MobileSMS led-notify=blink
            rule category=IncomingCall title="Mom #1 \\"home\\"" vibration=ring priority=10
            rule app=com.example.Noisy
            """, board: simBoard)
        #expect(policy.rules.count == 3)
        #expect(policy.rules[0] == Rule(app: "com.apple.MobileSMS", outputs: [OutputPattern(output: 0, pattern: 0)]))
        #expect(policy.rules[1] == Rule(titleContains: "Mom #1 \"home\"", category: .incomingCall, outputs: [OutputPattern(output: 2, pattern: 1)], priority: 10))
        #expect(policy.rules[2].outputs.isEmpty)
        #expect(policy.attributesNeeded(for: .incomingCall) == [.appIdentifier, .title])
        #expect(policy.attributesNeeded(for: .email) == .appIdentifier, "the title rule is for incoming calls only")
    }

    @Test("attributes needed: only the app identifier when no rule looks at the title")
    func attributesForAppRules() throws {
        let policy = try PolicyConfig.parse(Self.patterns + "\nrule app=a led-notify=blink\n", board: simBoard)
        #expect(policy.attributesNeeded(for: .social) == .appIdentifier)
    }

    @Test("unread, feedback and realert-on-modified")
    func rest() throws {
        let policy = try PolicyConfig.parse(
            Self.patterns + """

            unread led-call categories=Other,Voicemail
            feedback action-failed vibration=blink
            feedback nothing-to-do led-notify=blink vibration=blink
            feedback pairing led-notify=ring
            feedback waiting-permission led-call=ring
            feedback settings-error led-notify=blink
            realert-on-modified yes
            """, board: simBoard)
        #expect(policy.unread == UnreadIndicator(output: 1, categories: 0b1001))
        #expect(policy.unread?.counts(CategoryID(rawValue: 99)) == true)
        #expect(policy.actionFailed == [OutputPattern(output: 2, pattern: 0)])
        #expect(policy.nothingToDo.count == 2)
        #expect(policy.pairing == [OutputPattern(output: 0, pattern: 1)])
        #expect(policy.waitingPermission == [OutputPattern(output: 1, pattern: 1)])
        #expect(policy.settingsError == [OutputPattern(output: 0, pattern: 0)])
        #expect(policy.realertOnModified)
    }
}
