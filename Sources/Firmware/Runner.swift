// SPDX-License-Identifier: Apache-2.0
// The loop: one platform, one core, one effects channel (with the sink).
// Each step waits until the core's next deadline or an input, takes a
// bounded number of link inputs and button inputs, advances timers, and
// settles the outputs after every input so a reply never waits behind the
// next input. Events reach the sink inside the core's call (`Effects`);
// settling sends the queued commands, then writes what is waiting.
//
// Bonds: a change is written to the state file at once; bonds that could
// not be written stay marked unsaved (never reported saved) and are written
// again after 1 s, doubling to 60 s, each failure reported
// (`bondsNotSaved`); shutdown tries once more whatever the back-off says.
// The bonded phones' handle cache is written when it changes; a failed
// write waits for the next change (it is a shortcut: nothing is lost but a
// discovery).

import ATT
import Bounded
import Mgmt
import Platform

public struct Runner<P: Platform & ~Copyable, S: EventSink & ~Copyable>: ~Copyable {
    /// Inputs of one kind taken per wakeup before the others get a turn.
    public static var maxInputsPerStep: Int { 64 }

    public var platform: P
    public var effects: Effects<S>
    public var core: WearableCore
    public private(set) var stopReason: Name? = nil
    private var pdu: ByteBuffer
    private var out: ByteBuffer
    private var mgmt: ByteBuffer
    private var bondFile: ByteBuffer
    private var gattCacheFile: ByteBuffer
    private var readyNotified = false
    /// The status last passed on to the service manager.
    private var statusNotified: ServiceStatus? = nil
    private var statusText: ByteBuffer
    public static var bondSaveRetryFirstMs: Int64 { 1_000 }
    public static var bondSaveRetryMaxMs: Int64 { 60_000 }
    private var bondSaveBackoff = Backoff(firstMs: bondSaveRetryFirstMs, maxMs: bondSaveRetryMaxMs)
    /// After a failed save: not before then.
    private var bondSaveRetryAt: Instant? = nil

    public init(platform: consuming P, sink: consuming S, core: consuming WearableCore) {
        self.platform = platform
        self.effects = Effects(sink: sink, retryDelayMs: core.controller.config.retryDelayMs)
        self.core = core
        statusText = ByteBuffer(capacity: 160)
        pdu = ByteBuffer(capacity: ATTMTU.maximum)
        out = ByteBuffer(capacity: ATTMTU.maximum)
        mgmt = ByteBuffer(capacity: 1024)
        // Room for the largest file the bond store can make, so a save never
        // fails for want of buffer.
        bondFile = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
        gattCacheFile = ByteBuffer(capacity: GATTCache.maxSerializedByteCount)
    }

    /// Starts what runs without inputs (the controller's set-up).
    public mutating func start() {
        let now = platform.now()
        core.start(now: now, into: &effects)
        settle(now: now)
        pollBattery(now: now)
    }

    /// Reads the battery when the core's poll is due.
    private mutating func pollBattery(now: Instant) {
        guard let due = core.batteryPollAt, now >= due else { return }
        core.batteryRead(platform.readBattery(), now: now, into: &effects)
        settle(now: now)
    }

    /// Runs until a stop input (SIGINT, SIGTERM); returns its reason.
    public mutating func run() -> Name {
        start()
        while stopReason == nil { step() }
        return stopReason!
    }

    /// Every output off, reported: the last thing before the process ends.
    public mutating func shutdown() {
        let now = platform.now()
        core.allOff(now: now, into: &effects)
        bondSaveRetryAt = nil
        settle(now: now)
    }

    /// One wait and everything that was ready. `waitingAtMostMs` caps the
    /// wait (tests drive the loop step by step).
    public mutating func step(waitingAtMostMs cap: Int64? = nil) {
        var due = earliest(core.nextDeadline(), core.batteryPollAt)
        if core.bondsNeedSaving { due = earliest(due, bondSaveRetryAt) }
        if let cap { due = earliest(due, platform.now().advanced(byMs: cap)) }
        platform.wait(until: due)
        let now = platform.now()
        var taken = 0
        linkInputs: while taken < Self.maxInputsPerStep {
            taken += 1
            switch platform.nextLinkInput(into: &pdu) {
            case .none: break linkInputs
            case .connected: core.linkUp(now: now, into: &effects)
            case .pdu: core.receive(pdu, now: now, into: &effects)
            case .securityChanged(let encrypted): core.securityChanged(encrypted: encrypted, now: now, into: &effects)
            case .disconnected(let reason): core.linkDown(reason: .platform(reason), now: now, into: &effects)
            }
            settle(now: now)
        }
        taken = 0
        while taken < Self.maxInputsPerStep, platform.nextControllerInput(into: &mgmt) {
            taken += 1
            core.controllerPacket(mgmt, now: now, into: &effects)
            settle(now: now)
        }
        taken = 0
        while taken < Self.maxInputsPerStep, let input = platform.nextInput() {
            taken += 1
            if case .stop(let reason) = input { stopReason = reason }
            core.input(input, now: now, into: &effects)
            settle(now: now)
        }
        pollBattery(now: now)
        core.advance(now: now, into: &effects)
        settle(now: now)
    }

    private mutating func saveBonds(now: Instant) {
        if core.serializeBonds(into: &bondFile), platform.saveBonds(bondFile) {
            core.bondsSaved()
            bondSaveBackoff.reset()
            bondSaveRetryAt = nil
            return
        }
        let retryMs = bondSaveBackoff.fail()
        bondSaveRetryAt = now.advanced(byMs: retryMs)
        effects.record(.bondsNotSaved(retryInMs: retryMs), session: core.phone.session, now: now)
    }

    /// Sends the queued commands, then writes what waits: PDUs, management
    /// commands, bonds, link actions, line changes.
    public mutating func settle(now: Instant) {
        core.flush(now: now, into: &effects)
        // Ready (systemd's READY=1) once the controller advertises, is
        // known to be absent, or failed set-up and is tried again: started
        // either way, so systemd neither times the start out nor restarts a
        // firmware that is doing its job. What it is doing goes in STATUS=
        // (`systemctl status`, `wristlink doctor`).
        if !readyNotified, effects.started {
            readyNotified = true
            platform.notifyReady()
        }
        // An advertising controller says the wearer's status instead, so
        // STATUS= and the double press's pattern agree.
        if var status = effects.status {
            if status == .advertising { status = .wearer(core.wearerStatus) }
            if status != statusNotified {
                statusNotified = status
                status.write(into: &statusText)
                platform.notifyStatus(statusText)
            }
        }
        while core.popOutgoing(into: &out) { platform.send(out) }
        while core.popControllerCommand(into: &mgmt) { platform.sendController(mgmt) }
        if core.bondsNeedSaving, bondSaveRetryAt.map({ now >= $0 }) ?? true { saveBonds(now: now) }
        if core.gattCacheNeedsSaving {
            if core.serializeGATTCache(into: &gattCacheFile) { _ = platform.saveGATTCache(gattCacheFile) }
            core.gattCacheSaveAttempted()
        }
        while let action = core.nextAction() {
            switch action {
            case .raiseSecurity(let attempt):
                platform.raiseSecurity(attempt: attempt)
            case .disconnect(let reason):
                platform.disconnect()
                core.linkDown(reason: reason, now: now, into: &effects)
            }
        }
        // Ending a link may ask the controller to drop the connection too.
        while core.popControllerCommand(into: &mgmt) { platform.sendController(mgmt) }
        while let change = core.nextLineChange() { platform.setOutput(change.line, on: change.on) }
    }
}
