// SPDX-License-Identifier: Apache-2.0
// The wearable's vocabulary around WearableCore: the events it reports
// (FirmwareEvent and the values in them), its configuration and its
// counts. WearableCore.swift has the behaviour.

import AMS
import ANCS
import Bounded
import Config
import Feedback
import GATT
import Mgmt
import Platform

/// Everything observable that happened, for the events stream and the log.
public enum FirmwareEvent: Equatable, Sendable {
    case link(LinkEvent)
    case controller(ControllerEvent)
    case line(index: Int, on: Bool)
    case button(index: Int, gesture: GestureKind)
    case action(uid: UInt32, action: ActionID, result: ActionResult)
    /// The wearer silenced the ringing call(s) on the wrist (the newest's
    /// UID); nil: nothing was ringing.
    case silenced(uid: UInt32?)
    /// A lasting alert reached the policy's `ring-limit-ms` and stopped on
    /// the wrist; the notification stays.
    case ringLimited(uid: UInt32)
    /// A media press (AMS Remote Command) ended: sent, or why not.
    case media(command: RemoteCommandID, result: MediaCommandResult)
    /// Quiet hours began or ended, or cannot apply (time unknown).
    case quietHours(QuietHoursState)
    /// The known phone stayed away for `phone-lost-ms` (true), or came
    /// back after that (false).
    case phoneLost(Bool)
    /// The battery's level or status changed, an alarm played, or it went.
    case battery(BatteryEvent)
    case rejected(what: Name, reason: Name)
    /// The system's notice (an update kept or sent back) was shown.
    case notice(SystemNotice)
    case stopping(reason: Name)
    /// The bond file could not be written (or the bonds not serialised);
    /// they stay marked unsaved and are written again in `retryInMs`.
    case bondsNotSaved(retryInMs: Int64)
}

extension FirmwareEvent {
    /// The end of a press's action that a link event means: delivered, or
    /// refused by the phone (or timed out, or unsendable).
    init?(actionEndedBy event: LinkEvent) {
        switch event {
        case .command(.actionDelivered(let uid, let action)):
            self = .action(uid: uid, action: action, result: .sent)
        case .command(.failed(.performNotificationAction(let uid, let action), let failure)):
            self = .action(uid: uid, action: action, result: .failed(failure))
        case .media(.commandEnded(let command, let result)):
            self = .media(command: command, result: result)
        default:
            return nil
        }
    }
}

/// A button gesture as the events report it (`index` -1: both buttons).
public enum GestureKind: Equatable, Sendable {
    case short, long, double, chordLong
}

/// What became of a press meant as a Perform Notification Action.
public enum ActionResult: Equatable, Sendable {
    /// Queued for the Control Point (or merged with the same queued action).
    case queued
    /// The phone acknowledged the write.
    case sent
    /// The action queue was full.
    case refused
    /// No target, or the target does not offer the action.
    case nothingToDo
    /// The phone refused it, or it timed out or could not be written.
    case failed(CommandFailure)
}

public struct WearableConfig: Sendable {
    public var link = PhoneLinkConfig()
    public var controller = ControllerConfig()
    public var board: BoardConfig
    public var policy: PolicyConfig
    /// How long an alert waits for the attributes its rules need.
    public var ruleWaitMs: Int64 = 1_500
    /// After subscribing, how long notifications without PreExisting are
    /// still taken as the phone's replay (incoming calls excepted).
    public var replayWindowMs: Int64 = 3_000
    /// How long a ring carried over a session restart on a live link lasts
    /// if no new subscription confirms it.
    public var carriedRingMaxMs: Int64 = 10_000
    /// After a phone-lost buzz, a loss that begins before the phone has
    /// been back this long is reported without a buzz (a shaky link buzzes
    /// once).
    public var phoneLostCooldownMs: Int64 = 300_000
    public var pendingAlertCapacity = 8
    /// Between battery reads; nil: the board's `battery-poll-s` (tests
    /// poll faster).
    public var batteryPollMs: Int64? = nil
    /// The board or policy file given had an error and the shipped
    /// defaults run instead: `start` plays the policy's settings-error
    /// feedback once, so a wearer who edited the card sees it.
    public var settingsError = false

    public init(board: BoardConfig, policy: PolicyConfig) {
        self.board = board
        self.policy = policy
        // The board's Bluetooth name goes to the kernel (advertisement,
        // scan response) and to our GAP Device Name.
        controller.name = board.bluetoothName
        link.deviceName = GATTServer.DeviceName(board.bluetoothName)
    }
}

public struct WearableCounters: Equatable, Sendable {
    public var patternsRefused: UInt64 = 0
    public var nothingToDo: UInt64 = 0
    /// Alerts played without waiting because the pending table was full.
    public var pendingAlertsOverflowed: UInt64 = 0
    /// Alerts played with the category default because attributes came late.
    public var ruleWaitsExpired: UInt64 = 0
    /// Notifications without PreExisting taken as replay (no alert, no fetch)
    /// because they came within `replayWindowMs` of subscribing.
    public var unflaggedReplays: UInt64 = 0
    /// Alerts quiet hours kept from flashing or buzzing.
    public var alertsQuieted: UInt64 = 0
    public init() {}
}
