// SPDX-License-Identifier: Apache-2.0
import Config
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

@Suite("Power supplies: the kernel's /sys/class/power_supply files, read from an injectable root")
struct PowerSupplyTests {
    @Test("integer attributes: with or without the trailing newline; anything else is no value")
    func integers() {
        #expect(PowerSupplyText.integer(Array("82\n".utf8)) == 82)
        #expect(PowerSupplyText.integer(Array("82".utf8)) == 82)
        #expect(PowerSupplyText.integer(Array("3871000\n".utf8)) == 3_871_000)
        #expect(PowerSupplyText.integer(Array("-5\n".utf8)) == -5)
        for garbage in ["", "\n", "-", "8 2\n", "82\n\n", "82%\n", "abc\n", "1234567890123456789\n"] {
            #expect(PowerSupplyText.integer(Array(garbage.utf8)) == nil, "\(garbage.debugDescription)")
        }
    }

    @Test("a fuel gauge's battery: capacity, status and voltage_now as the kernel writes them")
    func fuelGauge() {
        let tree = SupplyTree()
        tree.supply("BAT0", ["type": "Battery\n", "capacity": "82\n", "status": "Discharging\n", "voltage_now": "3871000\n"])
        tree.supply("ac", ["type": "Mains\n"])
        let reader = PowerSupplyReader(root: tree.root)
        #expect(reader.batteries() == ["BAT0"], "a Mains supply is not a battery")
        #expect(reader.read("BAT0") == BatteryReading(percent: 82, estimated: false, status: .discharging, voltageMicrovolts: 3_871_000))
        #expect(reader.read("ac") == nil)
    }

    @Test("files without a trailing newline read the same; Not charging and Full are statuses")
    func noNewline() {
        let tree = SupplyTree()
        tree.supply("bare", ["type": "Battery", "capacity": "7", "status": "Not charging"])
        let reader = PowerSupplyReader(root: tree.root)
        #expect(reader.read("bare") == BatteryReading(percent: 7, estimated: false, status: .notCharging, voltageMicrovolts: nil))
        tree.supply("bare", ["status": "Full\n", "capacity": "100"])
        #expect(reader.read("bare")?.status == .full)
    }

    @Test("no capacity: the level is estimated from voltage_now (3.8 V, 55%)")
    func voltageOnly() {
        let tree = SupplyTree()
        tree.supply("gauge", ["type": "Battery\n", "status": "Charging\n", "voltage_now": "3800000\n"])
        #expect(PowerSupplyReader(root: tree.root).read("gauge") == BatteryReading(percent: 55, estimated: true, status: .charging, voltageMicrovolts: 3_800_000))
        #expect(PowerSupplyText.percent(microvolts: 3_000_000) == 0)
        #expect(PowerSupplyText.percent(microvolts: 3_650_000) == 20)
        #expect(PowerSupplyText.percent(microvolts: 4_350_000) == 100)
    }

    @Test("garbage: a capacity that is not a number falls back to voltage_now, and with neither there is no reading, never a made-up level")
    func garbage() {
        let tree = SupplyTree()
        tree.supply("bad", ["type": "Battery\n", "capacity": "full\n", "status": "Discharging\n", "voltage_now": "3700000\n"])
        let reader = PowerSupplyReader(root: tree.root)
        #expect(reader.read("bad") == BatteryReading(percent: 30, estimated: true, status: .discharging, voltageMicrovolts: 3_700_000))
        tree.supply("bad", ["voltage_now": "\n"])
        #expect(reader.read("bad") == nil)
        tree.supply("bad", ["capacity": "250\n", "status": "Sleeping\n"])
        #expect(reader.read("bad") == BatteryReading(percent: 100, estimated: false, status: .unknown, voltageMicrovolts: nil), "clamped; an unknown word is unknown")
    }

    @Test("a supply that disappears reads as nothing, and is no longer listed")
    func disappears() {
        let tree = SupplyTree()
        tree.supply("BAT0", ["type": "Battery\n", "capacity": "50\n", "status": "Discharging\n"])
        let reader = PowerSupplyReader(root: tree.root)
        #expect(reader.read("BAT0")?.percent == 50)
        tree.remove("BAT0")
        #expect(reader.read("BAT0") == nil)
        #expect(reader.batteries().isEmpty)
        #expect(reader.resolve(.auto) == nil)
    }

    @Test("battery auto picks the first battery by name, a name only a battery, none nothing; a missing root lists none")
    func resolve() {
        let tree = SupplyTree()
        tree.supply("gauge", ["type": "Battery\n", "capacity": "40\n"])
        tree.supply("BAT0", ["type": "Battery\n", "capacity": "60\n"])
        tree.supply("ac", ["type": "Mains\n"])
        let reader = PowerSupplyReader(root: tree.root)
        #expect(reader.batteries() == ["BAT0", "gauge"])
        #expect(reader.resolve(.auto) == "BAT0")
        #expect(reader.resolve(.named("gauge")) == "gauge")
        #expect(reader.resolve(.named("ac")) == nil)
        #expect(reader.resolve(.named("../BAT0")) == nil)
        #expect(reader.resolve(.none) == nil)
        #expect(PowerSupplyReader(root: tree.root + "/absent").batteries().isEmpty)
    }
}
