// SPDX-License-Identifier: Apache-2.0
// Quiet hours by the phone's clock (CTS) and "phone left behind", on the
// core with a scripted phone. The scripted phone's Current Time is
// 2026-12-01 22:15:03 (CompanionWire.ctsRead).

import ANCS
import Bounded
import Config
import Firmware
import Testing
import TestSupport

@Suite("Quiet hours by the phone's clock")
struct QuietHoursTests {
    /// A core whose phone said it is 22:15:03, with `quiet` added to the
    /// shipped policy.
    static func rig(_ quiet: String) throws -> CoreRig {
        var rig = CoreRig(policy: try shippedPolicy(replacing: "", with: "", adding: "\n" + quiet + "\n"), companions: true)
        _ = rig.play(CompanionWire.all)
        return rig
    }

    @Test("in a window (22:00-07:00, across midnight) a message neither flashes nor buzzes, but the unread LED shows")
    func messageIsQuiet() throws {
        var rig = try Self.rig("quiet 22:00-07:00")
        #expect(rig.events.contains(.quietHours(.on)))
        rig.notify(.added, [], .social, uid: 5)
        #expect(rig.core.counters.alertsQuieted == 1)
        #expect(rig.level("vibration") == false)
        #expect(rig.everOn("vibration", forMs: 1_500) == false)
        #expect(rig.level("led-notify") == true, "the unread indicator still shows")
    }

    @Test("an incoming call rings in quiet hours unless the line's allow= leaves it out")
    func callsAllowedByDefault() throws {
        var rig = try Self.rig("quiet 22:00-07:00")
        rig.notify(.added, call, .incomingCall, uid: 6)
        let rang = rig.everOn("vibration", forMs: 1_000)
        #expect(rang)
        var strict = try Self.rig("quiet 22:00-07:00 allow=none")
        strict.notify(.added, call, .incomingCall, uid: 6)
        #expect(strict.everOn("vibration", forMs: 1_000) == false)
        #expect(strict.everOn("led-call", forMs: 500) == false)
    }

    @Test("important=yes lets an Important message through; important=no does not")
    func importantBreaksThrough() throws {
        var yes = try Self.rig("quiet 22:00-07:00 important=yes")
        yes.notify(.added, [.important], .social, uid: 7)
        let alerted = yes.everOn("vibration", forMs: 1_000)
        #expect(alerted)
        var no = try Self.rig("quiet 22:00-07:00 important=no")
        no.notify(.added, [.important], .social, uid: 7)
        #expect(no.everOn("vibration", forMs: 1_000) == false)
    }

    @Test("outside the window alerts play; the window's end is a deadline: quiet off is reported at 22:30 by the phone's clock")
    func windowEdges() throws {
        var rig = try Self.rig("quiet 21:00-22:30")
        #expect(rig.events.contains(.quietHours(.on)))
        rig.events.removeAll()
        rig.advance(ms: (14 * 60 + 56) * 1_000)
        #expect(!rig.events.contains(.quietHours(.off)), "22:29:59 is still quiet")
        rig.advance(ms: 2_000)
        #expect(rig.events == [.quietHours(.off)])
        rig.notify(.added, [], .social, uid: 8)
        let alerted = rig.everOn("vibration", forMs: 1_000)
        #expect(alerted)
    }

    @Test("with the phone's time unknown quiet hours do not apply, and the events say why")
    func unknownTime() throws {
        var rig = CoreRig(policy: try shippedPolicy(replacing: "", with: "", adding: "\nquiet 00:00-23:59\n"))
        rig.notify(.added, [], .social, uid: 9)
        let alerted = rig.everOn("vibration", forMs: 1_000)
        #expect(alerted)
        #expect(rig.core.counters.alertsQuieted == 0)
        var core = WearableCore(config: testConfig(policy: try shippedPolicy(replacing: "", with: "", adding: "\nquiet 00:00-23:59\n")))
        var effects = Effects(sink: RecordingSink())
        core.start(now: Instant(ms: 0), into: &effects)
        #expect(effects.sink.events.contains(.quietHours(.timeUnknown)), "said at start")
    }
}

@Suite("Phone left behind")
struct PhoneLostTests {
    @Test("the phone's link drops and stays away for phone-lost-ms (30 s): phone lost once, the long buzz; it reconnects: phone back, a blink")
    func lostAndBack() {
        var rig = CoreRig()
        rig.linkDown(.platform("peer-closed"))
        rig.advance(ms: 29_900)
        #expect(!rig.events.contains(.phoneLost(true)))
        rig.advance(ms: 200)
        #expect(rig.events.filter { $0 == .phoneLost(true) }.count == 1)
        let buzzed = rig.everOn("vibration", forMs: 1_000)
        #expect(buzzed, "the phone-lost buzz")
        rig.advance(ms: 60_000)
        #expect(rig.events.filter { $0 == .phoneLost(true) }.count == 1, "reported once")
        rig.linkUp()
        rig.settle()
        #expect(!rig.events.contains(.phoneLost(false)), "an address alone is not the phone")
        rig.securityChanged(encrypted: true)
        rig.settle()
        #expect(rig.events.contains(.phoneLost(false)), "back once its link is encrypted")
        #expect(rig.everOn("vibration", forMs: 1_000) == false, "back is a blink, no buzz")
    }

