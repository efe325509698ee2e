// SPDX-License-Identifier: Apache-2.0
// The ATT server's answers to discovery and read requests, for any
// attribute database (Core Vol 3 Part F 3.4, Part G 3): the wearable's own
// (`GATTServer`) and the simulated iPhone's (`PhoneDatabase`) both describe
// their attributes and let this answer. Writes go back to the database's
// owner, which knows what a write means.
//
// Rules, as the spec has them: a bad range is Invalid Handle naming the
// start; nothing found is Attribute Not Found naming the start; a group type
// other than a service is Unsupported Group Type; an attribute that may not
// be read on this link answers with its own error (Read Not Permitted,
// Insufficient Authentication), or ends a list before it. Writes, prepared
// writes and Execute Write go to the owner. Entries of a list
// response share one length (so 16- and 128-bit UUIDs never share one) and
// stop at the MTU. Read values are cut at MTU − 1; Read By Type values at
// MTU − 4 and 253.

import ATT
import Bounded

/// One attribute as a database shows it to this link.
public struct ServedAttribute: Sendable {
    public var handle: UInt16
    public var type: ATTUUID
    /// A service declaration's last handle; any other attribute's own.
    public var groupEnd: UInt16
    /// The value as read (declarations included); at most 32 bytes.
    public var value: InlineBytes<32>
    /// nil: readable on this link; else the error code a read gets.
    public var readError: UInt8?

    public init(handle: UInt16, type: ATTUUID, groupEnd: UInt16, value: InlineBytes<32>, readError: UInt8?) {
        self.handle = handle
        self.type = type
        self.groupEnd = groupEnd
        self.value = value
        self.readError = readError
    }
}

/// A database the server answers from: attributes in handle order.
public protocol AttributeDatabase {
    var attributeCount: Int { get }
    /// The attribute at `index` as a link secured or not sees it; nil when
    /// it does not exist now (a removed service).
    func attribute(at index: Int, secured: Bool) -> ServedAttribute?
}

public enum AttributeServer {
    public enum Answer: Equatable, Sendable {
        /// `out` holds the response (an Error Response carries `errorCode`).
        case answered(errorCode: UInt8?)
        /// A Write Request or Write Command to an existing attribute: the
        /// owner decides and answers.
        case write(attributeIndex: Int, handle: UInt16, value: Range<Int>)
        /// A Prepare Write Request to an existing attribute: the owner
        /// queues the part (and echoes it) or refuses.
        case prepareWrite(attributeIndex: Int, handle: UInt16, offset: UInt16, value: Range<Int>)
        /// An Execute Write Request: the owner writes or drops its queue.
        case executeWrite(flags: UInt8)
    }

