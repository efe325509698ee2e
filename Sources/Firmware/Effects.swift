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

/// Where observable events go (events stream, log, simulator screen).
public protocol EventSink: ~Copyable {
    /// `session` is lent for this call only: the values of an attribute
    /// response just completed (`.link(.command(.attributesReceived))`) and
    /// the cached app names are read from it here, never later.
    mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant)
}

public struct Effects<S: EventSink & ~Copyable>: ~Copyable {
    public var sink: S
    /// The firmware has started for systemd's purposes: the controller
    /// advertises, or it is known to be absent and the firmware waits for
    /// it. Set once; the runner sends READY=1 when it sees it.
    public private(set) var started = false

    public init(sink: consuming S) {
        self.sink = sink
    }

    public mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant) {
        if !started, case .controller(let c) = event, c == .advertising || c == .controllerGone { started = true }
        sink.record(event, session: session, now: now)
    }
}
