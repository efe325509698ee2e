// SPDX-License-Identifier: Apache-2.0
// The Bluetooth controller as the wearable owns it (no bluetoothd): set-up
// and advertising through the management interface, pairing mode, the
// wearer's consent to a pairing, bonds, and which phones may stay connected.
// Sans-IO: fed management events and time, answering with management
// commands, events for the policy and the log, and "save the bonds".
//
// Pairing mode: on while no bond exists; otherwise entered by a long press of
// both buttons (`enterPairingMode`) and left after `pairingWindowMs` (two
// minutes) or once a bond is stored. Outside it, a phone without a bond is
// disconnected as soon as it connects, and a pairing request is refused.
// A phone without a bond whose pairing failed (refused by the wearer, or
// given up) is disconnected too, so it cannot hold the link.
//
// Consent: the kernel asks with User Confirmation Request before it pairs
// (6.1 and 6.12 even for Just Works, as the VM suite shows). In pairing
// mode the request waits up to `consentWindowMs` (SMP itself gives up
// after 30 s) for the wearer's press:
// accept = User Confirmation Reply, reject or silence = Negative Reply. A
// test rig without buttons can set `autoAcceptPairing`.
//
// Bonds: New Long Term Key / New Identity Resolving Key with Store_Hint go
// into the `BondStore` (8 peers) and mark it for saving; the platform writes
// the state file atomically. Bonded phones re-encrypt with the stored key:
// no request, no press. Keys are kept only from a pairing the wearer
// allowed on this link (an accepted User Confirmation Request, or
// `autoAcceptPairing` in pairing mode, for a kernel that does not ask): the
// consent covers the address it was given for and the identity its IRK
// names, until the link ends. A key the store already holds is unchanged,
// whoever sends it. Any other key is refused (`bondIgnored(noConsent)`,
// counted) and taken from the kernel, which holds it already: Unpair Device
// for a stranger (which also drops its link); for a bonded address, whose
// real keys Unpair Device would delete too, the store's keys are loaded
// back and the link ended, reported as a refused stale bond. An allowed
// pairing whose keys name a bonded peer (an IRK giving a bonded identity
// from an address that did not resolve) replaces that bond whole, reported
// as `staleBond(replacing: true)`.
//
// Stale bonds: after "Forget This Device" the iPhone no longer
// has our keys, but we still hold its bond, so encrypting with it fails and
// the phone asks to pair afresh. A pairing request (or an authentication
// failure) from a phone we hold a bond for is reported as `staleBond`. In
// pairing mode the request goes to the wearer as usual, and once granted
// the old bond is dropped, so the new pairing's keys replace it whole (no
// old IRK or LTK of the other role left behind). Outside pairing mode it is
// refused, the event tells the wearer the fix (hold both buttons to pair
// again), and once the kernel reports the failed pairing the phone is
// disconnected, so it does not hold the link unencrypted for a minute.
//
// The set-up sequence (`ControllerSetup`) restarts when the controller comes
// back (Index Added), and `retryDelayMs` after a failed step (a failure
// status, or no reply within its deadline) unless it has left the failure
// by then: the retry is the sequence's own, so the
// controller going and coming back cancels it (a retry kept here once
// powered a set-up-again controller off 5 s later and dropped the phone).

import ANCS
import Bounded
import Mgmt

