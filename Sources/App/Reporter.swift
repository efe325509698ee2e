// SPDX-License-Identifier: Apache-2.0
// The event sink of the daemon: the JSON Lines events stream (--events, opt
// in, may contain notification contents) and the log on stderr. Both are
// formatted into fixed buffers, so reporting allocates nothing. At the
// default log level notification contents never reach the log: titles and
// messages are logged only at debug.
//
// Events stream: one object per line, each with `t_ms` (monotonic ms since
// start) and `kind` (docs/events.md lists every kind and field). The first
// line is the hello event: the firmware's version and `events_format`, the
// stream's own version, which a consumer checks before it reads on.

import AMS
import ANCS
import Bounded
import CTS
import Config
import Firmware
import Mgmt
import Platform
import PlatformLinux

public struct Reporter: ~Copyable, EventSink {
    /// The events stream's format (docs/events.md, "Versions"): raised when
    /// a kind or field changes meaning or goes away, not when one is added.
    public static let eventsFormat: Int64 = 1

    private let outputNames: [String]
    private let buttonNames: [String]
    private let start: Instant
    private var events: OutputFile?
    var json: ByteBuffer
    private var log: ByteBuffer
    private var drops: DropCounts

    public init(board: BoardConfig, events: consuming OutputFile?, start: Instant) {
        outputNames = board.outputs.map { $0.name }
        buttonNames = board.buttons.map { $0.name }
        self.start = start
        self.events = events
        json = ByteBuffer(capacity: 4096)
        log = ByteBuffer(capacity: 512)
        drops = DropCounts()
        hello()
    }

    /// The stream's first line: what wrote it and in which format.
    private mutating func hello() {
        guard hasEvents else { return }
        begin("hello", now: start)
        field("version", string: BuildInfo.version)
        field("revision", string: BuildInfo.revision)
        field("events_format", Self.eventsFormat)
        finish()
    }

    public var hasEvents: Bool { events != nil }

    // MARK: JSON helpers

    mutating func begin(_ kind: StaticString, now: Instant) {
        json.removeAll()
        json.append(text: "{\"t_ms\":")
        json.append(decimal: now.ms(since: start))
        json.append(text: ",\"kind\":")
        json.append(jsonString: kind)
    }

    mutating func field(_ name: StaticString, _ value: StaticString) {
        json.append(text: ",")
        json.append(jsonString: name)
        json.append(text: ":")
        json.append(jsonString: value)
    }

    mutating func field(_ name: StaticString, string value: String) {
        json.append(text: ",")
        json.append(jsonString: name)
        json.append(text: ":")
        json.append(jsonString: value)
    }

    mutating func field(_ name: StaticString, _ value: Int64) {
        json.append(text: ",")
        json.append(jsonString: name)
        json.append(text: ":")
        json.append(decimal: value)
    }

    mutating func finish() {
        json.append(text: "}\n")
        events?.write(json)
    }

    mutating func logLine(_ level: LogLevel, _ build: (inout ByteBuffer) -> Void) {
        guard Log.enabled(level) else { return }
        log.removeAll()
        build(&log)
        Log.write(level, bytes: log)
    }

    // MARK: Events

