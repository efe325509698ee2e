// SPDX-License-Identifier: Apache-2.0
// The one way the test rigs let the runner take what they queued on the
// in-memory platform: its steps with no time passing, bounded, so a queue
// that never empties fails the test instead of hanging it.

import Firmware

extension Runner where P == MemoryPlatform {
    /// Steps (no time passing) until everything queued is taken, at most
    /// `maxSteps`; false if input is still queued.
    public mutating func takeQueued(maxSteps: Int = 1_000) -> Bool {
        var steps = 0
        repeat {
            step(waitingAtMostMs: 0)
            steps += 1
        } while platform.hasQueuedInput && steps < maxSteps
        return !platform.hasQueuedInput
    }
}