public struct Controller: ~Copyable {
    public let config: ControllerConfig
    private var setup: ControllerSetup
    public private(set) var bonds: BondStore
    private var commands: PacketQueue
    private var events: RingBuffer<ControllerEvent>
    private var scratch: ByteBuffer
    private var manualPairingUntil: Instant? = nil
    private var consentFor: DeviceAddress? = nil
    /// The pairing waiting for consent comes from a phone we hold a bond for.
    private var consentReplacesBond = false
    /// `staleBond` was reported for this connection (a refused pairing is
    /// followed by an authentication failure: one report is enough).
    private var staleBondReported = false
    /// A bonded phone's new pairing was refused outside pairing mode: once
    /// the kernel reports the failure, the phone is disconnected.
    private var staleBondRefusedFor: DeviceAddress? = nil
    private var consentUntil = Instant.zero
    /// The pairing the wearer allowed on this link, if any.
    private var allowed: AllowedPairing? = nil
    /// Where refused keys were last taken from the kernel (once per link).
    private var forgottenFor: DeviceAddress? = nil
    private var disconnectedAt: Instant? = nil
    /// The phone connected now, as the kernel names it (nil: none).
    private var connectedAddress: DeviceAddress? = nil
    private var wasReady = false
    public private(set) var bondsNeedSaving = false
    /// Keys refused because no pairing the wearer allowed brought them.
    public private(set) var keysRefused: UInt64 = 0

    public init(config: ControllerConfig, bonds: consuming BondStore) {
        self.config = config
        var setupConfig = Self.setupConfig(index: ControllerIndex(config.index), name: config.name)
        setupConfig.retryDelayMs = config.retryDelayMs
        setup = ControllerSetup(config: setupConfig)
        self.bonds = bonds
        commands = PacketQueue(capacity: 8, slotBytes: ControllerSetup.commandBufferCapacity)
        events = RingBuffer(capacity: 16, policy: .refuseNewest)
        scratch = ByteBuffer(capacity: ControllerSetup.commandBufferCapacity)
    }

    /// The set-up for `name`, or for "Wristlink" if `name` cannot be a
    /// Bluetooth name (the configuration reader checks it first).
    static func setupConfig(index: ControllerIndex, name: String) -> SetupConfig {
        if let config = setupConfig(index: index, validName: name) { return config }
        guard let fallback = setupConfig(index: index, validName: "Wristlink") else {
            preconditionFailure("the fallback name is a valid Bluetooth name")
        }
        return fallback
    }

    private static func setupConfig(index: ControllerIndex, validName name: String) -> SetupConfig? {
        let local: LocalName
        do throws(LocalNameError) { local = try LocalName(name) } catch { return nil }
        do throws(AdvertisingDataError) {
            return try SetupConfig(index: index, name: local, solicitedService: ANCSUUID.service)
        } catch {
            return nil
        }
    }

    // MARK: State

    public var isPairingMode: Bool { config.enabled && (bonds.isEmpty || manualPairingUntil != nil) }
    public var isAwaitingConsent: Bool { consentFor != nil }
    public var isAdvertising: Bool { setup.status == .ready }

    // MARK: Inputs

    /// Starts the set-up sequence.
    public mutating func start(now: Instant) {
        guard config.enabled else { return }
        if bonds.isEmpty { emit(.pairingMode(on: true, reason: .noBond)) }
        pump(now: now)
    }

    /// One management event from the kernel.
    public mutating func receive(_ packet: Span<UInt8>, now: Instant) {
        guard config.enabled else { return }
        let decoded: MgmtEventPacket
        do { decoded = try MgmtEvent.decode(packet) } catch {
            emit(.dropped(.mgmtEventMalformed))
            return
        }
        let before = setup.status
        let skipped = setup.fastBurstsSkipped
        setupMoved(from: before, to: setup.handle(decoded, now: now))
        if setup.fastBurstsSkipped != skipped { emit(.fastAdvertisingSkipped) }
        guard decoded.index == ControllerIndex(config.index) else { return pump(now: now) }
        switch decoded.event {
        case .deviceConnected(let connected):
            deviceConnected(connected.address, now: now)
        case .deviceDisconnected(let address, let reason):
            if consentFor == address { clearConsent() }
            if connectedAddress == address { connectedAddress = nil }
            // Consent is for one link: the next pairing asks again.
            if allowed?.covers(address) == true { allowed = nil }
            if forgottenFor == address { forgottenFor = nil }
            staleBondReported = false
            staleBondRefusedFor = nil
            disconnectedAt = now
            emit(.disconnected(reason: reason.rawValue))
        case .userConfirmationRequest(let request):
            confirmationRequested(request.address, now: now)
        case .newLongTermKey(let key):
            longTermKeyArrived(key, now: now)
        case .newIdentityResolvingKey(let key):
            identityKeyArrived(key, now: now)
        case .authenticationFailed(let address, let status):
            if consentFor == address { clearConsent() }
            if allowed?.covers(address) == true { allowed = nil }
            emit(.pairingFailed(status: status))
            // Encryption with our stored key failed: the phone has lost it.
            if !isPairingMode, bonds.firstIndex(of: address) != nil { reportStaleBond(replacing: false) }
            // A phone whose new pairing we refused because it forgot us
            // would otherwise hold the link, unencrypted and useless, until
            // the ATT security wait gives up (60 s); the wearer's pairing
            // mode needs it free.
            if staleBondRefusedFor == address {
                staleBondRefusedFor = nil
                send(.disconnect(address))
                return pump(now: now)
            }
            // A phone without a bond that failed to pair (refused, or gave
            // up) stays connected otherwise, unencrypted and useless, and
            // holds the one ATT link the wearer's own phone needs.
            if bonds.firstIndex(of: address) == nil { send(.disconnect(address)) }
        default:
            break
        }
        pump(now: now)
    }

