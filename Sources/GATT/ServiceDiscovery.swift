// SPDX-License-Identifier: Apache-2.0
// Discovery of one primary service and up to four wanted characteristics
// with their CCCDs (GATT client procedures: Discover Primary Service by
// Service UUID, Discover All Characteristics of a Service, Discover All
// Characteristic Descriptors). What it found can be kept and given back
// on a later link (`snapshot`, `restore`): a bonded phone's handles do not
// change unless its Service Changed says so (Core Vol 3 Part G 2.5.2).

import ATT
import Bounded

public struct DiscoveredCharacteristic: Equatable, Sendable {
    public var uuid: ATTUUID
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
    public var properties: CharacteristicProperties
    /// The last handle of the characteristic (its descriptors end here).
    public var endHandle: UInt16
    /// 0 when the characteristic has no CCCD.
    public var cccdHandle: UInt16

    public init(
        uuid: ATTUUID, declarationHandle: UInt16, valueHandle: UInt16, properties: CharacteristicProperties,
        endHandle: UInt16, cccdHandle: UInt16
    ) {
        self.uuid = uuid
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.properties = properties
        self.endHandle = endHandle
        self.cccdHandle = cccdHandle
    }
}

/// What discovery found of one service: where it lies and its wanted
/// characteristics (in the order they were wanted), to be restored on a
/// later link. `start == 0`: the phone had no such service.
public struct DiscoveredService: Equatable, Sendable {
    public var start: UInt16
    public var end: UInt16
    public var characteristics: InlineArray<4, DiscoveredCharacteristic?>

    public init(start: UInt16, end: UInt16, characteristics: InlineArray<4, DiscoveredCharacteristic?> = InlineArray(repeating: nil)) {
        self.start = start
        self.end = end
        self.characteristics = characteristics
    }

    public var isPresent: Bool { start != 0 }

    public static func == (a: Self, b: Self) -> Bool {
        guard a.start == b.start, a.end == b.end else { return false }
        for i in 0..<4 where a.characteristics[i] != b.characteristics[i] { return false }
        return true
    }
}

public struct ServiceDiscovery: Sendable {
    public static let maxWanted = 4
    /// Iteration bound for each walk (characteristics, descriptors).
    public static let maxSteps = 64

    public enum Progress: Equatable, Sendable {
        /// Send the next request (`nextRequest`).
        case continuing
        case done
        /// The server has no such service (Attribute Not Found).
        case serviceNotFound
        /// An error response or a response that breaks the rules.
        case failed(FailReason)
    }

    public enum FailReason: Equatable, Sendable {
        case attError(opcode: UInt8, code: UInt8)
        case malformedResponse
        case tooManySteps
    }

    enum Phase: Equatable, Sendable {
        case findService
        case characteristics(next: UInt16)
        case descriptors(index: Int, next: UInt16)
        case finished
    }

    public let service: ATTUUID
    private var wanted: InlineArray<4, ATTUUID?>
    private var found: InlineArray<4, DiscoveredCharacteristic?>
    public private(set) var serviceStart: UInt16 = 0
    public private(set) var serviceEnd: UInt16 = 0
    private var phase = Phase.findService
    private var steps = 0
    /// Index into `found` of the last characteristic seen whose end is open.
    private var openEnd: Int? = nil
    /// Finished with an answer (done or not found), not a failure.
    private var complete = false

    public init(service: ATTUUID, wanted: InlineArray<4, ATTUUID?>) {
        self.service = service
        self.wanted = wanted
        found = InlineArray(repeating: nil)
    }

    /// Starts again from nothing (a new link, or after Service Changed).
    public mutating func restart() {
        found = InlineArray(repeating: nil)
        serviceStart = 0
        serviceEnd = 0
        phase = .findService
        steps = 0
        openEnd = nil
        complete = false
    }

    public func characteristic(_ uuid: ATTUUID) -> DiscoveredCharacteristic? {
        for i in 0..<Self.maxWanted where wanted[i] == uuid { return found[i] }
        return nil
    }

    public var isFinished: Bool { phase == .finished }

    /// What was found, once discovery ended with an answer (the service and
    /// its characteristics, or that there is no such service); nil while it
    /// runs, after a failure, or before it started.
    public var snapshot: DiscoveredService? {
        guard phase == .finished, complete else { return nil }
        var characteristics = InlineArray<4, DiscoveredCharacteristic?>(repeating: nil)
        for i in 0..<Self.maxWanted { characteristics[i] = found[i] }
        return DiscoveredService(start: serviceStart, end: serviceEnd, characteristics: characteristics)
    }

    /// Takes what an earlier link found as found now, without a request.
    /// A cached characteristic that is not the one wanted in its place, or
    /// whose handles are not inside the service, is dropped (a damaged
    /// cache): the caller finds the gap as a missing characteristic.
    public mutating func restore(_ cached: DiscoveredService) {
        restart()
        serviceStart = cached.start
        serviceEnd = cached.start == 0 ? 0 : cached.end
        for i in 0..<Self.maxWanted {
            guard let c = cached.characteristics[i], wanted[i] == c.uuid, cached.start != 0,
                c.declarationHandle > cached.start, c.valueHandle > c.declarationHandle, c.endHandle >= c.valueHandle,
                c.endHandle <= cached.end, c.cccdHandle == 0 || (c.cccdHandle > c.valueHandle && c.cccdHandle <= c.endHandle)
            else { continue }
            found[i] = c
        }
        phase = .finished
        complete = true
    }

