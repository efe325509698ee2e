// SPDX-License-Identifier: Apache-2.0
// The words of the events stream and the log for the core's typed reasons
// and results. The core reports enums; this is the one place they become
// text, and the text is the stream's contract (docs/events.md): scripts
// match on it, so a name here never changes silently.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import Firmware
import Mgmt

extension GestureKind {
    var text: StaticString {
        switch self {
        case .short: "short"
        case .long: "long"
        case .double: "double"
        case .chordLong: "chord-long"
        }
    }
}

extension CommandFailure {
    var text: StaticString {
        switch self {
        case .ancs(let code): code.name
        case .att: "att-error"
        case .timedOut: "timed-out"
        case .unsendable: "unsendable"
        }
    }
}

extension ActionResult {
    var text: StaticString {
        switch self {
        case .queued: "queued"
        case .sent: "sent"
        case .refused: "refused"
        case .nothingToDo: "nothing-to-do"
        case .failed(let failure): failure.text
        }
    }
}

extension EndReason {
    var name: Name {
        switch self {
        case .platform(let name): name
        case .attTimeout: "att-timeout"
        case .attRefused: "att-refused"
        case .notSecured: "not-secured"
        case .ancsUnavailable: "ancs-unavailable"
        case .subscribeFailed: "subscribe-failed"
        case .serviceChanged: "service-changed"
        case .encrypted: "encrypted"
        case .keepAlive: "keep-alive"
        case .notificationSourceSilent: "notification-source-silent"
        }
    }
}

extension LinkDrop {
    /// What was dropped, and why.
    var words: (what: Name, reason: Name) {
        switch self {
        case .attPDU(let reason):
            switch reason {
            case .malformed: ("att-pdu", "malformed")
            case .unexpectedResponse: ("att-pdu", "unexpected-response")
            case .unexpectedConfirmation: ("att-pdu", "unexpected-confirmation")
            case .bearerEnded: ("att-pdu", "bearer-ended")
            }
        case .notificationSource(let error): ("notification-source", Name(error.name))
        case .notificationSourceOutsideSession: ("notification-source", "outside-session")
        case .dataSource(let reason): ("data-source", Name(reason.name))
        case .notificationOnUnknownHandle: ("att-notification", "unknown-handle")
        case .indicationOnUnknownHandle: ("att-indication", "unknown-handle")
        case .serviceChangedMalformed: ("service-changed", "malformed")
        case .entityUpdate(.tooShort): ("entity-update", "too-short")
        case .entityUpdate(.unknownEntity): ("entity-update", "unknown-entity")
        case .playbackInfo(.noState): ("playback-info", "no-state")
        case .playbackInfo(.badState): ("playback-info", "bad-state")
        case .currentTime(let error): ("current-time", error.name)
        }
    }
}

extension LinkError {
    /// What went wrong, and how.
    var words: (what: Name, detail: Name) {
        switch self {
        case .requestRefused: ("att-request", "refused")
        case .serviceChangedAbsent: ("service-changed", "absent")
        case .serviceChangedSubscribeFailed: ("service-changed", "subscribe-failed")
        case .gattDiscoveryFailed: ("gatt-discovery", "failed")
        case .ancsDiscoveryNotSecured: ("ancs-discovery", "not-secured")
        case .ancsDiscoveryFailed: ("ancs-discovery", "failed")
        case .noNotificationSource: ("ancs-discovery", "no-notification-source")
        case .subscribeFailed(.dataSource): ("data-source", "subscribe-failed")
        case .subscribeFailed(.notificationSource): ("notification-source", "subscribe-failed")
        case .transactionTimeout: ("att", "transaction-timeout")
        case .encryptionFailed(.timeout): ("encryption", "timeout")
        case .encryptionFailed(.refused): ("encryption", "refused")
        case .companionWriteFailed(.remoteCommand, _): ("remote-command", "subscribe-failed")
        case .companionWriteFailed(.entityUpdate, _): ("entity-update", "write-failed")
        case .companionWriteFailed(.currentTime, _): ("current-time", "subscribe-failed")
        }
    }
}

extension PairingModeReason {
    var name: Name {
        switch self {
        case .noBond: "no-bond"
        case .buttons: "buttons"
        case .bonded: "bonded"
        case .timeout: "timeout"
        }
    }
}

extension ConsentReason {
    var name: Name {
        switch self {
        case .automatic: "automatic"
        case .button: "button"
        case .rejected: "rejected"
        case .notPairing: "not-pairing"
        case .timeout: "timeout"
        }
    }
}

extension BondIgnoredReason {
    var name: Name {
        switch self {
        case .notPersistent: "not-persistent"
        case .notIdentity: "not-identity-address"
        case .debugKey: "debug-key"
        case .noConsent: "no-consent"
        }
    }
}

extension ControllerDrop {
    var name: Name {
        switch self {
        case .mgmtEventMalformed: "mgmt-event-malformed"
        case .mgmtQueueFull: "mgmt-queue-full"
        case .mgmtEncode: "mgmt-encode"
        }
    }
}

extension CTSError {
    var name: Name {
        switch self {
        case .wrongLength: "wrong-length"
        case .fieldOutOfRange: "out-of-range"
        case .unknownTimeZone: "unknown-time-zone"
        }
    }
}

extension MediaCommandResult {
    var text: StaticString {
        switch self {
        case .sent: "sent"
        case .notAvailable: "not-available"
        case .refused: "refused"
        case .phoneError(AMSErrorCode.invalidState): "invalid-state"
        case .phoneError(AMSErrorCode.invalidCommand): "invalid-command"
        case .phoneError(AMSErrorCode.absentAttribute): "absent-attribute"
        case .phoneError: "att-error"
        case .interrupted: "interrupted"
        }
    }
}

extension MediaEvent {
    /// The player's state in the events (nil: not a state change).
    var stateName: StaticString? {
        switch self {
        case .absent: "absent"
        case .noPlayer: "no-player"
        case .playback(.playing): "playing"
        case .playback(.paused): "paused"
        case .playback(.rewinding): "rewinding"
        case .playback(.fastForwarding): "fast-forwarding"
        case .playback(.other): "unknown"
        case .commandEnded: nil
        }
    }
}

extension TimeUnknownReason {
    var name: StaticString {
        switch self {
        case .noCTS: "no-cts"
        case .readFailed: "read-failed"
        case .badValue: "bad-value"
        }
    }
}
