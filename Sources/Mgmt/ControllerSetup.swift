// SPDX-License-Identifier: Apache-2.0
// The start-up sequence that turns a controller into an ANCS peripheral, and
// the advertising cadence after it, as a sans-IO state machine: it writes
// the next command into the caller's buffer, consumes Command Complete /
// Command Status events, and reports progress as a value.
//
// Order, and why (mgmt-api.txt on what each command allows):
//   Read Controller Information  current and supported settings
//   Set Powered off              only if on: Set BR/EDR off is refused while
//                                powered; everything below is allowed off
//   Set Low Energy on            Set BR/EDR and Set Advertising need LE on
//   Set Advertising off          only if on: it overrides Add Advertising
//   Set BR/EDR off               only if on (LE-only controllers lack it);
//                                the kernel then writes "BR/EDR Not
//                                Supported" in the advertising Flags
//   Set Secure Connections on    else pairing falls back to legacy
//   Set Bondable on              else SMP does not ask for bonding: no keys
//   Set IO Capability            NoInputNoOutput: Just Works, which kernel
//                                6.1 still confirms with User Confirmation
//                                Request, answered by the wearer's button
//   Set Local Name
//   Load Long Term Keys          replaces the kernel's list (empty clears it)
//   Load Identity Resolving Keys always, even empty: it switches on address
//                                resolution and SMP's request for the IRK
//   Set Connectable on
//   Set Default System Config.   connection parameters (ConnectionParameters
//                                .swift): before power-on, so that even a
//                                phone connecting the moment advertising
//                                starts gets them. The kernel accepts them
//                                while powered too, but copies them into a
//                                connection only when it is made.
//   Set Powered on
//   Set Default System Config.   advertising interval (fast), see below
//   Add Advertising              connectable + discoverable instance, with
//                                the kernel's TX Power Level; a kernel that
//                                refuses that flag (Invalid Parameters: its
//                                controller reported no advertising TX
//                                power) gets the instance again without it
// A step needing no change (already off, already on) is skipped. Any failure
// status ends the sequence with `failed(step, ...)`, which starts over by
// itself `retryDelayMs` (5 s) later unless the sequence has left it by then
// (Index Removed, Index Added). So does a reply that has not come
// `replyTimeoutMs` (10 s) after its command (`noReply`): the command or its
// reply was lost (the caller's queue full, a write error), and waiting on
// would leave the wearable without advertising for good; the kernel
// answers in milliseconds (the whole sequence took ~60 ms in the VM), and
// its own HCI init timeout is 10 s. Exceptions: Invalid Index
// means the controller is gone (wait for Index Added), and the two Set
// Default System Configuration steps may fail on kernels without it (before
// 5.8): the kernel's default connection parameters and advertising interval
// (1.28 s) then stay.
//
// Index Removed puts the sequencer in `waitingForController`; Index Added for
// our index starts it again from the top (the kernel forgets settings and
// keys with the controller). While waiting it also probes: Read Controller
// Information `probeFirstMs` (2 s) after the controller went, then at
// doubling intervals up to `probeMaxMs` (30 s), reset by Index Added or an
// answer. Index Added is the fast path; the probe is the bound on what a
// missed or early one costs: the kernel answers Invalid Index while a
// controller it has already announced is still in set-up or configuration
// (mgmt.c checks HCI_SETUP and HCI_CONFIG before every command), and a
// firmware that took that answer for "gone" and waited for an Index Added
// already sent would wait for ever (seen once at boot under systemd). A probe
// answered with Invalid Index, or not answered within `replyTimeoutMs`,
// keeps waiting, silently; one answered with the controller's information
// carries on with the sequence.
//
// Advertising cadence. Add Advertising has no interval parameter, but the
// kernel copies its default advertising interval (Set Default System
// Configuration, types 0x000A/0x000B) into each instance it adds, and
// re-adding an instance with the same identifier updates it in place. So:
// fast interval (20 ms) + Add Advertising when advertising starts and after
// every disconnection; when `fastPhaseMs` (30 s) has passed, slow interval +
// Add Advertising again, but only while no phone is connected: re-adding
// the instance starts advertising at once, and kernel 6.1 does so even
// during a connection (seen in the VM suite), while after a connection it
// keeps advertising off by itself until the disconnection, when it
// re-enables the instance with the interval it was last added with. A
// switch due while connected therefore waits; the disconnection starts a
// new fast phase anyway, unless it is a reconnection storm: a phone that
// keeps connecting and dropping (a PebbleOS watch saw ~130 cycles in 70
// minutes) would have the radio at 20 ms most of the time. So at most
// `AdvertisingCadence.maxFastBursts` (3) disconnections within
// `burstWindowMs` (60 s) start a fast phase; a later one goes straight to
// the slow interval (counted in `fastBurstsSkipped`), until the oldest of
// those bursts is 60 s old. The bursts are the phone's doing, so the
// history outlives a restart of the sequence.
//
// Add Extended Advertising Parameters (0x0054) would carry the interval
// itself but is refused while powered off and needs a second command for
// the data; the path above works on every kernel since 5.8 with the one
// command we already send.

