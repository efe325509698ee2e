// SPDX-License-Identifier: Apache-2.0
// Battery Service (BAS 1.0: 0x180F, Battery Level 0x2A19 read + notify with
// its CCCD) in our server: there only while a battery reads, at fixed
// handles 0x000A...0x000D, and owed to the phone as Service Changed when it
// comes or goes.
import ATT
import Bounded
import GATT
import Testing
import TestSupport

@Suite("GATT server: Battery Service")
struct BatteryServiceTests {
    func server(level: UInt8? = 80) -> GATTServer {
        var s = GATTServer(deviceName: GATTServer.DeviceName("Wristlink"))
        _ = s.setBattery(level)
        return s
    }

    @Test("without a battery the database has no Battery Service")
    func absentWithoutBattery() {
        var s = server(level: nil)
        #expect(s.batteryLevel == nil)
        #expect(serve(&s, "10 01 00 FF FF 00 28") == "11 06 01 00 05 00 00 18 06 00 09 00 01 18")
        #expect(serve(&s, "06 01 00 FF FF 00 28 0F 18") == "01 06 01 00 0A")
        #expect(serve(&s, "0A 0C 00") == "01 0A 0C 00 01")
        #expect(serve(&s, "12 0D 00 01 00") == "01 12 0D 00 01")
        #expect(!s.serviceChangeOwed)
    }

    @Test("primary service discovery lists Battery Service at 0x000A...0x000D")
    func discoveredAfterGATT() {
        var s = server()
        #expect(serve(&s, "10 01 00 FF FF 00 28") == "11 06 01 00 05 00 00 18 06 00 09 00 01 18 0A 00 0D 00 0F 18")
        #expect(serve(&s, "10 0E 00 FF FF 00 28") == "01 10 0E 00 0A")
        #expect(serve(&s, "06 01 00 FF FF 00 28 0F 18") == "07 0A 00 0D 00")
    }

    @Test("Battery Level is declared read|notify at 0x000C with its CCCD at 0x000D")
    func characteristicAndDescriptor() {
        var s = server()
        #expect(serve(&s, "08 0A 00 0D 00 03 28") == "09 07 0B 00 12 0C 00 19 2A")
        #expect(serve(&s, "04 0C 00 0D 00") == "05 01 0C 00 19 2A 0D 00 02 29")
    }

    @Test("reading Battery Level gives the percent, by handle or by type")
    func readLevel() {
        var s = server(level: 80)
        #expect(serve(&s, "0A 0C 00") == "0B 50")
        #expect(serve(&s, "08 01 00 FF FF 19 2A") == "09 03 0C 00 50")
        _ = s.setBattery(7)
        #expect(serve(&s, "0A 0C 00") == "0B 07")
        _ = s.setBattery(250)
        #expect(serve(&s, "0A 0C 00") == "0B 64", "clamped to 100")
    }

    @Test("a level change is notified as Handle Value Notification 0x1B on 0x000C once the phone subscribed")
    func notification() {
        var s = server(level: 80)
        #expect(!s.notifiesBattery)
        #expect(serve(&s, "12 0D 00 01 00") == "13")
        #expect(s.notifiesBattery)
        #expect(serve(&s, "0A 0D 00") == "0B 01 00")
        #expect(s.setBattery(80) == .unchanged)
        #expect(s.setBattery(79) == .level)
        var out = ByteBuffer(capacity: 23)
        let wrote = s.batteryNotification(into: &out)
        #expect(wrote)
        #expect(out.hexString == "1B 0C 00 4F")
        #expect(serve(&s, "12 0D 00 01") == "01 12 0D 00 0D", "a CCCD value is 2 bytes")
    }

    @Test("a battery read before any link is in the database from the start: no Service Changed is owed")
    func atStartNothingOwed() {
        var s = server(level: 80)
        #expect(!s.serviceChangeOwed)
        s.reset()
        #expect(!s.serviceChangeOwed)
    }

    @Test("a battery that appears once a link has been up is owed as Service Changed for 0x000A...0x000D until confirmed")
    func appearsLater() {
        var s = server(level: nil)
        s.reset()
        #expect(s.setBattery(55) == .service)
        #expect(s.serviceChangeOwed)
        var out = ByteBuffer(capacity: 23)
        s.serviceChangedIndication(into: &out)
        #expect(out.hexString == "1D 08 00 0A 00 0D 00")
        // A change while that indication is out is owed again after it.
        #expect(s.setBattery(nil) == .service)
        s.serviceChangeConfirmed()
        #expect(s.serviceChangeOwed)
        s.serviceChangedIndication(into: &out)
        s.serviceChangeConfirmed()
        #expect(!s.serviceChangeOwed)
    }

    @Test("a withdrawn battery takes its subscription with it")
    func withdrawn() {
        var s = server(level: 40)
        #expect(serve(&s, "12 0D 00 01 00") == "13")
        #expect(s.setBattery(nil) == .service)
        #expect(!s.notifiesBattery)
        #expect(s.batteryLevel == nil)
        var out = ByteBuffer(capacity: 23)
        let wrote = s.batteryNotification(into: &out)
        #expect(!wrote)
        _ = s.setBattery(41)
        #expect(!s.notifiesBattery, "the phone subscribes again after rediscovering")
    }

    @Test("a new link forgets the CCCDs unless it is the bonded phone's")
    func subscriptionsPerLink() {
        var s = server(level: 40)
        #expect(serve(&s, "12 0D 00 01 00") == "13")
        #expect(serve(&s, "12 09 00 02 00") == "13")
        s.reset(keepSubscriptions: true)
        #expect(s.notifiesBattery && s.indicatesServiceChanged)
        #expect(serve(&s, "0A 0D 00") == "0B 01 00")
        s.reset()
        #expect(!s.notifiesBattery && !s.indicatesServiceChanged)
        #expect(serve(&s, "0A 0D 00") == "0B 00 00")
    }
}
