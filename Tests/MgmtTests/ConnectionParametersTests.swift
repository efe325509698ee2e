// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

/// A set that follows every Apple rule, changed one field at a time below:
/// 30–45 ms, latency 0, 2 s.
func compliant(min: Int = 30_000, max: Int = 45_000, latency: UInt16 = 0, timeoutMs: Int = 2_000) -> ConnectionParameters {
    ConnectionParameters(minIntervalUs: min, maxIntervalUs: max, latencyEvents: latency, supervisionTimeoutMs: timeoutMs)
}

@Suite("Connection parameters: Apple's rules, each on both sides of its boundary")
struct ConnectionParametersTests {
    @Test("the wearable's parameters (45–75 ms, latency 0, 4 s) follow every rule and the Core ranges")
    func wearableDefaults() {
        let p = ConnectionParameters.wearable
        #expect(p.minIntervalUnits == 36)
        #expect(p.maxIntervalUnits == 60)
        #expect(p.latencyEvents == 0)
        #expect(p.supervisionTimeoutUnits == 400)
        #expect(p.appleRuleViolations.isEmpty)
        #expect(p.isWithinCoreRanges)
    }

    @Test("Interval Min ≥ 15 ms and a multiple of 15 ms: 15 and 30 pass; 13.75, 16.25 and 28.75 do not")
    func minIntervalRule() {
        #expect(compliant(min: 15_000, max: 30_000).appleRuleViolations.isEmpty)
        #expect(compliant(min: 30_000).appleRuleViolations.isEmpty)
        #expect(compliant(min: 13_750, max: 30_000).appleRuleViolations == [.minIntervalMultipleOf15Ms])
        #expect(compliant(min: 16_250, max: 31_250).appleRuleViolations == [.minIntervalMultipleOf15Ms])
        #expect(compliant(min: 28_750).appleRuleViolations == [.minIntervalMultipleOf15Ms])
        #expect(compliant(min: 0, max: 15_000).appleRuleViolations.contains(.minIntervalMultipleOf15Ms))
    }

    @Test("Interval Max ≥ Interval Min + 15 ms: min + 15 passes, min + 13.75 does not")
    func maxIntervalRule() {
        #expect(compliant(min: 30_000, max: 45_000).appleRuleViolations.isEmpty)
        #expect(compliant(min: 30_000, max: 43_750).appleRuleViolations == [.maxIntervalAtLeastMinPlus15Ms])
        #expect(compliant(min: 30_000, max: 30_000).appleRuleViolations == [.maxIntervalAtLeastMinPlus15Ms])
    }

    @Test("Slave Latency ≤ 30: 30 passes, 31 does not (with a short interval so the other rules hold)")
    func latencyRule() {
        // 15–30 ms × 31 = 930 ms quiet, × 3 = 2.79 s < 6 s.
        #expect(compliant(min: 15_000, max: 30_000, latency: 30, timeoutMs: 6_000).appleRuleViolations.isEmpty)
        // × 32 = 960 ms, × 3 = 2.88 s: only the latency rule breaks.
        #expect(compliant(min: 15_000, max: 30_000, latency: 31, timeoutMs: 6_000).appleRuleViolations == [.latencyAtMost30])
    }

    @Test("2 s ≤ Supervision Timeout ≤ 6 s: 2 s and 6 s pass; 1.99 s and 6.01 s do not")
    func timeoutRange() {
        #expect(compliant(timeoutMs: 2_000).appleRuleViolations.isEmpty)
        #expect(compliant(timeoutMs: 6_000).appleRuleViolations.isEmpty)
        #expect(compliant(timeoutMs: 1_990).appleRuleViolations == [.timeoutFrom2To6s])
        #expect(compliant(timeoutMs: 6_010).appleRuleViolations == [.timeoutFrom2To6s])
    }

    @Test("Interval Max × (Latency + 1) ≤ 2 s: 400 ms × 5 = 2 s passes it, 401.25 ms × 5 does not")
    func quietRule() {
        // At 2 s of quiet no timeout up to 6 s is above three quiets: that
        // rule breaks on both sides; the 2 s rule only past the limit.
        let atLimit = compliant(min: 30_000, max: 400_000, latency: 4, timeoutMs: 6_000)
        #expect(atLimit.maxQuietUs == 2_000_000)
        #expect(atLimit.appleRuleViolations == [.timeoutAboveThreeQuiets])
        let over = compliant(min: 30_000, max: 401_250, latency: 4, timeoutMs: 6_000)
        #expect(over.maxQuietUs == 2_006_250)
        #expect(over.appleRuleViolations == [.quietAtMost2s, .timeoutAboveThreeQuiets])
    }

    @Test("Interval Max × (Latency + 1) × 3 < Supervision Timeout: 3 × 660 ms under 2 s passes; 3 × 667.5 ms, or exactly the timeout, does not")
    func timeoutAboveThreeQuiets() {
        #expect(compliant(min: 30_000, max: 660_000, timeoutMs: 2_000).appleRuleViolations.isEmpty)
        #expect(compliant(min: 30_000, max: 667_500, timeoutMs: 2_000).appleRuleViolations == [.timeoutAboveThreeQuiets])
        // 200 ms × (4 + 1) × 3 = 3 s against a 3 s timeout.
        let equal = ConnectionParameters(minIntervalUnits: 24, maxIntervalUnits: 160, latencyEvents: 4, supervisionTimeoutUnits: 300)
        #expect(equal.maxQuietUs * 3 == equal.supervisionTimeoutUs)
        #expect(equal.appleRuleViolations == [.timeoutAboveThreeQuiets])
    }

    @Test("the kernel's own defaults (30–50 ms, latency 0, 420 ms) break the 2–6 s timeout rule only")
    func kernelDefaults() {
        let kernel = ConnectionParameters(minIntervalUnits: 0x18, maxIntervalUnits: 0x28, latencyEvents: 0, supervisionTimeoutUnits: 0x2A)
        #expect(kernel.appleRuleViolations == [.timeoutFrom2To6s])
    }

    @Test("Set Default System Configuration 0x004C: types 0x0017–0x001A, 2-byte values in 1.25 ms and 10 ms units")
    func encodesCommand() throws {
        #expect(try encode(.setDefaultConnectionParameters(.wearable))
            == hex("4C 00 00 00 14 00  17 00 02 24 00  18 00 02 3C 00  19 00 02 00 00  1A 00 02 90 01"))
    }
}
