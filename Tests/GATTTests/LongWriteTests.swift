// SPDX-License-Identifier: Apache-2.0
import ATT
import Bounded
import GATT
import Testing
import TestSupport

/// Get App Attributes (display name) for com.apple.mobilephone: 24 bytes,
/// one more than a Write Request carries at MTU 23.
let mobilephoneCommand = "01 " + toHex(Array("com.apple.mobilephone".utf8)) + " 00 00"
/// Its two parts at MTU 23 (18 bytes, then 6 at offset 0x12).
let firstPart = "16 15 00 00 00 01 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69 6C 65 70"
let secondPart = "16 15 00 12 00 68 6F 6E 65 00 00"

/// The echo a correct server gives to a Prepare Write Request.
func echo(_ request: String) -> String { "17" + request.dropFirst(2) }

/// Runs a long write against scripted responses: each step is the request
/// we expect and the response to give. Returns the last progress.
func run(_ write: inout LongWrite, mtu: Int = 23, _ script: [(request: String, response: String)]) -> LongWrite.Progress {
    var out = ByteBuffer(capacity: 600)
    var progress = LongWrite.Progress.continuing
    for (i, step) in script.enumerated() {
        guard write.nextRequest(into: &out, mtu: mtu) else {
            Issue.record("step \(i): no request, expected \(step.request)")
            return progress
        }
        #expect(out.hexString == step.request, "step \(i)")
        #expect(out.count <= mtu, "step \(i)")
        let response = hex(step.response)
        guard let pdu = try? ATTPDU.decode(response.span) else {
            Issue.record("step \(i): bad scripted response")
            return progress
        }
        progress = write.handle(pdu, in: response.span)
        if progress != .continuing {
            #expect(i == script.count - 1, "finished early, at step \(i)")
            return progress
        }
    }
    return progress
}

@Suite("GATT client: Write Long Characteristic Values (Core Vol 3 Part G 4.9.4)")
struct LongWriteTests {
    func started(_ value: String) -> LongWrite {
        var w = LongWrite()
        w.start(handle: 0x15, value: hex(value).span)
        return w
    }

    @Test("a 24-byte command at MTU 23: Prepare Writes of MTU − 5 bytes at offsets 0 and 18, then Execute Write 01")
    func splitAtMTU23() {
        var w = started(mobilephoneCommand)
        let progress = run(&w, [
            (firstPart, echo(firstPart)),
            (secondPart, echo(secondPart)),
            ("18 01", "19"),
        ])
        #expect(progress == .written)
        let active = w.isActive
        #expect(!active)
        var out = ByteBuffer(capacity: 64)
        #expect(!w.nextRequest(into: &out, mtu: 23), "nothing more to send")
    }

    @Test("the parts follow the MTU: 131 bytes at MTU 50 go as 45 + 45 + 41")
    func partsFollowMTU() {
        let value = (0..<131).map { UInt8($0) }
        var w = LongWrite()
        w.start(handle: 0x15, value: value.span)
        func part(_ range: Range<Int>) -> String {
            "16 15 00 " + toHex([UInt8(range.lowerBound & 0xFF), UInt8(range.lowerBound >> 8)]) + " " + toHex(Array(value[range]))
        }
        let progress = run(&w, mtu: 50, [
            (part(0..<45), echo(part(0..<45))),
            (part(45..<90), echo(part(45..<90))),
            (part(90..<131), echo(part(90..<131))),
            ("18 01", "19"),
        ])
        #expect(progress == .written)
    }

    @Test("an echo with a changed byte cancels with Execute Write 00 and fails as Invalid PDU")
    func echoValueMismatchCancels() {
        var w = started(mobilephoneCommand)
        let corrupted = echo(firstPart).replacing("6D 6F 62", with: "6D 6F 63")
        let progress = run(&w, [
            (firstPart, corrupted),
            ("18 00", "19"),
        ])
        #expect(progress == .failed(code: LongWrite.echoMismatchCode))
        #expect(LongWrite.echoMismatchCode == ATTErrorCode.invalidPDU)
        let active = w.isActive
        #expect(!active)
    }

    @Test("an echo with the wrong offset, handle or length cancels (18 00) and fails")
    func echoFieldsMismatchCancel() {
        for bad in [
            "17 15 00 01 00" + echo(firstPart).dropFirst(14),  // offset 1
            "17 16 00" + echo(firstPart).dropFirst(8),  // handle 0x16
            String(echo(firstPart).dropLast(3)),  // one byte short
        ] {
            var w = started(mobilephoneCommand)
            let progress = run(&w, [(firstPart, bad), ("18 00", "19")])
            #expect(progress == .failed(code: LongWrite.echoMismatchCode), "\(bad)")
        }
    }

    @Test("a mismatch on the second part still cancels the first")
    func secondPartMismatchCancels() {
        var w = started(mobilephoneCommand)
        let progress = run(&w, [
            (firstPart, echo(firstPart)),
            (secondPart, "17 15 00 12 00 68 6F 6E 65 00"),
            ("18 00", "19"),
        ])
        #expect(progress == .failed(code: LongWrite.echoMismatchCode))
    }

