// SPDX-License-Identifier: Apache-2.0
// Monotonic time for the sans-IO core. The platform reads its monotonic
// clock and hands the core an `Instant`; the core never reads a clock.
// Components answer "when do you next need to run?" with an `Instant?`
// (nil: not until something happens), and the loop sleeps until the earliest.

public struct Instant: Comparable, Hashable, Sendable {
    /// Milliseconds since an arbitrary, fixed origin (the platform's
    /// monotonic clock). Never goes backwards.
    public var ms: Int64

    public init(ms: Int64) { self.ms = ms }

    public static let zero = Instant(ms: 0)

    public func advanced(byMs durationMs: Int64) -> Instant { Instant(ms: ms + durationMs) }

    /// Milliseconds from `earlier` to `self` (negative if `earlier` is later).
    public func ms(since earlier: Instant) -> Int64 { ms - earlier.ms }

    public static func < (a: Instant, b: Instant) -> Bool { a.ms < b.ms }
}

/// The earlier of two optional deadlines (nil means "no deadline").
public func earliest(_ a: Instant?, _ b: Instant?) -> Instant? {
    switch (a, b) {
    case let (x?, y?): return x < y ? x : y
    case let (x?, nil): return x
    case let (nil, y?): return y
    case (nil, nil): return nil
    }
}
