// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

/// Drives a `ControllerSetup` the way the platform loop would: take the
/// next command's bytes, feed the kernel's answer as event bytes.
final class Rig {
    var setup: ControllerSetup
    var bonds = BondStore()
    var out = ByteBuffer(capacity: ControllerSetup.commandBufferCapacity)
    var now = Instant.zero

    init(cadence: AdvertisingCadence? = AdvertisingCadence(), index: UInt16 = 0) throws {
        var config = try SetupConfig(index: ControllerIndex(index), name: LocalName("Wristlink", short: "WL"), solicitedService: ancsService)
        config.cadence = cadence
        setup = ControllerSetup(config: config)
    }

    init(setup: consuming ControllerSetup) {
        self.setup = setup
    }

    /// The next command, as its step and bytes; nil when none is due.
    func next() throws -> (SetupStep, [UInt8])? {
        guard let step = try setup.nextCommand(bonds: bonds, into: &out, now: now) else { return nil }
        return (step, out.toArray())
    }

    @discardableResult
    func feed(_ bytes: [UInt8]) throws -> SetupStatus {
        setup.handle(try MgmtEvent.decode(bytes.span), now: now)
    }

    /// Command Complete, success, for `opcode` with `returnParameters`.
    @discardableResult
    func complete(_ opcode: UInt16, _ returnParameters: String = "", index: UInt16 = 0) throws -> SetupStatus {
        try feed(event(0x0001, index: index, [UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0x00] + hex(returnParameters)))
    }

    /// Sends whatever is due and answers each command with a plain success,
    /// until nothing is due; returns the steps taken.
    func runToIdle(info: [UInt8]) throws -> [SetupStep] {
        var steps: [SetupStep] = []
        while let (step, _) = try next() {
            steps.append(step)
            let opcode = step.opcode.rawValue
            switch step {
            case .readControllerInformation: try feed(event(0x0001, [0x04, 0x00, 0x00] + info))
            case .setIOCapability, .loadLongTermKeys, .loadIdentityResolvingKeys, .setConnectionParameters, .setAdvertisingInterval:
                try complete(opcode)
            case .addAdvertising: try complete(opcode, "01")
            default: try complete(opcode, "00 00 00 00")
            }
        }
        return steps
    }
}

/// Read Controller Information's return parameters with the given settings.
func info(supported: String = "FF BE 01 00", current: String) -> [UInt8] {
    hex("56 34 12 EB 27 B8 09 0F 00" + supported + current + "00 00 00") + ascii("raspberrypi") + zeros(238) + zeros(11)
}

/// Add Advertising, instance 1: flags 0x13 (connectable, discoverable, TX
/// power), 25 bytes of data (the solicitation and "Wrist"), an 11-byte scan
/// response (the complete name).
let addAdvertisingBytes = hex("3E 00 00 00 2F 00  01  13 00 00 00  00 00  00 00  19 0B  11 15" + Wire.ancs + "06 08")
    + ascii("Wrist") + hex("0A 09") + ascii("Wristlink")
/// The same without TX power: flags 0x03, "Wristlin" in 28 bytes of data.
let addAdvertisingWithoutTxPowerBytes = hex("3E 00 00 00 32 00  01  03 00 00 00  00 00  00 00  1C 0B  11 15" + Wire.ancs + "09 08")
    + ascii("Wristlin") + hex("0A 09") + ascii("Wristlink")
/// Set Default System Configuration with the wearable's connection parameters.
let connectionParametersBytes = hex("4C 00 00 00 14 00  17 00 02 24 00  18 00 02 3C 00  19 00 02 00 00  1A 00 02 90 01")

