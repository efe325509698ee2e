// SPDX-License-Identifier: Apache-2.0
// The board file: which GPIO line each output (LED, motor) and button is on,
// how it is wired (active-low, pull resistor), and the button timing. The
// firmware refers to outputs and buttons by their index in `outputs` and
// `buttons`, in file order. Syntax: docs/config.md. The lines themselves
// are Platform's values (`BoardLines`, `LineSpec`, `BatteryChoice`), so
// PlatformLinux takes them without importing Config.

import Bounded
import Feedback
import Platform

public struct BoardConfig: Equatable, Sendable {
    /// Each output is one pattern player channel; the firmware keeps one
    /// line request per output.
    public static let maxOutputs = 8
    /// One poll-table descriptor each (`BoardLines.maxButtons`).
    public static let maxButtons = BoardLines.maxButtons
    public static let debounceRangeMs: ClosedRange<Int64> = 0...200
    public static let longPressRangeMs: ClosedRange<Int64> = 300...10_000
    public static let doublePressGapRangeMs: ClosedRange<Int64> = 0...2_000
    /// Seconds between reads of the battery: a level moves in minutes.
    public static let batteryPollRangeS: ClosedRange<Int64> = 5...3_600
    public static let defaultBatteryPollS: Int64 = 60
    /// Offsets larger than any Raspberry-Pi-class chip has; a larger one is
    /// a typo.
    public static let offsetRange: ClosedRange<Int64> = 0...1_023
    /// The Bluetooth name when the file gives none.
    public static let defaultBluetoothName = "Wristlink"
    /// A name that fits the scan response whole (31 bytes less its 2-byte
    /// AD header) and the GAP Device Name's storage.
    public static let maxBluetoothNameBytes = 29

    /// The board's own name, for logs and messages.
    public var name: String
    /// What the wearable calls itself over Bluetooth (`bluetooth-name`):
    /// the scan response, the GAP Device Name and, as much as fits, the
    /// advertisement. UTF-8, at most `maxBluetoothNameBytes`.
    public var bluetoothName = BoardConfig.defaultBluetoothName
    /// The battery's power supply (`battery NAME|auto|none`).
    public var battery = BatteryChoice.auto
    /// Seconds between reads of the battery (`battery-poll-s`).
    public var batteryPollS = BoardConfig.defaultBatteryPollS
    /// The outputs and buttons, their chip, or that they are simulated:
    /// what the platform is given to request them.
    public var lines: BoardLines
    public var debounceMs: Int64 = 20
    public var longPressMs: Int64 = 800
    public var doublePressGapMs: Int64 = 300

    public init(
        name: String, simulated: Bool, chip: String? = nil, outputs: [LineSpec], buttons: [LineSpec],
        debounceMs: Int64 = 20, longPressMs: Int64 = 800, doublePressGapMs: Int64 = 300
    ) {
        self.name = name
        self.lines = BoardLines(simulated: simulated, chip: chip, outputs: outputs, buttons: buttons)
        self.debounceMs = debounceMs
        self.longPressMs = longPressMs
        self.doublePressGapMs = doublePressGapMs
    }

    /// Lines are simulated (`chip sim`): nothing is requested from the kernel.
    public var simulated: Bool {
        get { lines.simulated }
        set { lines.simulated = newValue }
    }
    /// The default chip for lines without their own `chip=`.
    public var chip: String? {
        get { lines.chip }
        set { lines.chip = newValue }
    }
    public var outputs: [LineSpec] {
        get { lines.outputs }
        set { lines.outputs = newValue }
    }
    public var buttons: [LineSpec] {
        get { lines.buttons }
        set { lines.buttons = newValue }
    }

    /// By the name's bytes (`parse` keeps names to ASCII letters, digits,
    /// `-`, `_` and `.`, where bytes and `String`'s `==` agree).
    public func outputIndex(named name: String) -> Int? { outputs.firstIndex { $0.name.utf8Equals(name) } }
    public func buttonIndex(named name: String) -> Int? { buttons.firstIndex { $0.name.utf8Equals(name) } }

    /// The chip `spec` is on: its own, else the board's (nil: any chip).
    public func chip(of spec: LineSpec) -> String? { lines.chip(of: spec) }

    /// The button timing for `ButtonGestures` (no chord: the policy does
    /// not configure one yet).
    public var gestures: GestureConfig {
        var config = GestureConfig()
        config.debounceMs = debounceMs
        config.longPressMs = longPressMs
        config.doublePressGapMs = doublePressGapMs
        return config
    }