    /// Writes the next request into `out`. False when nothing is to be sent.
    public mutating func nextRequest(into out: inout ByteBuffer, mtu: Int) -> Bool {
        switch phase {
        case .findService:
            var value = InlineBytes<16>()
            switch service {
            case .uuid16(let v):
                value.append(UInt8(truncatingIfNeeded: v))
                value.append(UInt8(truncatingIfNeeded: v >> 8))
            case .uuid128(let u):
                for i in 0..<16 { value.append(u.wire[i]) }
            }
            do {
                try PDUWriter.findByTypeValueRequest(&out, start: 0x0001, end: 0xFFFF, type: GATTUUID.primaryService, value: value.span, mtu: mtu)
            } catch {
                preconditionFailure("a 16-byte UUID always fits the minimum MTU")
            }
            return true
        case .characteristics(let next):
            PDUWriter.readByTypeRequest(&out, start: next, end: serviceEnd, type: .uuid16(GATTUUID.characteristic))
            return true
        case .descriptors(let index, let next):
            guard let c = found[index] else { return false }
            PDUWriter.findInformationRequest(&out, start: next, end: c.endHandle)
            return true
        case .finished:
            return false
        }
    }

    /// Consumes the response to the last request. `pdu` is the bytes the
    /// response was decoded from.
    public mutating func handle(_ response: ATTPDU, in pdu: Span<UInt8>) -> Progress {
        steps += 1
        guard steps <= 2 + 2 * Self.maxSteps else { return fail(.tooManySteps) }
        switch (phase, response) {
        case (.findService, .findByTypeValueResponse(let entries)):
            let start = pdu.le16(at: entries.lowerBound)
            let end = pdu.le16(at: entries.lowerBound + 2)
            guard start != 0, end >= start else { return fail(.malformedResponse) }
            serviceStart = start
            serviceEnd = end
            if start == end { return finishCharacteristics() }
            phase = .characteristics(next: start + 1)
            return .continuing
        case (.findService, .errorResponse(_, _, let code)) where code == ATTErrorCode.attributeNotFound:
            phase = .finished
            complete = true
            return .serviceNotFound
        case (.characteristics(let next), .readByTypeResponse(let entryLength, let entries)):
            guard entryLength == 7 || entryLength == 21 else { return fail(.malformedResponse) }
            var last = next
            var offset = entries.lowerBound
            while offset < entries.upperBound {
                let declaration = pdu.le16(at: offset)
                let properties = CharacteristicProperties(rawValue: pdu[offset + 2])
                let valueHandle = pdu.le16(at: offset + 3)
                let increasing = offset == entries.lowerBound ? declaration >= next : declaration > last
                guard increasing, declaration <= serviceEnd, valueHandle > declaration, valueHandle <= serviceEnd,
                    let uuid = ATTUUID(pdu, at: offset + 5, width: entryLength - 5)
                else { return fail(.malformedResponse) }
                if let open = openEnd { found[open]?.endHandle = declaration - 1 }
                openEnd = nil
                for i in 0..<Self.maxWanted where wanted[i] == uuid && found[i] == nil {
                    found[i] = DiscoveredCharacteristic(
                        uuid: uuid, declarationHandle: declaration, valueHandle: valueHandle, properties: properties,
                        endHandle: serviceEnd, cccdHandle: 0)
                    openEnd = i
                }
                last = declaration
                offset += entryLength
            }
            if last >= serviceEnd || last == 0xFFFF { return finishCharacteristics() }
            phase = .characteristics(next: last + 1)
            return .continuing
        case (.characteristics, .errorResponse(_, _, let code)) where code == ATTErrorCode.attributeNotFound:
            return finishCharacteristics()
        case (.descriptors(let index, let next), .findInformationResponse(let width, let entries)):
            var last = next
            var offset = entries.lowerBound
            while offset < entries.upperBound {
                let handle = pdu.le16(at: offset)
                let increasing = offset == entries.lowerBound ? handle >= next : handle > last
                guard increasing, let end = found[index]?.endHandle, handle <= end,
                    let uuid = ATTUUID(pdu, at: offset + 2, width: width)
                else { return fail(.malformedResponse) }
                if uuid == .uuid16(GATTUUID.clientCharacteristicConfiguration), found[index]?.cccdHandle == 0 {
                    found[index]?.cccdHandle = handle
                }
                last = handle
                offset += 2 + width
            }
            if found[index]?.cccdHandle != 0 || last >= (found[index]?.endHandle ?? 0) { return advanceDescriptors(after: index) }
            phase = .descriptors(index: index, next: last + 1)
            return .continuing
        case (.descriptors(let index, _), .errorResponse(_, _, let code)) where code == ATTErrorCode.attributeNotFound:
            return advanceDescriptors(after: index)
        case (_, .errorResponse(let opcode, _, let code)):
            return fail(.attError(opcode: opcode, code: code))
        default:
            return fail(.malformedResponse)
        }
    }

    private mutating func fail(_ reason: FailReason) -> Progress {
        phase = .finished
        return .failed(reason)
    }

    private mutating func finishCharacteristics() -> Progress {
        openEnd = nil
        return advanceDescriptors(after: -1)
    }

    /// Moves to the next wanted characteristic that can notify or indicate
    /// and has room for descriptors.
    private mutating func advanceDescriptors(after index: Int) -> Progress {
        var i = index + 1
        while i < Self.maxWanted {
            if let c = found[i], !c.properties.intersection([.notify, .indicate]).isEmpty, c.valueHandle < c.endHandle {
                phase = .descriptors(index: i, next: c.valueHandle + 1)
                return .continuing
            }
            i += 1
        }
        phase = .finished
        complete = true
        return .done
    }
}