    @Test("a phone back within phone-lost-ms is never reported lost")
    func backInTime() {
        var rig = CoreRig()
        rig.linkDown(.platform("peer-closed"))
        rig.advance(ms: 10_000)
        rig.linkUp()
        rig.advance(ms: 60_000)
        #expect(!rig.events.contains(.phoneLost(true)) && !rig.events.contains(.phoneLost(false)))
    }

    @Test("a link that ends at shutdown, or with phone-lost-ms 0, is not a phone left behind")
    func excused() throws {
        var rig = CoreRig()
        rig.input(.stop(reason: "signal"))
        rig.linkDown(.platform("peer-closed"))
        rig.advance(ms: 60_000)
        #expect(!rig.events.contains(.phoneLost(true)))
        var off = CoreRig(policy: try shippedPolicy(replacing: "phone-lost-ms 30000", with: "phone-lost-ms 0"))
        off.linkDown(.platform("peer-closed"))
        off.advance(ms: 60_000)
        #expect(!off.events.contains(.phoneLost(true)))
    }

    @Test("a link that never subscribed (no known phone yet) is not watched")
    func unknownPhoneNotWatched() {
        var rig = CoreRig(script: [])
        rig.linkDown(.platform("peer-closed"))
        rig.advance(ms: 60_000)
        #expect(!rig.events.contains(.phoneLost(true)))
    }
}

@Suite("Phone left behind: the wearable's own drops, a shaky link")
struct PhoneLostDebounceTests {
    /// Ends the link as `reason` says, waits `awayMs`, and brings the
    /// phone back up to a live link.
    static func away(_ rig: inout CoreRig, _ reason: EndReason = .platform("peer-closed"), forMs awayMs: Int64) {
        rig.linkDown(reason)
        rig.advance(ms: awayMs)
        _ = rig.takeSent()
        rig.linkUp()
        rig.securityChanged(encrypted: true)
        rig.settle()
        _ = rig.play(Script.cachedReconnection)
    }

    

    @Test("a link the wearable ended itself (att-timeout, att-refused, not-secured, subscribe-failed, or its own stack: connection-aborted) is not a phone left behind")
    func wearablesOwnDropsAreExcused() {
        let reasons: [EndReason] = [.attTimeout, .attRefused, .notSecured, .subscribeFailed, .platform("connection-aborted")]
        for reason in reasons {
            var rig = CoreRig()
            rig.linkDown(reason)
            rig.advance(ms: 60_000)
            #expect(!rig.events.contains(.phoneLost(true)), "\(reason)")
            #expect(rig.everOn("vibration", forMs: 500) == false, "\(reason)")
        }
    }

    @Test("the phone's own drops still count: peer-closed, connection-reset, link-timeout")
    func phonesDropsCount() {
        for name: Name in ["peer-closed", "connection-reset", "link-timeout"] {
            var rig = CoreRig()
            rig.linkDown(.platform(name))
            rig.advance(ms: 31_000)
            #expect(rig.events.contains(.phoneLost(true)), "\(name)")
        }
    }

    @Test("a phone that flaps (20 s away, 5 s back) for ten minutes never buzzes: each time it is back within phone-lost-ms")
    func flappingWithinTheTimeoutNeverBuzzes() {
        var rig = CoreRig()
        var buzzed = false
        for _ in 0..<24 {
            rig.linkDown(.platform("peer-closed"))
            buzzed = rig.everOn("vibration", forMs: 20_000) || buzzed
            _ = rig.takeSent()
            rig.linkUp()
            rig.securityChanged(encrypted: true)
            rig.settle()
            _ = rig.play(Script.cachedReconnection)
            buzzed = rig.everOn("vibration", forMs: 5_000) || buzzed
        }
        #expect(buzzed == false)
        #expect(!rig.events.contains(.phoneLost(true)))
    }

    @Test("after the phone-lost buzz, a phone back for less than five minutes that goes again is reported lost without a second buzz; back for five minutes, the next loss buzzes")
    func cooldownAfterALostBuzz() {
        var rig = CoreRig()
        Self.away(&rig, forMs: 36_000)
        #expect(rig.events.filter { $0 == .phoneLost(true) }.count == 1)
        #expect(rig.events.contains(.phoneLost(false)), "back")
        rig.advance(ms: 60_000)
        // Gone again after one minute back: reported, not buzzed.
        rig.linkDown(.platform("peer-closed"))
        rig.advance(ms: 30_100)
        #expect(rig.events.filter { $0 == .phoneLost(true) }.count == 2, "reported")
        #expect(rig.everOn("vibration", forMs: 5_000) == false, "no second buzz within the cooldown")
        _ = rig.takeSent()
        rig.linkUp()
        rig.securityChanged(encrypted: true)
        rig.settle()
        _ = rig.play(Script.cachedReconnection)
        #expect(rig.events.filter { $0 == .phoneLost(false) }.count == 2)
        // Back for five minutes: the next loss buzzes again.
        rig.advance(ms: 5 * 60_000)
        rig.linkDown(.platform("peer-closed"))
        rig.advance(ms: 30_100)
        #expect(rig.events.filter { $0 == .phoneLost(true) }.count == 3)
        #expect(rig.everOn("vibration", forMs: 1_000) == true, "the phone-lost buzz")
    }
}