    /// The board file, or its first mistake.
    public static func parse(_ text: String) throws(ConfigError) -> BoardConfig {
        do throws(ConfigErrors) { return try parseReportingAll(text) } catch { throw error.first }
    }

    /// The board file, or every mistake in it (up to
    /// `ConfigErrors.capacity`, in file order).
    public static func parseReportingAll(_ text: String) throws(ConfigErrors) -> BoardConfig {
        var errors = ConfigErrors()
        var parser = BoardParser()
        for line in Lexer.lines(text, errors: &errors) {
            do throws(ConfigError) { try parser.take(line) } catch {
                errors.add(error)
                parser.failed(line)
            }
        }
        let board = parser.finish(errors: &errors)
        guard errors.isEmpty else { throw errors }
        return board
    }
}

extension BoardConfig {
    /// The output or button whose name has `name`'s bytes.
    func outputIndex(of name: Text) -> Int? { outputs.firstIndex { name.matches($0.name) } }
    func buttonIndex(of name: Text) -> Int? { buttons.firstIndex { name.matches($0.name) } }
}

extension ConfigLine {
    /// The words after the directive; `name=sim` is read as `name sim`.
    var arguments: [Word] {
        var rest = Array(words.dropFirst())
        if let value = words[0].value { rest.insert(Word(key: value, value: nil), at: 0) }
        return rest
    }
}

private struct BoardParser {
    var board = BoardConfig(name: "", simulated: false, outputs: [], buttons: [])
    var nameLine = 0
    var bluetoothNameLine = 0
    var batteryLine = 0
    var batteryPollLine = 0
    var chipLine = 0
    var debounceLine = 0
    var longPressLine = 0
    var doublePressLine = 0
    var outputLines: [Int] = []
    var buttonLines: [Int] = []
    /// Settings whose line had a mistake (reported then): what they would
    /// have given is not reported missing as well.
    var nameFailed = false
    var chipFailed = false
    var outputFailed = false
    var buttonFailed = false

    mutating func failed(_ line: ConfigLine) {
        switch line.verb {
        case "name": nameFailed = true
        case "chip": chipFailed = true
        case "output": outputFailed = true
        case "button": buttonFailed = true
        default: break
        }
    }

    mutating func take(_ line: ConfigLine) throws(ConfigError) {
        let args = line.arguments
        switch line.verb {
        case "name":
            try once(&nameLine, line)
            let name = try single(args, line, example: "name my-wearable")
            try Words.checkName(name, what: "the board", line: line.number)
            board.name = name.description
        case "bluetooth-name":
            try once(&bluetoothNameLine, line)
            let name = try single(args, line, example: "bluetooth-name \"Anna's wristlink\"")
            try Self.checkBluetoothName(name, line: line.number)
            board.bluetoothName = name.description
        case "battery":
            try once(&batteryLine, line)
            let value = try single(args, line, example: "battery auto")
            if value.matches("auto") {
                board.battery = .auto
            } else if value.matches("none") {
                board.battery = .none
            } else {
                try checkKernelName(value, what: "battery", line: line.number)
                guard !value.bytes.contains(0x2F) else {
                    throw ConfigError(line: line.number, .badLine, "battery takes auto, none or a supply's name in /sys/class/power_supply, not a path")
                }
                board.battery = .named(value.description)
            }
        case "battery-poll-s":
            try once(&batteryPollLine, line)
            let text = try single(args, line, example: "battery-poll-s 60")
            board.batteryPollS = try Words.integer(text, in: BoardConfig.batteryPollRangeS, what: "battery-poll-s", unit: " s", line: line.number)
        case "chip":
            try once(&chipLine, line)
            let chip = try single(args, line, example: "chip gpiochip0")
            if chip.matches("sim") {
                board.simulated = true
            } else {
                try checkKernelName(chip, what: "chip", line: line.number)
                board.chip = chip.description
            }
        case "output":
            guard board.outputs.count < BoardConfig.maxOutputs else {
                throw ConfigError(line: line.number, .badLine, "a board has at most \(BoardConfig.maxOutputs) outputs")
            }
            let spec = try lineSpec(args, isOutput: true, line: line.number)
            try checkNewName(spec.name, line: line.number)
            board.outputs.append(spec)
            outputLines.append(line.number)
        case "button":
            guard board.buttons.count < BoardConfig.maxButtons else {
                throw ConfigError(
                    line: line.number, .badLine,
                    "a board has at most \(BoardConfig.maxButtons) buttons (each one takes a slot in the poll table)")
            }
            let spec = try lineSpec(args, isOutput: false, line: line.number)
            try checkNewName(spec.name, line: line.number)
            board.buttons.append(spec)
            buttonLines.append(line.number)
        case "debounce-ms":
            try once(&debounceLine, line)
            board.debounceMs = try milliseconds(args, line, range: BoardConfig.debounceRangeMs)
        case "long-press-ms":
            try once(&longPressLine, line)
            board.longPressMs = try milliseconds(args, line, range: BoardConfig.longPressRangeMs)
        case "double-press-ms":
            try once(&doublePressLine, line)
            board.doublePressGapMs = try milliseconds(args, line, range: BoardConfig.doublePressGapRangeMs)
        default:
            throw ConfigError(
                line: line.number, .unknownKey,
                "unknown setting '\(line.verb)': a board file has name, bluetooth-name, battery, battery-poll-s, chip, output, button, debounce-ms, long-press-ms and double-press-ms"
            )
        }
    }