    /// Reports what a step of the set-up sequence changed.
    private mutating func setupMoved(from before: SetupStatus, to after: SetupStatus) {
        guard before != after else { return }
        if case .failed(let step, let failure) = after {
            // Advertising again after it is news again.
            wasReady = false
            emit(.setupFailed(step: step, failure: failure))
        }
        if after == .waitingForController {
            wasReady = false
            clearConsent()
            allowed = nil
            forgottenFor = nil
            emit(.controllerGone)
        }
        if after == .ready && !wasReady {
            wasReady = true
            emit(.advertising)
        }
    }

    private mutating func deviceConnected(_ address: DeviceAddress, now: Instant) {
        let bonded = bonds.firstIndex(of: address) != nil
        if !bonded && !isPairingMode {
            emit(.refusedUnbonded)
            send(.disconnect(address))
            return
        }
        connectedAddress = address
        emit(.connected(bonded: bonded, address: address))
        if bonded, let gone = disconnectedAt {
            emit(.reconnected(afterMs: now.ms(since: gone)))
        }
        disconnectedAt = nil
    }

    private mutating func confirmationRequested(_ address: DeviceAddress, now: Instant) {
        let bonded = bonds.firstIndex(of: address) != nil
        guard isPairingMode else {
            if bonded {
                reportStaleBond(replacing: false)
                staleBondRefusedFor = address
            }
            emit(.consent(granted: false, reason: .notPairing))
            send(.userConfirmationNegativeReply(address))
            return
        }
        if bonded { reportStaleBond(replacing: true) }
        if config.autoAcceptPairing {
            emit(.consent(granted: true, reason: .automatic))
            allowed = AllowedPairing(address: address)
            if bonded { dropBond(address) }
            send(.userConfirmationReply(address))
            return
        }
        consentReplacesBond = bonded
        consentFor = address
        consentUntil = now.advanced(byMs: config.consentWindowMs)
        emit(.consentRequested)
    }

    /// The wearer's answer to a pairing request (a button press).
    public mutating func consent(granted: Bool, now: Instant) {
        guard let address = consentFor else { return }
        let replacing = consentReplacesBond
        clearConsent()
        emit(.consent(granted: granted, reason: granted ? .button : .rejected))
        if granted { allowed = AllowedPairing(address: address) }
        if granted && replacing { dropBond(address) }
        send(granted ? .userConfirmationReply(address) : .userConfirmationNegativeReply(address))
    }

    private mutating func clearConsent() {
        consentFor = nil
        consentReplacesBond = false
    }

    private mutating func reportStaleBond(replacing: Bool) {
        guard !staleBondReported else { return }
        staleBondReported = true
        emit(.staleBond(replacing: replacing))
    }

    /// Forgets our half of a bond the phone has lost, before the new
    /// pairing's keys arrive (saved with them, or now if pairing fails).
    private mutating func dropBond(_ address: DeviceAddress) {
        if bonds.remove(address) { bondsNeedSaving = true }
    }

