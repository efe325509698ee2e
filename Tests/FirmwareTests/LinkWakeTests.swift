// SPDX-License-Identifier: Apache-2.0
import Bounded
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

@Suite("The poll loop and inputs a link holds")
struct LinkWakeTests {
    @Test("a raise the UNIX link answers itself makes the next wait return at once (a raise asked for by a timer is not left until another wakeup)")
    func heldSecurityAnswerWakesAtOnce() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        var platform = try LinuxPlatform(
            link: UnixLink(connected: fds[0]), lines: SimLines(outputs: ["led"], buttons: ["accept"], consoleFD: -1), handleSignals: false)
        var pdu = ByteBuffer(capacity: 600)
        #expect(platform.link.hasPendingInput == true, "the connection itself is reported first")
        #expect(platform.nextLinkInput(into: &pdu) == .connected)
        #expect(platform.link.hasPendingInput == false)
        platform.raiseSecurity(attempt: 1)
        #expect(platform.link.hasPendingInput == true)
        let start = Sys.monotonicMs()
        platform.wait(until: Instant(ms: start + 5_000))
        #expect(Sys.monotonicMs() - start < 1_000)
        #expect(platform.nextLinkInput(into: &pdu) == .securityChanged(encrypted: true))
        #expect(platform.link.hasPendingInput == false)
    }
}
