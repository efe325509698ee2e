// SPDX-License-Identifier: Apache-2.0
// Simulated lines: outputs are remembered (the core reports every change in
// its events stream), and buttons are pressed from a console with
// `press <button-name> <duration-ms>`. A press becomes a pressed edge now and
// a released edge `duration-ms` later, scheduled through `deadline`, so the
// core's gesture recognition sees real edges with real timing.

import Bounded
import CLinux
import Platform

public protocol LineBackend: ~Copyable {
    /// The most descriptors `addDescriptors` adds (its share of `PollSet`).
    static var maxDescriptors: Int { get }
    mutating func addDescriptors(to set: inout PollSet)
    mutating func nextInput(now: Instant, ready: borrowing PollSet) -> InputEvent?
    /// When a scheduled input is due (nil: none).
    var deadline: Instant? { get }
    mutating func setOutput(_ line: Int, on: Bool)
    /// Every output off (shutdown, fatal error).
    mutating func allOff()
}

public struct SimLines: ~Copyable, LineBackend {
    /// The console.
    public static var maxDescriptors: Int { 1 }
    public static let maxPressMs: Int64 = 60_000

    struct Release {
        var button: Int
        var at: Instant
    }

    public let outputNames: [String]
    public let buttonNames: [String]
    private var levels: FixedArray<Bool>
    private var console: CommandReader?
    private var line = ByteBuffer(capacity: CommandReader.maxLineBytes)
    private var releases = RingBuffer<Release>(capacity: 8, policy: .refuseNewest)
    private var held: FixedArray<Bool>

    /// `consoleFD`: where `press` commands come from (-1: none).
    public init(outputs: [String], buttons: [String], consoleFD: Int32) {
        outputNames = outputs
        buttonNames = buttons
        levels = FixedArray(capacity: max(1, outputs.count))
        for _ in outputs { levels.append(false) }
        held = FixedArray(capacity: max(1, buttons.count))
        for _ in buttons { held.append(false) }
        console = consoleFD >= 0 ? CommandReader(fd: consoleFD) : nil
    }

    public func level(_ line: Int) -> Bool { levels[line] }

    public mutating func addDescriptors(to set: inout PollSet) {
        if let fd = console?.fd, console?.isOpen == true { set.add(fd, events: Int16(POLLIN)) }
    }

    public var deadline: Instant? {
        var next: Instant? = nil
        for i in 0..<releases.count { next = earliest(next, releases[i].at) }
        return next
    }

    public mutating func nextInput(now: Instant, ready: borrowing PollSet) -> InputEvent? {
        if let index = releases.firstIndex(where: { $0.at <= now }) {
            let release = releases[index]
            _ = releases.removeAll { $0.at == release.at && $0.button == release.button }
            held[release.button] = false
            return .edge(button: release.button, pressed: false, at: release.at)
        }
        guard console != nil else { return nil }
        while let result = console!.next(into: &line) {
            switch result {
            case .endOfInput:
                console = nil
                return nil
            case .tooLong:
                return .rejected(what: "console", reason: "line-too-long")
            case .command:
                if let event = parse(now: now) { return event }
            }
        }
        return nil
    }

    /// One console line: `press <button> <ms>`; blank lines and `#`
    /// comments are nothing. Pure, so it can be fuzzed.
    public enum ConsoleCommand: Equatable {
        case nothing
        case press(button: Int, durationMs: Int64)
        case rejected(what: Name, reason: Name)
    }

    public static func parseConsole(_ text: String, buttonNames: [String]) -> ConsoleCommand {
        // Bytes, not Characters: no Unicode tables in the Pi binary.
        let words = Array(text.utf8).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard let verb = words.first, verb.first != UInt8(ascii: "#") else { return .nothing }
        guard verb.elementsEqual("press".utf8) else { return .rejected(what: "console", reason: "unknown-command") }
        guard words.count == 3 else { return .rejected(what: "press", reason: "usage: press <button> <ms>") }
        guard let button = buttonNames.firstIndex(where: { $0.utf8.elementsEqual(words[1]) }) else {
            return .rejected(what: "press", reason: "unknown-button")
        }
        guard let ms = Int64(String(decoding: words[2], as: UTF8.self)), ms >= 1, ms <= maxPressMs else {
            return .rejected(what: "press", reason: "duration-out-of-range")
        }
        return .press(button: button, durationMs: ms)
    }

    private mutating func parse(now: Instant) -> InputEvent? {
        let text = String(decoding: line.toArray(), as: UTF8.self)
        let button: Int
        let ms: Int64
        switch Self.parseConsole(text, buttonNames: buttonNames) {
        case .nothing: return nil
        case .rejected(let what, let reason): return .rejected(what: what, reason: reason)
        case .press(let b, let d):
            button = b
            ms = d
        }
        guard !held[button] else { return .rejected(what: "press", reason: "already-pressed") }
        guard case .stored = releases.push(Release(button: button, at: now.advanced(byMs: ms))) else {
            return .rejected(what: "press", reason: "too-many-presses")
        }
        held[button] = true
        return .edge(button: button, pressed: true, at: now)
    }

    public mutating func setOutput(_ line: Int, on: Bool) {
        levels[line] = on
    }

    public mutating func allOff() {
        for i in 0..<levels.count { levels[i] = false }
    }
}
