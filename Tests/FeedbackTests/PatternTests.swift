// SPDX-License-Identifier: Apache-2.0
import Feedback
import Testing
import TestSupport

@Suite("Pattern validation")
struct PatternTests {
    @Test("a pattern keeps its steps, cycle and total duration")
    func keepsSteps() throws {
        let p = try Pattern([.on(100), .off(50), .on(60_000)], repeats: .times(3))
        #expect(p.stepCount == 3)
        #expect(p[step: 0] == .on(100))
        #expect(p[step: 1] == .off(50))
        #expect(p[step: 2] == .on(60_000))
        #expect(p.cycleMs == 60_150)
        #expect(p.totalMs == 180_450)
        #expect(p.finalLevel == nil)
    }

    @Test("an empty pattern is refused")
    func empty() {
        #expect(throws: PatternError.empty) { try Pattern([], repeats: .times(1)) }
    }

    @Test("more than 16 steps are refused; exactly 16 are kept")
    func tooManySteps() throws {
        let sixteen = [PatternStep](repeating: .on(10), count: 16)
        #expect(try Pattern(sixteen, repeats: .untilStopped).stepCount == 16)
        #expect(throws: PatternError.tooManySteps(count: 17)) {
            try Pattern(sixteen + [.off(10)], repeats: .untilStopped)
        }
    }

    @Test("a step of 0 ms or over 60 000 ms is refused with its index")
    func durationRange() {
        #expect(throws: PatternError.durationOutOfRange(stepIndex: 1, durationMs: 0)) {
            try Pattern([.on(100), .off(0)], repeats: .times(1))
        }
        #expect(throws: PatternError.durationOutOfRange(stepIndex: 0, durationMs: 60_001)) {
            try Pattern([.on(60_001)], repeats: .times(1))
        }
        #expect(throws: PatternError.durationOutOfRange(stepIndex: 2, durationMs: -5)) {
            try Pattern([.on(1), .off(1), .on(-5)], repeats: .times(1))
        }
    }

    @Test("a repeat count outside 1...10 000 is refused")
    func repeatCount() {
        #expect(throws: PatternError.repeatCountOutOfRange(0)) { try Pattern([.on(100)], repeats: .times(0)) }
        #expect(throws: PatternError.repeatCountOutOfRange(10_001)) { try Pattern([.on(100)], repeats: .times(10_001)) }
    }

    @Test("a final level on a pattern that never ends is refused")
    func finalLevelWithoutEnd() {
        #expect(throws: PatternError.finalLevelWithoutEnd) {
            try Pattern([.on(100), .off(100)], repeats: .untilStopped, finalLevel: .on)
        }
    }
}
