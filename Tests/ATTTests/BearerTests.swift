// SPDX-License-Identifier: Apache-2.0
import ATT
import Bounded
import Testing
import TestSupport

@Suite("ATT bearer")
struct BearerTests {
    func bearer(_ configure: (inout ATTBearer.Config) -> Void = { _ in }) -> ATTBearer {
        var config = ATTBearer.Config()
        configure(&config)
        return ATTBearer(config: config)
    }

    @Test("only one request is outstanding; the next is sent when the first is answered")
    func oneRequestOutstanding() {
        var b = bearer()
        let t0 = Instant(ms: 0)
        #expect(b.submitRequest(hex("0A 03 00").span, tag: 1, now: t0) == .sent)
        #expect(b.submitRequest(hex("0A 05 00").span, tag: 2, now: t0) == .queued)
        #expect(drain(&b) == ["0A 03 00"])
        #expect(b.receive(hex("0B 41").span, now: t0) == .response(.readResponse(value: 1..<2), tag: 1))
        #expect(drain(&b) == ["0A 05 00"])
        #expect(b.outstandingTag == 2)
    }

    @Test("a full request queue refuses and counts")
    func requestQueueFull() {
        var b = bearer { $0.requestQueueCapacity = 1 }
        _ = b.submitRequest(hex("0A 01 00").span, tag: 1, now: .zero)
        #expect(b.submitRequest(hex("0A 02 00").span, tag: 2, now: .zero) == .queued)
        #expect(b.submitRequest(hex("0A 03 00").span, tag: 3, now: .zero) == .refused)
        #expect(b.counters.requestsRefused == 1)
    }

    @Test("a response that matches no outstanding request is dropped and counted (duplicate or out of order)")
    func strayResponses() {
        var b = bearer()
        #expect(b.receive(hex("0B 41").span, now: .zero) == .dropped(.unexpectedResponse(opcode: 0x0B)))
        _ = b.submitRequest(hex("0A 03 00").span, tag: 1, now: .zero)
        #expect(b.receive(hex("13").span, now: .zero) == .dropped(.unexpectedResponse(opcode: 0x13)), "wrong response type")
        #expect(b.receive(hex("01 12 03 00 0A").span, now: .zero) == .dropped(.unexpectedResponse(opcode: 0x01)), "error for another request")
        #expect(b.receive(hex("0B 41").span, now: .zero) == .response(.readResponse(value: 1..<2), tag: 1))
        #expect(b.receive(hex("0B 41").span, now: .zero) == .dropped(.unexpectedResponse(opcode: 0x0B)), "duplicate")
        #expect(b.counters.unexpectedResponses == 4)
    }

    @Test("a request unanswered for 30 s ends the bearer")
    func transactionTimeout() {
        var b = bearer()
        _ = b.submitRequest(hex("0A 03 00").span, tag: 7, now: Instant(ms: 1_000))
        #expect(b.deadline == Instant(ms: 31_000))
        #expect(b.checkTimeout(now: Instant(ms: 30_999)) == nil)
        #expect(b.checkTimeout(now: Instant(ms: 31_000)) == .transactionTimedOut(tag: 7))
        #expect(b.isOpen == false)
        #expect(b.submitRequest(hex("0A 03 00").span, tag: 8, now: Instant(ms: 31_000)) == .refused)
        #expect(b.receive(hex("0B 00").span, now: Instant(ms: 31_000)) == .dropped(.bearerEnded))
    }

    @Test("the MTU exchange agrees on the smaller of both sides, never below 23")
    func mtuExchange() {
        var b = bearer { $0.maxMTU = 247 }
        _ = b.submitRequest(hex("02 F7 00").span, tag: 1, now: .zero)
        _ = b.receive(hex("03 B9 00").span, now: .zero)
        #expect(b.mtu == 185)
        var c = bearer()
        _ = c.submitRequest(hex("02 05 02").span, tag: 1, now: .zero)
        _ = c.receive(hex("03 10 00").span, now: .zero)
        #expect(c.mtu == 23)
    }

    @Test("an incoming Exchange MTU request is answered with our maximum")
    func answersMTURequest() {
        var b = bearer { $0.maxMTU = 185 }
        #expect(b.receive(hex("02 05 02").span, now: .zero) == .handled)
        #expect(drain(&b) == ["03 B9 00"])
        #expect(b.mtu == 185)
    }

