// SPDX-License-Identifier: Apache-2.0
// The last recorded figures (Tests/Bench/recorded.txt). Timed figures move
// from run to run, so nothing asserts them; instead `make bench` prints
// every figure of the run next to the value last recorded in the
// repository, with its date and the change, so a run that is slower than
// the last one says so in the run itself (the button figure once went from
// p99 24 µs to 83.5 µs with nothing printed beside it).
// `make bench-record` (`--record`) rewrites the file with the run's figures,
// the date and the machine's load; commit it with the change it measures.
//
// File: one figure per line, `NAME VALUE DATE` (DATE as YYYY-MM-DD, UTC);
// `#` starts a comment (FigureFile). Unknown names are reported and
// skipped; a line that is not three words is reported and skipped.

import Glibc
import PlatformLinux

struct RecordedFigures {
    struct Entry {
        var value: Double
        var date: String
    }

    private(set) var entries: [String: Entry] = [:]
    /// What was wrong with the file, line by line (printed, not fatal).
    private(set) var problems: [String] = []

    init() {}

    /// Reads `path`; a missing file is an empty record (a first run).
    init(path: String) {
        guard let lines = FigureFile.read(path) else {
            problems.append("\(path): not readable; nothing to compare with")
            return
        }
        let known = Set(Figures.recordedFigures.map(\.name))
        for line in lines {
            let words = line.words
            guard words.count == 3, let value = Double(words[1]), words[2].count == 10 else {
                problems.append("\(path):\(line.number): expected `NAME VALUE YYYY-MM-DD`")
                continue
            }
            guard known.contains(String(words[0])) else {
                problems.append("\(path):\(line.number): unknown figure \(words[0])")
                continue
            }
            entries[String(words[0])] = Entry(value: value, date: String(words[2]))
        }
    }

    /// One line per figure: this run's value, the recorded one, the change.
    func comparison(with figures: Figures) -> [String] {
        figures.recorded.map { name, value in
            guard let last = entries[name] else { return "\(name): \(fmt(value, 2)) (nothing recorded)" }
            var change = ""
            if last.value != 0 {
                let percent = (value - last.value) / last.value * 100
                change = ", \(percent >= 0 ? "+" : "")\(fmt(percent))%"
            }
            return "\(name): \(fmt(value, 2)), last recorded \(fmt(last.value, 2)) on \(last.date)\(change)"
        }
    }

    /// The file `--record` writes: this run's figures, dated today (UTC).
    static func text(of figures: Figures, machine: String) -> String {
        let date = todayUTC()
        var text = """
            # The figures of the last recorded `make bench` run: `make bench`
            # prints each next to this run's (Tests/Bench/Runner/Recorded.swift).
            # Rewritten by `make bench-record`; commit it with the change measured.
            # Recorded on \(date): \(machine)

            """
        for (name, value) in figures.recorded { text += "\(name) \(fmt(value, 2)) \(date)\n" }
        return text
    }

    static func todayUTC() -> String {
        var now = time(nil)
        var parts = tm()
        guard gmtime_r(&now, &parts) != nil else { return "0000-00-00" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }
}

extension Figures {
    /// The figures `recorded.txt` keeps, by name, in the order printed.
    static let recordedFigures: [(name: String, value: @Sendable (Figures) -> Double)] = [
        ("ns_to_gpio_us.p50", { $0.nsToGPIO.p50 }),
        ("ns_to_gpio_us.p99", { $0.nsToGPIO.p99 }),
        ("button_to_cp_us.p50", { $0.buttonToCP.p50 }),
        ("button_to_cp_us.p99", { $0.buttonToCP.p99 }),
        ("reassembly_mb_s.mtu23", { $0.reassemblyMTU23 }),
        ("reassembly_mb_s.mtu185", { $0.reassemblyMTU185 }),
        ("rss_kib.start", { Double($0.rssStart) }),
        ("rss_kib.after_100k", { Double($0.rssAfter100k) }),
        ("binary_bytes", { Double($0.binaryBytes) }),
        ("idle_wakeups_60s", { Double($0.idleWakeups) }),
        ("pattern_wakeups_per_step", { $0.patternWakeupsPerStep }),
        ("instructions.per_ns_event", { $0.instructionsPerNSEvent }),
        ("instructions.per_ds_byte", { $0.instructionsPerDSByte }),
        ("instructions.per_step", { $0.instructionsPerStep }),
        ("instructions.per_button_step", { $0.instructionsPerButtonStep }),
    ]

    /// This run's value of every figure `recorded.txt` keeps.
    var recorded: [(String, Double)] {
        Self.recordedFigures.map { ($0.name, $0.value(self)) }
    }
}