import Bounded

public struct ControllerSetup: ~Copyable {
    /// A command buffer of this size holds every command the sequencer sends.
    public static let commandBufferCapacity = BondStore.maxLoadLongTermKeysByteCount

    enum Phase: Equatable {
        case sending(SetupStep)
        case awaiting(SetupStep)
        case idle
        case waitingForController
        case failed(SetupStep, SetupFailure)
    }

    /// The first probe after the controller went, and the longest interval.
    public static let probeFirstMs: Int64 = 2_000
    public static let probeMaxMs: Int64 = 30_000

    enum Probe: Equatable {
        case due(Instant)
        case sending
        case awaiting
    }

    public let config: SetupConfig
    private var phase: Phase = .sending(.readControllerInformation)
    /// While `waitingForController`: the next probe.
    private var probe: Probe? = nil
    private var probeBackoff = Backoff(firstMs: ControllerSetup.probeFirstMs, maxMs: ControllerSetup.probeMaxMs)
    /// While `failed`: when the sequence starts over.
    private var retryAt: Instant? = nil
    /// While a command (a step or a probe) waits for its reply: when it
    /// stops waiting.
    private var replyDue = Instant.zero
    /// Index Added came while a probe was out: the next Read Controller
    /// Information answer is the probe's (the kernel answers in order), and
    /// an Invalid Index in it dates from before the controller was ready.
    private var probeAnswerPending = false
    /// The start-up sequence has finished once since the controller appeared.
    private var isConfigured = false
    public private(set) var controllerInformation: ControllerInformation? = nil
    /// As last reported by the kernel in a reply.
    public private(set) var currentSettings = ControllerSettings()
    /// False once the kernel refused Set Default System Configuration.
    public private(set) var controlsAdvertisingInterval: Bool
    /// The kernel took our connection parameters (false: not sent, or refused).
    public private(set) var statesConnectionParameters = false
    /// False once the kernel refused Add Advertising with TX Power.
    public private(set) var advertisesTxPower = true
    /// The interval the running advertising instance was added with (nil:
    /// not advertising, or the kernel's default).
    public private(set) var advertisingSpeed: AdvertisingSpeed? = nil
    private var speedBeingApplied: AdvertisingSpeed = .fast
    private var fastUntil: Instant? = nil
    /// Devices connected now (Device Connected minus Device Disconnected).
    public private(set) var connections = 0
    /// Disconnections that got no fast burst (a reconnection storm).
    public private(set) var fastBurstsSkipped: UInt64 = 0
    /// When the last `maxFastBursts` fast phases after a disconnection
    /// began, a ring; `oldestBurst` indexes the oldest.
    private var burstStarts = InlineArray<3, Instant?>(repeating: nil)
    private var oldestBurst = 0

    public init(config: SetupConfig) {
        precondition(burstStarts.count == AdvertisingCadence.maxFastBursts, "the burst history holds maxFastBursts")
        self.config = config
        controlsAdvertisingInterval = config.cadence != nil
    }

