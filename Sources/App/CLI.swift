// The command line: `wristlink run | phone | sim | forget | lines-off |
// doctor | test-board | help`. Parsing is by
// hand (no outside packages); every bad flag or file gives one clear line on
// stderr and a documented exit code. Arguments compare as UTF-8 bytes
// (`utf8Equals`): `String`'s `==`, hashing and Character indexing would link
// the Unicode tables into the Pi binary (docs/pi-build.md, "Size").

import Bounded
import PlatformLinux

public enum ExitCode {
    /// Stopped by SIGINT/SIGTERM, or finished.
    public static let ok: Int32 = 0
    /// A failure while running (the link or a line died for good).
    public static let failure: Int32 = 1
    /// Bad command line.
    public static let usage: Int32 = 2
    /// Bad board, policy or scenario file.
    public static let config: Int32 = 3
    /// The hardware or an OS resource could not be set up (a GPIO line, a
    /// socket, the Bluetooth controller).
    public static let setup: Int32 = 4
}

public struct UsageError: Error {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// Flags in the `--name value` form, with repeated or unknown flags refused.
/// A handful of flags: lists searched in order, not hashed.
struct Arguments {
    private var values: [(name: String, value: String)] = []
    private var flags: [String] = []

    init(_ args: ArraySlice<String>, valued: [String], boolean: [String] = []) throws(UsageError) {
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

    func value(_ name: String) -> String? {
        for entry in values where entry.name.utf8Equals(name) { return entry.value }
        return nil
    }

    /// A `boolean` flag was given.
    func flag(_ name: String) -> Bool { Self.list(flags, has: name) }

    static func list(_ names: some Sequence<String>, has name: String) -> Bool { names.contains { $0.utf8Equals(name) } }
}

public enum CLI {
    public static let usage = """
        wristlink: ANCS notification firmware for a Raspberry-Pi-class wearable

        USAGE: wristlink <command> [options]

        COMMANDS:
          run      the firmware (daemon): talks to the iPhone, drives LEDs and the motor
          phone    a simulated iPhone (ANCS Notification Provider) for run --link unix (host build)
          sim      run + phone + a simulated board in this terminal (host build; what `make run` starts)
          forget   remove the stored bonds
          lines-off  every output of a board off (for systemd after a crash)
          doctor   checks what the firmware needs, one ok/FAIL line each (read-only, beside the service)
          test-board  a wiring test: each output lit in turn, each button pressed (service stopped)
          help     this text, or `wristlink help <command>`

        EXIT CODES: 0 stopped cleanly, 1 runtime failure, 2 bad command line,
                    3 bad board/policy/scenario file, 4 hardware or OS setup failed
        """

    /// Runs the command in `arguments`. `extra` handles commands this
    /// build adds (the simulator's `phone` and `sim` on the host) and
    /// returns nil for the ones it does not know.
    public static func main(_ arguments: [String], extra: (String, ArraySlice<String>) -> Int32?) -> Int32 {
        let args = arguments.dropFirst()
        guard let command = args.first else {
            print(usage)
            return ExitCode.usage
        }
        let rest = args.dropFirst()
        if Arguments.list(rest, has: "--help") || Arguments.list(rest, has: "-h") { return help(command) }
        if command.utf8Equals("run") { return RunCommand.main(rest) }
        if command.utf8Equals("forget") { return ForgetCommand.main(rest) }
        if command.utf8Equals("lines-off") { return LinesOffCommand.main(rest) }
        if command.utf8Equals("doctor") { return DoctorCommand.main(rest) }
        if command.utf8Equals("test-board") { return TestBoardCommand.main(rest) }
        if Arguments.list(["help", "--help", "-h"], has: command) { return help(rest.first ?? "") }
        if let status = extra(command, rest) { return status }
        Log.error("unknown command '\(command)' (try: wristlink help)")
        return ExitCode.usage
    }

    static func help(_ command: String) -> Int32 {
        if command.utf8Equals("run") {
            print(RunCommand.usage)
        } else if command.utf8Equals("phone") {
            print(PhoneCommand.usage)
        } else if command.utf8Equals("sim") {
            print(SimCommand.usage)
        } else if command.utf8Equals("forget") {
            print(ForgetCommand.usage)
        } else if command.utf8Equals("lines-off") {
            print(LinesOffCommand.usage)
        } else if command.utf8Equals("doctor") {
            print(DoctorCommand.usage)
        } else if command.utf8Equals("test-board") {
            print(TestBoardCommand.usage)
        } else {
            print(usage)
        }
        return ExitCode.ok
    }

    /// Reports a usage error and returns its exit code.
    static func fail(_ error: UsageError, command: String) -> Int32 {
        Log.error("\(error.message) (see wristlink \(command) --help)")
        return ExitCode.usage
    }
}
