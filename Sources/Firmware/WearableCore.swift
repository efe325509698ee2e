// The wearable as one sans-IO value: the phone link and, around it, what the
// wearer sees and presses. Inputs come from the runner; outputs wait in
// bounded queues until the runner settles them.

import ANCS
import Bounded
import Platform

/// Everything observable that happened, for the events stream and the log.
public enum FirmwareEvent: Equatable, Sendable {
    case link(LinkEvent)
    case line(index: Int, on: Bool)
    case rejected(what: Name, reason: Name)
    case stopping(reason: Name)
}

public struct WearableConfig: Sendable {
    public var link = PhoneLinkConfig()
    public var eventCapacity = 64

    public init() {}
}

public struct WearableCore: ~Copyable {
    public private(set) var phone: PhoneLink
    private var events: RingBuffer<FirmwareEvent>
    public private(set) var eventsDropped: UInt64 = 0

    public init(config: WearableConfig) {
        phone = PhoneLink(config: config.link)
        events = RingBuffer(capacity: config.eventCapacity, policy: .refuseNewest)
    }

    // MARK: Inputs

    public mutating func linkUp(now: Instant) {
        phone.linkUp(now: now)
        absorbLinkEvents(now: now)
    }

    public mutating func linkDown(reason: Name, now: Instant) {
        phone.linkDown(reason: reason)
        absorbLinkEvents(now: now)
    }

    /// One PDU from the link, in a buffer the caller owns.
    public mutating func receive(_ pdu: borrowing ByteBuffer, now: Instant) {
        receive(pdu.span, now: now)
    }

    public mutating func receive(_ pdu: Span<UInt8>, now: Instant) {
        phone.receive(pdu, now: now)
        absorbLinkEvents(now: now)
    }

    public mutating func securityChanged(encrypted: Bool, now: Instant) {
        phone.securityChanged(encrypted: encrypted, now: now)
        absorbLinkEvents(now: now)
    }

    public mutating func input(_ input: InputEvent, now: Instant) {
        switch input {
        case .edge:
            break
        case .stop(let reason):
            emit(.stopping(reason: reason))
        case .rejected(let what, let reason):
            emit(.rejected(what: what, reason: reason))
        }
    }

    public var deadline: Instant? { phone.deadline }

    public mutating func advance(now: Instant) {
        phone.advance(now: now)
        absorbLinkEvents(now: now)
    }

    private mutating func absorbLinkEvents(now: Instant) {
        while let event = phone.nextEvent() { emit(.link(event)) }
    }

    private mutating func emit(_ event: FirmwareEvent) {
        if case .refused = events.push(event) { eventsDropped &+= 1 }
    }

    // MARK: Outputs

    public mutating func nextEvent() -> FirmwareEvent? { events.popFirst() }

    /// Sends queued Control Point commands (after the events were read).
    public mutating func flush(now: Instant) {
        phone.flush(now: now)
        absorbLinkEvents(now: now)
    }

    public mutating func popOutgoing(into out: inout ByteBuffer) -> Bool { phone.popOutgoing(into: &out) }
    public mutating func nextAction() -> LinkAction? { phone.nextAction() }
    public mutating func nextLineChange() -> (line: Int, on: Bool)? { nil }

    // MARK: Reading state for sinks

    /// Lends `body` a value of the attributes response just completed
    /// (valid until the next command is sent; see `Session.attributeValue`).
    public func withAttributeValue<R>(_ id: NotificationAttributeID, _ body: (Span<UInt8>) -> R) -> R {
        body(phone.session.attributeValue(id))
    }
}
