// Linux headers and calls that Swift's Glibc module does not bring in.
#ifndef WRISTLINK_CLINUX_H
#define WRISTLINK_CLINUX_H

#include <signal.h>
#include <sys/signalfd.h>

static inline int wl_signalfd_flags(void) { return SFD_NONBLOCK | SFD_CLOEXEC; }

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC) (a GNU extension).
int wl_accept_nonblocking(int fd);

/// pipe2(fds, O_CLOEXEC) (a GNU extension).
int wl_pipe_cloexec(int fds[2]);

#endif
