// SPDX-License-Identifier: Apache-2.0
import Bounded
import Testing

/// A mistake on a line, told apart by `tag`.
private struct Mistake: LineError {
    var line: Int
    var tag = 0
}

@Suite("File errors: every mistake of a file, in file order, up to a bound")
struct FileErrorsTests {
    @Test("kept in file order whatever order they were found in; equal lines in the order found; the file as a whole (line 0) last")
    func fileOrder() {
        var errors = FileErrors<Mistake>()
        #expect(errors.isEmpty)
        for (line, tag) in [(9, 1), (0, 2), (3, 3), (9, 4), (1, 5)] { errors.add(Mistake(line: line, tag: tag)) }
        #expect((0..<errors.count).map { errors[$0].tag } == [5, 3, 1, 4, 2])
        #expect(errors.first == Mistake(line: 1, tag: 5))
        #expect(errors.notKept == 0)
    }

    @Test("past the capacity (16) the first lines of the file are kept and the rest counted, whatever the order found")
    func bounded() {
        #expect(FileErrors<Mistake>.capacity == 16)
        var errors = FileErrors<Mistake>()
        for line in stride(from: 40, through: 1, by: -1) { errors.add(Mistake(line: line)) }
        errors.add(Mistake(line: 0))
        #expect(errors.count == 16)
        #expect((0..<errors.count).map { errors[$0].line } == Array(1...16))
        #expect(errors.notKept == 25)
        var same = FileErrors<Mistake>()
        for line in 1...40 { same.add(Mistake(line: line)) }
        same.add(Mistake(line: 0))
        #expect(same == errors)
    }
}
