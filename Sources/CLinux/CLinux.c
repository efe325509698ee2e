// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include <stddef.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "CLinux.h"

int wl_accept_nonblocking(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int wl_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

char **wl_environ(void) { return environ; }

// glibc calls .init_array functions with (argc, argv, envp) before main, as
// Swift's own runtime relies on for `CommandLine` on Linux.
static int saved_argc;
static char **saved_argv;

static void wl_save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

__attribute__((section(".init_array"), used))
static void (*const wl_save_arguments_entry)(int, char **, char **) = wl_save_arguments;

int wl_argc(void) { return saved_argc; }

char **wl_argv(void) { return saved_argv; }
