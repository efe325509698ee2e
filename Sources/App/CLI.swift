// The command line: `wristlink run | phone | sim | help`. Parsing is by
// hand (no outside packages); every bad flag or file gives one clear line on
// stderr and a documented exit code.

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
struct Arguments {
    private var values: [String: String] = [:]
    private(set) var flags: Set<String> = []

    init(_ args: ArraySlice<String>, valued: Set<String>, boolean: Set<String> = []) throws(UsageError) {
        var i = args.startIndex
        while i < args.endIndex {
            let arg = args[i]
            var name = arg
            var inline: String? = nil
            if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                name = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            if boolean.contains(name) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                flags.insert(name)
                i += 1
                continue
            }
            guard valued.contains(name) else {
                throw UsageError(arg.hasPrefix("-") ? "unknown option \(name)" : "unexpected argument '\(arg)'")
            }
            guard values[name] == nil else { throw UsageError("\(name) given twice") }
            if let inline {
                values[name] = inline
                i += 1
            } else {
                guard i + 1 < args.endIndex else { throw UsageError("\(name) needs a value") }
                values[name] = args[i + 1]
                i += 2
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }
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
        if rest.contains("--help") || rest.contains("-h") { return help(command) }
        switch command {
        case "run": return RunCommand.main(rest)
        case "forget": return ForgetCommand.main(rest)
        case "lines-off": return LinesOffCommand.main(rest)
        case "help", "--help", "-h": return help(rest.first ?? "")
        default:
            if let status = extra(command, rest) { return status }
            Log.error("unknown command '\(command)' (try: wristlink help)")
            return ExitCode.usage
        }
    }

    static func help(_ command: String) -> Int32 {
        switch command {
        case "run": print(RunCommand.usage)
        case "phone": print(PhoneCommand.usage)
        case "sim": print(SimCommand.usage)
        case "forget": print(ForgetCommand.usage)
        case "lines-off": print(LinesOffCommand.usage)
        default: print(usage)
        }
        return ExitCode.ok
    }

    /// Reports a usage error and returns its exit code.
    static func fail(_ error: UsageError, command: String) -> Int32 {
        Log.error("\(error.message) (see wristlink \(command) --help)")
        return ExitCode.usage
    }
}