    public mutating func record(_ event: FirmwareEvent, session ancs: borrowing Session, now: Instant) {
        switch event {
        case .link(let link): recordLink(link, ancs: ancs, now: now)
        case .controller(let controller): recordController(controller, now: now)
        case .line(let index, let on):
            let name = index < outputNames.count ? outputNames[index] : "?"
            if hasEvents {
                begin("gpio", now: now)
                field("line", string: name)
                field("value", on ? 1 : 0)
                finish()
            }
            logLine(.debug) { $0.append(text: "line "); $0.append(string: name); $0.append(text: on ? " on" : " off") }
        case .button(let index, let gesture):
            let name = index >= 0 && index < buttonNames.count ? buttonNames[index] : "both"
            if hasEvents {
                begin("button", now: now)
                field("button", string: name)
                field("gesture", gesture.text)
                finish()
            }
            logLine(.info) { $0.append(text: "button "); $0.append(string: name); $0.append(text: ": "); $0.append(text: gesture.text) }
        case .action(let uid, let action, let result):
            if hasEvents {
                begin("action", now: now)
                field("uid", Int64(uid))
                field("action", action.name)
                field("result", result.text)
                finish()
            }
            logLine(.info) {
                $0.append(text: "action "); $0.append(text: action.name); $0.append(text: " on uid ")
                $0.append(decimal: Int64(uid)); $0.append(text: ": "); $0.append(text: result.text)
            }
        case .silenced(let uid):
            let result: StaticString = uid == nil ? "nothing-to-do" : "silenced"
            if hasEvents {
                begin("action", now: now)
                field("uid", Int64(uid ?? 0))
                field("action", "silence")
                field("result", result)
                finish()
            }
            logLine(.info) {
                $0.append(text: "action silence on uid "); $0.append(decimal: Int64(uid ?? 0)); $0.append(text: ": "); $0.append(text: result)
            }
        case .media(let command, let result):
            if hasEvents {
                begin("media", now: now)
                field("command", command.name)
                field("result", result.text)
                finish()
            }
            logLine(.info) { $0.append(text: "media "); $0.append(text: command.name); $0.append(text: ": "); $0.append(text: result.text) }
        case .quietHours(let state):
            switch state {
            case .on: stateChange("quiet", "on", reason: nil, level: .info, now: now)
            case .off: stateChange("quiet", "off", reason: nil, level: .info, now: now)
            case .timeUnknown: stateChange("quiet", "off", reason: "time-unknown", level: .notice, now: now)
            }
        case .phoneLost(let lost):
            stateChange("phone", lost ? "lost" : "back", reason: nil, level: .notice, now: now)
        case .battery(let battery):
            recordBattery(battery, now: now)
        case .ringLimited(let uid):
            if hasEvents {
                begin("alert", now: now)
                field("uid", Int64(uid))
                field("state", "ring-limit")
                finish()
            }
            logLine(.info) { $0.append(text: "alert on uid "); $0.append(decimal: Int64(uid)); $0.append(text: ": ring limit reached, stopped on the wrist") }
        case .rejected(let what, let reason):
            error(what, reason, now: now)
        case .notice(let notice):
            switch notice {
            case .updateDone: stateChange("update", "done", reason: nil, level: .notice, now: now)
            case .updateFailed: stateChange("update", "failed", reason: nil, level: .notice, now: now)
            }
        case .stopping(let reason):
            session("stopping", reason: reason, now: now)
        case .bondsNotSaved(let retryInMs):
            error("bonds", "not-saved", now: now)
            logLine(.error) {
                $0.append(text: "the bonded phones could not be saved; trying again in "); $0.append(decimal: retryInMs); $0.append(text: " ms")
            }
        }
    }

    private mutating func session(_ state: StaticString, reason: Name? = nil, now: Instant) {
        stateChange("session", state, reason: reason, level: .info, now: now)
    }

    private mutating func pairing(_ state: StaticString, reason: Name? = nil, now: Instant) {
        stateChange("pairing", state, reason: reason, level: .notice, now: now)
    }

    /// A `session` or `pairing` event: `{"kind":…,"state":…,"reason":…}`
    /// and the log line "kind state (reason)".
    private mutating func stateChange(_ kind: StaticString, _ state: StaticString, reason: Name?, level: LogLevel, now: Instant) {
        if hasEvents {
            begin(kind, now: now)
            field("state", state)
            if let reason { field("reason", reason.text) }
            finish()
        }
        logLine(level) {
            $0.append(text: kind); $0.append(text: " "); $0.append(text: state)
            if let reason { $0.append(text: " ("); $0.append(text: reason.text); $0.append(text: ")") }
        }
    }

