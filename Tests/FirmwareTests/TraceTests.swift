// SPDX-License-Identifier: Apache-2.0
import Firmware
import Glibc
import PlatformLinux
import Testing
import TestSupport

@Suite("btsnoop trace")
struct TraceTests {
    @Test("every ATT PDU in and out is in the trace, and tshark decodes opcodes and handles",
          .enabled(if: tsharkPresent, "tshark is not installed (make test installs it)"))
    func tsharkDecodesTrace() throws {
        let path = "/tmp/wristlink-trace-\(getpid()).btsnoop"
        defer { unlink(path) }
        do {
            var rig = Rig(tracePath: path)
            rig.run(Script.bringUp)
            rig.phoneSends("1B 0D 00 00 00 06 01 2A 00 00 00")
            rig.settle()
        }
        let (status, output) = capture("tshark -r \(path) -T fields -e frame.p2p_dir -e btatt.opcode -e btatt.handle")
        #expect(status == 0)
        let rows = output.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        // Sent by us: Exchange MTU Request first; received: the response.
        #expect(rows.first?.prefix(2) == ["0", "0x02"])
        #expect(rows.dropFirst().first?.prefix(2) == ["1", "0x03"])
        let writes = rows.filter { $0.count == 3 && $0[1] == "0x12" }.map { $0[2] }
        #expect(writes == ["0x0004", "0x0013", "0x000e"], "CCCD writes: Service Changed, Data Source, Notification Source")
        let notification = rows.last
        #expect(notification == ["1", "0x1b", "0x000d"])
        #expect(rows.count == Script.bringUp.count + 1)
    }
}