    // MARK: Keys

    private mutating func longTermKeyArrived(_ event: NewLongTermKey, now: Instant) {
        let novelty = bonds.novelty(of: event)
        guard allowPairing(from: event.address) else {
            if novelty != .same { refuseKeys(from: event.address) }
            return
        }
        keep(novelty, of: event.address, now: now) { $0.apply(event) }
    }

    private mutating func identityKeyArrived(_ event: NewIdentityResolvingKey, now: Instant) {
        let novelty = bonds.novelty(of: event)
        // Until this event the kernel named the phone by the resolvable
        // private address it paired from (none: it paired as its identity).
        let from = event.randomAddress == .any ? event.identity : DeviceAddress(event.randomAddress, .leRandom)
        guard allowPairing(from: from, or: event.identity) else {
            if novelty != .same { refuseKeys(from: event.identity) }
            return
        }
        keep(novelty, of: event.identity, now: now) { $0.apply(event) }
        // The long-term keys follow under the identity.
        allowed?.identity = event.identity
        allowed?.identityKey = event
    }

    /// Whether the wearer allowed the pairing a key comes from: they
    /// accepted its confirmation request on this link, or
    /// `autoAcceptPairing` is on in pairing mode (a kernel that does not
    /// ask for Just Works still pairs a test rig).
    private mutating func allowPairing(from address: DeviceAddress, or identity: DeviceAddress? = nil) -> Bool {
        if let pairing = allowed, pairing.covers(address) || identity.map({ pairing.covers($0) }) == true { return true }
        guard config.autoAcceptPairing && isPairingMode else { return false }
        allowed = AllowedPairing(address: address)
        return true
    }

    /// Stores a key of an allowed pairing. Its first key that would change
    /// a bond starts that bond afresh: a new pairing's keys replace the old
    /// ones whole (no old key of the other role left behind), and the
    /// wearer, who allowed a pairing without being told it named a bonded
    /// phone, is told now.
    private mutating func keep(_ novelty: KeyNovelty, of identity: DeviceAddress, now: Instant,
                               _ apply: (inout BondStore) -> BondUpdate) {
        let wasPairing = isPairingMode
        if novelty == .changesBond, allowed?.storedKey == false {
            reportStaleBond(replacing: true)
            dropBond(identity)
            // This pairing's IRK, kept because it was the bond's already.
            if let irk = allowed?.identityKey, irk.identity == identity { _ = bonds.apply(irk) }
        }
        let update = apply(&bonds)
        switch update {
        case .stored, .storedEvicting: allowed?.storedKey = true
        default: break
        }
        bondUpdated(update, wasPairing: wasPairing, now: now)
    }

    /// Keys from a pairing nobody allowed: not stored, counted, and taken
    /// from the kernel too, which holds them already and would encrypt
    /// with them (once per link). A stranger's go with Unpair Device, which
    /// also ends its link. For a bonded address Unpair Device would delete
    /// the bond's own keys as well (the kernel has already overwritten its
    /// key with the new one): the store's keys are loaded back instead
    /// (both Load commands replace the kernel's lists) and the link, which
    /// the refused key encrypts, is ended.
    private mutating func refuseKeys(from address: DeviceAddress) {
        keysRefused &+= 1
        emit(.bondIgnored(reason: .noConsent))
        let bonded = bonds.firstIndex(of: address) != nil
        if bonded { reportStaleBond(replacing: false) }
        guard forgottenFor != address else { return }
        forgottenFor = address
        if bonded {
            sendStoredKeys()
            send(.disconnect(address))
        } else {
            send(.unpairDevice(address, disconnect: true))
        }
    }