    /// Something turned away: a `drop` event with its running count, and a
    /// warning.
    private mutating func drop(_ what: Name, _ reason: Name, now: Instant) {
        let count = drops.bump(what, reason)
        if hasEvents {
            begin("drop", now: now)
            field("what", what.text)
            field("reason", reason.text)
            field("count", Int64(count))
            finish()
        }
        logLine(.warning) {
            $0.append(text: "dropped "); $0.append(text: what.text); $0.append(text: ": "); $0.append(text: reason.text)
            $0.append(text: " (count "); $0.append(decimal: count); $0.append(text: ")")
        }
    }

    private mutating func error(_ what: Name, _ detail: Name, now: Instant, log: Bool = true) {
        if hasEvents {
            begin("error", now: now)
            field("what", what.text)
            field("detail", detail.text)
            finish()
        }
        guard log else { return }
        logLine(.warning) { $0.append(text: "error "); $0.append(text: what.text); $0.append(text: ": "); $0.append(text: detail.text) }
    }

    /// Called by the runner's owner when the link is ready for a phone.
    public mutating func advertising(now: Instant) { session("advertising", now: now) }

    private mutating func recordLink(_ event: LinkEvent, ancs: borrowing Session, now: Instant) {
        switch event {
        case .connected: session("connected", now: now)
        case .secured: session("secured", now: now)
        case .discovered: session("discovered", now: now)
        case .handles(.cached): stateChange("gatt-cache", "used", reason: nil, level: .info, now: now)
        case .handles(.stale(let reason)): stateChange("gatt-cache", "stale", reason: Name(reason.name), level: .info, now: now)
        case .subscribed: session("subscribed", now: now)
        case .ancsAbsent: session("ancs-absent", now: now)
        case .permissionWaiting(let retryInMs):
            if hasEvents {
                begin("session", now: now)
                field("state", "waiting-permission")
                field("retry_ms", retryInMs)
                finish()
            }
            logLine(.notice) {
                $0.append(text: "session waiting-permission: the phone does not share notifications yet; allow it on the iPhone (retry in ")
                $0.append(decimal: retryInMs); $0.append(text: " ms)")
            }
        case .controlPointNotPermitted(let inARow):
            if hasEvents {
                begin("session", now: now)
                field("state", "waiting-permission")
                field("refused", "control-point")
                field("in_a_row", Int64(inARow))
                finish()
            }
            logLine(.notice) {
                $0.append(text: "session waiting-permission: the phone refused ")
                $0.append(decimal: inARow)
                $0.append(text: " Control Point writes in a row (0x03/0x08); turn on Share System Notifications for this wearable in the iPhone's Bluetooth settings")
            }
        case .controlPointPermitted: session("permission-granted", now: now)
        case .ended(let reason): session("ended", reason: reason.name, now: now)
        case .mtu(let mtu):
            if hasEvents {
                begin("mtu", now: now)
                field("mtu", Int64(mtu))
                finish()
            }
            logLine(.debug) { $0.append(text: "ATT MTU "); $0.append(decimal: mtu) }
        case .notification(let change): notification(change, now: now)
        case .command(let result): command(result, ancs: ancs, now: now)
        case .drop(let drop):
            let words = drop.words
            self.drop(words.what, words.reason, now: now)
        case .error(let error):
            let words = error.words
            self.error(words.what, words.detail, now: now)
        case .media(let media):
            // A press's end is reported as a FirmwareEvent.media.
            guard let state = media.stateName else { return }
            stateChange("media", state, reason: nil, level: .info, now: now)
        case .time(.learned(let clock, let jumpS)): time(clock, jumpS: jumpS, now: now)
        case .time(.unknown(let reason)): stateChange("time", "unknown", reason: Name(reason.name), level: .notice, now: now)
        }
    }

