// SPDX-License-Identifier: Apache-2.0
// Write Long Characteristic Values (Core Vol 3 Part G 4.9.4), client side,
// sans-IO: a value longer than one Write Request carries (MTU − 3) goes as
// Prepare Write Requests of at most MTU − 5 bytes at increasing offsets,
// then Execute Write Request with flags 0x01.
//
// Each Prepare Write Response must echo the handle, offset and part sent
// (Part F 3.4.6.2: the client checks it, which catches a part changed on
// the way before the server writes it). On an Error Response to a Prepare
// Write, or an echo that does not match, the procedure sends Execute Write
// with flags 0x00 so the server drops what it queued, and reports the
// failure once that is answered (whatever the answer). An Error Response
// to the Execute Write itself is reported at once: the server has already
// emptied its queue. The code reported is the server's, or
// `echoMismatchCode`.
//
// Like `ServiceDiscovery` it writes one request at a time into the caller's
// buffer and consumes the response to it; the bearer underneath keeps its
// security retry, so an Insufficient Authentication answer to the first
// Prepare Write reaches this only if raising security failed. The value is
// copied into a buffer allocated at init (`ATTValue.maximumBytes` by
// default): a write allocates nothing.
//
// A procedure given up half-way (`abandon`, when the caller ignores its
// outstanding response) may leave parts in the server's queue; the next one
// starts with a cancel so they cannot join the new value. `reset` (a new
// link) forgets that: the server's queue went with the old link.

import ATT
import Bounded

public struct LongWrite: ~Copyable {
    public enum Progress: Equatable, Sendable {
        /// Send the next request (`nextRequest`).
        case continuing
        /// The server executed the write of the whole value.
        case written
        /// The write failed with this ATT error code (the server's, or
        /// `echoMismatchCode`); nothing the server had queued was written.
        case failed(code: UInt8)
    }

    /// What a failure reports when a Prepare Write Response did not echo the
    /// part that was sent.
    public static let echoMismatchCode = ATTErrorCode.invalidPDU

    enum Phase: Equatable {
        case idle
        /// Cancelling the queue an abandoned procedure may have left.
        case clearingStale
        case preparing
        case executing
        /// Cancelling after a failure that will be reported with `code`.
        case cancelling(code: UInt8)
    }

    private var value: ByteBuffer
    private var phase = Phase.idle
    private var handle: UInt16 = 0
    /// Bytes of the value the server has echoed correctly.
    private var acknowledgedBytes = 0
    /// The part in flight: `value[acknowledgedBytes ..< acknowledgedBytes + partBytes]`.
    private var partBytes = 0
    private var serverMayHoldParts = false

    public init(capacityBytes: Int = ATTValue.maximumBytes) {
        value = ByteBuffer(capacity: capacityBytes)
    }

    public var capacityBytes: Int { value.capacity }
    /// A procedure is under way: responses to the caller's requests are for it.
    public var isActive: Bool { phase != .idle }

    /// Starts writing `bytes` to `handle`; then send `nextRequest`.
    public mutating func start(handle: UInt16, value bytes: Span<UInt8>) {
        precondition(phase == .idle, "a long write is already under way")
        precondition(bytes.count > 0 && bytes.count <= value.capacity, "long write value out of range")
        value.removeAll()
        value.append(contentsOf: bytes)
        self.handle = handle
        acknowledgedBytes = 0
        partBytes = 0
        phase = serverMayHoldParts ? .clearingStale : .preparing
        serverMayHoldParts = false
    }

    /// Writes the next request into `out`; false when there is none.
    public mutating func nextRequest(into out: inout ByteBuffer, mtu: Int) -> Bool {
        switch phase {
        case .idle:
            return false
        case .clearingStale, .cancelling:
            PDUWriter.executeWriteRequest(&out, flags: ExecuteWriteFlags.cancel)
        case .executing:
            PDUWriter.executeWriteRequest(&out, flags: ExecuteWriteFlags.write)
        case .preparing:
            let end = min(value.count, acknowledgedBytes + mtu - 5)
            partBytes = end - acknowledgedBytes
            do {
                try PDUWriter.prepareWriteRequest(
                    &out, handle: handle, offset: UInt16(acknowledgedBytes), value: value.span.extracting(acknowledgedBytes..<end), mtu: mtu)
            } catch {
                preconditionFailure("a part is cut to MTU - 5")
            }
        }
        return true
    }

    /// Consumes the response to the last request; `pdu` holds its bytes.
    public mutating func handle(_ response: ATTPDU, in pdu: Span<UInt8>) -> Progress {
        switch phase {
        case .idle:
            preconditionFailure("a response with no long write under way")
        case .clearingStale:
            phase = .preparing
            return .continuing
        case .cancelling(let code):
            phase = .idle
            return .failed(code: code)
        case .executing:
            phase = .idle
            if case .errorResponse(_, _, let code) = response { return .failed(code: code) }
            return .written
        case .preparing:
            if case .errorResponse(_, _, let code) = response {
                phase = .cancelling(code: code)
                return .continuing
            }
            guard echoes(response, pdu) else {
                phase = .cancelling(code: Self.echoMismatchCode)
                return .continuing
            }
            acknowledgedBytes += partBytes
            partBytes = 0
            if acknowledgedBytes == value.count { phase = .executing }
            return .continuing
        }
    }

    private func echoes(_ response: ATTPDU, _ pdu: Span<UInt8>) -> Bool {
        guard case .prepareWriteResponse(let h, let offset, let range) = response, h == handle,
            Int(offset) == acknowledgedBytes, range.count == partBytes
        else { return false }
        for i in 0..<partBytes where pdu[range.lowerBound + i] != value[acknowledgedBytes + i] { return false }
        return true
    }

    /// The caller stopped listening for this procedure's responses (its
    /// session restarted on the same link). The next `start` cancels first.
    public mutating func abandon() {
        if phase == .preparing || phase == .clearingStale { serverMayHoldParts = true }
        phase = .idle
    }

    /// `start` with the value in a sibling buffer.
    public mutating func start(handle: UInt16, valueOf bytes: borrowing ByteBuffer) {
        start(handle: handle, value: bytes.span)
    }

    /// A new link: nothing is under way and the server holds nothing.
    public mutating func reset() {
        phase = .idle
        serverMayHoldParts = false
    }
}