@Suite("Controller start-up sequence")
struct ControllerSetupTests {
    @Test("from a powered dual-mode controller that advertises: every step, byte for byte, then ready")
    func fullSequence() throws {
        let rig = try Rig()
        _ = rig.bonds.apply(ltk(phoneStatic, scKey))
        _ = rig.bonds.apply(irk(phoneStatic))
        #expect(rig.setup.status == .inProgress(.readControllerInformation))

        // Each row: the command we must send, then the kernel's Command Complete parameters.
        let script: [(SetupStep, [UInt8], [UInt8])] = [
            (.readControllerInformation, hex("04 00 00 00 00 00"),
             hex("04 00 00") + info(current: "D1 06 00 00")),                       // powered, bondable, ssp, br/edr, le, advertising
            (.powerOff, hex("05 00 00 00 01 00 00"), hex("05 00 00  D0 06 00 00")),
            (.enableLowEnergy, hex("0D 00 00 00 01 00 01"), hex("0D 00 00  D0 06 00 00")),
            (.disableAdvertisingSetting, hex("29 00 00 00 01 00 00"), hex("29 00 00  D0 02 00 00")),
            (.disableBREDR, hex("2A 00 00 00 01 00 00"), hex("2A 00 00  10 02 00 00")),
            (.enableSecureConnections, hex("2D 00 00 00 01 00 01"), hex("2D 00 00  10 0A 00 00")),
            (.enableBondable, hex("09 00 00 00 01 00 01"), hex("09 00 00  10 0A 00 00")),
            (.setIOCapability, hex("18 00 00 00 01 00 03"), hex("18 00 00")),
            (.setLocalName, hex("0F 00 00 00 04 01") + ascii("Wristlink") + zeros(240) + ascii("WL") + zeros(9),
             hex("0F 00 00") + ascii("Wristlink") + zeros(240) + ascii("WL") + zeros(9)),
            (.loadLongTermKeys, hex("13 00 00 00 26 00  01 00" + phoneStaticWire + "03 00 10  00 00  00 00 00 00 00 00 00 00  00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF"),
             hex("13 00 00")),
            (.loadIdentityResolvingKeys, hex("30 00 00 00 19 00  01 00" + phoneStaticWire + "0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"),
             hex("30 00 00")),
            (.enableConnectable, hex("07 00 00 00 01 00 01"), hex("07 00 00  12 0A 00 00")),
            (.setConnectionParameters, connectionParametersBytes, hex("4C 00 00")),
            (.powerOn, hex("05 00 00 00 01 00 01"), hex("05 00 00  13 0A 00 00")),
            (.setAdvertisingInterval, hex("4C 00 00 00 0A 00  0A 00 02 20 00  0B 00 02 20 00"), hex("4C 00 00")),
            (.addAdvertising, addAdvertisingBytes, hex("3E 00 00  01")),
        ]
        for (step, command, reply) in script {
            let sent = try rig.next()
            #expect(sent?.0 == step)
            #expect(sent?.1 == command, "\(step)")
            #expect(try rig.next() == nil, "one command in flight")
            let status = try rig.feed(event(0x0001, reply))
            if step != .addAdvertising { #expect(status != .ready) }
        }
        #expect(rig.setup.status == .ready)
        #expect(rig.setup.currentSettings == [.powered, .connectable, .bondable, .lowEnergy, .secureConnections])
        #expect(rig.setup.statesConnectionParameters == true)
        #expect(rig.setup.advertisesTxPower == true)
        #expect(rig.setup.controllerInformation?.address == BDAddress(0xB8, 0x27, 0xEB, 0x12, 0x34, 0x56))
        #expect(rig.setup.advertisingSpeed == .fast)
        #expect(rig.setup.nextDeadline == Instant(ms: 30_000))
        #expect(try rig.next() == nil)
    }

    @Test("fast advertising for 30 s, then the slow interval by re-adding the instance; fast again after a disconnection")
    func advertisingCadence() throws {
        let rig = try Rig()
        _ = try rig.runToIdle(info: info(current: "00 02 00 00"))
        #expect(rig.setup.advertisingSpeed == .fast)

        rig.now = Instant(ms: 29_999)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next() == nil)

        rig.now = Instant(ms: 30_000)
        rig.setup.poll(now: rig.now)
        let slow = try rig.next()
        #expect(slow?.0 == .setAdvertisingInterval)
        #expect(slow?.1 == hex("4C 00 00 00 0A 00  0A 00 02 9C 02  0B 00 02 9C 02"))
        #expect(rig.setup.status == .ready)
        try rig.complete(0x004C)
        let readd = try rig.next()
        #expect(readd?.0 == .addAdvertising)
        #expect(readd?.1 == addAdvertisingBytes)
        try rig.complete(0x003E, "01")
        #expect(rig.setup.advertisingSpeed == .slow)
        #expect(rig.setup.nextDeadline == nil)
        #expect(try rig.next() == nil)

        rig.now = Instant(ms: 40_000)
        #expect(try rig.feed(event(0x000C, hex(phoneStaticWire + "03"))) == .ready)
        #expect(try rig.next()?.1 == hex("4C 00 00 00 0A 00  0A 00 02 20 00  0B 00 02 20 00"))
        try rig.complete(0x004C)
        #expect(try rig.next()?.0 == .addAdvertising)
        try rig.complete(0x003E, "01")
        #expect(rig.setup.advertisingSpeed == .fast)
        #expect(rig.setup.nextDeadline == Instant(ms: 70_000))
    }

