// SPDX-License-Identifier: Apache-2.0
// The wearable's own GATT server on the link: the phone's requests are
// answered as they come (PhoneLink.process), and what the server says
// unasked goes out from here: the Battery Level notification when the
// level changes, and the Service Changed indication the database owes
// when the Battery Service came or went (GATTServer.swift has the
// handles and the rules).
//
// Trust: these go out on a link that is encrypted, or to a phone that
// subscribed on this very link. A bonded phone's subscriptions carry over
// to its next link (the spec's persistent CCCDs), but until that link is
// encrypted it may be someone using the phone's address: nothing is sent
// to it. One indication at a time (the bearer waits for the
// confirmation); a change while one is out is indicated after it.

import ATT
import Bounded
import GATT

extension PhoneLink {
    /// The battery's level now (nil: no battery): served, notified to a
    /// subscribed phone when it changed, and the Battery Service added or
    /// withdrawn (Service Changed) when it came or went.
    public mutating func battery(_ percent: UInt8?) {
        switch server.setBattery(percent) {
        case .unchanged:
            break
        case .level:
            guard serverMaySend, server.notifiesBattery, server.batteryNotification(into: &scratch) else { return }
            counters.batteryNotifications &+= 1
            bearer.send(copyOf: scratch)
        case .service:
            indicateOwedServiceChange()
        }
    }

    /// What the server may say unasked on this link now.
    var serverMaySend: Bool {
        phase != .disconnected && bearer.isOpen && (isEncrypted || serverSubscribedOnLink)
    }

    /// Sends the Service Changed indication the database owes, when the
    /// phone has indications on and none is waiting for a confirmation.
    mutating func indicateOwedServiceChange() {
        guard serverMaySend, server.serviceChangeOwed, server.indicatesServiceChanged, !bearer.indicationOutstanding else { return }
        server.serviceChangedIndication(into: &scratch)
        if bearer.indicate(copyOf: scratch) { counters.serviceChangedIndications &+= 1 }
    }

    /// The phone wrote one of our CCCDs (a Write Request or Command
    /// answered without error).
    mutating func serverSubscriptionWritten() {
        serverSubscribedOnLink = true
        indicateOwedServiceChange()
    }

    /// Whether `request` was a write our server took: it answered (or, for
    /// a Write Command, would have answered) with a Write Response; the
    /// only writable attributes are the CCCDs.
    static func wroteCCCD(_ request: ATTPDU, answer: borrowing ByteBuffer) -> Bool {
        switch request {
        case .writeRequest, .writeCommand: return answer.count == 1 && answer[0] == ATTOpcode.writeResponse
        default: return false
        }
    }

    /// The phone confirmed our indication.
    mutating func serverIndicationConfirmed() {
        server.serviceChangeConfirmed()
        indicateOwedServiceChange()
    }
}