    public var status: SetupStatus {
        switch phase {
        case .failed(let step, let failure): return .failed(step, failure)
        case .waitingForController: return .waitingForController
        case .sending(let step), .awaiting(let step): return isConfigured ? .ready : .inProgress(step)
        case .idle: return .ready
        }
    }

    /// Starts over from Read Controller Information (after a failure, or to
    /// re-apply everything).
    public mutating func restart() {
        phase = .sending(.readControllerInformation)
        probe = nil
        probeAnswerPending = false
        retryAt = nil
        isConfigured = false
        controllerInformation = nil
        currentSettings = ControllerSettings()
        controlsAdvertisingInterval = config.cadence != nil
        statesConnectionParameters = false
        advertisesTxPower = true
        advertisingSpeed = nil
        speedBeingApplied = .fast
        fastUntil = nil
        connections = 0
    }

    /// Writes the next command into `out` and returns its step, or returns
    /// nil when nothing is to be sent now (waiting for a reply, ready,
    /// failed). `bonds` is read for the two Load commands.
    public mutating func nextCommand(bonds: borrowing BondStore, into out: inout ByteBuffer, now: Instant) throws(MgmtEncodeError) -> SetupStep? {
        let index = config.index
        if phase == .waitingForController, probe == .sending {
            try MgmtCommand.readControllerInformation.encode(index: index, into: &out)
            probe = .awaiting
            replyDue = now.advanced(byMs: config.replyTimeoutMs)
            return .readControllerInformation
        }
        guard case .sending(let step) = phase else { return nil }
        switch step {
        case .readControllerInformation: try MgmtCommand.readControllerInformation.encode(index: index, into: &out)
        case .powerOff: try MgmtCommand.setPowered(false).encode(index: index, into: &out)
        case .enableLowEnergy: try MgmtCommand.setLowEnergy(true).encode(index: index, into: &out)
        case .disableAdvertisingSetting: try MgmtCommand.setAdvertising(.off).encode(index: index, into: &out)
        case .disableBREDR: try MgmtCommand.setBREDR(false).encode(index: index, into: &out)
        case .enableSecureConnections: try MgmtCommand.setSecureConnections(.on).encode(index: index, into: &out)
        case .enableBondable: try MgmtCommand.setBondable(true).encode(index: index, into: &out)
        case .setIOCapability: try MgmtCommand.setIOCapability(config.ioCapability).encode(index: index, into: &out)
        case .setLocalName: try MgmtCommand.setLocalName(config.name).encode(index: index, into: &out)
        case .loadLongTermKeys: try bonds.encodeLoadLongTermKeys(index: index, into: &out)
        case .loadIdentityResolvingKeys: try bonds.encodeLoadIdentityResolvingKeys(index: index, into: &out)
        case .enableConnectable: try MgmtCommand.setConnectable(true).encode(index: index, into: &out)
        case .setConnectionParameters:
            guard let parameters = config.connectionParameters else { preconditionFailure("parameter step without parameters") }
            try MgmtCommand.setDefaultConnectionParameters(parameters).encode(index: index, into: &out)
        case .powerOn: try MgmtCommand.setPowered(true).encode(index: index, into: &out)
        case .setAdvertisingInterval:
            guard let cadence = config.cadence else { preconditionFailure("interval step without a cadence") }
            let interval = speedBeingApplied == .fast ? cadence.fast : cadence.slow
            try MgmtCommand.setDefaultAdvertisingInterval(interval).encode(index: index, into: &out)
        case .addAdvertising:
            let payload = advertisesTxPower ? config.advertising : config.advertisingWithoutTxPower
            try MgmtCommand.addAdvertising(payload.instance(config.advertisingInstance)).encode(index: index, into: &out)
        }
        phase = .awaiting(step)
        replyDue = now.advanced(byMs: config.replyTimeoutMs)
        return step
    }

