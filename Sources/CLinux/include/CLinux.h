// SPDX-License-Identifier: Apache-2.0
// The C library as PlatformLinux sees it, in both builds: the host build
// (where these headers belong to Swift's Glibc module and are re-exported
// from here) and the Embedded Swift build for the Pi, which has no Glibc
// module and imports glibc's headers only through this one. So
// PlatformLinux imports `CLinux`, never `Glibc` (docs/pi-build.md).
//
// Swift cannot import C variadic functions (`open`, `fcntl`, `ioctl`) or
// macros that are expressions (`errno`, `SIG_IGN`); the Glibc overlay covers
// some of them in the host build only. The `wl_` functions below stand in
// for them in both builds.
#ifndef WRISTLINK_CLINUX_H
#define WRISTLINK_CLINUX_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <dirent.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static inline int wl_signalfd_flags(void) { return SFD_NONBLOCK | SFD_CLOEXEC; }

/// The calling thread's errno (a macro over __errno_location()).
static inline int wl_errno(void) { return errno; }

/// openat(2) without a mode (openat is variadic): read-only, no
/// following of a final symbolic link is NOT asked (sysfs links to devices).
static inline int wl_openat_read(int dirfd, const char *path) { return openat(dirfd, path, O_RDONLY | O_CLOEXEC); }

/// getdents64(2) into the caller's buffer (syscall is variadic; glibc's
/// own wrapper is newer than some targets): a directory listing without
/// opendir's allocation.
static inline long wl_getdents64(int fd, void *buf, size_t len) { return syscall(SYS_getdents64, fd, buf, len); }

/// open(2) with a mode (open is variadic).
static inline int wl_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

/// fcntl(fd, F_GETFL) / fcntl(fd, F_SETFL, flags) (fcntl is variadic).
static inline int wl_get_status_flags(int fd) { return fcntl(fd, F_GETFL); }
static inline int wl_set_status_flags(int fd, int flags) { return fcntl(fd, F_SETFL, flags); }

/// ioctl(fd, TIOCGWINSZ, size) (ioctl is variadic).
static inline int wl_window_size(int fd, struct winsize *size) { return ioctl(fd, TIOCGWINSZ, size); }

/// signal(SIGPIPE, SIG_IGN) (SIG_IGN is a cast macro).
static inline void wl_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC) (a GNU extension).
int wl_accept_nonblocking(int fd);

/// pipe2(fds, O_CLOEXEC) (a GNU extension).
int wl_pipe_cloexec(int fds[2]);

/// The process environment (`environ` is declared only under _GNU_SOURCE).
char **wl_environ(void);

/// The command line as main(argc, argv) got it (kept by an .init_array
/// function; Embedded Swift has no `CommandLine`).
int wl_argc(void);
char **wl_argv(void);

#endif
