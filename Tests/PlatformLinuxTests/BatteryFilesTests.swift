// SPDX-License-Identifier: Apache-2.0
// The running firmware's battery reads (BatteryFiles): the same files as
// doctor's reader, through a kept directory descriptor, getdents64 and
// stack buffers.
import Config
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

@Suite("Battery at the poll: the board's supply read from /sys/class/power_supply without allocating")
struct BatteryFilesTests {
    @Test("battery auto reads the first battery by name, skipping supplies of other types")
    func autoFirstByName() {
        let tree = SupplyTree()
        tree.supply("gauge", ["type": "Battery\n", "capacity": "40\n", "status": "Discharging\n"])
        tree.supply("BAT0", ["type": "Battery", "capacity": "60", "status": "Charging"])
        tree.supply("ac", ["type": "Mains\n", "capacity": "99\n"])
        var files = BatteryFiles(choice: .auto, root: tree.root)
        #expect(files.read() == BatteryReading(percent: 60, estimated: false, status: .charging, voltageMicrovolts: nil))
        #expect(files.supplyName == "BAT0")
        #expect(files.scans == 1)
        #expect(files.read()?.percent == 60)
        #expect(files.scans == 1, "a supply found is read again without listing the directory")
    }

    @Test("a named supply is read as it changes; a voltage-only supply is estimated")
    func namedAndChanging() {
        let tree = SupplyTree()
        tree.supply("gauge", ["type": "Battery\n", "capacity": "40\n", "status": "Discharging\n", "voltage_now": "3800000\n"])
        var files = BatteryFiles(choice: .named("gauge"), root: tree.root)
        #expect(files.read() == BatteryReading(percent: 40, estimated: false, status: .discharging, voltageMicrovolts: 3_800_000))
        tree.supply("gauge", ["capacity": "14\n"])
        #expect(files.read()?.percent == 14)
        tree.supply("bare", ["type": "Battery\n", "voltage_now": "3800000"])
        var bare = BatteryFiles(choice: .named("bare"), root: tree.root)
        #expect(bare.read() == BatteryReading(percent: 55, estimated: true, status: .unknown, voltageMicrovolts: 3_800_000))
    }

    @Test("a supply that disappears reads as nothing; auto finds the next battery, and one that appears later")
    func disappearsAndAppears() {
        let tree = SupplyTree()
        var files = BatteryFiles(choice: .auto, root: tree.root)
        #expect(files.read() == nil)
        tree.supply("gauge", ["type": "Battery\n", "capacity": "33\n"])
        #expect(files.read()?.percent == 33, "a gauge bound after start is found at the next poll")
        tree.supply("BAT0", ["type": "Battery\n", "capacity": "70\n"])
        #expect(files.read()?.percent == 33, "the supply found stays while it reads")
        tree.remove("gauge")
        #expect(files.read()?.percent == 70)
        tree.remove("BAT0")
        #expect(files.read() == nil)
        var named = BatteryFiles(choice: .named("BAT0"), root: tree.root)
        #expect(named.read() == nil)
        var none = BatteryFiles(choice: .none, root: tree.root)
        #expect(none.read() == nil)
        var missing = BatteryFiles(choice: .auto, root: tree.root + "/absent")
        #expect(missing.read() == nil)
    }

    @Test("a read at the poll allocates nothing", .enabled(if: isOptimizedBuild, "allocation counts are measured on the optimized build"))
    func readAllocatesNothing() {
        let tree = SupplyTree()
        tree.supply("ac", ["type": "Mains\n"])
        tree.supply("gauge", ["type": "Battery\n", "capacity": "40\n", "status": "Discharging\n", "voltage_now": "3800000\n"])
        var files = BatteryFiles(choice: .auto, root: tree.root)
        var total = 0
        #expect(allocationsPerRound(rounds: 50) { total += files.read()?.percent ?? -1000 } == 0)
        #expect(total == 51 * 40)
        var empty = BatteryFiles(choice: .auto, root: tree.root + "/absent")
        _ = empty.read()
        tree.remove("gauge")
        var scanning = BatteryFiles(choice: .auto, root: tree.root)
        #expect(allocationsPerRound(rounds: 50) { total += scanning.read() == nil ? 1 : 0 } == 0, "listing the directory allocates nothing either")
    }
}
