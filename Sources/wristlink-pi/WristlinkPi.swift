// The bring-up entry point of the Pi binary (`make pi`, docs/pi-build.md):
// `wristlink run --link unix:PATH --gpio sim [--events FILE|-] [--trace FILE]
// [--log-level LEVEL]`. It proves the Embedded Swift build end to end: the
// real poll loop (`LinuxPlatform<UnixLink, SimLines>`), `Runner` and
// `WearableCore`, with the events stream as JSON Lines. The same file builds
// with `swift build` (product `wristlink-pi`), so the host binary and the
// aarch64 binary can be run against the same peer and compared.
//
// It stands in for the App layer's `wristlink run` until that lands; then
// scripts/build-pi compiles the App instead (the rules it must keep are in
// docs/pi-build.md). Only what the firmware needs is here: no `phone`, no
// `sim`, no BlueZ link, no board files.

import ANCS
import Bounded
import Firmware
import Platform
import PlatformLinux

@main
struct WristlinkPi {
    static func main() {
        var options = Options()
        let arguments = ProcessControl.arguments
        if let problem = options.parse(arguments) {
            Log.error(problem)
            Log.error("usage: wristlink run --link unix:PATH --gpio sim [--events FILE|-] [--trace FILE] [--log-level LEVEL]")
            ProcessControl.exit(2)
        }
        Log.level = options.logLevel
        ProcessControl.exit(run(options))
    }

    static func run(_ options: Options) -> Int32 {
        let outputs = ["vibration"]
        let buttons = ["accept", "reject"]
        do throws(SystemError) {
            let events = try OutputFile(path: options.eventsPath)
            let link = try UnixLink.listening(at: options.linkPath)
            let platform = try LinuxPlatform(
                link: link, lines: SimLines(outputs: outputs, buttons: buttons, consoleFD: 0), handleSignals: true,
                tracePath: options.tracePath)
            let start = platform.now()
            var sink = JSONEventSink(out: events, start: start, lineNames: outputs)
            sink.session("advertising", reason: nil, now: start)
            var runner = Runner(platform: platform, sink: sink, core: WearableCore(config: WearableConfig()))
            let reason = runner.run()
            runner.settle(now: runner.platform.now())
            runner.platform.allOff()
            Log.info("stopped: \(reason.description)")
            return 0
        } catch {
            Log.error(error.description)
            return 1
        }
    }
}

struct Options {
    var linkPath = ""
    var eventsPath = "-"
    var tracePath: String? = nil
    var logLevel = LogLevel.info

    /// Nil when the arguments are good, else what is wrong.
    mutating func parse(_ arguments: [String]) -> String? {
        guard arguments.count >= 2, arguments[1] == "run" else { return "the only command is `run`" }
        var gpioSim = false
        var i = 2
        while i < arguments.count {
            let flag = arguments[i]
            guard i + 1 < arguments.count else { return "\(flag) needs a value" }
            let value = arguments[i + 1]
            switch flag {
            case "--link":
                guard value.hasPrefix("unix:"), value.utf8.count > 5 else { return "--link: only unix:PATH here" }
                linkPath = String(value.dropFirst(5))
            case "--gpio":
                guard value == "sim" else { return "--gpio: only sim here" }
                gpioSim = true
            case "--events":
                eventsPath = value
            case "--trace":
                tracePath = value
            case "--log-level":
                guard let level = LogLevel(name: value) else { return "--log-level: error, warning, notice, info or debug" }
                logLevel = level
            default:
                return "unknown option \(flag)"
            }
            i += 2
        }
        if linkPath.isEmpty { return "--link unix:PATH is required" }
        if !gpioSim { return "--gpio sim is required" }
        return nil
    }
}

/// The events stream (docs/events.md), formatted into one fixed buffer.
struct JSONEventSink: ~Copyable, EventSink {
    private var out: OutputFile
    private var line = ByteBuffer(capacity: 2048)
    private let start: Instant
    private let lineNames: [String]

    init(out: consuming OutputFile, start: Instant, lineNames: [String]) {
        self.out = out
        self.start = start
        self.lineNames = lineNames
    }

    mutating func record(_ event: FirmwareEvent, core: borrowing WearableCore, now: Instant) {
        switch event {
        case .link(let link): record(link, core: core, now: now)
        case .line(let index, let on):
            begin("gpio", now)
            field("line")
            if index < lineNames.count { line.append(jsonString: lineNames[index]) } else { line.append(decimal: index) }
            field("value")
            line.append(decimal: on ? 1 : 0)
            end()
        case .rejected(let what, let reason): error(what, reason, now)
        case .stopping(let reason): session("stopping", reason: reason, now: now)
        }
    }

