// SPDX-License-Identifier: Apache-2.0
// The scenario runner: the lines still to run (ScenarioProgram.swift), the
// step that is waiting, and the order of things; the phone carries the
// commands out.
//
// A script is checked whole when loaded, so nothing is queued when a line is
// bad; a typed command is checked when entered and queues behind what is
// there. Each time the phone gets input or time it runs the scenario: it
// asks `nextStep` for a command, carries it out and reports how it went
// (`finished`), until `nextStep` has none for now. The runner cannot call
// the phone (it is part of it) and needs nothing else of it, so the phone
// pulls and the runner keeps the rest itself.
//
// Waits are the runner's: `sleep`, `wait-subscribed` (the phone says, at
// each step, whether Notification Source is subscribed and its replay sent),
// `wait-action` (the phone tells it of each action the Control Point
// performed, and of each notification posted again, whose earlier action
// then no longer counts) and `wait-media` (the phone tells it of each
// Remote Command written; the last 16 are kept, and a wait takes one). At most `maxStepsPerCall` steps start in one run,
// so a long script cannot hold the caller; the rest is due at once
// (`deadline` is then now). A failed step (a timeout, or a command the
// phone could not carry out) drops the queued lines and ends a loaded
// script. Step and scenario events go to the phone's outputs.

import AMS
import Bounded

struct ScenarioRunner: ~Copyable {
    /// Scenario steps started per run before yielding.
    static let maxStepsPerCall = 64

    /// How a command the phone carried out went.
    enum StepResult: Equatable {
        case done
        case failed(reason: Name)
    }

    enum Wait: Equatable {
        case sleep(until: Instant)
        case subscribed(until: Instant)
        case action(uid: UInt32, until: Instant)
        case media(command: RemoteCommandID, until: Instant)
    }

    struct ActiveStep {
        var wait: Wait
        var line: Int
        var command: Name
    }

    private enum WaitState {
        case pending
        case over
        case timedOut
    }

    private var program: ScenarioProgram
    private let defaultWaitTimeoutMs: Int64
    private var activeStep: ActiveStep? = nil
    /// A loaded script is running: its end is reported.
    private var scriptRunning = false
    /// Steps were left for the next run (`maxStepsPerCall`).
    private var due = false
    private var stepsThisRun = 0
    private var typedLineCount = 0
    /// UIDs whose action was performed, for `wait-action`.
    private var performed: RingBuffer<UInt32>
    /// Remote Commands the wearable wrote, for `wait-media`.
    private var mediaCommands: RingBuffer<RemoteCommandID>

    init(config: PhoneConfig) {
        program = ScenarioProgram(capacityBytes: config.scriptCapacityBytes, lineCapacity: config.scriptLineCapacity)
        defaultWaitTimeoutMs = config.defaultWaitTimeoutMs
        performed = RingBuffer(capacity: 16, policy: .dropOldest)
        mediaCommands = RingBuffer(capacity: 16, policy: .dropOldest)
    }

    /// Nothing queued or waiting.
    var isIdle: Bool { program.isEmpty && activeStep == nil }

    // MARK: Lines

    /// Checks every line of `script` (UTF-8, lines separated by newlines),
    /// then queues them as a running script. Nothing is queued when a line
    /// is bad: the error names it.
    mutating func load(script: Span<UInt8>) throws(ScenarioError) {
        var lines = 0
        var bytes = 0
        var lineNumber = 0
        var start = 0
        while start < script.count {
            var end = start
            while end < script.count, script[end] != ASCII.newline { end += 1 }
            lineNumber += 1
            if try ScenarioParser.parse(script.extracting(start..<end), lineNumber: lineNumber) != nil {
                lines += 1
                bytes += end - start
                guard lines <= program.freeLineCount, bytes <= program.freeByteCount else {
                    throw ScenarioError(line: lineNumber, column: 1, kind: .scriptTooLong)
                }
            }
            start = end + 1
        }
        lineNumber = 0
        start = 0
        while start < script.count {
            var end = start
            while end < script.count, script[end] != ASCII.newline { end += 1 }
            lineNumber += 1
            let line = script.extracting(start..<end)
            if (try? ScenarioParser.parse(line, lineNumber: lineNumber)) != nil {
                _ = program.append(line, number: lineNumber)
            }
            start = end + 1
        }
        scriptRunning = true
    }

    /// Queues one typed command (without its newline). Typed lines are
    /// numbered from 1 in their own sequence. False when the line holds no
    /// command (blank, or a comment).
    mutating func command(_ line: Span<UInt8>) throws(ScenarioError) -> Bool {
        typedLineCount += 1
        guard try ScenarioParser.parse(line, lineNumber: typedLineCount) != nil else { return false }
        guard program.append(line, number: typedLineCount) else {
            throw ScenarioError(line: typedLineCount, column: 1, kind: .scriptTooLong)
        }
        return true
    }

    // MARK: What the waits hear

