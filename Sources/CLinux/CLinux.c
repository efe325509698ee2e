#define _GNU_SOURCE
#include <stddef.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "CLinux.h"

int wl_accept_nonblocking(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int wl_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
