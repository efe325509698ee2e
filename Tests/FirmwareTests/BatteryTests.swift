// SPDX-License-Identifier: Apache-2.0
// The battery through the wearable: the poll's readings reported, the
// low/critical feedback once per discharge on the board's lines, the
// status at a glance, and Battery Service on the link (notifications,
// Service Changed) as the phone sees the bytes.
import ATT
import Bounded
import Config
import Firmware
import MemoryPlatform
import Platform
import Testing
import TestSupport

func discharging(_ percent: Int) -> BatteryReading {
    BatteryReading(percent: percent, estimated: false, status: .discharging, voltageMicrovolts: nil)
}

func charging(_ percent: Int) -> BatteryReading {
    BatteryReading(percent: percent, estimated: false, status: .charging, voltageMicrovolts: nil)
}

extension CoreRig {
    /// The gauge reads `reading` from now on; the core is given it at once.
    mutating func battery(_ reading: BatteryReading?) {
        runner.platform.battery = reading
        let at = now
        runner.core.batteryRead(reading, now: at, into: &runner.effects)
        settle()
    }

    var batteryEvents: [BatteryEvent] {
        events.compactMap { if case .battery(let e) = $0 { e } else { nil } }
    }
}

@Suite("Battery: the level over time (BatteryWatch)")
struct BatteryWatchTests {
    @Test("the first reading and each change of percent or status are reported; an unchanged one is not")
    func reports() {
        var w = BatteryWatch(board: simBoard)
        #expect(w.update(discharging(80), now: .zero).report == .level(percent: 80, status: .discharging, estimated: false))
        #expect(w.update(discharging(80), now: .zero).report == nil)
        #expect(w.update(charging(80), now: .zero).report == .level(percent: 80, status: .charging, estimated: false))
        #expect(w.update(charging(81), now: Instant(ms: 60_000)).report == .level(percent: 81, status: .charging, estimated: false))
        #expect(w.nextPollAt == Instant(ms: 120_000), "the next read one battery-poll-s (60 s) later")
        #expect(w.update(nil, now: .zero).report == .gone)
        #expect(w.update(nil, now: .zero).report == nil, "gone once")
    }

    @Test("battery-low at 15% once per discharge; a wobble around 15% does not repeat it; charging arms it again")
    func lowOncePerDischarge() {
        var w = BatteryWatch(board: simBoard)
        #expect(w.update(discharging(16), now: .zero).alarm == nil)
        #expect(w.update(discharging(15), now: .zero).alarm == .low(percent: 15))
        #expect(w.isLow)
        #expect(w.update(discharging(14), now: .zero).alarm == nil)
        #expect(w.update(discharging(16), now: .zero).alarm == nil)
        #expect(w.update(discharging(15), now: .zero).alarm == nil, "within 5 points of the threshold: not armed again")
        #expect(w.update(charging(15), now: .zero).alarm == nil)
        #expect(!w.isLow, "charging is not low")
        #expect(w.update(discharging(15), now: .zero).alarm == .low(percent: 15))
        #expect(w.update(discharging(20), now: .zero).alarm == nil)
        #expect(w.update(discharging(12), now: .zero).alarm == .low(percent: 12), "20% arms it again without a charger's status")
    }

    @Test("battery-critical at 5%, once; a fall past both between two polls plays critical alone")
    func critical() {
        var w = BatteryWatch(board: simBoard)
        #expect(w.update(discharging(40), now: .zero).alarm == nil)
        #expect(w.update(discharging(4), now: .zero).alarm == .critical(percent: 4))
        #expect(w.update(discharging(3), now: .zero).alarm == nil)
        #expect(w.update(discharging(5), now: .zero).alarm == nil)
        var v = BatteryWatch(board: simBoard)
        _ = v.update(discharging(15), now: .zero)
        #expect(v.update(discharging(5), now: .zero).alarm == .critical(percent: 5))
    }

    @Test("a board without a battery is never polled")
    func noneNeverPolled() {
        var board = simBoard
        board.battery = .none
        var w = BatteryWatch(board: board)
        #expect(w.nextPollAt == nil)
        let outcome = w.update(discharging(3), now: .zero)
        #expect(outcome.report == nil && outcome.alarm == nil)
    }
}

@Suite("Battery on the wrist and on the link")
struct BatteryTests {
    @Test("battery-low plays the shipped pattern once: two 500 ms buzzes and the call LED's three blinks, and the event says so")
    func lowPlaysOnLines() {
        var rig = CoreRig()
        rig.battery(discharging(50))
        #expect(rig.batteryEvents == [.level(percent: 50, status: .discharging, estimated: false)])
        #expect(rig.level("vibration") == false)
        rig.events.removeAll()
        rig.battery(discharging(15))
        #expect(rig.batteryEvents == [.level(percent: 15, status: .discharging, estimated: false), .low(percent: 15)])
        #expect(rig.level("vibration") == true)
        #expect(rig.level("led-call") == true)
        #expect(rig.onForMs("vibration") == 500)
        rig.advance(ms: 300)
        #expect(rig.onForMs("vibration") == 500)
        #expect(rig.everOn("vibration", forMs: 2_000) == false)
        rig.battery(discharging(14))
        #expect(rig.everOn("vibration", forMs: 1_000) == false, "once per discharge")
    }

