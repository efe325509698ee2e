#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# In the test VM (the image's wl-vm-gpiosim.service runs it from the 9p
# share at every boot): loads gpio-sim (built out of tree into the image by
# image/in-chroot.sh) and creates the
# chip board/vm names: one bank labelled wristlink-vm, five named lines in
# this order, all pulled down (buttons released). Same chip as
# Tests/VM/guest.sh makes for the virtme-ng suite. Writes the chip's sysfs
# folder to /run/wl-vm/sim for the test.
set -eu
LINES="led-notify led-call vibration accept reject"
modprobe configfs 2>/dev/null || true
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe gpio-sim
CFG=/sys/kernel/config/gpio-sim/wristlink
if [ ! -d "$CFG" ]; then
    mkdir "$CFG" "$CFG/bank0"
    echo wristlink-vm > "$CFG/bank0/label"
    echo 5 > "$CFG/bank0/num_lines"
    i=0
    for name in $LINES; do
        mkdir "$CFG/bank0/line$i"
        echo "$name" > "$CFG/bank0/line$i/name"
        i=$((i + 1))
    done
    echo 1 > "$CFG/live"
fi
CHIP="$(cat "$CFG/bank0/chip_name")"
SIM="/sys/devices/platform/$(cat "$CFG/dev_name")/$CHIP"
for i in 0 1 2 3 4; do echo pull-down > "$SIM/sim_gpio$i/pull"; done
udevadm settle --timeout=10 || true
test -c "/dev/$CHIP"
mkdir -p /run/wl-vm
echo "$SIM" > /run/wl-vm/sim
echo "gpio-sim: /dev/$CHIP ($SIM): $(ls -l "/dev/$CHIP")"
