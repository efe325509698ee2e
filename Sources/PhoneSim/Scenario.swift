// SPDX-License-Identifier: Apache-2.0
// The scenario language's values: one `ScenarioCommand` per line, the
// notification content it carries, and the typed error a bad line gives.
// Syntax and semantics are documented in PhoneSim.swift; the parser is
// ScenarioParser.swift; ScenarioRunner.swift runs the lines and PhoneCore
// carries the commands out.
//
// Content is held in fixed inline storage. A value longer than its field is
// cut (the field's `wasTruncated` says so, and the phone reports it as an
// event) rather than refused: a scenario meant to test long values should
// still run.

import AMS
import ANCS
import Bounded
import CTS

public typealias TitleBytes = InlineBytes<128>
public typealias SubtitleBytes = InlineBytes<128>
/// Longer than the wearable keeps (256) so `overlongValues` can test its bound.
public typealias MessageBytes = InlineBytes<512>
/// `yyyyMMdd'T'HHmmSS`.
public typealias DateBytes = InlineBytes<15>
public typealias LabelBytes = InlineBytes<32>
/// The wearable's device name as the phone read it.
public typealias PeerName = InlineBytes<32>

/// What a notification says, as the phone answers Get Notification Attributes.
public struct NotificationContent: Equatable, Sendable {
    public var appIdentifier = AppIdentifier()
    public var title = TitleBytes()
    public var subtitle = SubtitleBytes()
    public var message = MessageBytes()
    public var date = DateBytes()
    public var positiveLabel = LabelBytes()
    public var negativeLabel = LabelBytes()

    public init() {}

    /// The fields that were cut to fit their storage.
    public var truncatedFields: NotificationAttributeSet {
        var set: NotificationAttributeSet = []
        if appIdentifier.wasTruncated { set.insert(.appIdentifier) }
        if title.wasTruncated { set.insert(.title) }
        if subtitle.wasTruncated { set.insert(.subtitle) }
        if message.wasTruncated { set.insert(.message) }
        if date.wasTruncated { set.insert(.date) }
        if positiveLabel.wasTruncated { set.insert(.positiveActionLabel) }
        if negativeLabel.wasTruncated { set.insert(.negativeActionLabel) }
        return set
    }
}

/// A notification as a scenario line describes it.
public struct NotificationSpec: Equatable, Sendable {
    /// Nil: the phone picks the next free UID (one above the highest seen).
    public var uid: UInt32?
    public var category: CategoryID
    /// Silent, Important, PositiveAction, NegativeAction. PreExisting is the
    /// phone's to set during the replay.
    public var flags: EventFlags
    public var content: NotificationContent
    /// How many notifications the line posts (`count=N`): UIDs `uid`,
    /// `uid`+1, ... (or the next free ones), the same content.
    public var count: Int

    public init(
        uid: UInt32? = nil, category: CategoryID, flags: EventFlags = [], content: NotificationContent = NotificationContent(), count: Int = 1
    ) {
        self.uid = uid
        self.category = category
        self.flags = flags
        self.content = content
        self.count = count
    }
}

/// When the phone's database shows ANCS (`hide-ancs`).
public enum ANCSHiding: Equatable, Sendable {
    /// Always (unless a scenario removes it).
    case never
    /// Only while the link is encrypted.
    case untilEncrypted
    /// Only on a connection that was bonded when it started.
    case untilBonded
}

/// One line of a scenario, parsed.
public enum ScenarioCommand: Equatable, Sendable {
    /// Stored silently; sent only in the PreExisting replay of a subscription.
    case existing(NotificationSpec)
    /// Added, or Modified when the UID exists (also `call`, `message`, `email`).
    case notify(NotificationSpec)
    case remove(uid: UInt32)
    case app(AppIdentifier, AppDisplayName)
    case sleep(ms: Int64)
    /// Until Notification Source is subscribed and the PreExisting replay sent.
    case waitSubscribed(timeoutMs: Int64?)
    /// Until a Perform Notification Action for `uid` was answered.
    case waitAction(uid: UInt32, timeoutMs: Int64?)
    /// ANCS removed and added back, one Service Changed indication.
    case serviceChanged
    case removeANCS
    case addANCS
    /// Answer the next `count` Control Point writes with ATT error `code`.
    case error(code: UInt8, count: Int)
    /// Whether replays carry PreExisting (`replay-flag on|off`; on by
    /// default). Some iPhones replay without it for a few seconds.
    case replayFlag(on: Bool)
    /// The largest ATT MTU the phone agrees to from the next exchange on.
    case mtu(Int)
    /// Notification sharing: `refusal` 0 allows it; otherwise the ATT error
    /// every write to the ANCS CCCDs and the Control Point gets.
    case share(refusal: UInt8)
    case hideANCS(ANCSHiding)
    /// On a bonded reconnection, the phone starts encryption itself this
    /// long after connecting (0: at once).
    case encryptDelay(ms: Int64)
    /// The phone forgets the ANCS subscriptions without telling the wearable.
    case dropSubscription
    /// Notification Source goes silent while the subscription stands and
    /// the Control Point answers as usual (seen on real iPhones); writing
    /// its CCCD off and on again, or a new connection, wakes it.
    case notificationSourceDead
    /// The next `count` attribute fetches are acknowledged and their Data
    /// Source responses never sent (lost in reconnect churn on real phones).
    case loseResponses(count: Int)
    /// The phone's media app starts playing, pauses or closes (`media
    /// play|pause|unavailable`).
    case media(MediaState)
    /// Until the wearable wrote `command` to Remote Command (whatever the
    /// answer; one written since the scenario began counts, once).
    case waitMedia(command: RemoteCommandID, timeoutMs: Int64?)
    /// The user sets the phone's local time, and its UTC offset in minutes
    /// when given.
    case time(CivilDateTime, utcOffsetMin: Int?)
    /// The phone has no AMS (older iOS, or the user refused it).
    case noAMS
    /// The phone has no CTS.
    case noCTS
    case connect
    case disconnect
    /// "Forget This Device": the phone drops its bond and hangs up; it
    /// pairs afresh at the next connection.
    case forget
    case quit

