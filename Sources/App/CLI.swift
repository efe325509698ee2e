// SPDX-License-Identifier: Apache-2.0
// The command line: `wristlink run | phone | sim | forget | lines-off |
// doctor | test-board | pinout | version | help` (`phone` and `sim` in the host
// build only). Parsing is by
// hand (no outside packages); every bad flag or file gives one clear line on
// stderr and a documented exit code. Arguments compare as UTF-8 bytes
// (`utf8Equals`): `String`'s `==`, hashing and Character indexing would link
// the Unicode tables into the Pi binary (docs/pi-build.md, "Size").

import Bounded
import PlatformLinux

/// Exit codes, from the LSB table systemd reads (`systemctl status` shows
/// 5 as `5/NOTINSTALLED` and 6 as `6/NOTCONFIGURED`; docs/versions.md).
public enum ExitCode {
    /// Stopped by SIGINT/SIGTERM, or finished.
    public static let ok: Int32 = 0
    /// A failure while running (the link or a line died for good).
    public static let failure: Int32 = 1
    /// Bad command line.
    public static let usage: Int32 = 2
    /// The hardware or an OS resource could not be set up (a GPIO line, a
    /// socket, the Bluetooth controller): LSB's "program is not installed".
    public static let setup: Int32 = 5
    /// Bad board, policy or scenario file: LSB's "program is not configured".
    public static let config: Int32 = 6
}

public struct UsageError: Error {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// Flags in the `--name value` form, with repeated or unknown flags refused.
/// A handful of flags: lists searched in order, not hashed.
public struct Arguments {
    private var values: [(name: String, value: String)] = []
    private var flags: [String] = []

    public init(_ args: ArraySlice<String>, valued: [String], boolean: [String] = []) throws(UsageError) {
        var i = args.startIndex
        while i < args.endIndex {
            let arg = args[i]
            var name = arg
            var inline: String? = nil
            if arg.utf8HasPrefix("--"), let eq = arg.utf8.firstIndex(of: UInt8(ascii: "=")) {
                name = String(decoding: arg.utf8[..<eq], as: UTF8.self)
                inline = String(decoding: arg.utf8[arg.utf8.index(after: eq)...], as: UTF8.self)
            }
            if Self.list(boolean, has: name) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                if !Self.list(flags, has: name) { flags.append(name) }
                i += 1
                continue
            }
            guard Self.list(valued, has: name) else {
                throw UsageError(arg.utf8HasPrefix("-") ? "unknown option \(name)" : "unexpected argument '\(arg)'")
            }
            guard value(name) == nil else { throw UsageError("\(name) given twice") }
            if let inline {
                values.append((name, inline))
                i += 1
            } else {
                guard i + 1 < args.endIndex else { throw UsageError("\(name) needs a value") }
                values.append((name, args[i + 1]))
                i += 2
            }
        }
    }

    public func value(_ name: String) -> String? {
        for entry in values where entry.name.utf8Equals(name) { return entry.value }
        return nil
    }

    /// A `boolean` flag was given.
    public func flag(_ name: String) -> Bool { Self.list(flags, has: name) }

    public static func list(_ names: some Sequence<String>, has name: String) -> Bool { names.contains { $0.utf8Equals(name) } }
}

/// A command that one build adds to the firmware's (the host build's
/// simulator: `phone`, `sim`).
public struct ExtraCommand {
    public let name: String
    /// Its line under COMMANDS in `wristlink help`.
    public let summary: String
    public let usage: String
    public let main: (ArraySlice<String>) -> Int32

    public init(name: String, summary: String, usage: String, main: @escaping (ArraySlice<String>) -> Int32) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.main = main
    }
}

public enum CLI {
    /// `wristlink help`: the commands of this build (`extra` after `run`).
    public static func usage(extra: [ExtraCommand]) -> String {
        var commands = "  run      the firmware (daemon): talks to the iPhone, drives LEDs and the motor\n"
        for command in extra { commands += "  " + command.summary + "\n" }
        return """
            wristlink: ANCS notification firmware for a Raspberry-Pi-class wearable

            USAGE: wristlink <command> [options]

            COMMANDS:
            \(commands)  forget   remove the stored bonds
              lines-off  every output of a board off (for systemd after a crash)
              doctor   checks what the firmware needs, one ok/FAIL line each (read-only, beside the service)
              test-board  a wiring test: each output lit in turn, each button pressed (service stopped)
              pinout   the 40-pin header with the board file's lines on their pins (reads the file only)
              version  the version, git revision, libgpiod API and licence, on one line (also --version)
              help     this text, or `wristlink help <command>`

            EXIT CODES: 0 stopped cleanly, 1 runtime failure, 2 bad command line,
                        5 hardware or OS set-up failed (systemd: NOTINSTALLED),
                        6 bad board/policy/scenario file (systemd: NOTCONFIGURED)
            """
    }

