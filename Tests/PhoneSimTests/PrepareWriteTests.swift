// SPDX-License-Identifier: Apache-2.0
import ANCS
import ATT
import Bounded
import PhoneSim
import Testing
import TestSupport

@Suite("Long writes to the Control Point: Prepare Write queue and Execute Write (Core Vol 3 Part F 3.4.6)")
struct PrepareWriteTests {
    /// A phone with Data Source and Notification Source subscribed at MTU 23.
    func phone(_ configure: (inout PhoneConfig) -> Void = { _ in }) -> PhoneCore {
        var config = PhoneConfig.serverOnly()
        configure(&config)
        var p = PhoneCore(config: config)
        p.linkUp(now: Instant(ms: 0))
        _ = p.subscribeANCS()
        _ = p.takeEvents()
        return p
    }

    /// The Data Source answer to Get App Attributes for com.apple.mobilephone.
    let phoneNameResponse: [UInt8] = [1] + Array("com.apple.mobilephone".utf8) + [0, 0] + le16(5) + Array("Phone".utf8)

    @Test("each part is echoed; Execute Write 01 answers the joined command as a Write Request would: 19, then Data Source")
    func executedLongWriteIsOneCommand() {
        var p = phone()
        #expect(p.exchange(mobilephonePart1) == [echo(mobilephonePart1)])
        #expect(p.exchange(mobilephonePart2) == [echo(mobilephonePart2)])
        #expect(p.exchange("18 01") == ["19"] + dataSourceFragments(phoneNameResponse))
        #expect(p.takeEvents() == [
            .writePrepared(offset: 0, byteCount: 18),
            .writePrepared(offset: 18, byteCount: 6),
            .writeExecuted(write: true, byteCount: 24),
            .controlPointWrite(ControlPointBytes(hex(mobilephoneCommand).span)),
            .dataSourceSent(byteCount: phoneNameResponse.count, fragmentCount: 2),
        ])
    }

    @Test("sharing not allowed: a prepared part for the Control Point is refused like a whole write, naming Prepare Write")
    func preparedPartNeedsSharing() throws {
        var p = phone()
        try p.run("share off")
        #expect(p.exchange(mobilephonePart1) == ["01 16 15 00 08"])
        #expect(p.exchange("18 01") == ["19"], "nothing was queued")
        try p.run("share on")
        #expect(p.exchange(mobilephonePart1) == [echo(mobilephonePart1)])
    }

    @Test("Execute Write 00 drops the queued parts: 19, and nothing is written")
    func cancelDropsTheQueue() {
        var p = phone()
        _ = p.exchange(mobilephonePart1)
        #expect(p.exchange("18 00") == ["19"])
        #expect(p.exchange("18 01") == ["19"], "the queue is empty: nothing to write")
        let events = p.takeEvents()
        #expect(events.contains(.writeExecuted(write: false, byteCount: 18)))
        #expect(!events.contains { if case .controlPointWrite = $0 { true } else { false } })
    }

    @Test("a part starting past the value built so far is Invalid Offset (0x07), answered to Execute Write; nothing is written and the queue is emptied")
    func gapIsInvalidOffset() {
        var p = phone()
        _ = p.exchange(mobilephonePart1)
        let gap = "16 15 00 13 00 68 6F 6E 65 00 00"
        #expect(p.exchange(gap) == [echo(gap)], "offsets are checked at Execute Write")
        #expect(p.exchange("18 01") == ["01 18 15 00 07"])
        let events = p.takeEvents()
        #expect(events.contains(.errorAnswered(handle: 0x15, code: ATTErrorCode.invalidOffset, reason: "invalid-offset")))
        #expect(!events.contains { if case .controlPointWrite = $0 { true } else { false } })
        #expect(p.exchange("18 01") == ["19"])
    }

    @Test("a part rewriting bytes already prepared overwrites them at its offset")
    func overlappingPartOverwrites() {
        var p = phone()
        _ = p.exchange(mobilephonePart1)
        _ = p.exchange("16 15 00 11 00 70 68 6F 6E 65 00 00")
        #expect(p.exchange("18 01").first == "19")
        #expect(p.takeEvents().contains(.controlPointWrite(ControlPointBytes(hex(mobilephoneCommand).span))))
    }

    @Test("a full queue (parts) answers Prepare Queue Full (0x09) and keeps what it holds")
    func queueFullOfParts() {
        var p = phone { $0.prepareQueueCapacity = 1 }
        #expect(p.exchange(mobilephonePart1) == [echo(mobilephonePart1)])
        #expect(p.exchange(mobilephonePart2) == ["01 16 15 00 09"])
        #expect(p.takeEvents().contains(.errorAnswered(handle: 0x15, code: ATTErrorCode.prepareQueueFull, reason: "prepare-queue-full")))
        #expect(p.exchange("18 00") == ["19"])
        #expect(p.takeEvents().contains(.writeExecuted(write: false, byteCount: 18)))
    }

    @Test("a full queue (bytes) answers Prepare Queue Full (0x09)")
    func queueFullOfBytes() {
        var p = phone { $0.prepareQueueCapacityBytes = 20 }
        #expect(p.exchange(mobilephonePart1) == [echo(mobilephonePart1)])
        #expect(p.exchange(mobilephonePart2) == ["01 16 15 00 09"])
    }

    @Test("the default queue holds 512 bytes: 28 parts of 18 and one of 8 fit, one byte more is 0x09")
    func queueHolds512Bytes() {
        var p = phone()
        for i in 0..<28 {
            let offset = i * 18
            let part = "16 15 00 " + toHex(le16(offset)) + " " + toHex([UInt8](repeating: 0x41, count: 18))
            #expect(p.exchange(part) == [echo(part)])
        }
        let last = "16 15 00 F8 01 " + toHex([UInt8](repeating: 0x41, count: 8))
        #expect(p.exchange(last) == [echo(last)])
        #expect(p.exchange("16 15 00 00 02 41") == ["01 16 15 00 09"])
    }

    @Test("an ANCS error on the joined command is the Error Response to Execute Write")
    func ancsErrorAnswersExecute() {
        var p = phone()
        let id = Array("com.example.unknownapp".utf8)
        let command = [1] + id + [0, 0]
        let part1 = "16 15 00 00 00 " + toHex(Array(command[0..<18]))
        let part2 = "16 15 00 12 00 " + toHex(Array(command[18...]))
        _ = p.exchange(part1)
        _ = p.exchange(part2)
        #expect(p.exchange("18 01") == ["01 18 15 00 A2"])
        #expect(p.takeEvents().contains(.errorAnswered(handle: 0x15, code: 0xA2, reason: "unknown-app")))
    }

    @Test("a scripted error answers the next executed long write")
    func scriptedErrorAnswersExecute() throws {
        var p = phone()
        try p.run("error 0xA3")
        _ = p.exchange(mobilephonePart1)
        _ = p.exchange(mobilephonePart2)
        #expect(p.exchange("18 01") == ["01 18 15 00 A3"])
    }

    @Test("before the link is secured a Prepare Write to the Control Point gets Insufficient Authentication and pairing starts")
    func prepareNeedsSecurity() {
        var p = PhoneCore(config: .serverOnly(requiresSecurity: true))
        p.linkUp(now: Instant(ms: 0))
        #expect(p.exchange(mobilephonePart1) == ["01 16 15 00 05"])
        #expect(p.takeEvents().contains(.pairingStarted))
    }

    @Test("only the Control Point takes prepared writes: elsewhere Write Not Permitted, an unknown handle Invalid Handle")
    func prepareElsewhereRefused() {
        var p = phone()
        #expect(p.exchange("16 13 00 00 00 01 00") == ["01 16 13 00 03"])
        #expect(p.exchange("16 03 00 00 00 41") == ["01 16 03 00 03"])
        #expect(p.exchange("16 40 00 00 00 41") == ["01 16 40 00 01"])
    }

    @Test("the queue belongs to the link: parts prepared before a reconnection are gone")
    func queueIsPerLink() {
        var p = phone()
        _ = p.exchange(mobilephonePart1)
        p.linkDown(reason: "test", now: Instant(ms: 1))
        p.linkUp(now: Instant(ms: 2))
        _ = p.takeEvents()
        #expect(p.exchange("18 01") == ["19"])
        #expect(p.takeEvents() == [.writeExecuted(write: true, byteCount: 0)])
    }

    @Test("mtu <n>: the phone answers the next Exchange MTU with n; above its buffers it is cut to them and reported")
    func mtuCommandLimitsTheExchange() throws {
        var p = PhoneCore(config: .serverOnly())
        try p.run("mtu 23")
        p.linkUp(now: Instant(ms: 0))
        #expect(p.exchange("02 05 02") == ["03 17 00"])
        #expect(p.bearer.mtu == 23)
        var q = PhoneCore(config: .serverOnly())
        try q.run("mtu 517")
        #expect(q.takeEvents().contains(.valueTruncated(line: 1, field: "mtu")))
        q.linkUp(now: Instant(ms: 0))
        #expect(q.exchange("02 05 02") == ["03 B9 00"], "the phone's 185")
    }
}