    @Test("an Error Response to a Prepare Write cancels (18 00), then fails with the server's code")
    func prepareErrorCancels() {
        var w = started(mobilephoneCommand)
        let progress = run(&w, [
            (firstPart, echo(firstPart)),
            (secondPart, "01 16 15 00 09"),
            ("18 00", "19"),
        ])
        #expect(progress == .failed(code: ATTErrorCode.prepareQueueFull))
    }

    @Test("the cancel's own failure does not hide the first error")
    func cancelErrorKeepsFirstCode() {
        var w = started(mobilephoneCommand)
        let progress = run(&w, [
            (firstPart, "01 16 15 00 03"),
            ("18 00", "01 18 00 00 06"),
        ])
        #expect(progress == .failed(code: ATTErrorCode.writeNotPermitted))
    }

    @Test("an Error Response to Execute Write (an ANCS code) fails at once: the server has emptied its queue")
    func executeErrorFails() {
        var w = started(mobilephoneCommand)
        let progress = run(&w, [
            (firstPart, echo(firstPart)),
            (secondPart, echo(secondPart)),
            ("18 01", "01 18 15 00 A2"),
        ])
        #expect(progress == .failed(code: 0xA2))
        var out = ByteBuffer(capacity: 64)
        #expect(!w.nextRequest(into: &out, mtu: 23), "no cancel after a failed execute")
    }

    @Test("a write abandoned half-way makes the next one cancel first; a reset (new link) does not")
    func abandonedWriteCancelsFirst() {
        var w = started(mobilephoneCommand)
        #expect(run(&w, [(firstPart, echo(firstPart))]) == .continuing)
        w.abandon()
        let active = w.isActive
        #expect(!active)
        w.start(handle: 0x15, value: hex(mobilephoneCommand).span)
        let progress = run(&w, [
            ("18 00", "19"),
            (firstPart, echo(firstPart)),
            (secondPart, echo(secondPart)),
            ("18 01", "19"),
        ])
        #expect(progress == .written)
        var v = started(mobilephoneCommand)
        #expect(run(&v, [(firstPart, echo(firstPart))]) == .continuing)
        v.abandon()
        v.reset()
        v.start(handle: 0x15, value: hex(mobilephoneCommand).span)
        #expect(run(&v, [(firstPart, echo(firstPart))]) == .continuing)
    }

    @Test("a long write allocates nothing after init")
    func noAllocation() {
        var w = LongWrite()
        var out = ByteBuffer(capacity: 64)
        let value = hex(mobilephoneCommand)
        let echo1 = hex(echo(firstPart))
        let echo2 = hex(echo(secondPart))
        let executed = hex("19")
        let decoded = [echo1, echo2, executed].map { try! ATTPDU.decode($0.span) }
        var written = 0
        let perRound = allocationsPerRound {
            w.start(handle: 0x15, value: value.span)
            _ = w.nextRequest(into: &out, mtu: 23)
            _ = w.handle(decoded[0], in: echo1.span)
            _ = w.nextRequest(into: &out, mtu: 23)
            _ = w.handle(decoded[1], in: echo2.span)
            _ = w.nextRequest(into: &out, mtu: 23)
            if w.handle(decoded[2], in: executed.span) == .written { written += 1 }
        }
        #expect(written > 0, "the work was done")
        if isOptimizedBuild { #expect(perRound == 0) }
    }
}

@Suite("CCCD write: one Write Request of the value, little-endian, and its answer")
struct CCCDWriteTests {
    @Test("enabling notifications writes 01 00 to the descriptor once; a Write Response is written")
    func notificationsOnIsOneWriteRequest() throws {
        var write = CCCDWrite(handle: 0x0019, value: CCCDValue.notifications)
        var out = ByteBuffer(capacity: 23)
        #expect(write.nextRequest(into: &out, mtu: 23))
        #expect(out.hexString == "12 19 00 01 00")
        #expect(!write.nextRequest(into: &out, mtu: 23), "one request only")
        let response = hex("13")
        let pdu = try ATTPDU.decode(response.span)
        #expect(write.handle(pdu, in: response.span) == .written)
    }

    @Test("an Error Response is refused with the phone's code (0x03 Write Not Permitted: sharing not allowed yet)")
    func errorResponseCarriesTheCode() throws {
        var write = CCCDWrite(handle: 0x0022, value: CCCDValue.indications)
        var out = ByteBuffer(capacity: 23)
        #expect(write.nextRequest(into: &out, mtu: 23))
        #expect(out.hexString == "12 22 00 02 00")
        let response = hex("01 12 22 00 03")
        let pdu = try ATTPDU.decode(response.span)
        #expect(write.handle(pdu, in: response.span) == .refused(code: 0x03))
    }
}
