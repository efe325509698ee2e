// SPDX-License-Identifier: Apache-2.0
// Bounded: the storage and time vocabulary every other module builds on.
//
// Design: every container here gets its capacity once, at initialisation,
// and never grows. Storage is allocated in `init` (or is inline) and released
// in `deinit`; after that no operation allocates. Containers that own heap
// storage are `~Copyable` so a buffer has exactly one owner and cannot be
// duplicated by accident. When a container is full it follows a policy chosen
// by its user (`FullPolicy`) and counts what it turned away, so nothing is
// lost silently.
//
// Time is monotonic milliseconds (`Instant`); there is no wall clock in the
// core. Durations are plain integers whose names end in `Ms`. A span of the
// day (`DailyWindow`, quiet hours) is minutes of the phone's local time,
// asked about the minute CTS's clock gives; Bounded reads no clock.

/// What a bounded queue does when a new element arrives and it is full.
public enum FullPolicy: Sendable {
    /// Make room by discarding the oldest element (fresh data matters most).
    case dropOldest
    /// Keep what is queued and turn the new element away.
    case refuseNewest
}
