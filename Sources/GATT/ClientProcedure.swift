// SPDX-License-Identifier: Apache-2.0
// The shape every GATT client procedure here shares (after NimBLE's
// procedure table): the procedure writes its next request into the caller's
// buffer, the caller sends it, and the response to it is handed back to the
// procedure, which says how far it got. ATT allows one request outstanding,
// so the caller runs one procedure at a time and routes the response to it;
// the procedure never sees the bearer, the clock or the other procedures.
//
// Conformers: `ServiceDiscovery` (find a service, its characteristics and
// their CCCDs), `CCCDWrite` (one Write Request to a CCCD), `LongWrite`
// (Prepare Writes, then Execute Write). The ANCS keep-alive probe is not
// one: it is a Control Point command and goes through the session's command
// queue like any other.

import ATT
import Bounded

public protocol ClientProcedure: ~Copyable {
    associatedtype Progress: Equatable
    /// Writes the next request into `out`; false when there is none to send.
    mutating func nextRequest(into out: inout ByteBuffer, mtu: Int) -> Bool
    /// Consumes the response to the last request; `pdu` holds its bytes.
    mutating func handle(_ response: ATTPDU, in pdu: Span<UInt8>) -> Progress
}

extension ServiceDiscovery: ClientProcedure {}
extension LongWrite: ClientProcedure {}

/// Writes a Client Characteristic Configuration descriptor: one Write
/// Request of two bytes (Core Vol 3 Part G 3.3.3.3), little-endian.
public struct CCCDWrite: ClientProcedure, Equatable, Sendable {
    public enum Progress: Equatable, Sendable {
        case written
        /// The phone answered with this ATT error code.
        case refused(code: UInt8)
        /// Any other answer to a Write Request.
        case failed
    }

    public private(set) var cccdHandle: UInt16
    public private(set) var value: UInt16
    private var sent = false

    public init(handle: UInt16, value: UInt16) {
        self.cccdHandle = handle
        self.value = value
    }

    public mutating func nextRequest(into out: inout ByteBuffer, mtu: Int) -> Bool {
        guard !sent else { return false }
        var bytes = InlineBytes<2>()
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        do {
            try PDUWriter.writeRequest(&out, handle: cccdHandle, value: bytes.span, mtu: mtu)
        } catch {
            preconditionFailure("a CCCD write always fits the minimum MTU")
        }
        sent = true
        return true
    }

    public func handle(_ response: ATTPDU, in pdu: Span<UInt8>) -> Progress {
        switch response {
        case .writeResponse: .written
        case .errorResponse(_, _, let code): .refused(code: code)
        default: .failed
        }
    }
}
