// SPDX-License-Identifier: Apache-2.0
// The batteries the kernel's power-supply class lists, read from their
// files (Platform/PowerSupply.swift has the format). The root is
// injectable (`root`, /sys/class/power_supply on a Pi) so tests use a
// temporary directory. A supply that disappears between the listing and
// the read (a fuel gauge unbound, a hot-unplugged pack) reads as nil, never
// as a made-up level. Bounded: at most `maxSupplies` entries are looked at,
// each file at most 64 bytes.

import Bounded
import CLinux
import Platform

public struct PowerSupplyReader: Sendable {
    public static let defaultRoot = "/sys/class/power_supply"
    public static let maxSupplies = 16
    static let maxFileBytes = 64

    public let root: String

    public init(root: String = PowerSupplyReader.defaultRoot) { self.root = root }

    /// The supplies whose `type` is Battery, by name.
    public func batteries() -> [String] {
        guard let dir = opendir(root) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        var seen = 0
        while let entry = CLinux.readdir(dir), seen < Self.maxSupplies {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name.utf8.first == 0x2E { continue }
            seen += 1
            if let type = file(name, "type"), PowerSupplyText.isBattery(type: type) { names.append(name) }
        }
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return names
    }

    /// Whether `name` is a supply of type Battery now.
    public func isBattery(_ name: String) -> Bool {
        guard !name.utf8.contains(0x2F), let type = file(name, "type") else { return false }
        return PowerSupplyText.isBattery(type: type)
    }

    /// The battery `name` now; nil if it is gone, is not a battery, or
    /// says neither a capacity nor a voltage.
    public func read(_ name: String) -> BatteryReading? {
        guard isBattery(name) else { return nil }
        return PowerSupplyText.reading(capacity: file(name, "capacity"), status: file(name, "status"), voltage: file(name, "voltage_now"))
    }

    /// The supply the board's `battery` setting names: `auto` the first
    /// battery by name, a name that battery if it exists; nil: none.
    public func resolve(_ choice: BatteryChoice) -> String? {
        switch choice {
        case .none: return nil
        case .auto: return batteries().first
        case .named(let name): return isBattery(name) ? name : nil
        }
    }

    func file(_ supply: String, _ attribute: String) -> [UInt8]? {
        guard let text = try? ProcessControl.readFile(root + "/" + supply + "/" + attribute, maxBytes: Self.maxFileBytes) else { return nil }
        return Array(text.utf8)
    }
}
