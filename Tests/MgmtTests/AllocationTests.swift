// SPDX-License-Identifier: Apache-2.0
import AllocCounter
import Bounded
import Mgmt
import Testing
import TestSupport

enum ControlError: Error { case odd(Int) }

@inline(never) func controlThrow(_ n: Int) throws(ControlError) -> Int {
    if n != 0 { throw .odd(n) }
    return n
}

@Suite("Management work allocates nothing", .enabled(if: isOptimizedBuild, "allocation counts are measured on the optimized build that ships (swift test -c release)"))
struct AllocationTests {
    /// Rounds per measurement; the bodies count their own runs (one warm-up
    /// run comes first), so the expectations follow it.
    static let rounds = 200

    /// Swift Testing installs a `swift_willThrowTyped` hook that boxes every
    /// thrown error to capture a backtrace; the firmware has no such hook.
    /// A throw from a plain local function measures what the hook costs, so
    /// throwing paths are held to exactly that.
    static let hookAllocationsPerThrow: Double = {
        var n = 0
        return allocationsPerRound { n += 1; _ = try? controlThrow(n) }
    }()

    @Test("decoding events, including the 280-byte controller information, allocates nothing")
    func decoding() {
        let packets = [
            hex("01 00 00 00 1B 01  04 00  00") + EventTests.controllerInformationReturn,
            hex("0A 00 00 00 25 00  01" + phoneStaticWire + "03 00 10 00 00 00 00 00 00 00 00 00 00") + zeros(16),
            hex("0F 00 00 00 0C 00" + phoneStaticWire + "00 40 E2 01 00"),
        ]
        var decoded = 0
        let perRound = allocationsPerRound(rounds: Self.rounds) {
            for p in packets where (try? MgmtEvent.decode(p.span)) != nil { decoded += 1 }
        }
        #expect(perRound == 0)
        #expect(decoded == 3 * (Self.rounds + 1))
    }

    @Test("rejecting a malformed event costs only the test harness's throw hook")
    func rejecting() {
        let truncated = hex("06 00 00 00 03 00 01 02 00")
        #expect(Self.hookAllocationsPerThrow >= 1, "control: the hook is installed")
        #expect(allocationsPerRound { _ = try? MgmtEvent.decode(truncated.span) } == Self.hookAllocationsPerThrow)
    }

    @Test("key events into the bond store and Load Long Term Keys allocate nothing")
    func bonds() {
        var store = BondStore()
        var out = ByteBuffer(capacity: BondStore.maxLoadLongTermKeysByteCount)
        var stored = 0
        let perRound = allocationsPerRound(rounds: Self.rounds) {
            for n in 1...9 {
                if case .ignored = store.apply(ltk(peer(n), scKey)) {} else { stored += 1 }
                _ = store.apply(irk(peer(n)))
            }
            try? store.encodeLoadLongTermKeys(index: ControllerIndex(0), into: &out)
        }
        #expect(perRound == 0)
        #expect(stored > 0)
        #expect(out.count == 6 + 2 + 8 * 36)
    }

    @Test("parsing and writing the bond file allocates nothing")
    func bondFile() {
        let text = ascii(BondFileTests.text)
        var out = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
        var parsed = 0
        let perRound = allocationsPerRound(rounds: Self.rounds) {
            if let store = try? BondStore.parse(text.span) {
                parsed += store.count
                _ = store.serialize(into: &out)
            }
        }
        #expect(perRound == 0)
        #expect(parsed == 2 * (Self.rounds + 1))
        #expect(out.toArray() == text)
        // Two throws, each boxed by the hook: the bad line's error (caught,
        // so the lines after it are read too), then the file's.
        let corrupt = ascii("wristlink-bonds 1\nltk 00\n")
        #expect(allocationsPerRound { _ = try? BondStore.parse(corrupt.span) } == 2 * Self.hookAllocationsPerThrow)
        #expect(allocationsPerRound { _ = try? BondStore.parseReportingAll(corrupt.span) } == 2 * Self.hookAllocationsPerThrow)
    }

    @Test("a whole start-up sequence allocates nothing")
    func setupSequence() throws {
        let config = try SetupConfig(index: ControllerIndex(0), name: LocalName("Wristlink"), solicitedService: ancsService)
        let settings = "00 00 00 00"
        let replies = [
            hex("01 00 00 00 1B 01 04 00 00") + info(current: "00 02 00 00"),
            event(0x0001, hex("0D 00 00" + settings)), event(0x0001, hex("2D 00 00" + settings)),
            event(0x0001, hex("09 00 00" + settings)), event(0x0001, hex("18 00 00")),
            event(0x0001, hex("0F 00 00")), event(0x0001, hex("13 00 00")), event(0x0001, hex("30 00 00")),
            event(0x0001, hex("07 00 00" + settings)), event(0x0001, hex("4C 00 00")), event(0x0001, hex("05 00 00" + settings)),
            event(0x0001, hex("4C 00 00")), event(0x0001, hex("3E 00 00 01")),
        ]
        let bonds = BondStore()
        var out = ByteBuffer(capacity: ControllerSetup.commandBufferCapacity)
        var readyCount = 0
        let perRound = allocationsPerRound(rounds: Self.rounds) {
            var setup = ControllerSetup(config: config)
            var i = 0
            while let _ = try? setup.nextCommand(bonds: bonds, into: &out, now: .zero), i < replies.count {
                let reply = replies[i]
                if let packet = try? MgmtEvent.decode(reply.span) { setup.handle(packet, now: .zero) }
                i += 1
            }
            if setup.status == .ready { readyCount += 1 }
        }
        #expect(perRound == 0)
        #expect(readyCount == Self.rounds + 1)
    }
}
