# SPDX-License-Identifier: Apache-2.0
# Sourced by the image's boot tests (boot-test.sh, bt-boot-test.sh, and
# Tests/Update's install-boot-test.sh and fault-boot-test.sh): what they
# share about a copy of the SD-card image, and how they report.
#   elapsed T0                 seconds since T0 (date +%s.%N), one decimal
#   pass / fail TEXT           a PASS or FAIL line on stdout and in
#                              OUT/summary.txt (fail counts in `fails`)
#   check NAME STATUS DETAIL   pass NAME when STATUS is 0, else fail with DETAIL
#                              (keep the status before building NAME: a
#                              $(…) in NAME sets $?)
#   report N, field N KEY      the boot report's lines (wl-report:) in
#                              OUT/console-N.log, printable characters only;
#                              the value of one of its KEY: lines
#   image_partitions DISK OUT  OUT/partitions: "index start-byte size-byte type"
#                              per MBR entry; sets boot_off/_len, root_off/_len
#                              (partition 2: slot A's root), data_off/_len (4)
#   place_bond DISK BONDS OUT  writes BONDS as state/bonds (0600) on the data
#                              partition, as the firmware would have stored it
#   slot_boot_files FAT OUT    what the Pi's firmware would start (docs/updates.md,
#                              "The slot selection"): the os_prefix= of
#                              wristlink-slot.txt, which config.txt includes (the
#                              last os_prefix= line counts); its cmdline.txt,
#                              config.txt's kernel= and initramfs, the Zero 2 W's
#                              device tree with config.txt's overlays applied
#                              (fdtoverlay) into OUT/cmdline.txt, vmlinuz,
#                              initrd.img, zero-2-w.dtb; sets prefix,
#                              kernel_file, initrd_file, overlays
#   pad_power_of_two DISK      QEMU's SD card must be a power of two in size
#                              (sparse: costs nothing)
#   RASPI_QEMU_APPEND          what every raspi3b boot adds to the command line:
#                              QEMU 7.2's raspi3b resets the machine as soon as
#                              Linux arms the BCM2835's watchdog (the boot ends
#                              when systemd opens /dev/watchdog0; the image arms
#                              it at every boot: board/image/watchdog.conf), so
#                              systemd is told not to (systemd.watchdog_sec=0).
#                              The driver stays: Linux reboots through it (an
#                              update's reboot). The virt boot shows the arming
#                              on QEMU's i6300esb instead
# Needs python3, mtools, e2fsprogs and device-tree-compiler (fdtoverlay,
# fdtget, fdtput); FAT is DISK@@boot_off for mtools.

RASPI_QEMU_APPEND="systemd.watchdog_sec=0"

fails=0
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
pass() { echo "PASS $*" | tee -a "$OUT/summary.txt"; }
fail() { echo "FAIL $*" | tee -a "$OUT/summary.txt"; fails=$((fails + 1)); }
check() { if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1: $3"; fi; }
report() { tr -d '\r' < "$OUT/console-$1.log" | sed -n 's/^.*wl-report: //p' | tr -cd '[:print:]\n'; }
field() { report "$1" | sed -n "s|^$2: ||p" | head -1; }

image_partitions() {
  python3 - "$1" > "$2/partitions" <<'PY'
import struct, sys
mbr = open(sys.argv[1], 'rb').read(512)
assert mbr[510:512] == b'\x55\xaa', 'no MBR'
for i in range(4):
    e = mbr[446 + 16 * i: 462 + 16 * i]
    kind, start, count = e[4], *struct.unpack('<II', e[8:16])
    if kind:
        print(i + 1, start * 512, count * 512, hex(kind))
PY
  read -r _ boot_off boot_len _ < <(sed -n 1p "$2/partitions")
  read -r _ root_off root_len _ < <(sed -n 2p "$2/partitions")
  # the data partition is the last (4; 3 on cards from before the two slots)
  read -r _ data_off data_len _ < <(tail -n 1 "$2/partitions")
}

place_bond() {
  dd if="$1" of="$3/data.ext4" bs=1M iflag=skip_bytes,count_bytes skip="$data_off" count="$data_len" status=none
  debugfs -w -R "write $2 state/bonds" "$3/data.ext4" >/dev/null 2>&1
  debugfs -w -R "set_inode_field state/bonds mode 0100600" "$3/data.ext4" >/dev/null 2>&1
  dd if="$3/data.ext4" of="$1" bs=1M oflag=seek_bytes seek="$data_off" conv=notrunc,sparse status=none
  rm -f "$3/data.ext4"
}

slot_boot_files() {
  local fat="$1" out="$2" o f
  mcopy -n -i "$fat" ::/config.txt "$out/config.txt"
  # an image from before the two slots has none: the firmware ignores an
  # include of a missing file, and the prefix is empty
  mcopy -n -i "$fat" ::/wristlink-slot.txt "$out/wristlink-slot.txt" 2>/dev/null || : > "$out/wristlink-slot.txt"
  prefix="$(tr -d '\r' < "$out/wristlink-slot.txt" | sed -n 's/^os_prefix=//p' | tail -1)"
  mcopy -n -i "$fat" "::/${prefix}cmdline.txt" "$out/cmdline.txt"
  kernel_file="$(tr -d '\r' < "$out/config.txt" | sed -n 's/^kernel=//p' | tail -1)"
  initrd_file="$(tr -d '\r' < "$out/config.txt" | sed -n 's/^initramfs \([^ ]*\).*/\1/p' | tail -1)"
  mcopy -n -i "$fat" "::/$prefix$kernel_file" "$out/vmlinuz"
  mcopy -n -i "$fat" "::/$prefix$initrd_file" "$out/initrd.img"
  mcopy -n -i "$fat" "::/${prefix}bcm2837-rpi-zero-2-w.dtb" "$out/board.dtb"
  overlays=()
  for o in $(tr -d '\r' < "$out/config.txt" | sed -n 's/^dtoverlay=\([^,]*\).*/\1/p'); do
    mcopy -n -i "$fat" "::/${prefix}overlays/$o.dtbo" "$out/$o.dtbo"; overlays+=("$out/$o.dtbo")
    # The Pi's firmware merges an overlay node's phandle (there for a
    # parameter, __overrides__) into a target that has one; fdtoverlay of
    # dtc 1.6.1 fails on it (FDT_ERR_NOTFOUND), and applies no parameters.
    for f in $(fdtget -l "$out/$o.dtbo" / | grep '^fragment@'); do
      fdtput -d "$out/$o.dtbo" "/$f/__overlay__" phandle 2>/dev/null || true
    done
  done
  if [ "${#overlays[@]}" -gt 0 ]; then
    fdtoverlay -i "$out/board.dtb" -o "$out/zero-2-w.dtb" "${overlays[@]}"
  else
    cp "$out/board.dtb" "$out/zero-2-w.dtb"
  fi
}

pad_power_of_two() {
  local size pow=1
  size=$(stat -c %s "$1"); while [ "$pow" -lt "$size" ]; do pow=$((pow * 2)); done
  truncate -s "$pow" "$1"
}
