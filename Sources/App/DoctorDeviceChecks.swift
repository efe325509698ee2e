// SPDX-License-Identifier: Apache-2.0
// `wristlink doctor`'s lines about the wearable itself, from the board
// file and the facts: the Bluetooth name it goes by and its battery (the
// power supply the board's `battery` picks, its level and status).

import ANCS
import Bounded
import Config
import Mgmt
import Platform
import PlatformLinux

extension Doctor {
    /// The board's Bluetooth name, and what of it the advertisement
    /// carries (the phone's list shows the scan response's full name).
    static func bluetoothName(_ board: BoardConfig) -> DoctorCheck {
        let name = board.bluetoothName
        var advertised = "none of it"
        if let payload = try? AdvertisingPayload.solicitingService(ANCSUUID.service, name: Array(name.utf8).span) {
            let data = (0..<payload.advertisingData.count).map { payload.advertisingData[$0] }
            var i = 0
            while i + 1 < data.count, data[i] > 0, i + 1 + Int(data[i]) <= data.count {
                let type = data[i + 1]
                if type == ADType.completeLocalName || type == ADType.shortenedLocalName {
                    let text = String(decoding: data[(i + 2)..<(i + 1 + Int(data[i]))], as: UTF8.self)
                    advertised = type == ADType.completeLocalName ? "all of it" : "\"\(text)\""
                }
                i += 1 + Int(data[i])
            }
        }
        return DoctorCheck(.ok, "bluetooth name", "\"\(name)\" (scan response and Device Name; the advertisement carries \(advertised))")
    }

    /// The board's battery: which supply, its level and status.
    static func battery(_ f: DoctorFacts, board: BoardConfig) -> DoctorCheck {
        let root = PowerSupplyReader.defaultRoot
        switch board.battery {
        case .none:
            return DoctorCheck(.ok, "battery", "none (board: battery none)")
        case .auto:
            guard let name = f.batteries.first else {
                return DoctorCheck(.ok, "battery", "none (board: battery auto; no supply of type Battery in \(root))")
            }
            return batteryLevel(name, f.batteryReading)
        case .named(let name):
            guard f.batteries.contains(where: { $0.utf8Equals(name) }) else {
                return DoctorCheck(
                    .fail, "battery \(name)", "no supply of type Battery named \(name) in \(root)",
                    fix: "check `battery` in the board file against ls \(root) (a fuel gauge appears there once its driver is bound: dmesg), or write battery auto")
            }
            return batteryLevel(name, f.batteryReading)
        }
    }

    static func batteryLevel(_ name: String, _ reading: BatteryReading?) -> DoctorCheck {
        guard let reading else {
            return DoctorCheck(.note, "battery \(name)", "says neither capacity nor voltage_now", fix: "a level cannot be known from this supply")
        }
        var text = "\(reading.percent)%" + (reading.estimated ? " (estimated from voltage_now)" : "")
        switch reading.status {
        case .charging: text += ", charging"
        case .discharging: text += ", discharging"
        case .notCharging: text += ", not charging"
        case .full: text += ", full"
        case .unknown: text += ", status unknown"
        }
        if let microvolts = reading.voltageMicrovolts { text += ", \(microvolts / 1_000) mV" }
        return DoctorCheck(.ok, "battery \(name)", text)
    }
}