    private mutating func sendStoredKeys() {
        let index = ControllerIndex(config.index)
        do {
            try bonds.encodeLoadLongTermKeys(index: index, into: &scratch)
            if !commands.push(copyOf: scratch) { emit(.dropped(.mgmtQueueFull)) }
            try bonds.encodeLoadIdentityResolvingKeys(index: index, into: &scratch)
            if !commands.push(copyOf: scratch) { emit(.dropped(.mgmtQueueFull)) }
        } catch {
            emit(.dropped(.mgmtEncode))
        }
    }

    /// `wasPairing`: pairing mode was on before the key was applied. It ends
    /// with a stored bond, whether it was opened by the buttons or was on
    /// because no bond existed (the first bond ends that too).
    private mutating func bondUpdated(_ update: BondUpdate, wasPairing: Bool, now: Instant) {
        switch update {
        case .ignored(let reason):
            emit(.bondIgnored(reason: reason))
            return
        case .unchanged:
            return
        case .storedEvicting(let evicted):
            // The store was full: the kernel forgets that peer too.
            send(.unpairDevice(evicted, disconnect: false))
        default:
            break
        }
        bondsNeedSaving = true
        emit(.bondStored)
        manualPairingUntil = nil
        if wasPairing && !isPairingMode { emit(.pairingMode(on: false, reason: .bonded)) }
    }

    /// The link was ended by the wearable for a reason the phone must see
    /// (not encrypted in time, no usable ANCS): closing the ATT socket
    /// alone leaves the LE connection to the kernel, which a device that
    /// never encrypts would go on holding; the kernel is told to
    /// disconnect it.
    public mutating func dropConnection() {
        guard config.enabled, let address = connectedAddress else { return }
        send(.disconnect(address))
    }

    /// A long press of both buttons.
    public mutating func enterPairingMode(now: Instant) {
        guard config.enabled else { return }
        manualPairingUntil = now.advanced(byMs: config.pairingWindowMs)
        emit(.pairingMode(on: true, reason: .buttons))
    }

    // MARK: Time

    public var deadline: Instant? {
        var next = setup.nextDeadline
        next = earliest(next, manualPairingUntil)
        if consentFor != nil { next = earliest(next, consentUntil) }
        return next
    }

    public mutating func advance(now: Instant) {
        guard config.enabled else { return }
        if consentFor != nil && now >= consentUntil {
            let address = consentFor!
            clearConsent()
            emit(.consent(granted: false, reason: .timeout))
            send(.userConfirmationNegativeReply(address))
        }
        if let until = manualPairingUntil, now >= until {
            manualPairingUntil = nil
            if !bonds.isEmpty { emit(.pairingMode(on: false, reason: .timeout)) }
        }
        let before = setup.status
        setup.poll(now: now)
        setupMoved(from: before, to: setup.status)
        pump(now: now)
    }

    // MARK: Outputs

    private mutating func pump(now: Instant) {
        do {
            while try setup.nextCommand(bonds: bonds, into: &scratch, now: now) != nil {
                if !commands.push(copyOf: scratch) { emit(.dropped(.mgmtQueueFull)) }
            }
        } catch {
            emit(.dropped(.mgmtEncode))
        }
    }

    private mutating func send(_ command: MgmtCommand) {
        do {
            try command.encode(index: ControllerIndex(config.index), into: &scratch)
            if !commands.push(copyOf: scratch) { emit(.dropped(.mgmtQueueFull)) }
        } catch {
            emit(.dropped(.mgmtEncode))
        }
    }

    /// Events refused because the ring was full (counted; the wearable
    /// reports it and derives the pairing pattern from `isPairingMode`).
    public private(set) var eventsDropped: UInt64 = 0

    private mutating func emit(_ event: ControllerEvent) {
        if case .refused = events.push(event) { eventsDropped &+= 1 }
    }

    public mutating func popCommand(into out: inout ByteBuffer) -> Bool { commands.pop(into: &out) != nil }
    public mutating func nextEvent() -> ControllerEvent? { events.popFirst() }

    /// Writes the state file's contents for the platform to save.
    public func serializeBonds(into out: inout ByteBuffer) -> Bool { bonds.serialize(into: &out) }
    public mutating func bondsSaved() { bondsNeedSaving = false }
}
