// SPDX-License-Identifier: Apache-2.0
// ATT: the Attribute Protocol (Bluetooth Core v5.x, Vol 3 Part F), sans-IO.
//
// Design (after BlueZ src/shared/att.c and NimBLE's ble_att_*): the wire
// format is kept apart from the bearer's rules. `ATTPDU.decode` turns one
// packet (one L2CAP SDU on CID 4, or one SOCK_SEQPACKET record) into a value
// whose variable parts are ranges into the caller's bytes: no copy, no
// allocation. `PDUWriter` encodes into a caller's `ByteBuffer`. `ATTBearer`
// keeps the rules: one outgoing request at a time (the rest wait in a fixed
// queue), each incoming request answered before the next, indications
// confirmed, the MTU exchange, the 30 s transaction timeout, and the
// insufficient-authentication/encryption retry after the link raises
// security (as att.c does).
//
// Malformed or unsupported requests are answered with the right Error
// Response by the bearer itself; malformed responses, notifications and
// strays are dropped and counted. Nothing is thrown through the loop.
//
//   Opcode.swift      opcodes and error codes
//   ATTUUID.swift     16- and 128-bit attribute types
//   PDU.swift         decoding
//   PDUWriter.swift   encoding
//   PacketQueue.swift    fixed slots of PDU bytes
//   Bearer.swift      the bearer state
