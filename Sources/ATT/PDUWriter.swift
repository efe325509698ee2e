// SPDX-License-Identifier: Apache-2.0
// Encoding ATT PDUs into a caller's buffer, bounded by the ATT MTU. A PDU
// that would exceed the MTU is an error for requests and commands; for
// responses that carry a value, the value is cut at MTU − 1 as the spec
// allows (the client reads the rest with Read Blob).

import Bounded

public enum ATTEncodeError: Error, Equatable, Sendable {
    case doesNotFit(neededBytes: Int, mtu: Int)
}

public enum PDUWriter {
    private static func begin(_ out: inout ByteBuffer, _ opcode: UInt8, needed: Int, mtu: Int) throws(ATTEncodeError) {
        guard needed <= mtu, needed <= out.capacity else { throw .doesNotFit(neededBytes: needed, mtu: min(mtu, out.capacity)) }
        out.removeAll()
        out.append(opcode)
    }

    public static func errorResponse(_ out: inout ByteBuffer, requestOpcode: UInt8, handle: UInt16, code: UInt8) {
        out.removeAll()
        out.append(ATTOpcode.errorResponse)
        out.append(requestOpcode)
        out.appendLE16(handle)
        out.append(code)
    }

    public static func exchangeMTURequest(_ out: inout ByteBuffer, clientMTU: UInt16) {
        out.removeAll()
        out.append(ATTOpcode.exchangeMTURequest)
        out.appendLE16(clientMTU)
    }

    public static func exchangeMTUResponse(_ out: inout ByteBuffer, serverMTU: UInt16) {
        out.removeAll()
        out.append(ATTOpcode.exchangeMTUResponse)
        out.appendLE16(serverMTU)
    }

    public static func findInformationRequest(_ out: inout ByteBuffer, start: UInt16, end: UInt16) {
        out.removeAll()
        out.append(ATTOpcode.findInformationRequest)
        out.appendLE16(start)
        out.appendLE16(end)
    }

    public static func findByTypeValueRequest(
        _ out: inout ByteBuffer, start: UInt16, end: UInt16, type: UInt16, value: Span<UInt8>, mtu: Int
    ) throws(ATTEncodeError) {
        try begin(&out, ATTOpcode.findByTypeValueRequest, needed: 7 + value.count, mtu: mtu)
        out.appendLE16(start)
        out.appendLE16(end)
        out.appendLE16(type)
        out.append(contentsOf: value)
    }

    public static func readByTypeRequest(_ out: inout ByteBuffer, start: UInt16, end: UInt16, type: ATTUUID) {
        out.removeAll()
        out.append(ATTOpcode.readByTypeRequest)
        out.appendLE16(start)
        out.appendLE16(end)
        type.append(to: &out)
    }

    public static func readByGroupTypeRequest(_ out: inout ByteBuffer, start: UInt16, end: UInt16, type: ATTUUID) {
        out.removeAll()
        out.append(ATTOpcode.readByGroupTypeRequest)
        out.appendLE16(start)
        out.appendLE16(end)
        type.append(to: &out)
    }

    public static func readRequest(_ out: inout ByteBuffer, handle: UInt16) {
        out.removeAll()
        out.append(ATTOpcode.readRequest)
        out.appendLE16(handle)
    }

    public static func writeRequest(_ out: inout ByteBuffer, handle: UInt16, value: Span<UInt8>, mtu: Int) throws(ATTEncodeError) {
        try begin(&out, ATTOpcode.writeRequest, needed: 3 + value.count, mtu: mtu)
        out.appendLE16(handle)
        out.append(contentsOf: value)
    }

    /// `writeRequest` with the value in a sibling buffer.
    public static func writeRequest(_ out: inout ByteBuffer, handle: UInt16, valueOf value: borrowing ByteBuffer, mtu: Int) throws(ATTEncodeError) {
        try writeRequest(&out, handle: handle, value: value.span, mtu: mtu)
    }

    /// One part of a long write: `value` is at most MTU − 5 bytes.
    public static func prepareWriteRequest(
        _ out: inout ByteBuffer, handle: UInt16, offset: UInt16, value: Span<UInt8>, mtu: Int
    ) throws(ATTEncodeError) {
        try preparedPart(&out, ATTOpcode.prepareWriteRequest, handle: handle, offset: offset, value: value, mtu: mtu)
    }

