// SPDX-License-Identifier: Apache-2.0
// A doubling retry delay, the one rule every bounded retry in the firmware
// follows: the first failure waits `firstMs`, each further one twice the
// last, never more than `maxMs`; a success resets it. A value, so the owner
// decides what "failure" and "success" mean and when to call.

public struct Backoff: Equatable, Sendable {
    public let firstMs: Int64
    public let maxMs: Int64
    /// The delay given by the last `fail()`; 0 when nothing failed since the
    /// last `reset()`.
    public private(set) var currentMs: Int64 = 0

    public init(firstMs: Int64, maxMs: Int64) {
        precondition(firstMs > 0 && maxMs >= firstMs, "a back-off needs 0 < firstMs <= maxMs")
        self.firstMs = firstMs
        self.maxMs = maxMs
    }

    /// True while the delay can still grow (the next `fail()` gives more
    /// than the last): owners log when a back-off starts or grows, not at
    /// every retry.
    public var canGrow: Bool { currentMs < maxMs }

    /// One more failure: the delay to wait before the next try.
    @discardableResult
    public mutating func fail() -> Int64 {
        currentMs = currentMs == 0 ? firstMs : min(currentMs * 2, maxMs)
        return currentMs
    }

    /// A success: the next failure starts again from `firstMs`.
    public mutating func reset() { currentMs = 0 }
}
