// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

@Suite("Read Controller Index List (mgmt-api.txt), for wristlink doctor")
struct ControllerIndexListTests {
    @Test("the command is opcode 0x0003 on the non-controller index 0xFFFF with no parameters")
    func encodesOnNoIndex() throws {
        var out = ByteBuffer(capacity: 16)
        try MgmtCommand.readControllerIndexList.encode(index: .none, into: &out)
        #expect(out.hexString == "03 00 FF FF 00 00")
    }

    @Test("Command Complete with two controllers lists hci0 and hci1")
    func twoControllers() throws {
        let packet = try decode(hex("01 00 FF FF 09 00  03 00  00  02 00  00 00 01 00"))
        guard case .commandComplete(let complete) = packet.event, case .controllerIndexList(let list) = complete.reply else {
            Issue.record("not an index list: \(packet.event)")
            return
        }
        #expect(list.count == 2)
        #expect(list.indices == [0, 1])
        #expect(list.contains(0) && list.contains(1) && !list.contains(2))
    }

    @Test("no controllers is a list of none, not an empty reply")
    func noControllers() throws {
        #expect(try decode(hex("01 00 FF FF 05 00  03 00  00  00 00")).event
            == .commandComplete(CommandComplete(opcode: .readControllerIndexList, status: .success, reply: .controllerIndexList(ControllerIndexList([])))))
    }

    @Test("a count that does not match the bytes that follow is malformed")
    func countMismatch() throws {
        #expect(try decode(hex("01 00 FF FF 07 00  03 00  00  02 00  00 00")).event
            == .commandComplete(CommandComplete(opcode: .readControllerIndexList, status: .success, reply: .malformed(byteCount: 4))))
    }
}