    /// The server's echo of a prepared part (the request's own fields).
    public static func prepareWriteResponse(
        _ out: inout ByteBuffer, handle: UInt16, offset: UInt16, value: Span<UInt8>, mtu: Int
    ) throws(ATTEncodeError) {
        try preparedPart(&out, ATTOpcode.prepareWriteResponse, handle: handle, offset: offset, value: value, mtu: mtu)
    }

    /// Prepare Write Request and Response share their layout: handle,
    /// offset, part value.
    private static func preparedPart(
        _ out: inout ByteBuffer, _ opcode: UInt8, handle: UInt16, offset: UInt16, value: Span<UInt8>, mtu: Int
    ) throws(ATTEncodeError) {
        try begin(&out, opcode, needed: 5 + value.count, mtu: mtu)
        out.appendLE16(handle)
        out.appendLE16(offset)
        out.append(contentsOf: value)
    }

    public static func executeWriteRequest(_ out: inout ByteBuffer, flags: UInt8) {
        out.removeAll()
        out.append(ATTOpcode.executeWriteRequest)
        out.append(flags)
    }

    public static func executeWriteResponse(_ out: inout ByteBuffer) {
        out.removeAll()
        out.append(ATTOpcode.executeWriteResponse)
    }

    public static func writeCommand(_ out: inout ByteBuffer, handle: UInt16, value: Span<UInt8>, mtu: Int) throws(ATTEncodeError) {
        try begin(&out, ATTOpcode.writeCommand, needed: 3 + value.count, mtu: mtu)
        out.appendLE16(handle)
        out.append(contentsOf: value)
    }

    public static func writeResponse(_ out: inout ByteBuffer) {
        out.removeAll()
        out.append(ATTOpcode.writeResponse)
    }

    public static func notification(_ out: inout ByteBuffer, handle: UInt16, value: Span<UInt8>, mtu: Int) throws(ATTEncodeError) {
        try begin(&out, ATTOpcode.handleValueNotification, needed: 3 + value.count, mtu: mtu)
        out.appendLE16(handle)
        out.append(contentsOf: value)
    }

    public static func indication(_ out: inout ByteBuffer, handle: UInt16, value: Span<UInt8>, mtu: Int) throws(ATTEncodeError) {
        try begin(&out, ATTOpcode.handleValueIndication, needed: 3 + value.count, mtu: mtu)
        out.appendLE16(handle)
        out.append(contentsOf: value)
    }

    public static func confirmation(_ out: inout ByteBuffer) {
        out.removeAll()
        out.append(ATTOpcode.handleValueConfirmation)
    }

    /// Read Response / Read Blob Response: the value cut at MTU − 1.
    public static func valueResponse(_ out: inout ByteBuffer, opcode: UInt8, value: Span<UInt8>, mtu: Int) {
        out.removeAll()
        out.append(opcode)
        let kept = min(value.count, min(mtu, out.capacity) - 1)
        out.append(contentsOf: value.extracting(0..<kept))
    }

    /// Read By Type / Read By Group Type / Find Information / Find By Type
    /// Value responses are built entry by entry: `ListResponse` keeps the
    /// entry length uniform and stops at the MTU.
    public struct ListResponse: ~Copyable {
        public let mtu: Int
        public private(set) var entryLength = 0
        public private(set) var entryCount = 0

        public init(mtu: Int) { self.mtu = mtu }

        /// Starts a response with `header` bytes after the opcode (the
        /// length or format byte), or none.
        public func begin(_ out: inout ByteBuffer, opcode: UInt8, header: UInt8?) {
            out.removeAll()
            out.append(opcode)
            if let header { out.append(header) }
        }

        /// Whether an entry of `length` bytes may be added: same length as
        /// the first, and within the MTU.
        public func accepts(_ out: borrowing ByteBuffer, length: Int) -> Bool {
            (entryCount == 0 || length == entryLength) && out.count + length <= min(mtu, out.capacity)
        }

        public mutating func added(length: Int) {
            entryLength = length
            entryCount += 1
        }
    }
}
