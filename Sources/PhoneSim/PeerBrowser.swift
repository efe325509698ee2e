// SPDX-License-Identifier: Apache-2.0
// What iOS does on the wearable's own database after connecting, as the
// phone's GATT client: exchange MTU, list the primary services (Read By
// Group Type until the end), find the Device Name in Generic Access and read
// it, find Service Changed in Generic Attribute and subscribe to its
// indications. One request at a time; a step that fails or finds nothing
// moves on to the next, so browsing always finishes. Service and
// characteristic discovery reuse GATT's `ServiceDiscovery`; the service walk
// is bounded by `maxServiceSteps` and moves strictly forward.

import ATT
import Bounded
import GATT

struct PeerBrowser: Sendable {
    static let maxServiceSteps = 16

    enum Phase: Equatable, Sendable {
        case idle
        case exchangingMTU
        case services(next: UInt16)
        case genericAccess
        case readingName(handle: UInt16)
        case genericAttribute
        case subscribing(cccd: UInt16)
        case finished
    }

    enum Progress: Equatable {
        case continuing
        /// Just finished; `name` and `serviceCount` hold what was found.
        case finished
    }

    private(set) var phase = Phase.idle
    private(set) var serviceCount = 0
    private(set) var name = PeerName()
    private var serviceSteps = 0
    private var genericAccess = ServiceDiscovery(service: .uuid16(GATTUUID.genericAccess), wanted: [.uuid16(GATTUUID.deviceName), nil, nil, nil])
    private var genericAttribute = ServiceDiscovery(service: .uuid16(GATTUUID.genericAttribute), wanted: [.uuid16(GATTUUID.serviceChanged), nil, nil, nil])

    var isFinished: Bool { phase == .finished }

    mutating func start(exchangeMTU: Bool) {
        serviceCount = 0
        serviceSteps = 0
        name.removeAll()
        genericAccess.restart()
        genericAttribute.restart()
        phase = exchangeMTU ? .exchangingMTU : .services(next: 0x0001)
    }

    mutating func stop() { phase = .idle }

    /// Writes the next request into `out`; false when there is none.
    mutating func nextRequest(into out: inout ByteBuffer, mtu: Int, clientMTU: Int) -> Bool {
        while true {
            switch phase {
            case .idle, .finished:
                return false
            case .exchangingMTU:
                PDUWriter.exchangeMTURequest(&out, clientMTU: UInt16(clientMTU))
                return true
            case .services(let next):
                PDUWriter.readByGroupTypeRequest(&out, start: next, end: 0xFFFF, type: .uuid16(GATTUUID.primaryService))
                return true
            case .genericAccess:
                if genericAccess.nextRequest(into: &out, mtu: mtu) { return true }
                phase = .genericAttribute
            case .readingName(let handle):
                PDUWriter.readRequest(&out, handle: handle)
                return true
            case .genericAttribute:
                if genericAttribute.nextRequest(into: &out, mtu: mtu) { return true }
                phase = .finished
            case .subscribing(let cccd):
                var value = InlineBytes<2>()
                value.append(UInt8(truncatingIfNeeded: CCCDValue.indications))
                value.append(0)
                do {
                    try PDUWriter.writeRequest(&out, handle: cccd, value: value.span, mtu: mtu)
                } catch {
                    preconditionFailure("a CCCD write always fits the minimum MTU")
                }
                return true
            }
        }
    }

    /// Consumes the response (decoded from `pdu`) to the last request.
    mutating func handle(_ response: ATTPDU, in pdu: Span<UInt8>) -> Progress {
        switch phase {
        case .idle, .finished:
            return .continuing
        case .exchangingMTU:
            phase = .services(next: 0x0001)
        case .services:
            servicesResponse(response, pdu)
        case .genericAccess:
            switch genericAccess.handle(response, in: pdu) {
            case .continuing:
                break
            case .done:
                if let c = genericAccess.characteristic(.uuid16(GATTUUID.deviceName)) {
                    phase = .readingName(handle: c.valueHandle)
                } else {
                    phase = .genericAttribute
                }
            case .serviceNotFound, .failed:
                phase = .genericAttribute
            }
        case .readingName:
            if case .readResponse(let value) = response { name = PeerName(pdu.extracting(value)) }
            phase = .genericAttribute
        case .genericAttribute:
            switch genericAttribute.handle(response, in: pdu) {
            case .continuing:
                break
            case .done:
                if let c = genericAttribute.characteristic(.uuid16(GATTUUID.serviceChanged)), c.cccdHandle != 0 {
                    phase = .subscribing(cccd: c.cccdHandle)
                } else {
                    phase = .finished
                }
            case .serviceNotFound, .failed:
                phase = .finished
            }
        case .subscribing:
            phase = .finished
        }
        return phase == .finished ? .finished : .continuing
    }

    private mutating func servicesResponse(_ response: ATTPDU, _ pdu: Span<UInt8>) {
        serviceSteps += 1
        guard case .services(let next) = phase, case .readByGroupTypeResponse(let entryLength, let entries) = response,
            serviceSteps < Self.maxServiceSteps
        else {
            phase = .genericAccess
            return
        }
        var last: UInt16 = 0
        var offset = entries.lowerBound
        while offset < entries.upperBound {
            let start = pdu.le16(at: offset)
            let end = pdu.le16(at: offset + 2)
            guard start >= next, end >= start, start > last else {
                phase = .genericAccess
                return
            }
            serviceCount += 1
            last = end
            offset += entryLength
        }
        phase = last == 0xFFFF ? .genericAccess : .services(next: last + 1)
    }
}
