import Firmware
import Glibc
import PlatformLinux
import Testing
import TestSupport

/// Runs a command and returns its standard output.
func capture(_ command: String) -> (status: Int32, output: String) {
    guard let pipe = popen(command + " 2>/dev/null", "r") else { return (-1, "") }
    var output = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, pipe)
        if n <= 0 { break }
        output += buffer[0..<n]
    }
    return (pclose(pipe), String(decoding: output, as: UTF8.self))
}

let tsharkPresent = access("/usr/bin/tshark", X_OK) == 0

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