    /// `{"kind":"time","local":"2026-12-01T22:15:03","utc_offset_min":60,"source":"phone"}`
    /// (`utc_offset_min` only when the phone said its zone).
    private mutating func time(_ clock: PhoneClock, jumpS: Int64?, now: Instant) {
        guard let local = clock.local(at: now) else { return }
        if hasEvents {
            begin("time", now: now)
            json.append(text: ",\"local\":\"")
            local.appendISO8601(to: &json)
            json.append(text: "\"")
            if let offset = clock.utcOffsetMin { field("utc_offset_min", Int64(offset)) }
            field("source", "phone")
            finish()
        }
        logLine(.info) {
            $0.append(text: "time from the phone: ")
            local.appendISO8601(to: &$0)
            if let offset = clock.utcOffsetMin { $0.append(text: " UTC offset "); $0.append(decimal: offset); $0.append(text: " min") }
            if let jumpS, jumpS != 0 { $0.append(text: " (moved "); $0.append(decimal: jumpS); $0.append(text: " s)") }
        }
    }

    private mutating func recordController(_ event: ControllerEvent, now: Instant) {
        switch event {
        case .advertising: session("advertising", now: now)
        case .controllerGone:
            error("controller", "gone", now: now, log: false)
            logLine(.warning) { $0.append(text: "error controller: gone: waiting for the Bluetooth controller (it is probed until it answers)") }
        case .setupFailed(let step, let failure):
            let stepName = Name(step.name), status = Name(failure.name)
            error("controller-setup", stepName, now: now)
            logLine(.error) { $0.append(text: "controller set-up failed at "); $0.append(text: stepName.text); $0.append(text: ": "); $0.append(text: status.text) }
        case .pairingMode(let on, let reason): pairing(on ? "on" : "off", reason: reason.name, now: now)
        case .consentRequested: pairing("consent-requested", now: now)
        case .consent(let granted, let reason): pairing(granted ? "accepted" : "refused", reason: reason.name, now: now)
        case .bondStored: pairing("bonded", now: now)
        case .bondIgnored(let reason): pairing("not-bonded", reason: reason.name, now: now)
        case .refusedUnbonded: pairing("refused-unbonded", now: now)
        case .pairingFailed(let status): pairing("failed", reason: Name(status.name), now: now)
        case .staleBond(let replacing):
            pairing("stale-bond", reason: replacing ? "replacing" : "refused", now: now)
            if !replacing {
                logLine(.warning) {
                    $0.append(text: "a bonded phone asks to pair again: it has probably forgotten this wearable (Forget This Device). ")
                    $0.append(text: "Hold both buttons to open pairing mode and pair it again.")
                }
            }
        case .connected(let bonded, let address):
            logLine(.info) {
                $0.append(text: bonded ? "bonded phone connected: " : "new phone connected (pairing mode): ")
                Self.appendAddress(address, to: &$0)
            }
        case .reconnected(let afterMs):
            if hasEvents {
                begin("reconnected", now: now)
                field("after_ms", afterMs)
                finish()
            }
            logLine(.info) { $0.append(text: "bonded phone reconnected after "); $0.append(decimal: afterMs); $0.append(text: " ms") }
        case .disconnected(let reason):
            logLine(.info) { $0.append(text: "phone disconnected (HCI reason "); $0.append(decimal: Int(reason)); $0.append(text: ")") }
        case .fastAdvertisingSkipped: self.drop("fast-advertising", "reconnection-storm", now: now)
        case .dropped(let drop): self.drop("mgmt", drop.name, now: now)
        }
    }

    /// "E1:A5:00:00:00:01 (random)": most significant byte first, as people
    /// and btmon write it, and the kernel's address type.
    static func appendAddress(_ address: DeviceAddress, to out: inout ByteBuffer) {
        for i in stride(from: 5, through: 0, by: -1) {
            out.append(hexByte: address.address.wire[i])
            if i > 0 { out.append(UInt8(ascii: ":")) }
        }
        if address.type == .lePublic {
            out.append(text: " (public)")
        } else if address.type == .leRandom {
            out.append(text: " (random)")
        } else {
            out.append(text: " (br/edr)")
        }
    }