    private mutating func record(_ event: LinkEvent, core: borrowing WearableCore, now: Instant) {
        switch event {
        case .connected: session("connected", reason: nil, now: now)
        case .secured: session("secured", reason: nil, now: now)
        case .discovered: session("discovered", reason: nil, now: now)
        case .ancsAbsent: session("ancs-absent", reason: nil, now: now)
        case .subscribed: session("subscribed", reason: nil, now: now)
        case .ended(let reason): session("ended", reason: reason, now: now)
        case .mtu(let mtu):
            begin("mtu", now)
            field("mtu")
            line.append(decimal: mtu)
            end()
        case .notification(let change): notification(change, now)
        case .command(let result): command(result, core: core, now: now)
        case .drop(let what, let reason):
            begin("drop", now)
            field("what")
            line.append(jsonString: what.text)
            field("reason")
            line.append(jsonString: reason.text)
            end()
        case .error(let what, let detail): error(what, detail, now)
        }
    }

    mutating func session(_ state: StaticString, reason: Name?, now: Instant) {
        begin("session", now)
        field("state")
        line.append(jsonString: state)
        if let reason {
            field("reason")
            line.append(jsonString: reason.text)
        }
        end()
    }

    private mutating func notification(_ change: TableChange, _ now: Instant) {
        let record: NotificationRecord
        let event: StaticString
        switch change {
        case .added(let r, _): record = r; event = "added"
        case .modified(let r, _): record = r; event = "modified"
        case .removed(let r): record = r; event = "removed"
        case .removedUnknown(let uid):
            begin("notification", now)
            field("event")
            line.append(jsonString: "removed")
            field("uid")
            line.append(decimal: UInt64(uid))
            end()
            return
        }
        begin("notification", now)
        field("event")
        line.append(jsonString: event)
        field("uid")
        line.append(decimal: UInt64(record.uid))
        field("category")
        line.append(jsonString: record.category.name)
        field("flags")
        line.append(UInt8(ascii: "["))
        var first = true
        for (flag, name) in EventFlags.named where record.flags.contains(flag) {
            if !first { line.append(UInt8(ascii: ",")) }
            first = false
            line.append(jsonString: name)
        }
        line.append(UInt8(ascii: "]"))
        field("count")
        line.append(decimal: Int(record.categoryCount))
        end()
    }

    private mutating func command(_ result: CommandResult, core: borrowing WearableCore, now: Instant) {
        switch result {
        case .actionDelivered(let uid, let action):
            actionEvent(uid, action, "sent", now)
        case .attributesReceived(let uid):
            begin("attributes", now)
            field("uid")
            line.append(decimal: UInt64(uid))
            for (id, name) in [(NotificationAttributeID.appIdentifier, "AppIdentifier" as StaticString), (.title, "Title"),
                (.subtitle, "Subtitle"), (.message, "Message")]
            {
                field(name)
                core.withAttributeValue(id) { value in _ = line.append(jsonString: value) }
            }
            end()
        case .failed(.performNotificationAction(let uid, let action), let failure):
            actionEvent(uid, action, Self.name(failure), now)
        case .appNameReceived, .probeAnswered, .probeFailed, .failed:
            break
        }
    }

    private mutating func actionEvent(_ uid: UInt32, _ action: ActionID, _ result: StaticString, _ now: Instant) {
        begin("action", now)
        field("uid")
        line.append(decimal: UInt64(uid))
        field("action")
        line.append(jsonString: action.name)
        field("result")
        line.append(jsonString: result)
        end()
    }

    private static func name(_ failure: CommandFailure) -> StaticString {
        switch failure {
        case .ancs(.invalidParameter): "invalid-parameter"
        case .ancs(.actionFailed): "action-failed"
        case .ancs(.unknownCommand): "unknown-command"
        case .ancs(.invalidCommand): "invalid-command"
        case .att: "att-error"
        case .timedOut: "timed-out"
        case .unsendable: "unsendable"
        }
    }

    private mutating func error(_ what: Name, _ detail: Name, _ now: Instant) {
        begin("error", now)
        field("what")
        line.append(jsonString: what.text)
        field("detail")
        line.append(jsonString: detail.text)
        end()
    }

    private mutating func begin(_ kind: StaticString, _ now: Instant) {
        line.removeAll()
        line.append(text: "{\"t_ms\":")
        line.append(decimal: now.ms(since: start))
        field("kind")
        line.append(jsonString: kind)
    }

    private mutating func field(_ name: StaticString) {
        line.append(UInt8(ascii: ","))
        line.append(jsonString: name)
        line.append(UInt8(ascii: ":"))
    }

    private mutating func end() {
        line.append(text: "}\n")
        out.write(line)
    }
}