    @Test("a malformed request is answered with Invalid PDU; a malformed response is dropped and counted")
    func malformed() {
        var b = bearer()
        #expect(b.receive(hex("0A 01").span, now: .zero) == .handled)
        #expect(drain(&b) == ["01 0A 00 00 04"])
        #expect(b.receive(hex("1B 01").span, now: .zero) == .dropped(.malformed(.malformed(opcode: 0x1B))))
        #expect(b.counters.malformedRequestsAnswered == 1)
        #expect(b.counters.malformedDropped == 1)
    }

    @Test("an unsupported request gets Request Not Supported; an unknown command is ignored")
    func unsupported() {
        var b = bearer()
        #expect(b.receive(hex("0E 01 00 02 00").span, now: .zero) == .handled)
        #expect(drain(&b) == ["01 0E 00 00 06"])
        #expect(b.receive(hex("D2 01 00 AA").span, now: .zero) == .handled)
        #expect(drain(&b) == [])
    }

    @Test("Prepare Write and Execute Write Requests go to the local server, which must answer them")
    func prepareAndExecuteRequestsGoToTheServer() {
        var b = bearer()
        #expect(b.receive(hex("16 15 00 00 00 01 02").span, now: .zero) == .request(.prepareWriteRequest(handle: 0x15, offset: 0, value: 5..<7)))
        b.respond(hex("17 15 00 00 00 01 02").span)
        #expect(b.receive(hex("18 01").span, now: .zero) == .request(.executeWriteRequest(flags: 1)))
        b.respond(hex("19").span)
        #expect(drain(&b) == ["17 15 00 00 00 01 02", "19"])
        #expect(b.receive(hex("18 05").span, now: .zero) == .handled, "reserved flags are Invalid PDU")
        #expect(drain(&b) == ["01 18 00 00 04"])
    }

    @Test("Prepare Write Response and Execute Write Response answer their requests; others' responses do not")
    func prepareAndExecuteResponsesMatch() {
        var b = bearer()
        _ = b.submitRequest(hex("16 15 00 00 00 01 02").span, tag: 3, now: .zero)
        #expect(b.receive(hex("19").span, now: .zero) == .dropped(.unexpectedResponse(opcode: 0x19)))
        #expect(b.receive(hex("17 15 00 00 00 01 02").span, now: .zero) == .response(.prepareWriteResponse(handle: 0x15, offset: 0, value: 5..<7), tag: 3))
        _ = b.submitRequest(hex("18 01").span, tag: 4, now: .zero)
        #expect(b.receive(hex("17 15 00 00 00 01 02").span, now: .zero) == .dropped(.unexpectedResponse(opcode: 0x17)))
        #expect(b.receive(hex("19").span, now: .zero) == .response(.executeWriteResponse, tag: 4))
    }

    @Test("Insufficient Authentication on a Prepare Write: security is raised and the same Prepare Write is sent again")
    func prepareWriteSecurityRetry() {
        var b = bearer()
        let part = "16 15 00 00 00 01 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69 6C 65 70"
        _ = b.submitRequest(hex(part).span, tag: 9, now: .zero)
        #expect(drain(&b) == [part])
        #expect(b.receive(hex("01 16 15 00 05").span, now: .zero) == .securityRequired(code: 0x05, attempt: 1))
        #expect(drain(&b) == [])
        #expect(b.securityChanged(encrypted: true, now: Instant(ms: 100)) == nil)
        #expect(drain(&b) == [part])
        #expect(b.receive(hex("17" + part.dropFirst(2)).span, now: Instant(ms: 120)) == .response(.prepareWriteResponse(handle: 0x15, offset: 0, value: 5..<23), tag: 9))
    }

    @Test("limitMTU: the bearer offers and accepts no more than the limit from the next exchange on; reset keeps it")
    func mtuLimit() {
        var b = bearer { $0.maxMTU = 185 }
        b.limitMTU(23)
        b.reset()
        #expect(b.receive(hex("02 05 02").span, now: .zero) == .handled)
        #expect(drain(&b) == ["03 17 00"])
        #expect(b.mtu == 23)
        var c = bearer { $0.maxMTU = 185 }
        c.limitMTU(23)
        _ = c.submitRequest(hex("02 17 00").span, tag: 1, now: .zero)
        _ = c.receive(hex("03 05 02").span, now: .zero)
        #expect(c.mtu == 23)
    }