    /// The command word, for events.
    public var name: Name {
        switch self {
        case .existing: "existing"
        case .notify: "notify"
        case .remove: "remove"
        case .app: "app"
        case .sleep: "sleep"
        case .waitSubscribed: "wait-subscribed"
        case .waitAction: "wait-action"
        case .serviceChanged: "service-changed"
        case .removeANCS: "remove-ancs"
        case .addANCS: "add-ancs"
        case .error: "error"
        case .replayFlag: "replay-flag"
        case .mtu: "mtu"
        case .share: "share"
        case .hideANCS: "hide-ancs"
        case .encryptDelay: "encrypt-delay"
        case .dropSubscription: "drop-subscription"
        case .notificationSourceDead: "ns-dead"
        case .loseResponses: "lose-response"
        case .media: "media"
        case .waitMedia: "wait-media"
        case .time: "time"
        case .noAMS: "no-ams"
        case .noCTS: "no-cts"
        case .connect: "connect"
        case .disconnect: "disconnect"
        case .forget: "forget"
        case .quit: "quit"
        }
    }
}

/// A line the parser refused: where and why.
public struct ScenarioError: Error, Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case unknownCommand
        /// A positional argument is missing; `what` names it.
        case missingArgument(what: Name)
        /// More positional arguments than the command takes, or an option on
        /// a command without options.
        case unexpectedArgument
        case unknownKey
        case duplicateKey
        /// `key=` with nothing after it.
        case missingValue
        case unknownCategory
        case unknownFlag
        case badNumber
        case numberOutOfRange
        /// A date that is not `yyyyMMdd'T'HHmmSS`.
        case badDate
        /// A `time` value that is not `YYYY-MM-DDTHH:MM:SS[+HH:MM|-HH:MM]`,
        /// a date that does not exist, or an offset CTS cannot carry
        /// (15-minute steps, -12:00...+14:00).
        case badTime
        case unterminatedQuote
        /// A backslash not followed by `"`, `\`, `n` or `t`.
        case badEscape
        /// Something directly after a quoted string or in place of a key.
        case expectedSpace
        case tooManyArguments
        /// A word that is not one of those the command takes.
        case unknownWord
        case lineTooLong
        /// The script does not fit the program buffer (`PhoneConfig.script*`).
        case scriptTooLong

        public var name: StaticString {
            switch self {
            case .unknownCommand: "unknown command"
            case .missingArgument: "missing argument"
            case .unexpectedArgument: "unexpected argument"
            case .unknownKey: "unknown key"
            case .duplicateKey: "duplicate key"
            case .missingValue: "missing value after ="
            case .unknownCategory: "unknown category"
            case .unknownFlag: "unknown flag"
            case .badNumber: "not a number"
            case .numberOutOfRange: "number out of range"
            case .badDate: "date is not yyyyMMddTHHmmSS"
            case .badTime: "time is not YYYY-MM-DDTHH:MM:SS[+HH:MM|-HH:MM]"
            case .unterminatedQuote: "unterminated quote"
            case .badEscape: "bad escape (use \\\" \\\\ \\n \\t)"
            case .expectedSpace: "expected a space"
            case .tooManyArguments: "too many arguments"
            case .unknownWord: "not one of the command's words"
            case .lineTooLong: "line too long"
            case .scriptTooLong: "script too long"
            }
        }
    }

    /// 1-based line of the script (or of the typed commands).
    public var line: Int
    /// 1-based byte column where the problem starts.
    public var column: Int
    public var kind: Kind

    public init(line: Int, column: Int, kind: Kind) {
        self.line = line
        self.column = column
        self.kind = kind
    }
}
