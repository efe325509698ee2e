// SPDX-License-Identifier: Apache-2.0
// Platform: what the firmware needs from the machine, as a protocol the
// runner is generic over (no existential boxes). The Linux implementation
// (poll loop, BlueZ or UNIX link, libgpiod or simulated lines) lives in
// PlatformLinux; tests can supply their own.
//
// The contract is pull-based and bounded: `wait` sleeps until something may
// be ready or the deadline passes; the runner then drains link and input
// events with `nextLinkInput` / `nextInput` (each returning nothing when
// idle), feeds them to the sans-IO core, and pushes the core's outputs back
// through `send`, `setOutput`, `raiseSecurity` and `disconnect`. Errors of
// the operating system are the implementation's to turn into these values
// (a dead link is `.disconnected`), so the core never sees errno.

import Bounded

/// What happened on the link to the phone.
public enum LinkInput: Equatable, Sendable {
    case none
    /// A phone connected (one at a time).
    case connected
    /// `pdu` holds one ATT PDU.
    case pdu
    case securityChanged(encrypted: Bool)
    case disconnected(reason: Name)

    /// The reason a link ended by the wearable's own Bluetooth stack is
    /// given as: HCI "Connection Terminated By Local Host", which Linux
    /// reports on the socket as ECONNABORTED (a controller reset or power
    /// off, or the controller's own Disconnect), never the phone's doing.
    public static let endedByLocalHost: Name = "connection-aborted"
}

/// A debounced-later input edge, or a request to stop.
public enum InputEvent: Equatable, Sendable {
    /// A button line changed (raw, may bounce).
    case edge(button: Int, pressed: Bool, at: Instant)
    /// SIGINT, SIGTERM or end of the command input: turn everything off and stop.
    case stop(reason: Name)
    /// A line the simulator's console could not understand, or a notice
    /// file that is not a notice (`what` "notice").
    case rejected(what: Name, reason: Name)
    /// The system left a notice for the wrist (at start, or when asked to
    /// look: SIGUSR1 on Linux).
    case notice(SystemNotice)
}

public protocol Platform: ~Copyable {
    /// Monotonic time.
    func now() -> Instant

    /// Sleeps until an input may be ready or `deadline` (nil: no deadline)
    /// passes. Implementations may wake early; they must not tick when idle.
    mutating func wait(until deadline: Instant?)

    mutating func nextLinkInput(into pdu: inout ByteBuffer) -> LinkInput
    mutating func send(_ pdu: borrowing ByteBuffer)
    mutating func raiseSecurity(attempt: Int)
    mutating func disconnect()

    mutating func setOutput(_ line: Int, on: Bool)
    mutating func nextInput() -> InputEvent?

    /// The Bluetooth controller's management channel: the next event into
    /// `packet` (false: none; always false without a controller).
    mutating func nextControllerInput(into packet: inout ByteBuffer) -> Bool
    mutating func sendController(_ packet: borrowing ByteBuffer)
    /// Replaces the bond state file atomically; false when it could not
    /// (the old file stands; the caller tries again later).
    mutating func saveBonds(_ contents: borrowing ByteBuffer) -> Bool
    /// Replaces the bonded phones' handle cache file atomically; false when
    /// it could not (the old file stands; the handles are only a shortcut,
    /// so the caller waits for the next change).
    mutating func saveGATTCache(_ contents: borrowing ByteBuffer) -> Bool
    /// The wearable is up (doing its job, whatever the controller's
    /// state): tell the service manager.
    mutating func notifyReady()
    /// What the wearable is doing, one line of text for the service
    /// manager (systemd's STATUS=).
    mutating func notifyStatus(_ text: borrowing ByteBuffer)
    /// The board's battery now (nil: none, gone, or no level it can say).
    /// Called at the core's slow poll only; no allocation.
    mutating func readBattery() -> BatteryReading?
}

extension Platform where Self: ~Copyable {
    /// A platform without a battery.
    public mutating func readBattery() -> BatteryReading? { nil }
}
