// SPDX-License-Identifier: Apache-2.0
// The link's timers as values: the security raise and the Notification
// Source clocks, each fed what happened and asked what is due.

import Bounded
import Firmware
import Testing

@Suite("Link timers: one security raise at a time, the keep-alive and resubscription clocks")
struct LinkTimerTests {
    let t0 = Instant(ms: 10_000)

    @Test("an unbonded link asks for security at once, and a second request while it is outstanding is coalesced")
    func unbondedRaiseIsImmediateAndCoalesced() {
        var raise = SecurityRaise(bondedEncryptionWaitMs: 1_500)
        #expect(raise.request(attempt: 1, bondedLinkUpAt: nil, now: t0) == .askNow(attempt: 1))
        #expect(raise.isOutstanding)
        #expect(raise.request(attempt: 2, bondedLinkUpAt: nil, now: t0) == .coalesced)
        #expect(raise.deadline == nil)
        raise.securityChanged(encrypted: true)
        #expect(!raise.isOutstanding)
        #expect(raise.request(attempt: 3, bondedLinkUpAt: nil, now: t0) == .askNow(attempt: 3))
    }

    @Test("on a bonded link the raise waits bondedEncryptionWaitMs from the connection, then is asked for once")
    func bondedRaiseIsDeferredUntilTheWaitEnds() {
        var raise = SecurityRaise(bondedEncryptionWaitMs: 1_500)
        let linkUp = t0
        #expect(raise.request(attempt: 1, bondedLinkUpAt: linkUp, now: t0.advanced(byMs: 200)) == .deferred)
        #expect(raise.deadline == t0.advanced(byMs: 1_500))
        #expect(raise.request(attempt: 2, bondedLinkUpAt: linkUp, now: t0.advanced(byMs: 300)) == .coalesced)
        #expect(raise.advance(now: t0.advanced(byMs: 1_499)) == nil)
        #expect(raise.advance(now: t0.advanced(byMs: 1_500)) == 1)
        #expect(raise.isOutstanding)
        #expect(raise.advance(now: t0.advanced(byMs: 5_000)) == nil, "asked for once")
    }

    @Test("a deferred raise is dropped when the phone encrypts by itself, and kept when it reports unencrypted")
    func deferredRaiseEndsWithTheBondedPhonesOwnEncryption() {
        var raise = SecurityRaise(bondedEncryptionWaitMs: 1_500)
        _ = raise.request(attempt: 1, bondedLinkUpAt: t0, now: t0)
        raise.securityChanged(encrypted: false)
        #expect(raise.deadline == t0.advanced(byMs: 1_500))
        raise.securityChanged(encrypted: true)
        #expect(raise.deadline == nil)
        #expect(raise.advance(now: t0.advanced(byMs: 2_000)) == nil)
    }

    @Test("a bonded link past its wait asks at once; the bearer giving up frees the next raise")
    func lateBondedRequestAndGiveUp() {
        var raise = SecurityRaise(bondedEncryptionWaitMs: 1_500)
        #expect(raise.request(attempt: 1, bondedLinkUpAt: t0, now: t0.advanced(byMs: 1_500)) == .askNow(attempt: 1))
        raise.reset()
        #expect(raise.request(attempt: 2, bondedLinkUpAt: t0, now: t0.advanced(byMs: 1_600)) == .askNow(attempt: 2))
    }

    @Test("the keep-alive probe is due keepAliveQuietMs after the last sign of life, once per quiet period")
    func probeIsDueAfterQuietAndOncePerPeriod() {
        var watch = NotificationSourceWatch(keepAliveQuietMs: 60_000, resubscribeQuietMs: 300_000)
        watch.traffic(now: t0)
        #expect(watch.deadline == t0.advanced(byMs: 60_000))
        #expect(watch.advance(now: t0.advanced(byMs: 59_999)) == nil)
        #expect(watch.advance(now: t0.advanced(byMs: 60_000)) == .probe)
        #expect(watch.advance(now: t0.advanced(byMs: 60_001)) == nil, "the probe restarts its own clock")
        #expect(watch.deadline == t0.advanced(byMs: 120_000))
    }

    @Test("a probe's answer delays the next probe but not the resubscription: only traffic proves Notification Source alive")
    func probeAnswerDoesNotPostponeResubscription() {
        var watch = NotificationSourceWatch(keepAliveQuietMs: 60_000, resubscribeQuietMs: 300_000)
        watch.traffic(now: t0)
        var now = t0
        for _ in 0..<4 {
            now = now.advanced(byMs: 60_000)
            #expect(watch.advance(now: now) == .probe)
            watch.probeAnswered(now: now)
        }
        #expect(watch.advance(now: t0.advanced(byMs: 299_999)) == nil)
        #expect(watch.advance(now: t0.advanced(byMs: 300_000)) == .resubscribe)
        watch.traffic(now: t0.advanced(byMs: 300_000))
        #expect(watch.advance(now: t0.advanced(byMs: 300_001)) == nil)
    }
}
