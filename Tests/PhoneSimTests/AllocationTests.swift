// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Firmware
import PhoneSim
import Testing
import TestSupport

@Suite("The phone's steady state allocates nothing", .enabled(if: isOptimizedBuild, "allocation counts are measured on the optimized build (swift test -c release)"))
struct PhoneAllocationTests {
    @Test("a typed notification, its attributes fetched at MTU 23, the action performed and the events formatted: no allocation")
    func notifyFetchAct() throws {
        var phone = PhoneCore(config: .serverOnly())
        phone.linkUp(now: Instant(ms: 0))
        _ = phone.subscribeANCS()
        _ = phone.takeEvents()
        let notify = Array("call \"Bob\" uid=7 message=\"A long enough message to need several Data Source fragments\"".utf8)
        let fetch = hex("12 15 00 00 07 00 00 00 00 01 40 00 03 00 01 06 07")
        let act = hex("12 15 00 02 07 00 00 00 00")
        var out = ByteBuffer(capacity: 600)
        var line = ByteBuffer(capacity: 300)
        var sent = 0
        var failures = 0
        var lines = 0
        let perRound = allocationsPerRound(rounds: 200) {
            do {
                try phone.command(notify.span, now: Instant(ms: 1))
            } catch {
                failures += 1
            }
            phone.receive(fetch.span, now: Instant(ms: 2))
            while phone.popOutgoing(into: &out) { sent += 1 }
            phone.receive(act.span, now: Instant(ms: 3))
            while phone.popOutgoing(into: &out) { sent += 1 }
            while let event = phone.nextEvent() {
                event.write(into: &line)
                lines += 1
            }
        }
        #expect(perRound == 0)
        #expect(failures == 0)
        // The warm-up and 200 counted rounds, each: the notification's
        // attributes in 9 fragments at MTU 23 and the Write Response to the action;
        // 7 event lines.
        #expect(sent == 201 * 10)
        #expect(lines == 201 * 7)
        #expect(phone.notificationCount == 0)
    }

    @Test("AMS and CTS: a Remote Command toggling the player, its PlaybackInfo notification, `media` and `time` lines, Current Time read and notified, the events formatted: no allocation")
    func mediaAndClock() throws {
        var phone = PhoneCore(config: .serverOnly())
        phone.linkUp(now: Instant(ms: 0))
        for subscribe in ["12 23 00 01 00", "12 26 00 01 00", "12 25 00 00 01", "12 33 00 01 00"] { _ = phone.exchange(subscribe) }
        _ = phone.takeEvents()
        let toggle = hex("12 22 00 02")
        let readTime = hex("0A 32 00")
        let media = Array("media unavailable".utf8)
        let play = Array("media play".utf8)
        let time = Array("time 2026-12-24T18:30:00+01:00".utf8)
        var out = ByteBuffer(capacity: 600)
        var line = ByteBuffer(capacity: 300)
        var sent = 0
        var failures = 0
        var now = Instant(ms: 0)
        let perRound = allocationsPerRound(rounds: 200) {
            now = now.advanced(byMs: 10)
            phone.receive(toggle.span, now: now)
            while phone.popOutgoing(into: &out) { sent += 1 }
            phone.receive(readTime.span, now: now)
            while phone.popOutgoing(into: &out) { sent += 1 }
            do {
                try phone.command(media.span, now: now)
                while phone.popOutgoing(into: &out) { sent += 1 }
                try phone.command(play.span, now: now)
                while phone.popOutgoing(into: &out) { sent += 1 }
                try phone.command(time.span, now: now)
            } catch {
                failures += 1
            }
            while phone.popOutgoing(into: &out) { sent += 1 }
            while let event = phone.nextEvent() { event.write(into: &line) }
        }
        #expect(perRound == 0)
        #expect(failures == 0)
        // The warm-up and 200 counted rounds, each: the toggle's Write
        // Response and PlaybackInfo, the read's response, the command list
        // and PlaybackInfo twice (unavailable, back), Current Time notified.
        #expect(sent == 201 * 8)
    }

    @Test("long Control Point commands at MTU 23 (Prepare Write, Execute Write) from the wearable's PhoneLink to the phone and the answers: no allocation")
    func longWritesAtMTU23() throws {
        // 17 apps with identifiers too long for one Write Request at MTU 23,
        // asked in turn: the name cache holds 16, so every ask is a new
        // command (a long write), never a cache hit.
        let apps = (0..<17).map { AppIdentifier("com.example.application\($0 + 10)") }
        var script = "mtu 23\n"
        for i in 0..<17 { script += "app com.example.application\(i + 10) \"App \(i)\"\n" }
        var phone = PhoneCore(config: PhoneConfig())
        try phone.load(script)
        var link = LinkDriver(config: PhoneLinkConfig())
        var now = Instant(ms: 0)
        var out = ByteBuffer(capacity: 600)
        var names = 0
        var unexpected = 0
        func pump() {
            var moved = true
            while moved {
                moved = false
                while let event = link.nextEvent() {
                    switch event {
                    case .command(.appNameReceived): names += 1
                    case .command: unexpected += 1
                    default: break
                    }
                }
                link.flush(now: now)
                while let action = link.nextAction() {
                    if case .raiseSecurity = action { link.securityChanged(encrypted: true, now: now) }
                }
                while link.popOutgoing(into: &out) {
                    moved = true
                    phone.receive(out.span, now: now)
                }
                while phone.popOutgoing(into: &out) {
                    moved = true
                    link.receive(out.span, now: now)
                }
                while phone.nextEvent() != nil {}
                while phone.nextAction() != nil {}
            }
        }
        link.linkUp(now: now)
        phone.linkUp(now: now)
        pump()
        now = now.advanced(byMs: 200)
        phone.advance(now: now)
        pump()
        #expect(link.state == .live)
        #expect(link.bearer.mtu == 23)
        var next = 0
        let perRound = allocationsPerRound(rounds: 200) {
            now = now.advanced(byMs: 1)
            _ = link.requestAppName(apps[next % apps.count])
            next += 1
            pump()
        }
        #expect(perRound == 0)
        #expect(unexpected == 0)
        #expect(names == 201, "every ask answered")
    }
}
