// SPDX-License-Identifier: Apache-2.0
// The effects channel: where what an input causes goes. The runner owns one
// `Effects` (built once, before the loop) and lends it to every input
// function of the core (`into effects: inout Effects<S>`), so an event
// reaches the sink when it happens, in the call that caused it. A completed
// attribute response is read by the sink in that same call, through the
// session lent with the event: nothing has to stay readable "until the next
// command", and no layer keeps a ring of events for its parent to drain and
// emit again. docs/architecture.md ("One step of the loop") has the flow.

import ANCS
import Bounded
import Config
import Mgmt

/// Where observable events go (events stream, log, simulator screen).
public protocol EventSink: ~Copyable {
    /// `session` is lent for this call only: the values of an attribute
    /// response just completed (`.link(.command(.attributesReceived))`) and
    /// the cached app names are read from it here, never later.
    mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant)
}

/// What the firmware tells the service manager it is doing (systemd's
/// STATUS=): the controller's state and, once it advertises, the wearer's
/// status in the words the double press's patterns stand for.
public enum ServiceStatus: Equatable, Sendable {
    case advertising
    /// The controller is up: the wearer's status (the runner's choice of
    /// words once `advertising` is reported).
    case wearer(WearerStatus)
    case waitingForController
    /// Set-up failed at `step` and starts over `retryDelayMs` later.
    case setupFailed(step: SetupStep, failure: SetupFailure, retryDelayMs: Int64)

    static let setupFailedPrefix: StaticString = "controller set-up failed"

    /// Whether a status text (systemd's StatusText) says set-up failed:
    /// `wristlink doctor` reads it back.
    public static func isSetupFailure(_ text: String) -> Bool {
        setupFailedPrefix.withUTF8Buffer { text.utf8.starts(with: $0) }
    }

    /// "controller set-up failed at power-on: rfkilled; trying again every 5 s"
    public func write(into out: inout ByteBuffer) {
        out.removeAll()
        switch self {
        case .advertising:
            out.append(text: "advertising")
        case .wearer(let status):
            out.append(text: status.words)
        case .waitingForController:
            out.append(text: "waiting for the Bluetooth controller")
        case .setupFailed(let step, let failure, let retryDelayMs):
            out.append(text: Self.setupFailedPrefix)
            out.append(text: " at ")
            out.append(text: step.name)
            out.append(text: ": ")
            out.append(text: failure.name)
            out.append(text: "; trying again every ")
            if retryDelayMs % 1_000 == 0 {
                out.append(decimal: retryDelayMs / 1_000)
                out.append(text: " s")
            } else {
                out.append(decimal: retryDelayMs)
                out.append(text: " ms")
            }
        }
    }
}

public struct Effects<S: EventSink & ~Copyable>: ~Copyable {
    public var sink: S
    /// The firmware has started for systemd's purposes: it is doing its
    /// job, whatever the controller's state: advertising, waiting for an
    /// absent controller, or starting a failed set-up over every few
    /// seconds (rfkill, a controller fault; a wearer fixes that without a
    /// restart, and a restart would not fix it). Set once; the runner
    /// sends READY=1 when it sees it.
    public private(set) var started = false
    /// The controller's state as last reported (nil: nothing yet, or no
    /// controller); the runner passes each change on as STATUS=.
    public private(set) var status: ServiceStatus? = nil
    /// The set-up's retry delay, for the status text.
    private let retryDelayMs: Int64

    public init(sink: consuming S, retryDelayMs: Int64 = ControllerConfig().retryDelayMs) {
        self.sink = sink
        self.retryDelayMs = retryDelayMs
    }

    public mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant) {
        if case .controller(let c) = event {
            switch c {
            case .advertising: status = .advertising
            case .controllerGone: status = .waitingForController
            case .setupFailed(let step, let failure): status = .setupFailed(step: step, failure: failure, retryDelayMs: retryDelayMs)
            default: break
            }
            if status != nil { started = true }
        }
        sink.record(event, session: session, now: now)
    }
}
