// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import TestSupport

func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }
func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

/// An event packet: the header is written here from the parameters' size,
/// the parameters by hand in each test.
func event(_ code: UInt16, index: UInt16 = 0, _ parameters: [UInt8]) -> [UInt8] {
    [UInt8(code & 0xFF), UInt8(code >> 8), UInt8(index & 0xFF), UInt8(index >> 8),
     UInt8(parameters.count & 0xFF), UInt8(parameters.count >> 8)] + parameters
}

func decode(_ bytes: [UInt8]) throws(MgmtDecodeError) -> MgmtEventPacket {
    try MgmtEvent.decode(bytes.span)
}

func encode(_ command: MgmtCommand, index: UInt16 = 0) throws(MgmtEncodeError) -> [UInt8] {
    var out = ByteBuffer(capacity: 1024)
    try command.encode(index: ControllerIndex(index), into: &out)
    return out.toArray()
}

/// C0:FF:EE:12:34:56, a static random address (top two bits set).
let phoneStatic = DeviceAddress(BDAddress(0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56), .leRandom)
let phoneStaticWire = "56 34 12 EE FF C0 02"
/// 00:1B:63:AA:BB:CC, a public address.
let phonePublic = DeviceAddress(BDAddress(0x00, 0x1B, 0x63, 0xAA, 0xBB, 0xCC), .lePublic)
let phonePublicWire = "CC BB AA 63 1B 00 01"

let ancsService = UUID128("7905F431-B5CE-4E99-A40F-4B1E122D00D0")

func key(_ text: String) -> Key128 {
    let bytes = hex(text)
    precondition(bytes.count == 16)
    return Key128(wireBytes: bytes.span, at: 0)
}

extension InlineBytes {
    var bytes: [UInt8] { (0..<count).map { self[$0] } }
}