    static let versionUsage = """
        USAGE: wristlink version   (or wristlink --version)

          Prints one line: the version, the git revision the binary was built from ("unknown" for a
          build made without git), the libgpiod API it was built for and the licence, e.g.
            wristlink 0.1.0 (git 0123456789ab, libgpiod 2 API), licence Apache-2.0
          The same line opens the log of `wristlink run` and the report of `wristlink doctor`.
        """

    /// Runs the command in `arguments`; `extra` are the commands this build
    /// adds. A usage error (no command, an unknown one) goes to stderr with
    /// exit code 2; asked-for help to stdout with 0.
    public static func main(_ arguments: [String], extra: [ExtraCommand] = []) -> Int32 {
        let args = arguments.dropFirst()
        guard let command = args.first else {
            ProcessControl.writeError(usage(extra: extra) + "\n")
            return ExitCode.usage
        }
        let rest = args.dropFirst()
        if Arguments.list(rest, has: "--help") || Arguments.list(rest, has: "-h") { return help(command, extra: extra) }
        if command.utf8Equals("run") { return RunCommand.main(rest) }
        if command.utf8Equals("forget") { return ForgetCommand.main(rest) }
        if command.utf8Equals("lines-off") { return LinesOffCommand.main(rest) }
        if command.utf8Equals("doctor") { return DoctorCommand.main(rest) }
        if command.utf8Equals("test-board") { return TestBoardCommand.main(rest) }
        if command.utf8Equals("pinout") { return PinoutCommand.main(rest) }
        if Arguments.list(["version", "--version"], has: command) { return version(rest) }
        if Arguments.list(["help", "--help", "-h"], has: command) { return help(rest.first ?? "", extra: extra) }
        for c in extra where c.name.utf8Equals(command) { return c.main(rest) }
        Log.error("unknown command '\(command)' (try: wristlink help)")
        return ExitCode.usage
    }

    static func version(_ args: ArraySlice<String>) -> Int32 {
        if let unexpected = args.first { return fail(UsageError("unexpected argument '\(unexpected)'"), command: "version") }
        print(BuildInfo.line)
        return ExitCode.ok
    }

    /// The usage of `command` (all commands for ""), on stdout; an unknown
    /// command is a usage error.
    static func help(_ command: String, extra: [ExtraCommand]) -> Int32 {
        if let text = usage(of: command, extra: extra) {
            print(text)
            return ExitCode.ok
        }
        Log.error("no command '\(command)' in this build (see wristlink help)")
        return ExitCode.usage
    }

    /// The help text of `command` ("": the list of commands), or nil when
    /// this build has no such command.
    static func usage(of command: String, extra: [ExtraCommand]) -> String? {
        if command.isEmpty { return usage(extra: extra) }
        if command.utf8Equals("run") { return RunCommand.usage }
        if command.utf8Equals("forget") { return ForgetCommand.usage }
        if command.utf8Equals("lines-off") { return LinesOffCommand.usage }
        if command.utf8Equals("doctor") { return DoctorCommand.usage }
        if command.utf8Equals("test-board") { return TestBoardCommand.usage }
        if command.utf8Equals("pinout") { return PinoutCommand.usage }
        if Arguments.list(["version", "--version"], has: command) { return versionUsage }
        if Arguments.list(["help", "--help", "-h"], has: command) { return usage(extra: extra) }
        for c in extra where c.name.utf8Equals(command) { return c.usage }
        return nil
    }

    /// Reports a usage error and returns its exit code.
    public static func fail(_ error: UsageError, command: String) -> Int32 {
        Log.error("\(error.message) (see wristlink \(command) --help)")
        return ExitCode.usage
    }
}
