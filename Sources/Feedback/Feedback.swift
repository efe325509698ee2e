// SPDX-License-Identifier: Apache-2.0
// Feedback: what the wearer feels and presses. LED and vibration patterns on
// on/off output lines, and gestures from debounced button edges.
//
// Design: sans-IO like the rest of the core. Nothing here reads a clock or
// touches a line. The loop feeds the current `Instant` and raw button edges;
// the module answers with output level changes, gestures and its next
// deadline (`nextDeadline`, nil when nothing is pending, so an idle wearable
// never wakes). Late wakeups are normal on a busy loop: every deadline is
// computed from when something started (a pattern's start, a press), never
// from when we happened to wake, and a call after a long sleep jumps to the
// right state in bounded work instead of replaying every step in between.
//
// Storage is fixed when the owners are built (`PatternPlayer`,
// `ButtonGestures` are `~Copyable`); patterns are small inline values. Events
// leave through the caller's `RingBuffer`, so the steady state allocates
// nothing.
//
//   Pattern.swift          the pattern value and its validation
//   PatternPlayer.swift    per-output priority stacks, pre-emption, timing
//   ButtonGestures.swift   debounce, short/long/double, the two-button chord

/// The level of an output line. The lines are on/off only (LED and motor
/// driven through a transistor, no PWM), so there is no intensity: a
/// "stronger" pattern is written with longer or denser on-steps.
public enum OutputLevel: Equatable, Sendable {
    case off
    case on
}
