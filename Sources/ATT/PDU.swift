// SPDX-License-Identifier: Apache-2.0
// Decoding one ATT PDU. Variable-length parts are ranges into the bytes that
// were decoded; the caller reads them from the same span within the same
// call. Lengths are checked against the PDU layouts of Core Vol 3 Part F 3.4;
// a list whose size is not a whole number of entries is malformed.

import Bounded

public enum ATTPDU: Equatable, Sendable {
    case errorResponse(requestOpcode: UInt8, handle: UInt16, code: UInt8)
    case exchangeMTURequest(clientMTU: UInt16)
    case exchangeMTUResponse(serverMTU: UInt16)
    case findInformationRequest(start: UInt16, end: UInt16)
    /// `entries`: (handle, UUID) pairs of `uuidWidth` (2 or 16) bytes each.
    case findInformationResponse(uuidWidth: Int, entries: Range<Int>)
    case findByTypeValueRequest(start: UInt16, end: UInt16, type: UInt16, value: Range<Int>)
    /// `entries`: (found handle, group end handle) pairs, 4 bytes each.
    case findByTypeValueResponse(entries: Range<Int>)
    case readByTypeRequest(start: UInt16, end: UInt16, type: ATTUUID)
    /// `entries` of `entryLength` bytes: handle(2) then value.
    case readByTypeResponse(entryLength: Int, entries: Range<Int>)
    case readRequest(handle: UInt16)
    case readResponse(value: Range<Int>)
    case readBlobRequest(handle: UInt16, offset: UInt16)
    case readBlobResponse(value: Range<Int>)
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: ATTUUID)
    /// `entries` of `entryLength` bytes: handle(2) end group handle(2) then value.
    case readByGroupTypeResponse(entryLength: Int, entries: Range<Int>)
    case writeRequest(handle: UInt16, value: Range<Int>)
    case writeResponse
    /// One part of a long write, queued by the server until Execute Write.
    case prepareWriteRequest(handle: UInt16, offset: UInt16, value: Range<Int>)
    /// The server's echo of the part it queued; the client checks it.
    case prepareWriteResponse(handle: UInt16, offset: UInt16, value: Range<Int>)
    /// `flags`: `ExecuteWriteFlags.cancel` or `.write` (other values are malformed).
    case executeWriteRequest(flags: UInt8)
    case executeWriteResponse
    case writeCommand(handle: UInt16, value: Range<Int>)
    case notification(handle: UInt16, value: Range<Int>)
    case indication(handle: UInt16, value: Range<Int>)
    case confirmation
    /// A request this implementation does not serve (answered 0x06).
    case unsupportedRequest(opcode: UInt8)
    /// A command we do not know (ignored, as the spec requires).
    case unknownCommand(opcode: UInt8)

    public var opcode: UInt8? {
        switch self {
        case .errorResponse: ATTOpcode.errorResponse
        case .exchangeMTURequest: ATTOpcode.exchangeMTURequest
        case .exchangeMTUResponse: ATTOpcode.exchangeMTUResponse
        case .findInformationRequest: ATTOpcode.findInformationRequest
        case .findInformationResponse: ATTOpcode.findInformationResponse
        case .findByTypeValueRequest: ATTOpcode.findByTypeValueRequest
        case .findByTypeValueResponse: ATTOpcode.findByTypeValueResponse
        case .readByTypeRequest: ATTOpcode.readByTypeRequest
        case .readByTypeResponse: ATTOpcode.readByTypeResponse
        case .readRequest: ATTOpcode.readRequest
        case .readResponse: ATTOpcode.readResponse
        case .readBlobRequest: ATTOpcode.readBlobRequest
        case .readBlobResponse: ATTOpcode.readBlobResponse
        case .readByGroupTypeRequest: ATTOpcode.readByGroupTypeRequest
        case .readByGroupTypeResponse: ATTOpcode.readByGroupTypeResponse
        case .writeRequest: ATTOpcode.writeRequest
        case .writeResponse: ATTOpcode.writeResponse
        case .prepareWriteRequest: ATTOpcode.prepareWriteRequest
        case .prepareWriteResponse: ATTOpcode.prepareWriteResponse
        case .executeWriteRequest: ATTOpcode.executeWriteRequest
        case .executeWriteResponse: ATTOpcode.executeWriteResponse
        case .writeCommand: ATTOpcode.writeCommand
        case .notification: ATTOpcode.handleValueNotification
        case .indication: ATTOpcode.handleValueIndication
        case .confirmation: ATTOpcode.handleValueConfirmation
        case .unsupportedRequest(let op), .unknownCommand(let op): op
        }
    }

    /// What kind of PDU `opcode` is, which decides how a bad one is handled.
    public enum Kind: Sendable { case request, response, command, notification, indication, confirmation }

    public static func kind(of opcode: UInt8) -> Kind {
        switch opcode {
        case ATTOpcode.handleValueNotification: .notification
        case ATTOpcode.handleValueIndication: .indication
        case ATTOpcode.handleValueConfirmation: .confirmation
        case ATTOpcode.errorResponse, ATTOpcode.exchangeMTUResponse, ATTOpcode.findInformationResponse,
            ATTOpcode.findByTypeValueResponse, ATTOpcode.readByTypeResponse, ATTOpcode.readResponse,
            ATTOpcode.readBlobResponse, 0x0F, ATTOpcode.readByGroupTypeResponse, ATTOpcode.writeResponse,
            ATTOpcode.prepareWriteResponse, ATTOpcode.executeWriteResponse, 0x21:
            .response
        default: opcode & ATTOpcode.commandFlag != 0 ? .command : .request
        }
    }

    public static func decode(_ pdu: Span<UInt8>) throws(ATTDecodeError) -> ATTPDU {
        guard pdu.count > 0 else { throw .empty }
        let op = pdu[0]
        let n = pdu.count
        func exactly(_ length: Int) throws(ATTDecodeError) {
            guard n == length else { throw .malformed(opcode: op) }
        }
        func atLeast(_ length: Int) throws(ATTDecodeError) {
            guard n >= length else { throw .malformed(opcode: op) }
        }
        func uuidType(at offset: Int) throws(ATTDecodeError) -> ATTUUID {
            guard let uuid = ATTUUID(pdu, at: offset, width: n - offset) else { throw .malformed(opcode: op) }
            return uuid
        }
        switch op {
        case ATTOpcode.errorResponse:
            try exactly(5)
            return .errorResponse(requestOpcode: pdu[1], handle: pdu.le16(at: 2), code: pdu[4])
        case ATTOpcode.exchangeMTURequest:
            try exactly(3)
            return .exchangeMTURequest(clientMTU: pdu.le16(at: 1))
        case ATTOpcode.exchangeMTUResponse:
            try exactly(3)
            return .exchangeMTUResponse(serverMTU: pdu.le16(at: 1))
        case ATTOpcode.findInformationRequest:
            try exactly(5)
            return .findInformationRequest(start: pdu.le16(at: 1), end: pdu.le16(at: 3))
        case ATTOpcode.findInformationResponse:
            try atLeast(2)
            let width: Int
            switch pdu[1] {
            case 1: width = 2
            case 2: width = 16
            default: throw .malformed(opcode: op)
            }
            let data = n - 2
            guard data > 0, data % (2 + width) == 0 else { throw .malformed(opcode: op) }
            return .findInformationResponse(uuidWidth: width, entries: 2..<n)
        case ATTOpcode.findByTypeValueRequest:
            try atLeast(7)
            return .findByTypeValueRequest(start: pdu.le16(at: 1), end: pdu.le16(at: 3), type: pdu.le16(at: 5), value: 7..<n)
        case ATTOpcode.findByTypeValueResponse:
            guard n > 1, (n - 1) % 4 == 0 else { throw .malformed(opcode: op) }
            return .findByTypeValueResponse(entries: 1..<n)
        case ATTOpcode.readByTypeRequest, ATTOpcode.readByGroupTypeRequest:
            guard n == 7 || n == 21 else { throw .malformed(opcode: op) }
            let start = pdu.le16(at: 1)
            let end = pdu.le16(at: 3)
            let type = try uuidType(at: 5)
            return op == ATTOpcode.readByTypeRequest
                ? .readByTypeRequest(start: start, end: end, type: type)
                : .readByGroupTypeRequest(start: start, end: end, type: type)
        case ATTOpcode.readByTypeResponse, ATTOpcode.readByGroupTypeResponse:
            try atLeast(2)
            let entryLength = Int(pdu[1])
            let minimum = op == ATTOpcode.readByTypeResponse ? 2 : 4
            let data = n - 2
            guard entryLength >= minimum, data >= entryLength, data % entryLength == 0 else { throw .malformed(opcode: op) }
            return op == ATTOpcode.readByTypeResponse
                ? .readByTypeResponse(entryLength: entryLength, entries: 2..<n)
                : .readByGroupTypeResponse(entryLength: entryLength, entries: 2..<n)
        case ATTOpcode.readRequest:
            try exactly(3)
            return .readRequest(handle: pdu.le16(at: 1))
        case ATTOpcode.readResponse:
            return .readResponse(value: 1..<n)
        case ATTOpcode.readBlobRequest:
            try exactly(5)
            return .readBlobRequest(handle: pdu.le16(at: 1), offset: pdu.le16(at: 3))
        case ATTOpcode.readBlobResponse:
            return .readBlobResponse(value: 1..<n)
        case ATTOpcode.writeRequest:
            try atLeast(3)
            return .writeRequest(handle: pdu.le16(at: 1), value: 3..<n)
        case ATTOpcode.writeResponse:
            try exactly(1)
            return .writeResponse
        case ATTOpcode.prepareWriteRequest:
            try atLeast(5)
            return .prepareWriteRequest(handle: pdu.le16(at: 1), offset: pdu.le16(at: 3), value: 5..<n)
        case ATTOpcode.prepareWriteResponse:
            try atLeast(5)
            return .prepareWriteResponse(handle: pdu.le16(at: 1), offset: pdu.le16(at: 3), value: 5..<n)
        case ATTOpcode.executeWriteRequest:
            try exactly(2)
            guard pdu[1] == ExecuteWriteFlags.cancel || pdu[1] == ExecuteWriteFlags.write else { throw .malformed(opcode: op) }
            return .executeWriteRequest(flags: pdu[1])
        case ATTOpcode.executeWriteResponse:
            try exactly(1)
            return .executeWriteResponse
        case ATTOpcode.writeCommand:
            try atLeast(3)
            return .writeCommand(handle: pdu.le16(at: 1), value: 3..<n)
        case ATTOpcode.handleValueNotification:
            try atLeast(3)
            return .notification(handle: pdu.le16(at: 1), value: 3..<n)
        case ATTOpcode.handleValueIndication:
            try atLeast(3)
            return .indication(handle: pdu.le16(at: 1), value: 3..<n)
        case ATTOpcode.handleValueConfirmation:
            try exactly(1)
            return .confirmation
        default:
            switch kind(of: op) {
            case .command: return .unknownCommand(opcode: op)
            case .request: return .unsupportedRequest(opcode: op)
            default: throw .unexpectedOpcode(op)
            }
        }
    }
}

public enum ATTDecodeError: Error, Equatable, Sendable {
    case empty
    /// Known opcode, wrong length or layout.
    case malformed(opcode: UInt8)
    /// A response type we never ask for.
    case unexpectedOpcode(UInt8)

    public var opcode: UInt8? {
        switch self {
        case .empty: nil
        case .malformed(let op), .unexpectedOpcode(let op): op
        }
    }
}
