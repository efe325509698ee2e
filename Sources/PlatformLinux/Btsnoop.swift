// SPDX-License-Identifier: Apache-2.0
// A btsnoop trace of every ATT PDU in and out (--trace FILE), as HCI ACL
// packets carrying L2CAP on the ATT fixed channel (CID 4), so Wireshark,
// tshark and btmon open it. Format: "btsnoop\0", version 1, datalink 1002
// (HCI UART H4: each packet starts with its H4 type, 0x02 = ACL); then per
// packet: original length, included length, flags (bit 0: 1 = received by
// us), cumulative drops, timestamp in microseconds since 0000-01-01, all
// big-endian. The ACL handle is a fixed 0x0040 (one link at a time). The
// file holds every title and message the phone sent, so it is the wearer's
// alone (PrivateFile.swift: 0600, no symbolic link followed).

import ATT
import Bounded
import CLinux

public struct BtsnoopWriter: ~Copyable {
    /// Microseconds from 0000-01-01 to the Unix epoch (the btsnoop origin).
    static let epochOffsetUs: Int64 = 0x00DC_DDB3_0F2F_8000
    static let aclHandle: UInt16 = 0x0040

    private let fd: Int32
    private var record: ByteBuffer
    public private(set) var failed = false

    public init(path: String) throws(SystemError) {
        fd = try PrivateFile.openForWriting(path)
        record = ByteBuffer(capacity: 24 + 1 + 4 + 4 + ATTMTU.maximum)
        var header = ByteBuffer(capacity: 16)
        for c in "btsnoop".utf8 { header.append(c) }
        header.append(0)
        Self.appendBE32(&header, 1)
        Self.appendBE32(&header, 1002)
        write(header)
    }

    deinit { _ = CLinux.close(fd) }

    static func appendBE32(_ b: inout ByteBuffer, _ v: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { b.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    /// Records one ATT PDU; `received` is true for the phone's PDUs.
    public mutating func record(_ pdu: Span<UInt8>, received: Bool) {
        guard !failed else { return }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let us = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000 + Self.epochOffsetUs
        let packetLength = UInt32(1 + 4 + 4 + pdu.count)
        record.removeAll()
        Self.appendBE32(&record, packetLength)
        Self.appendBE32(&record, packetLength)
        Self.appendBE32(&record, received ? 1 : 0)
        Self.appendBE32(&record, 0)
        Self.appendBE32(&record, UInt32(truncatingIfNeeded: us >> 32))
        Self.appendBE32(&record, UInt32(truncatingIfNeeded: us))
        record.append(0x02)  // H4: ACL data
        record.appendLE16(Self.aclHandle | 0x2000)  // PB = first automatically flushable
        record.appendLE16(UInt16(4 + pdu.count))
        record.appendLE16(UInt16(pdu.count))  // L2CAP length
        record.appendLE16(0x0004)  // CID: ATT
        record.append(contentsOf: pdu)
        writeRecord()
    }

    private mutating func writeRecord() {
        let ok = record.span.withUnsafeBufferPointer { Sys.writeAll(fd, $0) }
        if !ok {
            failed = true
            Log.error("trace: write failed; tracing stopped")
        }
    }

    private func write(_ bytes: borrowing ByteBuffer) {
        _ = bytes.span.withUnsafeBufferPointer { Sys.writeAll(fd, $0) }
    }
}
