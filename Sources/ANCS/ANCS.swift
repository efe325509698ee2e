// SPDX-License-Identifier: Apache-2.0
// ANCS: the Apple Notification Center Service, Notification Consumer side,
// as byte-level, sans-IO state (Apple's ANCS specification; the facts we rely
// on are in docs/ancs.md).
//
// Design: nothing here performs I/O or reads a clock. The transport (GATT,
// in another module) hands in Notification Source PDUs, Data Source
// fragments, Control Point write results and the current time; `Session`
// answers with values: table changes, completed attribute responses,
// command results, drops. Every container has a fixed capacity given at
// start (`SessionConfig`) and a stated policy when full; every drop is
// counted in `SessionCounters` and reported as a value so the caller can log
// it. Notification contents stay inside the reassembler's buffer: nothing in
// this module prints.
//
//   NotificationSource.swift   8-byte event decode/encode
//   ControlPoint.swift         command encoders (caller's fixed buffer, MTU−3)
//   DataSourceReassembler.swift resumable response parser
//   NotificationTable.swift    the session's notifications (fixed capacity)
//   AppNameCache.swift         LRU of app display names
//   Session.swift              one command in flight, the queue, errors
