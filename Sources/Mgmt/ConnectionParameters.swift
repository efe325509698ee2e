// SPDX-License-Identifier: Apache-2.0
// LE connection parameters the wearable states for itself, and Apple's rules
// for them (Accessory Design Guidelines, Bluetooth LE chapter, "Connection
// Parameters"): the accessory is responsible for its parameters and should
// ask for ones that suit its use; a request that breaks a rule may be
// rejected by the iPhone.
//
// The kernel keeps default parameters per controller (mgmt Set Default
// System Configuration, types 0x0017 min interval, 0x0018 max interval,
// 0x0019 latency, 0x001A supervision timeout; kernel net/bluetooth/
// mgmt_config.c). For an incoming connection (we are peripheral) it copies
// the default min and max interval into the connection when the phone
// connects (hci_event.c, le_conn_complete_evt), and l2cap_le_conn_ready
// sends an L2CAP Connection Parameter Update Request only when the phone's
// interval is outside [min, max]. That request carries our min and max but
// the connection's *current* latency and supervision timeout (the phone's),
// not the defaults 0x0019/0x001A: Linux as peripheral can only state the
// interval. The latency and timeout are still set (they are what the kernel
// would use as central and for later parameter checks) and still checked
// against the rules, so the whole set is one Apple would accept.
//
// Units are the wire's: intervals in 1.25 ms, the timeout in 10 ms; the
// checks compute in microseconds so no rule rounds.

/// One LE connection parameter set, in the units the wire uses.
public struct ConnectionParameters: Equatable, Sendable {
    public static let usPerIntervalUnit: Int = 1_250
    public static let usPerTimeoutUnit: Int = 10_000

    /// Connection interval minimum, 1.25 ms units.
    public var minIntervalUnits: UInt16
    /// Connection interval maximum, 1.25 ms units.
    public var maxIntervalUnits: UInt16
    /// Peripheral latency: connection events the peripheral may skip.
    public var latencyEvents: UInt16
    /// Supervision timeout, 10 ms units.
    public var supervisionTimeoutUnits: UInt16

    public init(minIntervalUnits: UInt16, maxIntervalUnits: UInt16, latencyEvents: UInt16, supervisionTimeoutUnits: UInt16) {
        self.minIntervalUnits = minIntervalUnits
        self.maxIntervalUnits = maxIntervalUnits
        self.latencyEvents = latencyEvents
        self.supervisionTimeoutUnits = supervisionTimeoutUnits
    }

    /// From milliseconds; each value must be a whole number of its unit.
    public init(minIntervalUs: Int, maxIntervalUs: Int, latencyEvents: UInt16, supervisionTimeoutMs: Int) {
        precondition(minIntervalUs % Self.usPerIntervalUnit == 0 && maxIntervalUs % Self.usPerIntervalUnit == 0,
                     "connection intervals are multiples of 1.25 ms")
        precondition(supervisionTimeoutMs % 10 == 0, "the supervision timeout is a multiple of 10 ms")
        self.init(minIntervalUnits: UInt16(minIntervalUs / Self.usPerIntervalUnit),
                  maxIntervalUnits: UInt16(maxIntervalUs / Self.usPerIntervalUnit),
                  latencyEvents: latencyEvents, supervisionTimeoutUnits: UInt16(supervisionTimeoutMs / 10))
    }

    /// The wearable's choice (docs/decisions/connection-parameters.md):
    /// 45–75 ms, no latency, 4 s timeout. A press reaches the phone within
    /// one interval and a notification reaches the wearable within one,
    /// while the radio wakes 13–22 times a second (the kernel's default,
    /// 30–50 ms, wakes it 20–33 times).
    public static let wearable = ConnectionParameters(minIntervalUs: 45_000, maxIntervalUs: 75_000,
                                                      latencyEvents: 0, supervisionTimeoutMs: 4_000)

    public var minIntervalUs: Int { Int(minIntervalUnits) * Self.usPerIntervalUnit }
    public var maxIntervalUs: Int { Int(maxIntervalUnits) * Self.usPerIntervalUnit }
    public var supervisionTimeoutUs: Int { Int(supervisionTimeoutUnits) * Self.usPerTimeoutUnit }
    /// The longest the peripheral may stay silent: Interval Max × (latency + 1).
    public var maxQuietUs: Int { maxIntervalUs * (Int(latencyEvents) + 1) }

    /// Every Apple rule this set breaks; empty when it follows them all.
    public var appleRuleViolations: AppleConnectionRules {
        var broken: AppleConnectionRules = []
        if minIntervalUs < 15_000 || minIntervalUs % 15_000 != 0 { broken.insert(.minIntervalMultipleOf15Ms) }
        if maxIntervalUs < minIntervalUs + 15_000 { broken.insert(.maxIntervalAtLeastMinPlus15Ms) }
        if latencyEvents > 30 { broken.insert(.latencyAtMost30) }
        if supervisionTimeoutUs < 2_000_000 || supervisionTimeoutUs > 6_000_000 { broken.insert(.timeoutFrom2To6s) }
        if maxQuietUs > 2_000_000 { broken.insert(.quietAtMost2s) }
        if maxQuietUs * 3 >= supervisionTimeoutUs { broken.insert(.timeoutAboveThreeQuiets) }
        return broken
    }

    /// Inside the Core specification's ranges (7.5 ms ... 4 s intervals, min
    /// ≤ max, latency ≤ 499, 100 ms ... 32 s timeout), which the kernel's
    /// hci_check_conn_params also enforces.
    public var isWithinCoreRanges: Bool {
        minIntervalUnits >= 6 && maxIntervalUnits <= 3200 && minIntervalUnits <= maxIntervalUnits
            && latencyEvents <= 499 && supervisionTimeoutUnits >= 10 && supervisionTimeoutUnits <= 3200
    }
}

/// Apple's connection parameter rules, one bit each, so a test or a log can
/// name the ones a parameter set breaks.
public struct AppleConnectionRules: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Interval Min ≥ 15 ms and a multiple of 15 ms.
    public static let minIntervalMultipleOf15Ms = AppleConnectionRules(rawValue: 1 << 0)
    /// Interval Max ≥ Interval Min + 15 ms.
    public static let maxIntervalAtLeastMinPlus15Ms = AppleConnectionRules(rawValue: 1 << 1)
    /// Slave (peripheral) Latency ≤ 30.
    public static let latencyAtMost30 = AppleConnectionRules(rawValue: 1 << 2)
    /// 2 s ≤ Supervision Timeout ≤ 6 s.
    public static let timeoutFrom2To6s = AppleConnectionRules(rawValue: 1 << 3)
    /// Interval Max × (Latency + 1) ≤ 2 s.
    public static let quietAtMost2s = AppleConnectionRules(rawValue: 1 << 4)
    /// Interval Max × (Latency + 1) × 3 < Supervision Timeout.
    public static let timeoutAboveThreeQuiets = AppleConnectionRules(rawValue: 1 << 5)
}