    @Test("an indication is confirmed at once")
    func indicationConfirmed() {
        var b = bearer()
        #expect(b.receive(hex("1D 08 00 01 00 FF FF").span, now: .zero) == .indication(handle: 8, value: 3..<7))
        #expect(drain(&b) == ["1E"])
    }

    @Test("our indication: one at a time until the phone's Handle Value Confirmation; a stray confirmation is a counted drop")
    func ownIndicationAwaitsConfirmation() {
        var b = bearer()
        #expect(b.receive(hex("1E").span, now: .zero) == .dropped(.unexpectedConfirmation))
        #expect(b.counters.unexpectedConfirmations == 1)
        let indication = hex("1D 08 00 0A 00 0D 00")
        let first = b.indicate(indication.span)
        let second = b.indicate(indication.span)
        #expect(first)
        #expect(!second, "a second waits for the confirmation")
        #expect(drain(&b) == ["1D 08 00 0A 00 0D 00"])
        #expect(b.receive(hex("1E").span, now: .zero) == .confirmed)
        #expect(b.indicationOutstanding == false)
        let third = b.indicate(indication.span)
        #expect(third)
        b.reset()
        #expect(b.indicationOutstanding == false, "a new link starts with none outstanding")
    }

    @Test("Insufficient Authentication: the link is asked to raise security and the same request is sent again")
    func securityRetry() {
        var b = bearer()
        _ = b.submitRequest(hex("12 0E 00 01 00").span, tag: 5, now: .zero)
        _ = drain(&b)
        #expect(b.receive(hex("01 12 0E 00 05").span, now: .zero) == .securityRequired(code: 5, attempt: 1))
        #expect(drain(&b) == [])
        #expect(b.securityChanged(encrypted: true, now: Instant(ms: 100)) == nil)
        #expect(drain(&b) == ["12 0E 00 01 00"])
        #expect(b.receive(hex("13").span, now: Instant(ms: 150)) == .response(.writeResponse, tag: 5))
    }

    @Test("Insufficient Encryption retries too, and the owner gets the error after the retry bound")
    func securityRetryBound() {
        var b = bearer { $0.securityRetryLimit = 2 }
        _ = b.submitRequest(hex("12 0E 00 01 00").span, tag: 5, now: .zero)
        #expect(b.receive(hex("01 12 0E 00 0F").span, now: .zero) == .securityRequired(code: 0x0F, attempt: 1))
        _ = b.securityChanged(encrypted: true, now: .zero)
        #expect(b.receive(hex("01 12 0E 00 05").span, now: .zero) == .securityRequired(code: 0x05, attempt: 2))
        _ = b.securityChanged(encrypted: true, now: .zero)
        #expect(b.receive(hex("01 12 0E 00 05").span, now: .zero) == .response(.errorResponse(requestOpcode: 0x12, handle: 0x0E, code: 5), tag: 5))
        #expect(b.hasOutstandingRequest == false)
    }

    @Test("a failed pairing or a pairing that never finishes gives the owner the original error")
    func securityFailure() {
        var b = bearer { $0.securityTimeoutMs = 1_000 }
        _ = b.submitRequest(hex("12 0E 00 01 00").span, tag: 5, now: .zero)
        _ = b.submitRequest(hex("0A 03 00").span, tag: 6, now: .zero)
        _ = b.receive(hex("01 12 0E 00 05").span, now: .zero)
        #expect(b.securityChanged(encrypted: false, now: .zero) == .response(.errorResponse(requestOpcode: 0x12, handle: 0x0E, code: 5), tag: 5))
        #expect(b.outstandingTag == 6, "the queued request goes next")
        _ = b.receive(hex("01 0A 03 00 0F").span, now: .zero)
        #expect(b.deadline == Instant(ms: 1_000))
        #expect(b.checkTimeout(now: Instant(ms: 1_000)) == .securityGaveUp(.errorResponse(requestOpcode: 0x0A, handle: 3, code: 0x0F), tag: 6))
    }

    @Test("reset forgets the MTU, the outstanding request and the queues")
    func reset() {
        var b = bearer()
        _ = b.submitRequest(hex("02 05 02").span, tag: 1, now: .zero)
        _ = b.receive(hex("03 05 02").span, now: .zero)
        _ = b.submitRequest(hex("0A 03 00").span, tag: 2, now: .zero)
        b.reset()
        #expect(b.mtu == 23)
        #expect(b.hasOutstandingRequest == false)
        #expect(drain(&b) == [])
    }
}