    /// The checks that need the whole file, their mistakes added to
    /// `errors`.
    func finish(errors: inout ConfigErrors) -> BoardConfig {
        if nameLine == 0 && !nameFailed {
            errors.add(ConfigError(line: 0, .missing, "the board file has no name: add a line like `name my-wearable`"))
        }
        if board.outputs.isEmpty && !outputFailed {
            errors.add(ConfigError(line: 0, .missing, "the board has no outputs: add e.g. `output led-notify line=GPIO17`"))
        }
        if board.buttons.isEmpty && !buttonFailed {
            errors.add(ConfigError(line: 0, .missing, "the board has no buttons: add e.g. `button accept line=GPIO22`"))
        }
        let specs = board.outputs + board.buttons
        let lines = outputLines + buttonLines
        for i in specs.indices {
            if !board.simulated, !chipFailed, case .offset(let offset) = specs[i].line, board.chip(of: specs[i]) == nil {
                errors.add(
                    ConfigError(
                        line: lines[i], .badLine,
                        "line=\(offset) is an offset on a chip, but no chip is given: add chip=gpiochip0 (see gpiodetect) or a `chip` line"
                    ))
                continue
            }
            if let j = (0..<i).first(where: { sameLine(specs[i], specs[$0]) }) {
                errors.add(
                    ConfigError(
                        line: lines[i], .duplicate,
                        "line \(specs[i].line.description) is already used by \(role(j)) \(specs[j].name) on line \(lines[j]): each output and button needs its own line"
                    ))
            }
        }
        return board
    }

    private func role(_ index: Int) -> String { index < board.outputs.count ? "output" : "button" }

    /// Two specs name the same line when the line matches and so does the
    /// chip; a named line with no chip may be on any chip, so it clashes
    /// with the same name anywhere. Names compare as bytes, as the kernel
    /// compares them.
    private func sameLine(_ a: LineSpec, _ b: LineSpec) -> Bool {
        switch (a.line, b.line) {
        case (.offset(let x), .offset(let y)) where x == y: break
        case (.named(let x), .named(let y)) where x.utf8Equals(y): break
        default: return false
        }
        let chipA = board.chip(of: a)
        let chipB = board.chip(of: b)
        switch (chipA, chipB) {
        case (nil, nil): return true
        case (.some(let x), .some(let y)) where x.utf8Equals(y): return true
        default: break
        }
        if case .named = a.line { return chipA == nil || chipB == nil }
        return false
    }

    private func checkNewName(_ name: String, line: Int) throws(ConfigError) {
        if let i = board.outputIndex(named: name) {
            throw ConfigError(line: line, .duplicate, "\(name) is already defined as an output on line \(outputLines[i])")
        }
        if let i = board.buttonIndex(named: name) {
            throw ConfigError(line: line, .duplicate, "\(name) is already defined as a button on line \(buttonLines[i])")
        }
    }