    @Test("battery-critical plays four buzzes")
    func criticalPlays() {
        var rig = CoreRig()
        rig.battery(discharging(5))
        var buzzes = 0
        var wasOn = false
        for _ in 0..<400 {
            let on = rig.level("vibration")
            if on && !wasOn { buzzes += 1 }
            wasOn = on
            rig.advance(ms: 10)
        }
        #expect(buzzes == 4)
        #expect(rig.batteryEvents.last == .critical(percent: 5))
    }

    @Test("status at a glance: a low battery outranks the connection (status-battery-low: the call LED's three 300 ms blinks)")
    func statusBatteryLow() {
        var rig = CoreRig()
        rig.battery(charging(10))
        #expect(rig.core.wearerStatus == .connected, "charging is not low")
        rig.battery(discharging(10))
        rig.advance(ms: 3_000)
        #expect(rig.core.wearerStatus == .batteryLow)
        rig.doublePressAccept()
        #expect(rig.level("led-notify") == false)
        #expect(rig.onForMs("led-call") == 300)
    }

    @Test("Battery Level notifications reach a phone that subscribed, on each change of at least 1%")
    func notifiedAfterSubscription() {
        var rig = CoreRig()
        rig.battery(discharging(80))
        #expect(rig.takeSent().isEmpty, "nothing before the phone subscribes")
        rig.phone("0A 0C 00")
        #expect(rig.takeSent() == ["0B 50"])
        rig.phone("12 0D 00 01 00")
        #expect(rig.takeSent() == ["13"])
        rig.battery(discharging(80))
        #expect(rig.takeSent().isEmpty)
        rig.battery(discharging(79))
        #expect(rig.takeSent() == ["1B 0C 00 4F"])
        rig.phone("12 0D 00 00 00")
        rig.battery(discharging(78))
        #expect(rig.takeSent() == ["13"], "unsubscribed: no notification")
        #expect(rig.core.phone.counters.batteryNotifications == 1)
    }

    @Test("a battery that appears while the phone is connected is indicated as Service Changed 0x000A...0x000D, one at a time")
    func appearsLaterIndicated() {
        var rig = CoreRig()
        rig.phone("10 01 00 FF FF 00 28")
        #expect(rig.takeSent() == ["11 06 01 00 05 00 00 18 06 00 09 00 01 18"])
        rig.phone("12 09 00 02 00")
        #expect(rig.takeSent() == ["13"])
        rig.battery(discharging(42))
        #expect(rig.takeSent() == ["1D 08 00 0A 00 0D 00"])
        rig.battery(nil)
        #expect(rig.takeSent().isEmpty, "the second waits for the confirmation")
        rig.phone("1E")
        #expect(rig.takeSent() == ["1D 08 00 0A 00 0D 00"])
        rig.phone("1E")
        #expect(rig.takeSent().isEmpty)
        #expect(rig.batteryEvents == [.level(percent: 42, status: .discharging, estimated: false), .gone])
        rig.phone("10 01 00 FF FF 00 28")
        #expect(rig.takeSent() == ["11 06 01 00 05 00 00 18 06 00 09 00 01 18"])
    }

    @Test("the running firmware reads a real power-supply tree at start: the phone reads the level, no Service Changed, and is notified when the file changes")
    func runnerReadsSupplyFiles() {
        let tree = SupplyTree()
        tree.supply("ac", ["type": "Mains\n"])
        tree.supply("gauge", ["type": "Battery\n", "capacity": "42\n", "status": "Discharging\n"])
        var rig = Rig(powerSupplyRoot: tree.root) { $0.batteryPollMs = 50 }
        rig.runner.start()
        rig.run(Script.bringUp)
        rig.settle()
        #expect(rig.state == .live)
        // The battery was read at start, before the phone connected: the
        // database had it from the first, so no Service Changed is owed.
        rig.run([.phone("12 09 00 02 00"), .firmware("13"), .phone("0A 0C 00"), .firmware("0B 2A"), .phone("12 0D 00 01 00"), .firmware("13")])
        tree.supply("gauge", ["capacity": "41\n"])
        rig.run([.firmware("1B 0C 00 29")])
        #expect(rig.events.contains(.battery(.level(percent: 42, status: .discharging, estimated: false))))
        #expect(rig.events.contains(.battery(.level(percent: 41, status: .discharging, estimated: false))))
    }
}
