// SPDX-License-Identifier: Apache-2.0
// What `wristlink sim` draws: the board (LEDs in colour, the motor), the
// session state, and the latest events, rebuilt from the firmware's JSON
// events stream and the phone's console lines.

import App
import PlatformLinux

struct SimScreen {
    let interactive: Bool
    let columns: Int
    var phoneGone = false
    /// The notifications present, newest last (from the firmware's events).
    private(set) var present: [String] = []
    private var lines: [(name: String, on: Bool)] = []
    private var session = "starting"
    /// The phone's player as AMS says: ▶ playing, ❚❚ paused, blank unknown.
    private var media = ""
    /// The phone's local time when last learned (CTS), and quiet hours.
    private var time = ""
    private var quiet = ""
    private var recent: [String] = []
    private var t0: Int64? = nil

    /// `outputs`: the board's output names, drawn from the start (all off).
    init(interactive: Bool, columns: Int, outputs: [String]) {
        self.interactive = interactive
        self.columns = max(40, min(columns, 120))
        lines = outputs.map { ($0, false) }
    }

    mutating func note(_ text: String) { remember("· " + text) }

    private mutating func remember(_ text: String) {
        if !interactive { print(text) }
        recent.append(text)
        if recent.count > 12 { recent.removeFirst(recent.count - 12) }
    }

    private func stamp(_ e: [String: String]) -> String {
        let ms = Int64(e["t_ms"] ?? "") ?? 0
        let s = String(ms / 1000)
        let frac = String(ms % 1000)
        return String(repeating: " ", count: max(0, 4 - s.count)) + s + "." + String(repeating: "0", count: 3 - frac.count) + frac
    }

    mutating func firmwareEvent(_ e: [String: String]) {
        let kind = e["kind"] ?? "?"
        switch kind {
        case "gpio":
            let name = e["line"] ?? "?"
            let on = e["value"] == "1"
            if let i = lines.firstIndex(where: { $0.name == name }) { lines[i].on = on } else { lines.append((name, on)) }
            if !interactive { print("\(stamp(e)) \(name) \(on ? "on" : "off")") }
            return
        case "session":
            session = e["state"] ?? session
            remember("\(stamp(e)) session \(session)" + (e["reason"].map { " (\($0))" } ?? "")
                + (e["retry_ms"].map { " (allow notifications on the phone; retry in \($0) ms)" } ?? ""))
        case "notification":
            if let uid = e["uid"] {
                present.removeAll { $0 == uid }
                if e["event"] != "removed" { present.append(uid) }
            }
            remember("\(stamp(e)) \(e["event"] ?? "") uid \(e["uid"] ?? "") \(e["category"] ?? "") \(e["flags"].map { $0.isEmpty ? "" : "[\($0)]" } ?? "")")
        case "button":
            remember("\(stamp(e)) button \(e["button"] ?? "") \(e["gesture"] ?? "")")
        case "action":
            remember("\(stamp(e)) action \(e["action"] ?? "") on uid \(e["uid"] ?? ""): \(e["result"] ?? "")")
        case "alert":
            remember("\(stamp(e)) alert uid \(e["uid"] ?? ""): \(e["state"] ?? "")")
        case "media":
            if let state = e["state"] {
                switch state {
                case "playing": media = "▶ playing"
                case "paused": media = "❚❚ paused"
                case "no-player": media = "no player"
                case "absent": media = "no AMS"
                default: media = state
                }
                remember("\(stamp(e)) media \(state)")
            } else {
                remember("\(stamp(e)) media \(e["command"] ?? ""): \(e["result"] ?? "")")
            }
        case "time":
            time = e["local"].map { "phone time " + $0 } ?? "time unknown"
            remember("\(stamp(e)) time \(e["local"] ?? e["state"] ?? "")" + (e["utc_offset_min"].map { " (UTC offset \($0) min)" } ?? "")
                + (e["reason"].map { " (\($0))" } ?? ""))
        case "quiet":
            quiet = e["state"] == "on" ? "quiet hours" : ""
            remember("\(stamp(e)) quiet \(e["state"] ?? "")" + (e["reason"].map { " (\($0))" } ?? ""))
        case "phone":
            remember("\(stamp(e)) phone \(e["state"] ?? "")")
        case "attributes":
            let title = e["Title"].map { " \"\($0)\"" } ?? ""
            remember("\(stamp(e)) attributes uid \(e["uid"] ?? e["app"] ?? "")\(title)")
        case "drop", "error":
            remember("\(stamp(e)) \(kind) \(e["what"] ?? "") \(e["reason"] ?? e["detail"] ?? "")")
        default:
            break
        }
    }