    private func lineSpec(_ args: [Word], isOutput: Bool, line: Int) throws(ConfigError) -> LineSpec {
        let role = isOutput ? "output" : "button"
        guard let first = args.first else {
            throw ConfigError(
                line: line, .badLine,
                isOutput ? "output needs a name: e.g. `output led-notify line=GPIO17`" : "button needs a name: e.g. `button accept line=GPIO22`")
        }
        let name = try Words.bare(first, what: "the \(role)'s name", line: line)
        try Words.checkName(name, what: "the \(role)", line: line)
        let nameString = name.description
        var spec = LineSpec(name: nameString, line: .named(nameString), kind: name.matches("vibration") ? .motor : .led)
        var seen: [Text] = []
        for word in args.dropFirst() {
            guard word.value != nil else {
                throw ConfigError(line: line, .badLine, "unexpected '\(word.key)': \(role) options are written key=value")
            }
            if seen.contains(word.key) {
                throw ConfigError(line: line, .duplicate, "\(word.key)= is given twice")
            }
            seen.append(word.key)
            let value = try Words.value(word, line: line)
            switch word.key {
            case "line":
                if let offset = Words.integer(value) {
                    guard BoardConfig.offsetRange.contains(offset) else {
                        throw ConfigError(
                            line: line, .outOfRange,
                            "line offset \(offset) is out of range: use \(BoardConfig.offsetRange.lowerBound)...\(BoardConfig.offsetRange.upperBound)"
                        )
                    }
                    spec.line = .offset(Int(offset))
                } else {
                    try checkKernelName(value, what: "line name", line: line)
                    spec.line = .named(value.description)
                }
            case "chip":
                try checkKernelName(value, what: "chip", line: line)
                spec.chip = value.description
            case "active-low":
                spec.activeLow = try Words.yesNo(value, what: "active-low", line: line)
            case "kind" where isOutput:
                switch value {
                case "led": spec.kind = .led
                case "motor": spec.kind = .motor
                default: throw ConfigError(line: line, .badLine, "kind takes led or motor, not '\(value)'")
                }
            case "bias" where !isOutput:
                switch value {
                case "as-is": spec.bias = .asIs
                case "disable": spec.bias = .disable
                case "pull-up": spec.bias = .pullUp
                case "pull-down": spec.bias = .pullDown
                default:
                    throw ConfigError(
                        line: line, .badLine, "bias takes pull-up, pull-down, disable or as-is, not '\(value)'")
                }
            default:
                throw ConfigError(
                    line: line, .unknownKey,
                    isOutput
                        ? "unknown output option '\(word.key)': use line=, chip=, active-low= or kind="
                        : "unknown button option '\(word.key)': use line=, chip=, active-low= or bias=")
            }
        }
        return spec
    }

    /// Line and chip names go to the kernel: any bytes but at most 31.
    private func checkKernelName(_ name: Text, what: String, line: Int) throws(ConfigError) {
        guard name.byteCount <= Words.maxNameBytes else {
            throw ConfigError(
                line: line, .badLine,
                "\(what) '\(name)' is longer than \(Words.maxNameBytes) bytes, so no such line or chip can exist")
        }
    }

    /// Bounded in bytes, well-formed UTF-8, no control characters. The file
    /// reaches the parser as a `String`, where a byte that was not UTF-8
    /// reads as U+FFFD: that is refused too, so a file saved in Latin-1
    /// gets a message rather than a name with a replacement character.
    static func checkBluetoothName(_ name: Text, line: Int) throws(ConfigError) {
        let max = BoardConfig.maxBluetoothNameBytes
        guard name.byteCount <= max else {
            throw ConfigError(
                line: line, .badLine,
                "bluetooth-name is \(name.byteCount) bytes: at most \(max) fit the scan response (a character outside ASCII takes 2 to 4)")
        }
        let bytes = name.bytes.span
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte < 0x80 {
                guard byte >= 0x20, byte != 0x7F else {
                    throw ConfigError(line: line, .badLine, "bluetooth-name has a control character (byte \(i + 1)): use printable text")
                }
                i += 1
                continue
            }
            let length = UTF8Boundary.sequenceLength(bytes, at: i)
            let replacement = length == 3 && bytes[i] == 0xEF && bytes[i + 1] == 0xBF && bytes[i + 2] == 0xBD
            guard length > 0, !replacement else {
                throw ConfigError(
                    line: line, .badLine, "bluetooth-name is not valid UTF-8 (byte \(i + 1)): save the file as UTF-8")
            }
            i += length
        }
    }

    private func once(_ seenLine: inout Int, _ line: ConfigLine) throws(ConfigError) {
        guard seenLine == 0 else {
            throw ConfigError(line: line.number, .duplicate, "\(line.verb) is already set on line \(seenLine)")
        }
        seenLine = line.number
    }

    private func single(_ args: [Word], _ line: ConfigLine, example: String) throws(ConfigError) -> Text {
        guard args.count == 1, args[0].value == nil, !args[0].key.isEmpty else {
            throw ConfigError(line: line.number, .badLine, "\(line.verb) takes one value: e.g. `\(example)`")
        }
        return args[0].key
    }

    private func milliseconds(_ args: [Word], _ line: ConfigLine, range: ClosedRange<Int64>) throws(ConfigError) -> Int64 {
        let text = try single(args, line, example: "\(line.verb) \(range.lowerBound)")
        return try Words.integer(text, in: range, what: line.verb.description, unit: " ms", line: line.number)
    }
}
