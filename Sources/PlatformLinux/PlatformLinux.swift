// SPDX-License-Identifier: Apache-2.0
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
// file without that import cannot see them (debug builds hide this).
// Calls whose failure the code acts on go through `Sys`, which retries
// EINTR and turns errno into a typed `SystemError`; the rest (close, a
// getsockopt read back, the signalfd read) treat failure as "nothing".
// Sockets are non-blocking; each wakeup drains a bounded number of inputs.
// Signals arrive through a signalfd in the same poll.
//
//   Sys.swift             syscall boundary: EINTR, errno -> SystemError, writeAll
//   PollSet.swift         the fixed pollfd table
//   LinuxPlatform.swift   the Platform implementation tying them together
//   PacketSocket.swift    one ATT PDU per SOCK_SEQPACKET packet, send queue
//   UnixLink.swift        the link over UNIX SOCK_SEQPACKET (simulator, tests)
//   BlueZLink.swift       the link over L2CAP on the ATT fixed channel, security
//   MgmtSocket.swift      the Bluetooth management interface (HCI_CHANNEL_CONTROL)
//   SimLines.swift        simulated lines, buttons pressed from a console
//   GPIODLines.swift      real lines through libgpiod 1.6, as the board file says
//   GPIODLines2.swift     the same type through libgpiod 2.x (built instead: GPIOD2)
//   GPIOError.swift       what both share: start-up errors, chip scan, lost-edge count
//   CommandReader.swift   bounded line reader for the console
//   Signals.swift         SIGINT/SIGTERM through signalfd
//   StateFile.swift       the bond file, written atomically
//   ServiceManager.swift  systemd's READY=1 and WATCHDOG=1
//   Log.swift             leveled log on stderr (journald priorities)
//   OutputFile.swift      the events stream's file or stdout
//   Btsnoop.swift         --trace: ATT PDUs as a btsnoop file
//   PrivateFile.swift     the trace's and the events' files: 0600, no symlink followed
//   ChildProcess.swift    posix_spawn with pipes (simulator and tests)
//   ProcessControl.swift  arguments, environment, start-up file reads
//   BuildInfo.swift       the version line: version, git revision, libgpiod API, licence
//   SystemProbe.swift     doctor/test-board: systemctl, /proc, stat, uname
//   GPIODProbe.swift      doctor: a board line's information, without a request