    /// Feeds one decoded event. Events for other controllers, and replies to
    /// commands the sequencer did not send, are ignored.
    @discardableResult
    public mutating func handle(_ packet: MgmtEventPacket, now: Instant) -> SetupStatus {
        guard packet.index == config.index else { return status }
        switch packet.event {
        case .indexRemoved:
            waitForController(now: now)
        case .indexAdded:
            let probeOut = probe == .awaiting
            restart()
            probeBackoff.reset()
            probeAnswerPending = probeOut
        case .commandStatus(let opcode, let result):
            if probe == .awaiting, opcode == .readControllerInformation, !result.isSuccess {
                probeAnswered(result, nil, now: now)
                break
            }
            if isStaleProbeAnswer(opcode, result) { break }
            guard case .awaiting(let step) = phase, step.opcode == opcode, !result.isSuccess else { break }
            fail(step, result, now: now)
        case .commandComplete(let complete):
            if probe == .awaiting, complete.opcode == .readControllerInformation {
                probeAnswered(complete.status, complete.reply, now: now)
                break
            }
            if isStaleProbeAnswer(complete.opcode, complete.status) { break }
            guard case .awaiting(let step) = phase, step.opcode == complete.opcode else { break }
            if complete.status.isSuccess {
                finish(step, complete.reply, now: now)
            } else {
                fail(step, complete.status, now: now)
            }
        case .deviceConnected:
            connections += 1
        case .deviceDisconnected:
            connections = max(0, connections - 1)
            if isConfigured, let cadence = config.cadence {
                if startsFastBurst(now: now, windowMs: cadence.burstWindowMs) {
                    fastUntil = now.advanced(byMs: cadence.fastPhaseMs)
                } else {
                    fastUntil = nil
                    fastBurstsSkipped &+= 1
                }
                reconcileAdvertising(now: now)
            }
        default:
            break
        }
        return status
    }

    /// When `poll` must next be called (a reply's deadline, the next probe,
    /// the retry after a failure, the end of the fast phase), or nil (also
    /// while a phone is connected: the switch waits for it to leave).
    public var nextDeadline: Instant? {
        if isAwaitingReply { return replyDue }
        if phase == .waitingForController, case .due(let at)? = probe { return at }
        if case .failed = phase { return retryAt }
        guard phase == .idle, advertisingSpeed == .fast, connections == 0 else { return nil }
        return fastUntil
    }

    public mutating func poll(now: Instant) {
        if isAwaitingReply, now >= replyDue { replyTimedOut(now: now) }
        if phase == .waitingForController, case .due(let at)? = probe, now >= at { probe = .sending }
        if case .failed = phase, let at = retryAt, now >= at { restart() }
        reconcileAdvertising(now: now)
    }

    private var isAwaitingReply: Bool {
        if case .awaiting = phase { return true }
        return phase == .waitingForController && probe == .awaiting
    }

    /// A command sent but never answered: it or its reply was lost (the
    /// caller's queue was full, a write failed). A probe counts as answered
    /// "not there"; a step fails as if refused, so the sequence starts over.
    private mutating func replyTimedOut(now: Instant) {
        if case .awaiting(let step) = phase {
            stop(step, .noReply, now: now)
        } else {
            probe = .due(now.advanced(byMs: probeBackoff.fail()))
        }
    }

    /// Waits for Index Added, probing meanwhile (see the top of the file).
    private mutating func waitForController(now: Instant) {
        restart()
        phase = .waitingForController
        probe = .due(now.advanced(byMs: probeBackoff.fail()))
    }

    /// Consumes the answer of a probe overtaken by Index Added: ignored if
    /// it says Invalid Index; any other answer is as good as the new one's.
    private mutating func isStaleProbeAnswer(_ opcode: MgmtOpcode, _ result: MgmtStatus) -> Bool {
        guard probeAnswerPending, opcode == .readControllerInformation else { return false }
        probeAnswerPending = false
        return result == .invalidIndex
    }