    /// The Control Point performed an action on `uid`.
    mutating func actionPerformed(uid: UInt32) { performed.push(uid) }

    /// The wearable wrote `command` to Remote Command.
    mutating func mediaCommandWritten(_ command: RemoteCommandID) { mediaCommands.push(command) }

    /// `uid` was posted again: an action on its earlier post no longer counts.
    mutating func forgetAction(uid: UInt32) { performed.removeAll { $0 == uid } }

    // MARK: Running

    /// When the scenario must run again: now (`lastNow`, the phone's latest
    /// time) when steps are due or a wait is over, a wait's timeout, or nil.
    func deadline(lastNow: Instant, subscribedAndReplayed: Bool) -> Instant? {
        if due { return lastNow }
        guard let active = activeStep else { return nil }
        switch active.wait {
        case .sleep(let until):
            return until
        case .subscribed(let until):
            return subscribedAndReplayed ? lastNow : until
        case .action(let uid, let until):
            return performed.firstIndex(where: { $0 == uid }) != nil ? lastNow : until
        case .media(let command, let until):
            return mediaCommands.firstIndex(where: { $0 == command }) != nil ? lastNow : until
        }
    }

    /// Starts a run: then `nextStep` until it returns nil.
    mutating func beginRun() {
        due = false
        stepsThisRun = 0
    }

    /// The next command for the phone to carry out and report with
    /// `finished`; nil when there is none for now (a wait holds, the queue
    /// is empty, or this run has started `maxStepsPerCall` steps).
    mutating func nextStep(
        now: Instant, subscribedAndReplayed: Bool, outputs: inout PhoneOutputs
    ) -> (command: ScenarioCommand, line: Int)? {
        while true {
            if let active = activeStep {
                switch check(active.wait, now: now, subscribedAndReplayed: subscribedAndReplayed) {
                case .pending:
                    return nil
                case .over:
                    activeStep = nil
                    outputs.emit(.stepDone(line: active.line, command: active.command))
                case .timedOut:
                    activeStep = nil
                    fail(line: active.line, command: active.command, reason: "timeout", outputs: &outputs)
                }
            }
            if program.isEmpty {
                if scriptRunning {
                    scriptRunning = false
                    outputs.emit(.scenarioFinished(ok: true))
                }
                return nil
            }
            guard stepsThisRun < Self.maxStepsPerCall else {
                due = true
                return nil
            }
            stepsThisRun += 1
            let next: (ScenarioCommand, Int)? =
                program.withFirst { line, number in
                    guard let command = try? ScenarioParser.parse(line, lineNumber: number) else { return nil }
                    return (command, number)
                } ?? nil
            program.removeFirst()
            // Lines are checked when queued, so every queued line parses.
            guard let (command, line) = next else { continue }
            let wait: Wait
            switch command {
            case .sleep(let ms):
                wait = .sleep(until: now.advanced(byMs: ms))
            case .waitSubscribed(let timeoutMs):
                wait = .subscribed(until: now.advanced(byMs: timeoutMs ?? defaultWaitTimeoutMs))
            case .waitAction(let uid, let timeoutMs):
                wait = .action(uid: uid, until: now.advanced(byMs: timeoutMs ?? defaultWaitTimeoutMs))
            case .waitMedia(let command, let timeoutMs):
                wait = .media(command: command, until: now.advanced(byMs: timeoutMs ?? defaultWaitTimeoutMs))
            default:
                return (command, line)
            }
            activeStep = ActiveStep(wait: wait, line: line, command: command.name)
        }
    }

    /// How the command `nextStep` gave went. `quit` drops the queue.
    mutating func finished(_ command: ScenarioCommand, line: Int, _ result: StepResult, outputs: inout PhoneOutputs) {
        if case .quit = command { program.removeAll() }
        switch result {
        case .done:
            outputs.emit(.stepDone(line: line, command: command.name))
        case .failed(let reason):
            fail(line: line, command: command.name, reason: reason, outputs: &outputs)
        }
    }

    private mutating func fail(line: Int, command: Name, reason: Name, outputs: inout PhoneOutputs) {
        outputs.emit(.stepFailed(line: line, command: command, reason: reason))
        program.removeAll()
        if scriptRunning {
            scriptRunning = false
            outputs.emit(.scenarioFinished(ok: false))
        }
    }

    private mutating func check(_ wait: Wait, now: Instant, subscribedAndReplayed: Bool) -> WaitState {
        switch wait {
        case .sleep(let until):
            return now >= until ? .over : .pending
        case .subscribed(let until):
            if subscribedAndReplayed { return .over }
            return now >= until ? .timedOut : .pending
        case .action(let uid, let until):
            if performed.removeAll(where: { $0 == uid }) > 0 { return .over }
            return now >= until ? .timedOut : .pending
        case .media(let command, let until):
            var taken = false
            mediaCommands.removeAll { written in
                guard !taken, written == command else { return false }
                taken = true
                return true
            }
            if taken { return .over }
            return now >= until ? .timedOut : .pending
        }
    }
}