    mutating func phoneLine(_ text: String) { remember("  phone: " + text) }

    func render(final: Bool = false) -> String {
        guard interactive else { return "" }
        let esc = "\u{1B}["
        var out = esc + "H" + esc + "2J"
        out += esc + "1mWristlink simulator" + esc + "0m    session: " + esc + "1m" + session + esc + "0m"
        for extra in [media, time, quiet] where !extra.isEmpty { out += "    " + extra }
        out += "\n\n"
        var board = "  "
        for line in lines {
            let lit: String
            switch line.name {
            case "vibration", "motor":
                lit = line.on ? esc + "1;33m≋≋ BZZZ ≋≋" + esc + "0m" : esc + "2m··  still  ··" + esc + "0m"
            case let n where n.split(separator: "-").contains { $0 == "call" }:
                lit = line.on ? esc + "1;31m●" + esc + "0m" : esc + "2m○" + esc + "0m"
            default:
                lit = line.on ? esc + "1;32m●" + esc + "0m" : esc + "2m○" + esc + "0m"
            }
            board += "\(line.name) \(lit)    "
        }
        out += (lines.isEmpty ? "  (all outputs off)" : board) + "\n\n"
        out += esc + "2m  a/A accept short/long (A: play/pause)   r/R reject short/long (R: next track; while ringing: silence)   c call   m message   e email   x remove   q quit" + esc + "0m\n\n"
        for r in recent { out += "  " + String(r.prefix(columns - 3)) + "\n" }
        if final { out += "\n" }
        return out
    }
}

/// Reads one flat JSON object from our own events stream (string, number
/// and array-of-string values; arrays become comma-joined strings). Enough
/// for the simulator's display; not a general parser.
enum FlatJSON {
    static func parse(_ bytes: [UInt8]) -> [String: String] {
        var result: [String: String] = [:]
        var i = 0
        func skipSpace() { while i < bytes.count, bytes[i] == 0x20 { i += 1 } }
        func string() -> String? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
            i += 1
            var out: [UInt8] = []
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count {
                    i += 1
                    switch bytes[i] {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"): i += 4; out.append(UInt8(ascii: "?"))
                    default: out.append(bytes[i])
                    }
                } else {
                    out.append(bytes[i])
                }
                i += 1
            }
            i += 1
            return String(decoding: out, as: UTF8.self)
        }
        guard bytes.first == UInt8(ascii: "{") else { return result }
        i = 1
        while i < bytes.count {
            skipSpace()
            guard let key = string() else { break }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { break }
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "[") {
                i += 1
                var items: [String] = []
                while i < bytes.count, bytes[i] != UInt8(ascii: "]") {
                    if let s = string() { items.append(s) } else { i += 1 }
                    if i < bytes.count, bytes[i] == UInt8(ascii: ",") { i += 1 }
                }
                i += 1
                result[key] = items.joined(separator: " ")
            } else if let s = string() {
                result[key] = s
            } else {
                var v: [UInt8] = []
                while i < bytes.count, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "}") { v.append(bytes[i]); i += 1 }
                result[key] = String(decoding: v, as: UTF8.self)
            }
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: ",") { i += 1 } else { break }
        }
        return result
    }
}
