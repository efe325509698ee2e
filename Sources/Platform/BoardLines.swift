// SPDX-License-Identifier: Apache-2.0
// The board's lines as the platform needs them: which GPIO line each output
// (LED, motor) and button is on and how it is wired, in the order the
// firmware numbers them (output and button indices are positions here).
// Plain values: Config's board parser fills them in from the board file,
// PlatformLinux requests and probes the lines they describe, and neither
// needs the other (docs/architecture.md).

/// The pull resistor asked of the GPIO driver for an input line.
public enum Bias: Equatable, Sendable {
    /// Leave whatever the device tree or boot firmware set.
    case asIs
    case disable
    case pullUp
    case pullDown
}

/// Where a line is: by its name (device tree `gpio-line-names`, e.g.
/// "GPIO17"), or by its offset on a chip.
public enum LineRef: Equatable, Sendable {
    case named(String)
    case offset(Int)

    /// "GPIO17" or "offset 17", for messages.
    public var description: String {
        switch self {
        case .named(let name): name
        case .offset(let offset): "offset \(offset)"
        }
    }
}

/// What an output drives. The policy's consumer keeps a Silent notification
/// off every `.motor` output.
public enum OutputKind: Equatable, Sendable {
    case led
    case motor
}

public struct LineSpec: Equatable, Sendable {
    /// Our name for it (`led-notify`, `accept`): what the policy refers to.
    public var name: String
    public var line: LineRef
    /// The chip (name `gpiochip0`, label, number or path) when it differs
    /// from the board's; nil: the board's.
    public var chip: String?
    /// The line is active (LED lit, button pressed) at the low level.
    public var activeLow: Bool
    /// Buttons only; outputs are `.asIs`.
    public var bias: Bias
    /// Outputs only; buttons are `.led`.
    public var kind: OutputKind

    public init(
        name: String, line: LineRef, chip: String? = nil, activeLow: Bool = false, bias: Bias = .asIs,
        kind: OutputKind = .led
    ) {
        self.name = name
        self.line = line
        self.chip = chip
        self.activeLow = activeLow
        self.bias = bias
        self.kind = kind
    }
}

/// Every line of a board: outputs then buttons, on a default chip.
public struct BoardLines: Equatable, Sendable {
    /// Each button's edge events come through their own descriptor in the
    /// poll table (8 slots, shared with the link, signals and console).
    public static let maxButtons = 4

    /// Lines are simulated (`chip sim`): nothing is requested from the kernel.
    public var simulated: Bool
    /// The default chip for lines without their own `chip=`; nil: a named line
    /// is looked for on every chip.
    public var chip: String?
    public var outputs: [LineSpec]
    public var buttons: [LineSpec]

    public init(simulated: Bool, chip: String? = nil, outputs: [LineSpec], buttons: [LineSpec]) {
        self.simulated = simulated
        self.chip = chip
        self.outputs = outputs
        self.buttons = buttons
    }

    /// The chip `spec` is on: its own, else the board's (nil: any chip).
    public func chip(of spec: LineSpec) -> String? { spec.chip ?? chip }
}
