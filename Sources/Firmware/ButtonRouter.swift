// SPDX-License-Identifier: Apache-2.0
// What a press means. The gesture recogniser (Feedback.ButtonGestures)
// turns edges into gestures; this turns each gesture into a route, which
// WearableCore carries out:
// - while a pairing request waits for consent, accept grants and reject
//   refuses (a one-button board: short grants, long refuses);
// - a long press of both buttons opens pairing mode;
// - otherwise the policy's action for the button and the press length
//   (positive or negative Perform Notification Action, silencing the
//   ringing call, or a media command for the phone's player), if any;
//   while an incoming call rings on the wrist the policy's
//   `ringing-short`/`ringing-long` actions come first (by default a long
//   reject silences the ring and a long accept answers, so the long
//   presses' media commands apply only when no call rings).
// - a double press of accept, while no call rings and no pairing request
//   waits, asks for the wearer's status at a glance (`WearerStatus`).
// Double presses are recognised on accept only, and only while the core
// allows the status gesture (`allowStatus`): a short accept then waits out
// the double-press gap (`double-press-ms`). While a call rings or consent
// is asked, and on every other button, a short press is reported at its
// release, as before, so answering is never delayed; a double press that
// still comes (the ring began between the two presses) counts as one short
// press.
// Buttons are known by their role: the chord is accept + reject, and
// `reject` is the refusing button, both found once here.

import AMS
import ANCS
import Bounded
import Config
import Feedback

struct ButtonRouter: ~Copyable {
    enum Route: Equatable {
        case consent(granted: Bool)
        case action(ActionID)
        /// Stop the ringing call's lasting alert on the wrist.
        case silence
        /// An AMS remote command (the phone's media player).
        case media(RemoteCommandID)
        case pairingMode
        /// Play the wearer's status at a glance.
        case status
        case nothing
    }

    /// A gesture as the events report it, and what it means.
    struct Press: Equatable {
        /// The button; -1 for both (the chord).
        var index: Int
        var gesture: GestureKind
        var route: Route
    }

    private var gestures: ButtonGestures
    /// Gestures recognised, waiting for `next` (a few per input at most).
    private var recognised: RingBuffer<GestureEvent>
    private let buttonCount: Int
    private let rejectButton: Int?
    /// The button whose double press asks for the status (accept).
    private let statusButton: Int?
    private var statusAllowed = false
    private let shortPress: [ButtonAction]
    private let longPress: [ButtonAction]
    private let ringingShortPress: [ButtonAction?]
    private let ringingLongPress: [ButtonAction?]

    init(board: BoardConfig, policy: PolicyConfig) {
        var config = board.gestures
        if let a = board.buttonIndex(named: "accept"), let r = board.buttonIndex(named: "reject") {
            config.chord = ButtonChord(a, r)
        }
        buttonCount = board.buttons.count
        gestures = ButtonGestures(buttonCount: max(1, buttonCount), config: config)
        for b in 0..<buttonCount { gestures.setDoublePress(enabled: false, button: b) }
        recognised = RingBuffer(capacity: 8, policy: .refuseNewest)
        rejectButton = board.buttonIndex(named: "reject")
        statusButton = board.buttonIndex(named: "accept")
        shortPress = policy.shortPress
        longPress = policy.longPress
        ringingShortPress = policy.ringingShortPress
        ringingLongPress = policy.ringingLongPress
    }

    var deadline: Instant? { gestures.nextDeadline }

    /// Whether a double press of accept may ask for the status now (no
    /// call ringing, no consent asked): it turns accept's double-press
    /// recognition on or off, asked before each edge.
    mutating func allowStatus(_ allowed: Bool) {
        guard let statusButton, allowed != statusAllowed else { return }
        statusAllowed = allowed
        gestures.setDoublePress(enabled: allowed, button: statusButton)
    }

    /// An edge from the line backend; one for a button the board does not
    /// have is ignored.
    mutating func edge(button: Int, pressed: Bool, at: Instant) {
        guard button >= 0, button < buttonCount else { return }
        gestures.edge(button: button, pressed: pressed, at: at, into: &recognised)
    }

    mutating func advance(now: Instant) {
        gestures.advance(now: now, into: &recognised)
    }

    /// The next recognised gesture and its route, given whether a pairing
    /// request waits for consent now and whether an incoming call rings on
    /// the wrist (both asked per gesture: the one before may have changed
    /// them).
    mutating func next(awaitingConsent: Bool, ringing: Bool) -> Press? {
        guard let event = recognised.popFirst() else { return nil }
        switch event.gesture {
        case .short(let b):
            return Press(index: b, gesture: .short, route: shortRoute(b, awaitingConsent: awaitingConsent, ringing: ringing))
        case .long(let b):
            let route = awaitingConsent ? .consent(granted: grants(button: b, long: true)) : route(longPress, ringing ? ringingLongPress : [], b)
            return Press(index: b, gesture: .long, route: route)
        case .double(let b):
            guard b == statusButton, !awaitingConsent, !ringing else {
                return Press(index: b, gesture: .short, route: shortRoute(b, awaitingConsent: awaitingConsent, ringing: ringing))
            }
            return Press(index: b, gesture: .double, route: .status)
        case .chordLong:
            return Press(index: -1, gesture: .chordLong, route: .pairingMode)
        }
    }

    private func shortRoute(_ b: Int, awaitingConsent: Bool, ringing: Bool) -> Route {
        awaitingConsent ? .consent(granted: grants(button: b, long: false)) : route(shortPress, ringing ? ringingShortPress : [], b)
    }

    /// The button's action: the ringing one if it has one (`ringing` is
    /// empty when no call rings), else its usual one.
    private func route(_ actions: [ButtonAction], _ ringing: [ButtonAction?], _ button: Int) -> Route {
        let usual = button < actions.count ? actions[button] : ButtonAction.none
        let action = (button < ringing.count ? ringing[button] : nil) ?? usual
        switch action {
        case .positive: return .action(.positive)
        case .negative: return .action(.negative)
        case .silence: return .silence
        case .media(let action): return .media(RemoteCommandID(action))
        case .none: return .nothing
        }
    }

    /// Accept grants, reject refuses; on a one-button board short grants
    /// and long refuses.
    private func grants(button: Int, long: Bool) -> Bool {
        if buttonCount == 1 { return !long }
        return button != rejectButton && !long
    }
}

extension RemoteCommandID {
    /// The remote command a media button's action sends (docs/config.md).
    public init(_ action: MediaAction) {
        switch action {
        case .togglePlayPause: self = .togglePlayPause
        case .nextTrack: self = .nextTrack
        case .previousTrack: self = .previousTrack
        case .volumeUp: self = .volumeUp
        case .volumeDown: self = .volumeDown
        }
    }
}