    /// The answer to a probe: still not there (wait longer), there (go on
    /// with the sequence as after Index Added), or another failure.
    private mutating func probeAnswered(_ result: MgmtStatus, _ reply: CommandReply?, now: Instant) {
        if result == .invalidIndex { return waitForController(now: now) }
        restart()
        probeBackoff.reset()
        guard result.isSuccess, let reply else {
            stop(.readControllerInformation, .status(result), now: now)
            return
        }
        phase = .awaiting(.readControllerInformation)
        finish(.readControllerInformation, reply, now: now)
    }

    private mutating func finish(_ step: SetupStep, _ reply: CommandReply, now: Instant) {
        switch reply {
        case .settings(let settings):
            currentSettings = settings
        case .controllerInformation(let info):
            controllerInformation = info
            currentSettings = info.currentSettings
            guard info.supportedSettings.contains(.lowEnergy) else {
                stop(step, .lowEnergyUnsupported, now: now)
                return
            }
        default:
            if step == .readControllerInformation {
                stop(step, .malformedReply, now: now)
                return
            }
        }
        if step == .setConnectionParameters { statesConnectionParameters = true }
        if step == .addAdvertising {
            let initial = !isConfigured
            isConfigured = true
            advertisingSpeed = controlsAdvertisingInterval ? speedBeingApplied : nil
            if initial, let cadence = config.cadence { fastUntil = now.advanced(byMs: cadence.fastPhaseMs) }
            phase = .idle
            reconcileAdvertising(now: now)
            return
        }
        advance(after: step)
    }

    private mutating func fail(_ step: SetupStep, _ result: MgmtStatus, now: Instant) {
        if result == .invalidIndex {
            waitForController(now: now)
        } else if step == .setConnectionParameters {
            statesConnectionParameters = false
            advance(after: step)
        } else if step == .addAdvertising && result == .invalidParameters && advertisesTxPower {
            advertisesTxPower = false
            phase = .sending(.addAdvertising)
        } else if step == .setAdvertisingInterval {
            controlsAdvertisingInterval = false
            advertisingSpeed = nil
            if isConfigured { phase = .idle } else { advance(after: step) }
        } else {
            stop(step, .status(result), now: now)
        }
    }

    /// Ends the sequence with a failure; it starts over `retryDelayMs` later.
    private mutating func stop(_ step: SetupStep, _ failure: SetupFailure, now: Instant) {
        phase = .failed(step, failure)
        retryAt = now.advanced(byMs: config.retryDelayMs)
    }

    private mutating func advance(after step: SetupStep) {
        var next = SetupStep(rawValue: step.rawValue + 1)
        while let candidate = next, isSkipped(candidate) {
            next = SetupStep(rawValue: candidate.rawValue + 1)
        }
        guard let next else { preconditionFailure("Add Advertising is the last step and is never skipped") }
        phase = .sending(next)
    }

    private func isSkipped(_ step: SetupStep) -> Bool {
        switch step {
        case .powerOff: !currentSettings.contains(.powered)
        case .disableAdvertisingSetting: !currentSettings.contains(.advertising)
        case .disableBREDR: !currentSettings.contains(.bredr)
        case .setConnectionParameters: config.connectionParameters == nil
        case .setAdvertisingInterval: !controlsAdvertisingInterval
        default: false
        }
    }

    /// Whether a disconnection now gets a fast phase: fewer than
    /// `maxFastBursts` began within `windowMs`. Records it if so.
    private mutating func startsFastBurst(now: Instant, windowMs: Int64) -> Bool {
        if let oldest = burstStarts[oldestBurst], now.ms(since: oldest) < windowMs { return false }
        burstStarts[oldestBurst] = now
        oldestBurst = (oldestBurst + 1) % burstStarts.count
        return true
    }

    /// Starts re-adding the instance when the wanted interval differs from
    /// the one it runs with.
    private mutating func reconcileAdvertising(now: Instant) {
        guard phase == .idle, connections == 0, controlsAdvertisingInterval, let current = advertisingSpeed else { return }
        let wanted: AdvertisingSpeed = (fastUntil.map { now < $0 } ?? false) ? .fast : .slow
        guard wanted != current else { return }
        speedBeingApplied = wanted
        phase = .sending(.setAdvertisingInterval)
    }
}
