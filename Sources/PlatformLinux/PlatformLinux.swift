// PlatformLinux: the only module that talks to the kernel.
//
// Design: one thread, one poll(2). `LinuxPlatform` is generic over its link
// backend (UNIX SOCK_SEQPACKET for the simulator and tests, BlueZ L2CAP for
// the wearable) and its lines backend (simulated, or libgpiod), so each
// combination is specialised and nothing is boxed.
//
// C headers: files that use socket declarations (SOCK_*, sockaddr_un)
// import CBlueZ as well as CLinux. Its shim includes <sys/socket.h>, and in
// a whole-module (release) build those declarations resolve to CBlueZ, so a
// file without that import cannot see them (debug builds hide this). Every syscall goes
// through `Sys`, which retries EINTR and turns errno into a typed
// `SystemError`. Sockets are non-blocking; each wakeup drains a bounded
// number of inputs. Signals arrive through a signalfd in the same poll.
//
//   Sys.swift             syscall boundary: EINTR, errno -> SystemError
//   PollSet.swift         the fixed pollfd table
//   UnixLink.swift        SOCK_SEQPACKET link: one packet = one ATT PDU
//   SimLines.swift        simulated lines, buttons pressed from a console
//   GPIODLines.swift      real lines through libgpiod, as the board file says
//   CommandReader.swift   bounded line reader for the console
//   Signals.swift         SIGINT/SIGTERM through signalfd
//   LinuxPlatform.swift   the Platform implementation tying them together