    public static func respond<D: AttributeDatabase>(
        to request: ATTPDU, in pdu: Span<UInt8>, database: D, secured: Bool, into out: inout ByteBuffer, mtu: Int
    ) -> Answer {
        let s = Server(database: database, secured: secured, limit: mtu)
        switch request {
        case .readByGroupTypeRequest(let start, let end, let type):
            return s.readByGroupType(start, end, type, &out)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            return s.findByTypeValue(start, end, type, pdu.extracting(value), &out)
        case .readByTypeRequest(let start, let end, let type):
            return s.readByType(start, end, type, &out)
        case .findInformationRequest(let start, let end):
            return s.findInformation(start, end, &out)
        case .readRequest(let handle):
            return s.read(handle, offset: nil, &out)
        case .readBlobRequest(let handle, let offset):
            return s.read(handle, offset: offset, &out)
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value):
            guard let i = s.index(of: handle) else { return error(&out, request.opcode ?? 0, handle, ATTErrorCode.invalidHandle) }
            return .write(attributeIndex: i, handle: handle, value: value)
        case .prepareWriteRequest(let handle, let offset, let value):
            guard let i = s.index(of: handle) else { return error(&out, ATTOpcode.prepareWriteRequest, handle, ATTErrorCode.invalidHandle) }
            return .prepareWrite(attributeIndex: i, handle: handle, offset: offset, value: value)
        case .executeWriteRequest(let flags):
            return .executeWrite(flags: flags)
        default:
            return error(&out, request.opcode ?? 0, 0, ATTErrorCode.requestNotSupported)
        }
    }

    /// Writes an Error Response into `out`.
    public static func error(_ out: inout ByteBuffer, _ opcode: UInt8, _ handle: UInt16, _ code: UInt8) -> Answer {
        PDUWriter.errorResponse(&out, requestOpcode: opcode, handle: handle, code: code)
        return .answered(errorCode: code)
    }

    struct Server<D: AttributeDatabase> {
        let database: D
        let secured: Bool
        let limit: Int

        init(database: D, secured: Bool, limit: Int) {
            self.database = database
            self.secured = secured
            self.limit = limit
        }

        func attribute(_ i: Int) -> ServedAttribute? { database.attribute(at: i, secured: secured) }

        func index(of handle: UInt16) -> Int? {
            for i in 0..<database.attributeCount where attribute(i)?.handle == handle { return i }
            return nil
        }

        func validRange(_ start: UInt16, _ end: UInt16) -> Bool { start != 0 && start <= end }

        func readByGroupType(_ start: UInt16, _ end: UInt16, _ type: ATTUUID, _ out: inout ByteBuffer) -> Answer {
            let op = ATTOpcode.readByGroupTypeRequest
            guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
            guard type == .uuid16(GATTUUID.primaryService) || type == .uuid16(GATTUUID.secondaryService) else {
                return error(&out, op, start, ATTErrorCode.unsupportedGroupType)
            }
            let limit = min(self.limit, out.capacity)
            out.removeAll()
            out.append(ATTOpcode.readByGroupTypeResponse)
            out.append(0)
            var entryLength = 0
            for i in 0..<database.attributeCount {
                guard let a = attribute(i), a.handle >= start, a.handle <= end, a.type == type else { continue }
                let length = 4 + a.value.count
                if entryLength != 0 && length != entryLength { break }
                if out.count + length > limit { break }
                entryLength = length
                out.appendLE16(a.handle)
                out.appendLE16(a.groupEnd)
                out.append(contentsOf: a.value.span)
            }
            guard entryLength != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
            out[1] = UInt8(entryLength)
            return .answered(errorCode: nil)
        }

        func findByTypeValue(_ start: UInt16, _ end: UInt16, _ type: UInt16, _ wanted: Span<UInt8>, _ out: inout ByteBuffer) -> Answer {
            let op = ATTOpcode.findByTypeValueRequest
            guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
            let limit = min(self.limit, out.capacity)
            out.removeAll()
            out.append(ATTOpcode.findByTypeValueResponse)
            for i in 0..<database.attributeCount {
                guard let a = attribute(i), a.handle >= start, a.handle <= end, a.type == .uuid16(type), a.readError == nil,
                    a.value.elementsEqual(wanted)
                else { continue }
                if out.count + 4 > limit { break }
                out.appendLE16(a.handle)
                out.appendLE16(a.groupEnd)
            }
            guard out.count > 1 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
            return .answered(errorCode: nil)
        }

        func readByType(_ start: UInt16, _ end: UInt16, _ type: ATTUUID, _ out: inout ByteBuffer) -> Answer {
            let op = ATTOpcode.readByTypeRequest
            guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
            let limit = min(self.limit, out.capacity)
            out.removeAll()
            out.append(ATTOpcode.readByTypeResponse)
            out.append(0)
            var entryLength = 0
            for i in 0..<database.attributeCount {
                guard let a = attribute(i), a.handle >= start, a.handle <= end, a.type == type else { continue }
                if let code = a.readError {
                    if entryLength == 0 { return error(&out, op, a.handle, code) }
                    break
                }
                let valueLength = min(a.value.count, min(limit - 4, 253))
                let length = 2 + valueLength
                if entryLength != 0 && (length != entryLength || out.count + length > limit) { break }
                entryLength = length
                out.appendLE16(a.handle)
                out.append(contentsOf: a.value.span.extracting(0..<valueLength))
            }
            guard entryLength != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
            out[1] = UInt8(entryLength)
            return .answered(errorCode: nil)
        }

        func findInformation(_ start: UInt16, _ end: UInt16, _ out: inout ByteBuffer) -> Answer {
            let op = ATTOpcode.findInformationRequest
            guard validRange(start, end) else { return error(&out, op, start, ATTErrorCode.invalidHandle) }
            let limit = min(self.limit, out.capacity)
            out.removeAll()
            out.append(ATTOpcode.findInformationResponse)
            out.append(0)
            var width = 0
            for i in 0..<database.attributeCount {
                guard let a = attribute(i), a.handle >= start, a.handle <= end else { continue }
                if width != 0 && a.type.width != width { break }
                if out.count + 2 + a.type.width > limit { break }
                width = a.type.width
                out.appendLE16(a.handle)
                a.type.append(to: &out)
            }
            guard width != 0 else { return error(&out, op, start, ATTErrorCode.attributeNotFound) }
            out[1] = width == 2 ? 1 : 2
            return .answered(errorCode: nil)
        }

        func read(_ handle: UInt16, offset: UInt16?, _ out: inout ByteBuffer) -> Answer {
            let op = offset == nil ? ATTOpcode.readRequest : ATTOpcode.readBlobRequest
            guard let i = index(of: handle), let a = attribute(i) else { return error(&out, op, handle, ATTErrorCode.invalidHandle) }
            if let code = a.readError { return error(&out, op, handle, code) }
            let from = Int(offset ?? 0)
            guard from <= a.value.count else { return error(&out, op, handle, ATTErrorCode.invalidOffset) }
            let responseOpcode = offset == nil ? ATTOpcode.readResponse : ATTOpcode.readBlobResponse
            PDUWriter.valueResponse(&out, opcode: responseOpcode, value: a.value.span.extracting(from..<a.value.count), mtu: limit)
            return .answered(errorCode: nil)
        }
    }
}
