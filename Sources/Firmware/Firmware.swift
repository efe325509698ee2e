// SPDX-License-Identifier: Apache-2.0
// Firmware: the wearable, sans-IO, and the loop that runs it on a platform.
//
// `WearableCore` owns everything the wearable decides (the phone link with
// its ANCS session, and the alert policy with its patterns and buttons) and
// is fed link inputs, button edges and time. It answers with PDUs, link
// actions, line changes and `FirmwareEvent`s. `Runner<P: Platform, S:
// EventSink>` is the one loop: wait until the core's deadline or an input,
// feed what arrived, then settle: hand events to the sink, flush queued
// Control Point commands, write PDUs, apply actions and line changes. It is
// generic over the platform (Linux, tests) and the event sink (JSON lines,
// logs, the simulator's screen), so everything is specialised.
//
//   PhoneLink.swift    ATT + GATT + ANCS bring-up and session
//   WearableCore.swift the wearable's decisions
//   Runner.swift       the loop
