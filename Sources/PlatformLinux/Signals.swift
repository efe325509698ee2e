// SPDX-License-Identifier: Apache-2.0
// SIGINT and SIGTERM arrive through a signalfd in the poll loop, so shutdown
// runs in the loop like any other input (outputs off, then exit); SIGUSR1
// the same way, asking the firmware to look for the system's notice
// (NoticeFile). SIGPIPE is ignored: a closed peer is an EPIPE from send,
// handled as a disconnect.

import CLinux

public struct Signals: ~Copyable {
    public let fd: Int32

    public init() throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGUSR1)
        _ = try Sys.call32("sigprocmask") { sigprocmask(SIG_BLOCK, &set, nil) }
        wl_ignore_sigpipe()
        fd = try Sys.call32("signalfd") { signalfd(-1, &set, wl_signalfd_flags()) }
    }

    /// Blocks SIGUSR1 now (its default action ends the process), before
    /// `init` takes it with the others: it stays pending until then.
    public static func holdNoticeSignal() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGUSR1)
        _ = sigprocmask(SIG_BLOCK, &set, nil)
    }

    deinit { _ = CLinux.close(fd) }

    /// The next pending signal's number, or nil.
    public func next() -> Int32? {
        var info = signalfd_siginfo()
        let n = CLinux.read(fd, &info, MemoryLayout<signalfd_siginfo>.size)
        guard n == MemoryLayout<signalfd_siginfo>.size else { return nil }
        return Int32(info.ssi_signo)
    }
}
