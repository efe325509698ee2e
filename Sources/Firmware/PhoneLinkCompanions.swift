// SPDX-License-Identifier: Apache-2.0
// The phone link's two companion clients, AMS (AMSClient.swift) and CTS
// (CTSClient.swift): started together once ANCS is live (CTS begins when
// AMS's bring-up is over), reset together with the link, restarted
// together when a Service Changed touches either, and kept in the bond's
// handle cache together once both are done. The link routes to them the
// responses the arbiter says are theirs and the notifications on their
// handles, and reports what they return.

import AMS
import ATT
import Bounded
import CTS
import GATT

extension PhoneLink {
    /// AMS and CTS were started on this link.
    var companionsStarted: Bool { ams.step != .notStarted }

    mutating func startCompanions(cachedAMS: DiscoveredService? = nil, cachedCTS: DiscoveredService? = nil) {
        ams.start(cached: cachedAMS)
        cts.prepare(cached: cachedCTS)
        beginCTSAfterAMS()
    }

    mutating func resetCompanions() {
        ams.reset()
        cts.reset()
    }

    /// One service at a time: CTS's bring-up waits for AMS's.
    mutating func beginCTSAfterAMS() {
        if ams.step == .done { cts.begin() }
    }

    /// Whether a Service Changed range touches either service.
    func companionsAffected(by range: ServiceChangedRange) -> Bool {
        ams.isAffected(by: range) || cts.isAffected(by: range)
    }

    /// The requests out will not be answered to them (the generation moved
    /// on); a media press lost is reported.
    mutating func abandonCompanion<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(dropMedia: Bool, now: Instant, handler: inout H, effects: inout Effects<S>) {
        cts.abandonOutstanding()
        if let lost = ams.abandonOutstanding(dropMedia: dropMedia) {
            emit(.media(.commandEnded(lost, .interrupted)), now: now, handler: &handler, effects: &effects)
        }
    }

    /// The response to AMS's or CTS's request (the arbiter's holder).
    mutating func companionResponse<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ response: ATTPDU, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        let event: LinkEvent?
        if ams.outstanding != nil {
            event = ams.handle(response, in: pdu)
            beginCTSAfterAMS()
        } else {
            event = cts.handle(response, in: pdu, now: now)
        }
        if let event { emit(event, now: now, handler: &handler, effects: &effects) }
        if !companionDoneSeen, ams.step == .done, cts.step == .done {
            // AMS and CTS as found (or confirmed) on this link: worth keeping.
            companionDoneSeen = true
            handlesRevision &+= 1
        }
    }

    mutating func companionNotification(handle: UInt16, value: Span<UInt8>, now: Instant) -> CompanionRequests.Notified {
        let media = ams.notification(handle: handle, value: value)
        if case .handled = media { return media }
        return cts.notification(handle: handle, value: value, now: now)
    }
}
