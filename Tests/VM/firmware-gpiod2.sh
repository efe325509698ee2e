#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The firmware for the VM suite's libgpiod 2 run (make test-vm, second boot):
# the x86_64 Embedded build against Debian trixie's libgpiod 2.x
# (scripts/build-pi with PI_ARCH=x86_64 PI_SUITE=trixie), whose
# libgpiod.so.3 is not on this bookworm host or its guest: it comes from the
# unpacked sysroot (scripts/pi-deps). run-vm.sh takes this as WL_FIRMWARE;
# suite.py runs it with the firmware's arguments. exec: the suite's signals
# reach the firmware itself.
root="$(cd "$(dirname "$0")/../.." && pwd)"
LD_LIBRARY_PATH="$root/.build/pi-sysroot-trixie-amd64/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    exec "$root/.build/pi-x86_64-trixie/wristlink" "$@"
