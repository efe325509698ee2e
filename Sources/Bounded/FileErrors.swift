// SPDX-License-Identifier: Apache-2.0
// The mistakes found in one text file (the board and policy files, the bond
// file): every one up to a bound, so a wearer fixes a file in one go rather
// than one error per restart.
//
// Kept in file order, whatever order the parser found them in (the policy
// parser reads its patterns first): by line, a mistake about the whole
// file (line 0) after every numbered one, equal lines in the order found.
// At most `capacity`, inline (nothing allocated); once full, a mistake on a
// later line than all those kept is only counted, and one on an earlier
// line pushes the last kept out (counted), so the ones kept are always the
// first of the file.

/// A mistake that names a line of a file: 1-based, 0 for the file as a
/// whole.
public protocol LineError: Error, Equatable, Sendable {
    var line: Int { get }
}

public struct FileErrors<E: LineError>: Error, Equatable, Sendable {
    public static var capacity: Int { InlineArray<16, E?>.count }

    private var kept: InlineArray<16, E?> = InlineArray(repeating: nil)
    /// How many are kept (at most `capacity`).
    public private(set) var count = 0
    /// How many more the file has, beyond those kept.
    public private(set) var notKept = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// The `index`th mistake of the file (0: the first).
    public subscript(index: Int) -> E {
        precondition(index >= 0 && index < count, "file error index out of range")
        return kept[index]!
    }

    /// The file's first mistake: what a caller that reports one reports.
    public var first: E { self[0] }

    public mutating func add(_ error: E) {
        let rank = Self.rank(error)
        var at = count
        while at > 0, rank < Self.rank(kept[at - 1]!) { at -= 1 }
        guard at < Self.capacity else {
            notKept += 1
            return
        }
        if count == Self.capacity {
            notKept += 1
        } else {
            count += 1
        }
        var i = count - 1
        while i > at {
            kept[i] = kept[i - 1]
            i -= 1
        }
        kept[at] = error
    }

    private static func rank(_ error: E) -> Int { error.line > 0 ? error.line : Int.max }

    public static func == (a: FileErrors, b: FileErrors) -> Bool {
        guard a.count == b.count, a.notKept == b.notKept else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }
}
