// SPDX-License-Identifier: Apache-2.0
// Logging to stderr with levels. Under systemd (JOURNAL_STREAM set) each
// line starts with a syslog priority prefix ("<6>") that journald reads;
// otherwise with the level's name. Notification contents are never passed
// here at the default level: callers log contents only at `debug`.

import Bounded
import CLinux

public enum LogLevel: Int, Comparable, Sendable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    var journaldPrefix: StaticString {
        switch self {
        case .error: "<3>"
        case .warning: "<4>"
        case .notice: "<5>"
        case .info: "<6>"
        case .debug: "<7>"
        }
    }

    var textPrefix: StaticString {
        switch self {
        case .error: "wristlink: error: "
        case .warning: "wristlink: warning: "
        case .notice: "wristlink: notice: "
        case .info: "wristlink: info: "
        case .debug: "wristlink: debug: "
        }
    }

    public init?(name: String) {
        let levels: [LogLevel] = [.error, .warning, .notice, .info, .debug]
        guard let level = levels.first(where: { $0.name.utf8Equals(name) }) else { return nil }
        self = level
    }
}

public enum Log {
    nonisolated(unsafe) public static var level = LogLevel.info
    nonisolated(unsafe) static var journald: Bool = getenv("JOURNAL_STREAM") != nil

    public static func enabled(_ level: LogLevel) -> Bool { level <= Self.level }

    public static func write(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard enabled(level) else { return }
        let line = journald ? "<\(level.rawValue)>\(message())\n" : "wristlink: \(level.name): \(message())\n"
        var bytes = line
        bytes.withUTF8 { _ = Sys.writeAll(2, $0) }
    }

    /// Writes a line formatted without allocation (`message` has no
    /// trailing newline).
    public static func write(_ level: LogLevel, bytes message: borrowing ByteBuffer) {
        guard enabled(level) else { return }
        writeStatic(journald ? level.journaldPrefix : level.textPrefix)
        _ = message.span.withUnsafeBufferPointer { Sys.writeAll(2, $0) }
        writeStatic("\n")
    }

    private static func writeStatic(_ text: StaticString) {
        text.withUTF8Buffer { _ = Sys.writeAll(2, $0) }
    }

    public static func error(_ m: @autoclosure () -> String) { write(.error, m()) }
    public static func warning(_ m: @autoclosure () -> String) { write(.warning, m()) }
    public static func notice(_ m: @autoclosure () -> String) { write(.notice, m()) }
    public static func info(_ m: @autoclosure () -> String) { write(.info, m()) }
    public static func debug(_ m: @autoclosure () -> String) { write(.debug, m()) }
}
