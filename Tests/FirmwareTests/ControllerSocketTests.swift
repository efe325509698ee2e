// SPDX-License-Identifier: Apache-2.0
import Bounded
import Firmware
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

/// The controller's start-up through the real poll loop, against a scripted
/// kernel on the other end of a socketpair standing in for the management
/// socket.
@Suite("Controller start-up against a scripted management socket")
struct ControllerSocketTests {
    /// Command Complete for `opcode` with return parameters sized as the
    /// kernel sends them (mgmt-api.txt).
    static func reply(to command: [UInt8], settings: UInt32) -> [UInt8] {
        let opcode = UInt16(command[0]) | UInt16(command[1]) << 8
        let s = (0..<4).map { UInt8(truncatingIfNeeded: settings >> (8 * UInt32($0))) }
        var params: [UInt8]
        switch opcode {
        case 0x0004:  // Read Controller Information: address, version, manufacturer, supported, current, class, names
            let supported: [UInt8] = [0xFF, 0xBE, 0x01, 0x00]
            params = [0x01, 0x00, 0x00, 0x11, 0x57, 0xF0, 0x09, 0xFF, 0xFF] + supported + s + [0, 0, 0]
                + [UInt8](repeating: 0, count: 249) + [UInt8](repeating: 0, count: 11)
        case 0x000F: params = Array(command[6...])  // Set Local Name echoes the names
        case 0x003E: params = [command[6]]  // Add Advertising: the instance
        case 0x0018, 0x0013, 0x0030, 0x000B: params = []  // IO capability, keys, default configuration
        default: params = s  // the Set commands: current settings
        }
        let body = [command[0], command[1], 0x00] + params
        return [0x01, 0x00, command[2], command[3], UInt8(body.count & 0xFF), UInt8(body.count >> 8)] + body
    }

    @Test("from Index Added to advertising: every command in order, answered by the scripted kernel, then READY")
    func startUp() throws {
        var fds: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        var linkFDs: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &linkFDs) == 0)
        defer { close(fds[1]); close(linkFDs[1]) }
        var config = testConfig()
        config.controller.enabled = true
        let platform = try! LinuxPlatform(
            link: UnixLink(connected: linkFDs[0]),
            lines: SimLines(outputs: config.board.outputs.map(\.name), buttons: config.board.buttons.map(\.name), consoleFD: -1),
            handleSignals: false, mgmt: MgmtSocket(connected: fds[0]))
        var runner = Runner(platform: platform, sink: RecordingSink(), core: WearableCore(config: config))
        runner.start()
        let kernel = fds[1]
        var settings: UInt32 = 0
        var opcodes: [UInt16] = []
        var addAdvertising: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let start = Sys.monotonicMs()
        while Sys.monotonicMs() - start < 3_000 && !runner.effects.sink.events.contains(.controller(.advertising)) {
            let n = buffer.withUnsafeMutableBufferPointer { recv(kernel, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                let command = Array(buffer[0..<n])
                let opcode = UInt16(command[0]) | UInt16(command[1]) << 8
                opcodes.append(opcode)
                switch opcode {
                case 0x000D: settings |= 0x200  // LE
                case 0x002D: settings |= 0x800  // Secure Connections
                case 0x0009: settings |= 0x10  // bondable
                case 0x0007: settings |= 0x02  // connectable
                case 0x0005: settings |= 0x01  // powered
                case 0x003E: addAdvertising = command
                default: break
                }
                let answer = Self.reply(to: command, settings: settings)
                _ = answer.withUnsafeBufferPointer { send(kernel, $0.baseAddress, $0.count, 0) }
            }
            runner.step(waitingAtMostMs: 10)
        }
        #expect(opcodes == [0x0004, 0x000D, 0x002D, 0x0009, 0x0018, 0x000F, 0x0013, 0x0030, 0x0007, 0x004C, 0x0005, 0x004C, 0x003E])
        #expect(runner.effects.sink.events.contains(.controller(.advertising)))
        #expect(runner.effects.sink.events.contains(.controller(.pairingMode(on: true, reason: .noBond))))
        // Add Advertising: instance 1, connectable + discoverable + TX power;
        // the ANCS UUID in the solicitation list and the shortened name; the
        // complete name in the scan response.
        try #require(addAdvertising.count >= 42, "Add Advertising was sent")
        #expect(toHex(Array(addAdvertising.prefix(11))) == "3E 00 00 00 2F 00 01 13 00 00 00")
        #expect(toHex(Array(addAdvertising[17..<35])) == "11 15 " + Wire.ancs)
        #expect(toHex(Array(addAdvertising[35..<42])) == "06 08 57 72 69 73 74")
        #expect(String(decoding: addAdvertising.suffix(9), as: UTF8.self) == "Wristlink")
    }

    @Test("a set-up that keeps failing (rfkill on Set Powered) still says READY=1, and STATUS= names the failed step, its status and the retry")
    func readyWhileSetupFails() throws {
        let notifyPath = "/tmp/wristlink-notify-setup-\(getpid())"
        unlink(notifyPath)
        let notify = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in notifyPath.utf8.enumerated() { raw[i] = b }
        }
        _ = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notify, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        defer { close(notify); unlink(notifyPath) }
        var fds: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        var linkFDs: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &linkFDs) == 0)
        defer { close(fds[1]); close(linkFDs[1]) }
        var config = testConfig()
        config.controller.enabled = true
        let platform = try! LinuxPlatform(
            link: UnixLink(connected: linkFDs[0]),
            lines: SimLines(outputs: config.board.outputs.map(\.name), buttons: config.board.buttons.map(\.name), consoleFD: -1),
            handleSignals: false, mgmt: MgmtSocket(connected: fds[0]), serviceManager: (notifySocket: notifyPath, watchdogUsec: nil))
        var runner = Runner(platform: platform, sink: RecordingSink(), core: WearableCore(config: config))
        runner.start()
        let kernel = fds[1]
        var settings: UInt32 = 0
        var buffer = [UInt8](repeating: 0, count: 2048)
        let start = Sys.monotonicMs()
        func failed(_ events: [FirmwareEvent]) -> Bool {
            events.contains { if case .controller(.setupFailed) = $0 { true } else { false } }
        }
        while Sys.monotonicMs() - start < 3_000 && !failed(runner.effects.sink.events) {
            let n = buffer.withUnsafeMutableBufferPointer { recv(kernel, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                let command = Array(buffer[0..<n])
                let opcode = UInt16(command[0]) | UInt16(command[1]) << 8
                var answer: [UInt8]
                if opcode == 0x0005 && command[6] == 1 {
                    answer = [0x02, 0x00, command[2], command[3], 0x03, 0x00, 0x05, 0x00, 0x12]  // Command Status: RF-kill
                } else {
                    if opcode == 0x000D { settings |= 0x200 }
                    answer = Self.reply(to: command, settings: settings)
                }
                _ = answer.withUnsafeBufferPointer { send(kernel, $0.baseAddress, $0.count, 0) }
            }
            runner.step(waitingAtMostMs: 10)
        }
        #expect(runner.effects.sink.events.contains(.controller(.setupFailed(step: .powerOn, failure: .status(.rfKilled)))))
        var messages: [String] = []
        while true {
            let n = buffer.withUnsafeMutableBufferPointer { recv(notify, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { break }
            messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
        #expect(messages == ["READY=1", "STATUS=controller set-up failed at power-on: rfkilled; trying again every 5 s"])
    }
}
