// SPDX-License-Identifier: Apache-2.0
// The values ControllerSetup (ControllerSetup.swift) is configured with and
// reports: the advertising cadence, the set-up options, the steps of the
// start-up sequence, how a step fails, and the sequence's status.

import Bounded

/// Advertising intervals (Apple's accessory guidelines: 20 ms for the first
/// 30 s, then one of their longer intervals), and the bound on fast phases
/// in a reconnection storm.
public struct AdvertisingCadence: Equatable, Sendable {
    /// Disconnections within `burstWindowMs` that start a fast phase (the
    /// size of the sequencer's history, so a constant).
    public static let maxFastBursts = 3

    public var fast: AdvertisingInterval
    public var fastPhaseMs: Int64
    public var slow: AdvertisingInterval
    public var burstWindowMs: Int64

    public init(fast: AdvertisingInterval = AdvertisingInterval(us: 20_000), fastPhaseMs: Int64 = 30_000,
                slow: AdvertisingInterval = AdvertisingInterval(us: 417_500), burstWindowMs: Int64 = 60_000) {
        self.fast = fast
        self.fastPhaseMs = fastPhaseMs
        self.slow = slow
        self.burstWindowMs = burstWindowMs
    }
}

public enum AdvertisingSpeed: Equatable, Sendable {
    case fast
    case slow
}

public struct SetupConfig: Equatable, Sendable {
    public var index: ControllerIndex
    public var name: LocalName
    public var ioCapability: IOCapability = .noInputNoOutput
    public var advertisingInstance: UInt8 = 1
    /// With the kernel's TX Power Level (see `AdvertisingPayload`).
    public var advertising: AdvertisingPayload
    /// The same without TX Power, for a kernel that refuses that flag.
    public var advertisingWithoutTxPower: AdvertisingPayload
    /// nil: leave the kernel's default advertising interval alone.
    public var cadence: AdvertisingCadence? = AdvertisingCadence()
    /// nil: leave the kernel's default connection parameters alone.
    public var connectionParameters: ConnectionParameters? = .wearable
    /// After a failed step, the sequence starts over this much later.
    public var retryDelayMs: Int64 = 5_000
    /// How long a command waits for its reply before its step fails.
    public var replyTimeoutMs: Int64 = 10_000

    /// Advertises `service` in the solicitation list, the name in the scan
    /// response (see `AdvertisingPayload.solicitingService`).
    public init(index: ControllerIndex, name: LocalName, solicitedService: UUID128) throws(AdvertisingDataError) {
        self.index = index
        self.name = name
        advertising = try AdvertisingPayload.solicitingService(solicitedService, name: name.name.span)
        advertisingWithoutTxPower = try AdvertisingPayload.solicitingService(solicitedService, name: name.name.span,
                                                                             txPower: false)
    }
}

public enum SetupStep: UInt8, CaseIterable, Sendable {
    case readControllerInformation
    case powerOff
    case enableLowEnergy
    case disableAdvertisingSetting
    case disableBREDR
    case enableSecureConnections
    case enableBondable
    case setIOCapability
    case setLocalName
    case loadLongTermKeys
    case loadIdentityResolvingKeys
    case enableConnectable
    case setConnectionParameters
    case powerOn
    case setAdvertisingInterval
    case addAdvertising

    public var opcode: MgmtOpcode {
        switch self {
        case .readControllerInformation: .readControllerInformation
        case .powerOff, .powerOn: .setPowered
        case .enableLowEnergy: .setLowEnergy
        case .disableAdvertisingSetting: .setAdvertising
        case .disableBREDR: .setBREDR
        case .enableSecureConnections: .setSecureConnections
        case .enableBondable: .setBondable
        case .setIOCapability: .setIOCapability
        case .setLocalName: .setLocalName
        case .loadLongTermKeys: .loadLongTermKeys
        case .loadIdentityResolvingKeys: .loadIdentityResolvingKeys
        case .enableConnectable: .setConnectable
        case .setConnectionParameters, .setAdvertisingInterval: .setDefaultSystemConfiguration
        case .addAdvertising: .addAdvertising
        }
    }

    public var name: StaticString {
        switch self {
        case .readControllerInformation: "read-controller-information"
        case .powerOff: "power-off"
        case .enableLowEnergy: "enable-le"
        case .disableAdvertisingSetting: "disable-advertising-setting"
        case .disableBREDR: "disable-br/edr"
        case .enableSecureConnections: "enable-secure-connections"
        case .enableBondable: "enable-bondable"
        case .setIOCapability: "set-io-capability"
        case .setLocalName: "set-local-name"
        case .loadLongTermKeys: "load-long-term-keys"
        case .loadIdentityResolvingKeys: "load-identity-resolving-keys"
        case .enableConnectable: "enable-connectable"
        case .setConnectionParameters: "set-connection-parameters"
        case .powerOn: "power-on"
        case .setAdvertisingInterval: "set-advertising-interval"
        case .addAdvertising: "add-advertising"
        }
    }
}

public enum SetupFailure: Equatable, Sendable {
    /// The kernel answered with this status.
    case status(MgmtStatus)
    /// The return parameters did not have the documented size.
    case malformedReply
    /// Supported_Settings lacks Low Energy.
    case lowEnergyUnsupported
    /// No reply within `SetupConfig.replyTimeoutMs`.
    case noReply

    /// As the events, the log and systemd's STATUS= name it.
    public var name: StaticString {
        switch self {
        case .status(let status): status.name
        case .malformedReply: "malformed-reply"
        case .lowEnergyUnsupported: "no-low-energy"
        case .noReply: "no-reply"
        }
    }
}

public enum SetupStatus: Equatable, Sendable {
    case inProgress(SetupStep)
    /// Configured and advertising. Stays so while the cadence changes the
    /// advertising interval.
    case ready
    /// The controller index is gone; Index Added restarts the sequence.
    case waitingForController
    case failed(SetupStep, SetupFailure)
}