    private mutating func notification(_ change: TableChange, now: Instant) {
        let uid: UInt32, category: CategoryID, flags: EventFlags, count: UInt8
        let event: StaticString
        switch change {
        case .added(let r, _): (uid, category, flags, count, event) = (r.uid, r.category, r.flags, r.categoryCount, "added")
        case .modified(let r, _): (uid, category, flags, count, event) = (r.uid, r.category, r.flags, r.categoryCount, "modified")
        case .removed(let r): (uid, category, flags, count, event) = (r.uid, r.category, r.flags, r.categoryCount, "removed")
        // A UID the table no longer held (or never did): reported all the
        // same, since its count is the phone's word on the category.
        case .removedUnknown(let e): (uid, category, flags, count, event) = (e.uid, e.category, e.flags, e.categoryCount, "removed")
        }
        if hasEvents {
            begin("notification", now: now)
            field("event", event)
            field("uid", Int64(uid))
            field("category", category.name)
            json.append(text: ",\"flags\":[")
            var first = true
            for (flag, name) in EventFlags.named where flags.contains(flag) {
                if !first { json.append(text: ",") }
                first = false
                json.append(jsonString: name)
            }
            json.append(text: "]")
            field("count", Int64(count))
            finish()
        }
        logLine(.debug) {
            $0.append(text: "notification "); $0.append(text: event); $0.append(text: " uid ")
            $0.append(decimal: Int64(uid)); $0.append(text: " "); $0.append(text: category.name)
        }
    }

    private mutating func command(_ result: CommandResult, ancs: borrowing Session, now: Instant) {
        switch result {
        case .attributesReceived(let uid):
            if hasEvents {
                begin("attributes", now: now)
                field("uid", Int64(uid))
                for id in NotificationAttributeID.allCases where ancs.attributeReceived(id) {
                    json.append(text: ",")
                    json.append(jsonString: id.name)
                    json.append(text: ":")
                    _ = json.append(jsonString: ancs.attributeValue(id))
                }
                finish()
            }
            logLine(.debug) {
                $0.append(text: "attributes for uid "); $0.append(decimal: Int64(uid))
                if ancs.attributeReceived(.title) {
                    $0.append(text: " title ")
                    _ = $0.append(jsonString: ancs.attributeValue(.title))
                }
            }
        case .appNameReceived(let app):
            if hasEvents {
                begin("attributes", now: now)
                json.append(text: ",\"app\":")
                json.append(jsonString: app.span)
                json.append(text: ",\"DisplayName\":")
                if let name = ancs.appName(for: app) {
                    json.append(jsonString: name.span)
                } else {
                    json.append(text: "\"\"")
                }
                finish()
            }
        case .probeAnswered:
            logLine(.debug) { $0.append(text: "keep-alive probe answered") }
        case .probeFailed:
            logLine(.warning) { $0.append(text: "keep-alive probe failed: subscribing again") }
        case .failed(let command, let failure):
            if case .performNotificationAction = command { return }  // reported as an action
            logLine(.warning) { $0.append(text: "control point command failed: "); $0.append(text: failure.text) }
        case .actionDelivered:
            break  // reported as an action
        }
    }
}

/// Running totals per (what, reason) for the `count` of drop events.
struct DropCounts {
    private var keys: InlineArray<16, (Name, Name)?> = InlineArray(repeating: nil)
    private var counts: InlineArray<16, UInt64> = InlineArray(repeating: 0)

    mutating func bump(_ what: Name, _ reason: Name) -> UInt64 {
        for i in 0..<16 {
            if let key = keys[i] {
                if key.0 == what && key.1 == reason {
                    counts[i] &+= 1
                    return counts[i]
                }
            } else {
                keys[i] = (what, reason)
                counts[i] = 1
                return 1
            }
        }
        return 0  // more kinds than slots: still reported, without a total
    }
}
