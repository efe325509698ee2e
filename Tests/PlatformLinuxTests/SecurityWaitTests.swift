// SPDX-License-Identifier: Apache-2.0
import Glibc
import PlatformLinux
import Testing

/// The ATT socket's wakeups while a BT_SECURITY raise is pending (kernel 6.1
/// behaviour seen in the VM suite, Tests/VM/NOTES.md).
@Suite("BlueZ link: waiting for security")
struct SecurityWaitTests {
    let medium: UInt8 = 2

    @Test("no POLLOUT: still in BT_CONFIG, pairing or encrypting")
    func pending() {
        #expect(SecurityWait.outcome(revents: Int16(POLLIN), level: 1, wanted: medium) == .pending)
        #expect(SecurityWait.outcome(revents: 0, level: 1, wanted: medium) == .pending)
    }

    @Test("POLLOUT back: the level read then is the result")
    func result() {
        #expect(SecurityWait.outcome(revents: Int16(POLLOUT), level: 2, wanted: medium) == .changed(encrypted: true))
        #expect(SecurityWait.outcome(revents: Int16(POLLOUT) | Int16(POLLIN), level: 4, wanted: medium) == .changed(encrypted: true))
        #expect(SecurityWait.outcome(revents: Int16(POLLOUT), level: 1, wanted: medium) == .changed(encrypted: false))
    }

    @Test("the link dropped during pairing: lost, not secured, although getsockopt now returns the level asked for")
    func linkLost() {
        // After the disconnection the channel has no hci_conn and the kernel
        // reports chan->sec_level, i.e. our own request.
        #expect(SecurityWait.outcome(revents: Int16(POLLOUT) | Int16(POLLERR), level: 2, wanted: medium) == .linkLost)
        #expect(SecurityWait.outcome(revents: Int16(POLLOUT) | Int16(POLLHUP), level: 2, wanted: medium) == .linkLost)
    }
}
