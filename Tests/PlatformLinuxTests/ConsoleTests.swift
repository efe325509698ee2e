// SPDX-License-Identifier: Apache-2.0
import PlatformLinux
import Testing
import TestSupport

/// The simulated board's console line (`press <button> <ms>`) and the log
/// level names, read as bytes.
@Suite("Console commands and log level names")
struct ConsoleTests {
    private let buttons = ["accept", "reject"]

    @Test("press, comments, blank lines and each refusal")
    func console() {
        #expect(SimLines.parseConsole("press reject 120", buttonNames: buttons) == .press(button: 1, durationMs: 120))
        #expect(SimLines.parseConsole("  press  accept   5 ", buttonNames: buttons) == .press(button: 0, durationMs: 5))
        #expect(SimLines.parseConsole("", buttonNames: buttons) == .nothing)
        #expect(SimLines.parseConsole("#press accept 5", buttonNames: buttons) == .nothing)
        #expect(SimLines.parseConsole("push accept 5", buttonNames: buttons) == .rejected(what: "console", reason: "unknown-command"))
        #expect(SimLines.parseConsole("press accept", buttonNames: buttons) == .rejected(what: "press", reason: "usage: press <button> <ms>"))
        #expect(SimLines.parseConsole("press Accept 5", buttonNames: buttons) == .rejected(what: "press", reason: "unknown-button"))
        #expect(SimLines.parseConsole("press accept 0", buttonNames: buttons) == .rejected(what: "press", reason: "duration-out-of-range"))
        #expect(SimLines.parseConsole("press accept 5ms", buttonNames: buttons) == .rejected(what: "press", reason: "duration-out-of-range"))
    }

    @Test("log level names")
    func logLevels() {
        #expect(LogLevel(name: "error") == .error)
        #expect(LogLevel(name: "debug") == .debug)
        #expect(LogLevel(name: "notice") == .notice)
        #expect(LogLevel(name: "Debug") == nil)
        #expect(LogLevel(name: "") == nil)
    }
}
