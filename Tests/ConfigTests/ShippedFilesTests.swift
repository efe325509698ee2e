// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Config
import Feedback
import Testing
import TestSupport

@Suite("Shipped board and policy files")
struct ShippedFilesTests {
    @Test("every shipped board file parses, with the product's outputs and buttons", arguments: shippedBoards)
    func everyBoardParses(path: String) throws {
        let b = try board(readRepositoryFile(path))
        #expect(b.outputs.map(\.name) == ["led-notify", "led-call", "vibration"])
        #expect(b.buttons.map(\.name) == ["accept", "reject"])
        #expect(b.outputs.map(\.kind) == [.led, .led, .motor])
        #expect(b.debounceMs == 20 && b.longPressMs == 800 && b.doublePressGapMs == 300)
    }

    @Test("the shipped policy parses against every shipped board", arguments: shippedBoards)
    func policyParsesForEveryBoard(path: String) throws {
        let b = try board(readRepositoryFile(path))
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: b)
        #expect(policy.shortPress == [.positive, .negative])
        #expect(policy.longPress == [.media(.togglePlayPause), .media(.nextTrack)])
        #expect(policy.ringingLongPress == [.positive, .silence])
        #expect(policy.ringingShortPress == [nil, nil])
    }

    @Test("sim board: simulated, lines named after the outputs")
    func simulatedBoardFile() throws {
        let b = try board(readRepositoryFile("board/sim/board.conf"))
        #expect(b.name == "sim")
        #expect(b.simulated)
        #expect(b.chip == nil)
        #expect(b.outputs[0].line == .named("led-notify"))
    }

    @Test("vm board: the gpio-sim chip by label, lines by name, buttons active-high with bias as-is")
    func vmBoard() throws {
        let b = try board(readRepositoryFile("board/vm/board.conf"))
        #expect(!b.simulated)
        #expect(b.chip == "wristlink-vm")
        #expect((b.outputs + b.buttons).map(\.line) == ["led-notify", "led-call", "vibration", "accept", "reject"].map { .named($0) })
        for button in b.buttons {
            #expect(!button.activeLow)
            #expect(button.bias == .asIs)
        }
    }

    @Test("Pi boards: header GPIOs by name, buttons active-low with pull-up", arguments: ["board/pi-zero-2w/board.conf", "board/pi4/board.conf", "board/pi5/board.conf"])
    func piBoards(path: String) throws {
        let b = try board(readRepositoryFile(path))
        #expect(!b.simulated)
        #expect(b.outputs[2].line == .named("GPIO18"))
        #expect(b.buttons.map(\.line) == [.named("GPIO22"), .named("GPIO23")])
        for button in b.buttons {
            #expect(button.activeLow)
            #expect(button.bias == .pullUp)
        }
    }

    @Test("Pi 5: the header is found by the RP1 chip's label")
    func pi5Chip() throws {
        #expect(try board(readRepositoryFile("board/pi5/board.conf")).chip == "pinctrl-rp1")
    }

    @Test("Pi 4: the two LEDs are active-low channels of a common-anode RGB LED")
    func pi4RGB() throws {
        let b = try board(readRepositoryFile("board/pi4/board.conf"))
        #expect(b.outputs[0].line == .named("GPIO27") && b.outputs[0].activeLow)
        #expect(b.outputs[1].line == .named("GPIO17") && b.outputs[1].activeLow)
        #expect(!b.outputs[2].activeLow)
    }

    @Test("default policy: an incoming call rings on led-call and vibration until removed")
    func incomingCallRings() throws {
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        let call = policy.alert(for: .incomingCall)
        #expect(call.untilRemoved)
        #expect(call.priority == 9)
        #expect(call.outputs.map(\.output) == [1, 2])
        for output in call.outputs { #expect(policy.patterns[output.pattern].pattern.repeats == .untilStopped) }
    }

    @Test("default policy: an Important call buzzes longer than a normal one")
    func importantIsStronger() throws {
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        let call = policy.alert(for: .incomingCall)
        func onShare(_ outputs: [OutputPattern], _ output: Int) -> Double {
            let p = policy.patterns[outputs.first { $0.output == output }!.pattern].pattern
            var on: Int64 = 0
            for i in 0..<p.stepCount where p[step: i].level == .on { on += p[step: i].durationMs }
            return Double(on) / Double(p.cycleMs)
        }
        #expect(onShare(call.importantOutputs, 2) > onShare(call.outputs, 2))
        #expect(call.importantOutputs.count == 2)
    }

    @Test("default policy: missed call, voicemail, social, email, schedule and other each look different")
    func categoriesAreDistinct() throws {
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        let categories: [CategoryID] = [.missedCall, .voicemail, .social, .email, .schedule, .other]
        let looks = categories.map { policy.alert(for: $0).outputs }
        for i in looks.indices {
            #expect(!looks[i].isEmpty)
            for j in 0..<i { #expect(looks[i] != looks[j], "\(categories[i].name) looks like \(categories[j].name)") }
        }
        #expect(policy.alert(for: .news) == policy.alert(for: .other))
        let other = policy.alert(for: .other)
        #expect(other.outputs.count == 1)
        #expect(policy.patterns[other.outputs[0].pattern].pattern.totalMs == 150)
    }

    @Test("default policy: unread on led-notify for Social, Email, MissedCall and Voicemail")
    func unreadIndicator() throws {
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        let unread = try #require(policy.unread)
        #expect(unread.output == 0)
        let counted = (0..<UInt8(CategoryID.knownCount)).map { CategoryID(rawValue: $0) }.filter { unread.counts($0) }
        #expect(counted == [.missedCall, .voicemail, .social, .email])
    }

    @Test("default policy: action failed is a triple buzz, nothing to do one short buzz, pairing a slow blink")
    func wearerFeedback() throws {
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        func pattern(_ list: [OutputPattern]) -> Pattern { policy.patterns[list[0].pattern].pattern }
        #expect(policy.actionFailed.map(\.output) == [2])
        let failure = pattern(policy.actionFailed)
        #expect((0..<failure.stepCount).filter { failure[step: $0].level == .on }.count == 3)
        #expect(policy.nothingToDo.map(\.output) == [2])
        #expect(pattern(policy.nothingToDo).stepCount == 1)
        #expect(policy.pairing.map(\.output) == [0])
        #expect(pattern(policy.pairing).repeats == .untilStopped)
        #expect(pattern(policy.pairing)[step: 0].durationMs >= 500)
        #expect(!policy.realertOnModified)
    }

    @Test("default policy: a long accept toggles play/pause and a long reject skips a track; while a call rings they answer and silence it")
    func mediaButtons() throws {
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        let accept = try #require(simBoard.buttonIndex(named: "accept"))
        let reject = try #require(simBoard.buttonIndex(named: "reject"))
        #expect(policy.longPress[accept] == .media(.togglePlayPause))
        #expect(policy.longPress[reject] == .media(.nextTrack))
        #expect(policy.ringingLongPress[accept] == .positive)
        #expect(policy.ringingLongPress[reject] == .silence)
        #expect(policy.shortPress[accept] == .positive && policy.ringingShortPress[accept] == nil, "a short accept answers, ringing or not")
    }

    @Test("default policy: the phone left behind for 30 s buzzes three long buzzes, unlike any alert; its return blinks once without a buzz")
    func phoneLeftBehind() throws {
        let policy = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        #expect(policy.phoneLostMs == 30_000)
        let vibration = try #require(simBoard.outputIndex(named: "vibration"))
        #expect(policy.phoneLost.map(\.output) == [vibration])
        let lost = policy.patterns[policy.phoneLost[0].pattern].pattern
        let onSteps = (0..<lost.stepCount).filter { lost[step: $0].level == .on }
        #expect(onSteps.count == 3 && onSteps.allSatisfy { lost[step: $0].durationMs >= 1_000 })
        #expect(lost.repeats == .times(1))
        let alertPatterns = (0..<CategoryID.knownCount).flatMap { c in
            let alert = policy.alert(for: CategoryID(rawValue: UInt8(c)))
            return (alert.outputs + alert.importantOutputs).map(\.pattern)
        }
        #expect(!alertPatterns.contains(policy.phoneLost[0].pattern), "no notification buzzes like it")
        #expect(policy.phoneBack.map(\.output) == [try #require(simBoard.outputIndex(named: "led-notify"))])
        #expect(policy.patterns[policy.phoneBack[0].pattern].pattern.totalMs == 150)
    }

    @Test("default policy: no quiet hours; the commented example, uncommented, keeps 22:30 to 07:00 for calls and Important notifications")
    func quietHoursExample() throws {
        let text = readRepositoryFile("board/policy.conf")
        let policy = try PolicyConfig.parse(text, board: simBoard)
        #expect(policy.quietHours.isEmpty)
        let example = "# quiet 22:30-07:00 allow=IncomingCall important=yes"
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.filter { $0 == example }.count == 1)
        let uncommented = lines.map { $0 == example ? String(example.dropFirst(2)) : $0 }.joined(separator: "\n")
        let quiet = try PolicyConfig.parse(uncommented, board: simBoard).quietHours
        #expect(quiet == [QuietHours(window: DailyWindow(startMinute: 22 * 60 + 30, endMinute: 7 * 60)!, allowedCategories: 1 << 1, allowsImportant: true)])
    }
}
