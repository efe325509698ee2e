// SPDX-License-Identifier: Apache-2.0
// The simulated iPhone's security (PhoneCore.swift has the design,
// PhoneSim.swift the pairing model): pairing on the wearable's Security
// Request or a refused request, ANCS hidden until the link is encrypted,
// and the PDUs held while pairing runs.

import ANCS
import ATT
import Bounded
import GATT

extension PhoneCore {
    // MARK: Security

    mutating func startPairing(now: Instant) {
        guard security == .open else { return }
        emit(.pairingStarted)
        security = .pairing(until: now.advanced(byMs: config.pairingDelayMs), reencrypt: false)
        updateSecurity(now: now)
    }

    /// The wearable asked for security: on a real link an SMP Security
    /// Request (the loopback test rig calls this for `raiseSecurity`; the
    /// UNIX link carries none). An open link pairs. A request while the
    /// phone's own encryption of a bonded link is under way, or due within
    /// `encryptionCollisionWindowMs`, collides with it (counted, `dropped
    /// security-request collision`; the phone's encryption goes on); one
    /// earlier makes the phone encrypt at once.
    public mutating func securityRequested(now: Instant) {
        lastNow = now
        guard isConnected else { return }
        updateSecurity(now: now)
        outputs.counters.securityRequests &+= 1
        switch security {
        case .open:
            startPairing(now: now)
        case .encryptPending(let at) where now < at.advanced(byMs: -config.encryptionCollisionWindowMs):
            // Asked well before the phone meant to encrypt: it encrypts now.
            security = .pairing(until: now.advanced(byMs: config.pairingDelayMs), reencrypt: true)
        case .encryptPending, .pairing(_, reencrypt: true):
            outputs.counters.securityCollisions &+= 1
            emit(.dropped(what: "security-request", reason: "collision"))
        case .pairing, .secured:
            break
        }
        runScenario(now: now)
    }

    /// Shows or hides ANCS as `hide-ancs` says for this link now (no
    /// Service Changed: the wearable is expected to look again by itself).
    mutating func applyANCSHiding() {
        let hidden: Bool
        switch ancsHiding {
        case .never: hidden = false
        case .untilEncrypted: hidden = security != .secured
        case .untilBonded: hidden = !bondedAtConnection
        }
        if hidden, database.ancsPresent {
            let before = subscriptions
            database.removeANCS()
            ancsHiddenByQuirk = true
            emit(.ancsRemoved)
            subscriptionsChanged(from: before)
        } else if !hidden, ancsHiddenByQuirk {
            ancsHiddenByQuirk = false
            if !database.ancsPresent {
                database.addANCS()
                emit(.ancsAdded)
            }
        }
    }

    mutating func updateSecurity(now: Instant) {
        if case .encryptPending(let at) = security, now >= at {
            // A bonded phone encrypting the link by itself, as iOS does.
            security = .pairing(until: at.advanced(byMs: config.pairingDelayMs), reencrypt: true)
        }
        guard case .pairing(let until, let reencrypt) = security, now >= until else { return }
        security = .secured
        isBonded = true
        emit(.secured(newlyPaired: !reencrypt))
        applyANCSHiding()
        indicateChangeWhileAway()
        // A local copy: processing mutates self, which owns the queue.
        var pdu = InlineBytes<517>()  // ATTMTU.maximum (a generic argument must be a literal)
        while !held.isEmpty, isConnected, security == .secured {
            pdu.removeAll()
            _ = held.withFirst { pdu.append($0) }
            held.removeFirst()
            process(pdu.span, now: now)
        }
    }
}
