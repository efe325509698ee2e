// SPDX-License-Identifier: Apache-2.0
// The wearable's own state in the events stream and the log: its battery
// (docs/events.md, kind `battery`). Reporter.swift has the stream's
// format and the other kinds.

import Bounded
import Firmware
import Platform
import PlatformLinux

extension Reporter {
    /// `{"kind":"battery","level":…,"status":…}` (`"estimated":true` from
    /// voltage), or `"state"`: `low`/`critical` with the level, `gone`.
    mutating func recordBattery(_ event: BatteryEvent, now: Instant) {
        switch event {
        case .level(let percent, let status, let estimated):
            if hasEvents {
                begin("battery", now: now)
                field("level", Int64(percent))
                field("status", status.name)
                if estimated { json.append(text: ",\"estimated\":true") }
                finish()
            }
            logLine(.info) {
                $0.append(text: "battery "); $0.append(decimal: Int64(percent)); $0.append(text: estimated ? "% (from voltage), " : "%, ")
                $0.append(text: status.name)
            }
        case .low(let percent), .critical(let percent):
            let state: StaticString
            if case .low = event { state = "low" } else { state = "critical" }
            if hasEvents {
                begin("battery", now: now)
                field("state", state)
                field("level", Int64(percent))
                finish()
            }
            logLine(.notice) { $0.append(text: "battery "); $0.append(text: state); $0.append(text: ": "); $0.append(decimal: Int64(percent)); $0.append(text: "%") }
        case .gone:
            if hasEvents {
                begin("battery", now: now)
                field("state", "gone")
                finish()
            }
            logLine(.warning) { $0.append(text: "battery gone: its supply no longer reads; the Battery Service is withdrawn") }
        }
    }
}
