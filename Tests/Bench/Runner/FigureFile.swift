// SPDX-License-Identifier: Apache-2.0
// The line format the bench's two figure files share: the instruction
// budgets (Tests/Bench/budgets.txt, checked by `make test`) and the last
// recorded figures (Tests/Bench/recorded.txt, printed by `make bench`).
// Each line is words separated by spaces; `#` starts a comment; empty lines
// are skipped. At most `maxLines` lines and 64 KiB are read, so a file
// that is not ours cannot make the bench read without bound. What each
// line's words mean is the caller's.

import PlatformLinux

enum FigureFile {
    static let maxBytes = 64 * 1024
    static let maxLines = 256

    /// One line with words: its 1-based number and its words.
    struct Line {
        var number: Int
        var words: [Substring]
    }

    /// The file's lines with words, or nil when it cannot be read.
    static func read(_ path: String) -> [Line]? {
        guard let text = try? ProcessControl.readFile(path, maxBytes: maxBytes) else { return nil }
        var lines: [Line] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(maxLines).enumerated() {
            let content = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = content.split(separator: " ")
            if !words.isEmpty { lines.append(Line(number: index + 1, words: words)) }
        }
        return lines
    }
}