    @Test("no re-adding while a phone is connected (it would advertise during the connection); the switch waits for the disconnection")
    func noCadenceWhileConnected() throws {
        let rig = try Rig()
        _ = try rig.runToIdle(info: info(current: "00 02 00 00"))
        rig.now = Instant(ms: 5_000)
        try rig.feed(event(0x000B, hex(phoneStaticWire + "00 00 00 00  00 00")))  // Device Connected
        #expect(rig.setup.connections == 1)
        #expect(rig.setup.nextDeadline == nil, "no wakeup for the fast phase's end while connected")
        rig.now = Instant(ms: 60_000)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next() == nil, "the slow interval is not applied during the connection")
        #expect(rig.setup.advertisingSpeed == .fast)

        // The kernel re-enables the instance (added fast) by itself; a new
        // fast phase begins, so nothing is sent now, and slow 30 s later.
        rig.now = Instant(ms: 90_000)
        try rig.feed(event(0x000C, hex(phoneStaticWire + "03")))
        #expect(rig.setup.connections == 0)
        #expect(try rig.next() == nil)
        #expect(rig.setup.nextDeadline == Instant(ms: 120_000))
        rig.now = Instant(ms: 120_000)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.1 == hex("4C 00 00 00 0A 00  0A 00 02 9C 02  0B 00 02 9C 02"))
    }

    @Test("an LE-only controller that is off skips power-off, Set Advertising and BR/EDR")
    func leOnlyControllerSkipsSteps() throws {
        let rig = try Rig()
        let steps = try rig.runToIdle(info: info(supported: "13 0E 00 00", current: "00 00 00 00"))
        #expect(steps == [.readControllerInformation, .enableLowEnergy, .enableSecureConnections, .enableBondable, .setIOCapability,
                          .setLocalName, .loadLongTermKeys, .loadIdentityResolvingKeys, .enableConnectable,
                          .setConnectionParameters, .powerOn, .setAdvertisingInterval, .addAdvertising])
        #expect(rig.setup.status == .ready)
    }

    @Test("without a cadence the interval is never touched and there is no deadline")
    func noCadence() throws {
        let rig = try Rig(cadence: nil)
        let steps = try rig.runToIdle(info: info(current: "00 02 00 00"))
        #expect(!steps.contains(.setAdvertisingInterval))
        #expect(rig.setup.status == .ready)
        #expect(rig.setup.advertisingSpeed == nil)
        #expect(rig.setup.nextDeadline == nil)
    }

    @Test("a kernel without Set Default System Configuration keeps its default interval; setup still completes")
    func intervalUnsupported() throws {
        let rig = try Rig()
        var sent: [SetupStep] = []
        while let (step, _) = try rig.next() {
            sent.append(step)
            switch step {
            case .readControllerInformation: try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 02 00 00")))
            case .setAdvertisingInterval: try rig.feed(hex("02 00 00 00 03 00  4C 00 01"))
            case .addAdvertising: try rig.complete(0x003E, "01")
            case .setIOCapability, .loadLongTermKeys, .loadIdentityResolvingKeys: try rig.complete(step.opcode.rawValue)
            case .setConnectionParameters: try rig.feed(hex("02 00 00 00 03 00  4C 00 01"))
            default: try rig.complete(step.opcode.rawValue, "00 00 00 00")
            }
        }
        #expect(sent.suffix(4) == [.setConnectionParameters, .powerOn, .setAdvertisingInterval, .addAdvertising])
        #expect(rig.setup.statesConnectionParameters == false)
        #expect(rig.setup.status == .ready)
        #expect(rig.setup.controlsAdvertisingInterval == false)
        #expect(rig.setup.advertisingSpeed == nil)
        #expect(rig.setup.nextDeadline == nil)
        try rig.feed(event(0x000C, hex(phoneStaticWire + "03")))
        #expect(try rig.next() == nil)
    }

    @Test("connection parameters go before power-on; nil parameters skip the step")
    func connectionParametersBeforePowerOn() throws {
        let rig = try Rig()
        let steps = try rig.runToIdle(info: info(current: "00 02 00 00"))
        let parameters = try #require(steps.firstIndex(of: .setConnectionParameters))
        #expect(steps[parameters + 1] == .powerOn)
        #expect(rig.setup.statesConnectionParameters == true)

        var config = try SetupConfig(index: ControllerIndex(0), name: LocalName("Wristlink"), solicitedService: ancsService)
        config.connectionParameters = nil
        let without = Rig(setup: ControllerSetup(config: config))
        #expect(try !without.runToIdle(info: info(current: "00 02 00 00")).contains(.setConnectionParameters))
        #expect(without.setup.statesConnectionParameters == false)
    }

    @Test("Add Advertising refused with Invalid Parameters (no TX power from the controller): sent again without TX Power, then ready")
    func txPowerRefused() throws {
        let rig = try Rig()
        var adds: [[UInt8]] = []
        while let (step, bytes) = try rig.next() {
            switch step {
            case .readControllerInformation: try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 02 00 00")))
            case .addAdvertising:
                adds.append(bytes)
                if adds.count == 1 {
                    #expect(try rig.feed(hex("02 00 00 00 03 00  3E 00 0D")) == .inProgress(.addAdvertising))
                } else {
                    try rig.complete(0x003E, "01")
                }
            case .setIOCapability, .loadLongTermKeys, .loadIdentityResolvingKeys, .setConnectionParameters, .setAdvertisingInterval:
                try rig.complete(step.opcode.rawValue)
            default: try rig.complete(step.opcode.rawValue, "00 00 00 00")
            }
        }
        #expect(adds == [addAdvertisingBytes, addAdvertisingWithoutTxPowerBytes])
        #expect(rig.setup.status == .ready)
        #expect(rig.setup.advertisesTxPower == false)

        // The slow interval re-adds the instance without TX power too.
        rig.now = Instant(ms: 30_000)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.0 == .setAdvertisingInterval)
        try rig.complete(0x004C)
        #expect(try rig.next()?.1 == addAdvertisingWithoutTxPowerBytes)
    }

    @Test("Add Advertising refused without TX Power as well: the sequence fails at that step")
    func addAdvertisingRefusedTwice() throws {
        let rig = try Rig()
        var status = SetupStatus.inProgress(.readControllerInformation)
        while let (step, _) = try rig.next() {
            switch step {
            case .readControllerInformation: try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 02 00 00")))
            case .addAdvertising: status = try rig.feed(hex("02 00 00 00 03 00  3E 00 0D"))
            case .setIOCapability, .loadLongTermKeys, .loadIdentityResolvingKeys, .setConnectionParameters, .setAdvertisingInterval:
                try rig.complete(step.opcode.rawValue)
            default: try rig.complete(step.opcode.rawValue, "00 00 00 00")
            }
        }
        #expect(status == .failed(.addAdvertising, .status(.invalidParameters)))
    }

    @Test("a failure status ends the sequence with the step and status; restart begins again")
    func failureReported() throws {
        let rig = try Rig()
        _ = try rig.next()
        try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 00 00 00")))
        #expect(try rig.next()?.0 == .enableLowEnergy)
        try rig.complete(0x000D, "00 02 00 00")
        #expect(try rig.next()?.0 == .enableSecureConnections)
        #expect(try rig.feed(hex("02 00 00 00 03 00  2D 00 00")) == .inProgress(.enableSecureConnections), "status success: wait for complete")
        #expect(try rig.feed(hex("02 00 00 00 03 00  2D 00 0C")) == .failed(.enableSecureConnections, .status(.notSupported)))
        #expect(try rig.next() == nil)
        rig.setup.restart()
        #expect(try rig.next()?.0 == .readControllerInformation)
    }

    @Test("a failure in Command Complete is reported the same way")
    func failureInComplete() throws {
        let rig = try Rig()
        _ = try rig.next()
        try rig.feed(event(0x0001, hex("04 00 00") + info(current: "01 02 00 00")))
        #expect(try rig.next()?.0 == .powerOff)
        #expect(try rig.feed(hex("01 00 00 00 07 00  05 00 0A  01 02 00 00")) == .failed(.powerOff, .status(.busy)))
    }

    @Test("a controller without LE, or a malformed controller information, fails the first step")
    func unusableController() throws {
        let noLE = try Rig()
        _ = try noLE.next()
        #expect(try noLE.feed(event(0x0001, hex("04 00 00") + info(supported: "FF 00 00 00", current: "00 00 00 00")))
            == .failed(.readControllerInformation, .lowEnergyUnsupported))
        let short = try Rig()
        _ = try short.next()
        #expect(try short.feed(hex("01 00 00 00 05 00  04 00 00  01 02")) == .failed(.readControllerInformation, .malformedReply))
    }

    @Test("Index Removed waits for the controller; Index Added for our index starts over, others are ignored")
    func controllerComesAndGoes() throws {
        let rig = try Rig()
        _ = try rig.runToIdle(info: info(current: "00 02 00 00"))
        #expect(rig.setup.status == .ready)
        #expect(try rig.feed(hex("05 00 01 00 00 00")) == .ready, "another controller")
        #expect(try rig.feed(hex("05 00 00 00 00 00")) == .waitingForController)
        #expect(try rig.next() == nil)
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: ControllerSetup.probeFirstMs), "the first probe")
        #expect(try rig.feed(hex("04 00 01 00 00 00")) == .waitingForController)
        #expect(try rig.feed(hex("04 00 00 00 00 00")) == .inProgress(.readControllerInformation))
        let steps = try rig.runToIdle(info: info(current: "00 02 00 00"))
        #expect(steps.first == .readControllerInformation)
        #expect(steps.last == .addAdvertising)
        #expect(rig.setup.status == .ready)
    }

    @Test("Invalid Index means the controller is not there yet: wait for Index Added")
    func invalidIndexWaits() throws {
        let rig = try Rig(index: 3)
        #expect(try rig.next()?.1 == hex("04 00 03 00 00 00"))
        #expect(try rig.feed(hex("02 00 03 00 03 00  04 00 11")) == .waitingForController)
        #expect(try rig.feed(hex("04 00 03 00 00 00")) == .inProgress(.readControllerInformation))
        #expect(try rig.next()?.0 == .readControllerInformation)
    }

    @Test("while waiting, Read Controller Information probes at 2, 4, 8, 16, 30, 30 s; Invalid Index answers keep waiting")
    func probesBackOffWhileAbsent() throws {
        let rig = try Rig()
        #expect(try rig.next()?.0 == .readControllerInformation)
        #expect(try rig.feed(hex("02 00 00 00 03 00  04 00 11")) == .waitingForController)
        var gaps: [Int64] = []
        var last = rig.now
        for _ in 0..<6 {
            #expect(try rig.next() == nil, "nothing before the probe is due")
            guard let due = rig.setup.nextDeadline else {
                Issue.record("no probe deadline while waiting")
                return
            }
            rig.now = due.advanced(byMs: -1)
            rig.setup.poll(now: rig.now)
            #expect(try rig.next() == nil, "not 1 ms early")
            rig.now = due
            rig.setup.poll(now: rig.now)
            let probe = try rig.next()
            #expect(probe?.0 == .readControllerInformation)
            #expect(probe?.1 == hex("04 00 00 00 00 00"))
            #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 10_000), "one probe at a time: the next waits for its answer (or its deadline)")
            gaps.append(rig.now.ms(since: last))
            last = rig.now
            #expect(try rig.feed(hex("02 00 00 00 03 00  04 00 11")) == .waitingForController)
        }
        #expect(gaps == [2_000, 4_000, 8_000, 16_000, 30_000, 30_000])
    }

    @Test("a probe answered with the controller's information carries on with the whole sequence (Index Added missed)")
    func probeFindsController() throws {
        let rig = try Rig()
        _ = try rig.next()
        #expect(try rig.feed(hex("02 00 00 00 03 00  04 00 11")) == .waitingForController)
        rig.now = rig.now.advanced(byMs: ControllerSetup.probeFirstMs)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.0 == .readControllerInformation)
        #expect(try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 02 00 00"))) == .inProgress(.enableLowEnergy),
                "the probe's answer is the sequence's first step")
        let steps = try rig.runToIdle(info: info(current: "00 02 00 00"))
        #expect(steps.first == .enableLowEnergy)
        #expect(steps.last == .addAdvertising)
        #expect(rig.setup.status == .ready)
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: AdvertisingCadence().fastPhaseMs), "only the cadence is due")
    }

    @Test("Index Added resets the probe back-off; a late probe answer after it is not taken for the controller going")
    func indexAddedResetsProbe() throws {
        let rig = try Rig()
        _ = try rig.next()
        try rig.feed(hex("02 00 00 00 03 00  04 00 11"))
        for _ in 0..<3 {
            rig.now = rig.setup.nextDeadline!
            rig.setup.poll(now: rig.now)
            _ = try rig.next()
            try rig.feed(hex("02 00 00 00 03 00  04 00 11"))
        }
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 16_000))
        rig.now = rig.setup.nextDeadline!
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.0 == .readControllerInformation, "a probe in flight")
        #expect(try rig.feed(hex("04 00 00 00 00 00")) == .inProgress(.readControllerInformation))
        #expect(try rig.next()?.0 == .readControllerInformation)
        #expect(try rig.feed(hex("02 00 00 00 03 00  04 00 11")) == .inProgress(.readControllerInformation),
                "the probe's Invalid Index, sent before Index Added, is not the controller going")
        #expect(try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 02 00 00"))) == .inProgress(.enableLowEnergy))
        _ = try rig.runToIdle(info: info(current: "00 02 00 00"))
        #expect(rig.setup.status == .ready)
        #expect(try rig.feed(hex("05 00 00 00 00 00")) == .waitingForController)
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 2_000), "back to the first interval")
    }

    @Test("a failed step starts the sequence over retryDelayMs later; the controller going in between cancels that")
    func failureRetriesUnlessLeft() throws {
        let rig = try Rig()
        _ = try rig.next()
        #expect(try rig.feed(hex("02 00 00 00 03 00  04 00 03")) == .failed(.readControllerInformation, .status(.failed)))
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 5_000))
        rig.now = rig.now.advanced(byMs: 4_999)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next() == nil, "not 1 ms early")
        rig.now = rig.now.advanced(byMs: 1)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.0 == .readControllerInformation, "started over")
        #expect(try rig.feed(hex("02 00 00 00 03 00  04 00 03")) == .failed(.readControllerInformation, .status(.failed)))
        #expect(try rig.feed(hex("05 00 00 00 00 00")) == .waitingForController)
        #expect(try rig.feed(hex("04 00 00 00 00 00")) == .inProgress(.readControllerInformation))
        #expect(try rig.next()?.0 == .readControllerInformation)
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 10_000), "no retry left from the earlier failure: only the reply's deadline")
    }

    @Test("a command whose reply never comes fails its step after replyTimeoutMs; the sequence starts over retryDelayMs later, and the lost command's late reply is not taken for the new one's")
    func lostReplyFailsStep() throws {
        let rig = try Rig()
        _ = try rig.next()
        try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 02 00 00")))
        #expect(try rig.next()?.1 == hex("0D 00 00 00 01 00 01"), "Set Low Energy: its reply is lost")
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 10_000), "the reply's deadline")
        rig.now = rig.now.advanced(byMs: 9_999)
        rig.setup.poll(now: rig.now)
        #expect(rig.setup.status == .inProgress(.enableLowEnergy), "not 1 ms early")
        rig.now = rig.now.advanced(byMs: 1)
        rig.setup.poll(now: rig.now)
        #expect(rig.setup.status == .failed(.enableLowEnergy, .noReply))
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 5_000))
        rig.now = rig.now.advanced(byMs: 5_000)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.1 == hex("04 00 00 00 00 00"), "started over")
        try rig.complete(0x000D, "00 02 00 00")
        #expect(rig.setup.status == .inProgress(.readControllerInformation))
        #expect(try rig.next() == nil)
    }

    @Test("a reply lost after set-up (the cadence's re-add) fails the same way instead of freezing the cadence")
    func lostCadenceReply() throws {
        let rig = try Rig()
        _ = try rig.runToIdle(info: info(current: "00 02 00 00"))
        rig.now = Instant(ms: 30_000)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.0 == .setAdvertisingInterval)
        #expect(rig.setup.nextDeadline == Instant(ms: 40_000))
        rig.now = Instant(ms: 40_000)
        rig.setup.poll(now: rig.now)
        #expect(rig.setup.status == .failed(.setAdvertisingInterval, .noReply))
    }

    @Test("a probe whose answer never comes is followed by the next probe at the back-off's pace")
    func lostProbeAnswer() throws {
        let rig = try Rig()
        _ = try rig.next()
        #expect(try rig.feed(hex("02 00 00 00 03 00  04 00 11")) == .waitingForController)
        rig.now = rig.setup.nextDeadline!
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.1 == hex("04 00 00 00 00 00"), "the first probe: its answer is lost")
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 10_000))
        rig.now = rig.now.advanced(byMs: 10_000)
        rig.setup.poll(now: rig.now)
        #expect(rig.setup.status == .waitingForController)
        #expect(try rig.next() == nil)
        #expect(rig.setup.nextDeadline == rig.now.advanced(byMs: 4_000), "the next probe, backed off")
        let due = rig.setup.nextDeadline
        rig.now = try #require(due)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.1 == hex("04 00 00 00 00 00"))
    }

    @Test("reconnection storm: after 3 fast bursts within 60 s a 4th disconnection goes straight to the slow interval, counted; 60 s after the first burst a disconnection gets one again")
    func reconnectionStorm() throws {
        let rig = try Rig()
        _ = try rig.runToIdle(info: info(current: "00 02 00 00"))
        let fast = hex("4C 00 00 00 0A 00  0A 00 02 20 00  0B 00 02 20 00")
        let slow = hex("4C 00 00 00 0A 00  0A 00 02 9C 02  0B 00 02 9C 02")
        rig.now = Instant(ms: 30_000)
        rig.setup.poll(now: rig.now)
        #expect(try rig.next()?.1 == slow)
        try rig.complete(0x004C)
        _ = try rig.next()
        try rig.complete(0x003E, "01")
        let connected = event(0x000B, hex(phoneStaticWire + "00 00 00 00  00 00"))
        let disconnected = event(0x000C, hex(phoneStaticWire + "08"))
        /// The phone connects and leaves at `ms`; the commands that follow.
        func cycle(at ms: Int64) throws -> [[UInt8]] {
            rig.now = Instant(ms: ms)
            try rig.feed(connected)
            try rig.feed(disconnected)
            var sent: [[UInt8]] = []
            while let (step, bytes) = try rig.next() {
                sent.append(bytes)
                if step == .addAdvertising { try rig.complete(0x003E, "01") } else { try rig.complete(step.opcode.rawValue) }
            }
            return sent
        }
        #expect(try cycle(at: 40_000) == [fast, addAdvertisingBytes], "burst 1 (from slow)")
        #expect(try cycle(at: 45_000) == [], "burst 2: the kernel re-enables the instance, added fast")
        #expect(try cycle(at: 50_000) == [], "burst 3")
        #expect(rig.setup.fastBurstsSkipped == 0)
        #expect(try cycle(at: 55_000) == [slow, addAdvertisingBytes], "a 4th within 60 s: slow at once")
        #expect(rig.setup.fastBurstsSkipped == 1)
        #expect(rig.setup.advertisingSpeed == .slow)
        #expect(rig.setup.nextDeadline == nil)
        #expect(try cycle(at: 99_999) == [], "still within 60 s of burst 1: stays slow")
        #expect(rig.setup.fastBurstsSkipped == 2)
        #expect(try cycle(at: 100_000) == [fast, addAdvertisingBytes], "60 s after burst 1: a burst again")
        #expect(rig.setup.nextDeadline == Instant(ms: 130_000))
    }

    @Test("replies for another controller or another command are ignored")
    func unrelatedRepliesIgnored() throws {
        let rig = try Rig()
        _ = try rig.next()
        try rig.complete(0x0004, "", index: 1)
        try rig.complete(0x001C, phoneStaticWire)
        try rig.feed(hex("02 00 00 00 03 00  1C 00 02"))
        #expect(rig.setup.status == .inProgress(.readControllerInformation))
        #expect(try rig.next() == nil)
        try rig.feed(event(0x0001, hex("04 00 00") + info(current: "00 02 00 00")))
        #expect(try rig.next()?.0 == .enableLowEnergy)
    }
}
