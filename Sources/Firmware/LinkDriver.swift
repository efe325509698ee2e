// SPDX-License-Identifier: Apache-2.0
// The phone link driven alone, without the policy: a `PhoneLink` with a
// `LinkEventRecorder` as its handler and a sink that keeps nothing, behind
// the link's own inputs. For tests, the fuzzer and measurements that look
// at the link by itself; the firmware hands the link its AlertPolicy and
// the runner's Effects instead (WearableCore).

import ANCS
import ATT
import Bounded

public struct LinkDriver: ~Copyable {
    public private(set) var link: PhoneLink
    private var recorder: LinkEventRecorder
    private var effects = Effects(sink: NoSink())

    public init(config: PhoneLinkConfig, eventCapacity: Int = 64) {
        link = PhoneLink(config: config)
        recorder = LinkEventRecorder(capacity: eventCapacity)
    }

    // Inputs.
    public mutating func linkUp(now: Instant, bonded: Bool = false) {
        link.linkUp(now: now, bonded: bonded, handler: &recorder, effects: &effects)
    }
    public mutating func linkDown(reason: EndReason, now: Instant = .zero) {
        link.linkDown(reason: reason, now: now, handler: &recorder, effects: &effects)
    }
    public mutating func receive(_ pdu: Span<UInt8>, now: Instant) {
        link.receive(pdu, now: now, handler: &recorder, effects: &effects)
    }
    public mutating func securityChanged(encrypted: Bool, now: Instant) {
        link.securityChanged(encrypted: encrypted, now: now, handler: &recorder, effects: &effects)
    }
    public mutating func peerBonded(now: Instant) { link.peerBonded(now: now) }
    public mutating func advance(now: Instant) { link.advance(now: now, handler: &recorder, effects: &effects) }
    public mutating func flush(now: Instant) { link.flush(now: now, handler: &recorder, effects: &effects) }

    // Requests.
    public mutating func requestAttributes(uid: UInt32, _ attributes: NotificationAttributeSet) -> RequestOutcome {
        link.requestAttributes(uid: uid, attributes)
    }
    public mutating func requestAppName(_ appIdentifier: AppIdentifier) -> RequestOutcome { link.requestAppName(appIdentifier) }
    public mutating func performAction(uid: UInt32, _ action: ActionID) -> RequestOutcome { link.performAction(uid: uid, action) }

    // Outputs.
    public mutating func nextEvent() -> LinkEvent? { recorder.next() }
    /// Events the recorder had no room for.
    public var eventsDropped: UInt64 { recorder.dropped }
    public mutating func nextAction() -> LinkAction? { link.nextAction() }
    public mutating func popOutgoing(into out: inout ByteBuffer) -> Bool { link.popOutgoing(into: &out) }

    // What the link shows.
    public var state: LinkState { link.state }
    public var deadline: Instant? { link.deadline }
    public var bearer: ATTBearer { _read { yield link.bearer } }
    public var session: Session { _read { yield link.session } }
    public var counters: PhoneLinkCounters { link.counters }
    public var isEncrypted: Bool { link.isEncrypted }
    public var isBonded: Bool { link.isBonded }
    public var isRaisingSecurity: Bool { link.isRaisingSecurity }
}
