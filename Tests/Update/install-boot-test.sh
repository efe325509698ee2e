#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 32's proof 1 in QEMU (docs/updates.md, "Installing from the card"):
# an image of version N installs a bundle of version N+1 from its own card
# and boots the new slot.
#   install-boot-test.sh IMAGE
# IMAGE: scripts/build-image's Zero 2 W .img (make image-build). The test
# builds the bundle N+1 from that image with scripts/build-bundle (the same
# slot A, the manifest's version one patch level up: what the card checks
# and RAUC installs), and on a sparse copy of the image puts it into
# wristlink/update/ on the boot partition and a bond on the data partition
# (Tests/Image/bonds). Then, each boot -M raspi3b from the files the Pi's
# firmware would load (config.txt's kernel= and initramfs under the
# os_prefix= of wristlink-slot.txt, the slot's device tree with config.txt's
# overlays, the slot's cmdline.txt), bounded by INSTALL_BOOT_TIMEOUT
# (default 900 s) each:
#   boot 1 (slot A): wristlink-update.service installs the bundle into slot B
#     and reboots (QEMU exits: -no-reboot); its lines are on the console;
#   then, on the card: wristlink-slot.txt names slot B on trial
#     (os_prefix=slot-b/), slot-b/ holds the bundle's boot files with
#     root=PARTUUID=574c0001-03 rauc.slot=B, the bundle is in
#     wristlink/update/done/ with its reason, the FAT is clean (fsck.vfat -n);
#   boot 2 (slot B, the files wristlink-slot.txt names): / is partition 3,
#     wristlink-trial-begin.service has pointed the next boot back at A,
#     wristlink.service reaches READY=1 with the bond loaded, no failed
#     unit, the bonded phone's link comes back (the Zero 2 W's Bluetooth
#     UART is Tests/Image/bt-uart-relay.py's controller with a Bumble phone
#     holding the bond, as in the boot test's Bluetooth boot), and
#     wristlink-trial-end.service keeps slot B, leaves update-done for the
#     wrist and tells the firmware, which says it showed it; the power is cut;
#     then wristlink-slot.txt says B committed and good, no trial: the
#     next boot is B.
# Results and consoles in .build/image/install-boot-test/; the durations in
# timings.txt. Exit 0 when every check passed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
IMAGE="${1:?usage: install-boot-test.sh IMAGE}"
LIMIT="${INSTALL_BOOT_TIMEOUT:-900}"
OUT="$ROOT/.build/image/install-boot-test"
"$ROOT/scripts/ensure-packages" qemu-system-arm mtools e2fsprogs python3 device-tree-compiler dosfstools rauc squashfs-tools >&2
PY="${WL_BT_PYTHON:-$ROOT/.build/vm/venv/bin/python}"
if [ ! -x "$PY" ] || ! "$PY" -c 'import bumble' 2>/dev/null; then
  "$ROOT/Tests/VM/setup.sh" >&2   # the VM suite's venv (Bumble), for the phone of boot 2
fi
rm -rf "$OUT"; mkdir -p "$OUT"
T0=$(date +%s.%N)
. "$ROOT/Tests/Image/boot-files.sh"   # the image boot tests' shared steps and checks

# --- the bundle N+1 -------------------------------------------------------------
base="${IMAGE##*/}"; version="${base#wristlink-}"; version="${version%-pi-zero-2w.img}"
upstream="${version%%-*}"; rest="${version#"$upstream"}"
next="$(echo "$upstream" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')$rest"
t=$(date +%s.%N)
"$ROOT/scripts/build-bundle" pi-zero-2w "$IMAGE" "$OUT/bundle" "$next" > "$OUT/build-bundle.log" 2>&1 || {
  tail -5 "$OUT/build-bundle.log"; echo "install-boot-test: build-bundle failed" >&2; exit 1; }
bundle="$OUT/bundle/wristlink-$next-pi-zero-2w.raucb"
echo "install-boot-test: image $version, bundle $next ($(( $(stat -c %s "$bundle") / 1048576 )) MiB, $(elapsed "$t") s)" | tee -a "$OUT/timings.txt"

# --- the card ---------------------------------------------------------------------
disk="$OUT/sd.img"
cp --sparse=always "$IMAGE" "$disk"
image_partitions "$disk" "$OUT"
fat="$disk@@$boot_off"
free_kb() { mdir -i "$fat" ::/ | sed -n 's/^ *\([0-9 ]*\) bytes free.*/\1/p' | tr -d ' ' | awk '{ print int($1 / 1024) }'; }
free_before="$(free_kb) KiB free"
mmd -i "$fat" ::/wristlink/update 2>/dev/null || true
mcopy -i "$fat" "$bundle" "::/wristlink/update/${bundle##*/}" || { echo "install-boot-test: the bundle does not fit on the boot partition ($free_before)" >&2; exit 1; }
echo "install-boot-test: boot partition $((boot_len / 1048576)) MiB: $free_before, $(free_kb) KiB with the bundle" | tee -a "$OUT/timings.txt"
place_bond "$disk" "$ROOT/Tests/Image/bonds" "$OUT"
pad_power_of_two "$disk"   # QEMU's SD card: a power of two

# What the firmware would start (boot-files.sh): the slot wristlink-slot.txt
# names, config.txt's kernel= and initramfs under it, the Zero 2 W's tree
# with config.txt's overlays.
firmware_files() {  # firmware_files N: $OUT/N/{vmlinuz,initrd.img,zero-2-w.dtb,cmdline.txt,prefix}
  mkdir -p "$OUT/$1"
  slot_boot_files "$fat" "$OUT/$1"
  printf '%s\n' "$prefix" > "$OUT/$1/prefix"
}
qemu_pid=""
relay_pid=""
run_qemu() {  # run_qemu N [phone]: boots from $OUT/N's files, console in $OUT/console-N.log;
  # with "phone", the Zero 2 W's Bluetooth UART is Tests/Image/bt-uart-relay.py's
  # controller with the bonded phone (as the boot test's Bluetooth boot)
  local d="$OUT/$1" bt=null
  : > "$OUT/console-$1.log"
  if [ "${2:-}" = phone ]; then
    mkdir -p "$OUT/relay-$1"; bt="unix:$OUT/relay-$1/bt.sock"
    "$PY" "$ROOT/Tests/Image/bt-uart-relay.py" --socket "$OUT/relay-$1/bt.sock" --results "$OUT/relay-$1" --limit "$((LIMIT + 60))" \
      > "$OUT/relay-$1/relay.out" 2>&1 &
    relay_pid=$!
    for _ in $(seq 100); do [ -S "$OUT/relay-$1/bt.sock" ] && break; sleep 0.2; done
  fi
  qemu-system-aarch64 -M raspi3b -accel tcg,thread=single -kernel "$d/vmlinuz" -initrd "$d/initrd.img" -dtb "$d/zero-2-w.dtb" \
    -append "$(tr -d '\r\n' < "$d/cmdline.txt") wristlink.boot-report $RASPI_QEMU_APPEND" \
    -drive "file=$disk,if=sd,format=raw,cache=unsafe" -serial "$bt" -serial "file:$OUT/console-$1.log" \
    -display none -no-reboot -monitor none > "$OUT/qemu-$1.log" 2>&1 &
  qemu_pid=$!
}
power_cut() {
  kill -KILL "$qemu_pid" 2>/dev/null || true; wait "$qemu_pid" 2>/dev/null || true
  if [ -n "$relay_pid" ]; then kill "$relay_pid" 2>/dev/null; wait "$relay_pid" 2>/dev/null; relay_pid=""; fi
  return 0
}
trap power_cut EXIT
set +e +o pipefail

# --- boot 1: slot A installs the bundle and reboots ------------------------------------
firmware_files 1
[ "$(cat "$OUT/1/prefix")" = slot-a/ ]; check "before: the firmware starts slot A" $? "$(cat "$OUT/1/wristlink-slot.txt")"
t1=$(date +%s.%N)
run_qemu 1
while kill -0 "$qemu_pid" 2>/dev/null; do
  [ "$(awk -v a="$t1" -v b="$(date +%s.%N)" "BEGIN { print (b - a > $LIMIT) }")" = 0 ] || { fail "boot 1: did not reboot in $LIMIT s"; break; }
  # refused or failed: no reboot comes (the boot report ends the boot)
  grep -q 'wl-report: end' "$OUT/console-1.log" 2>/dev/null && { fail "boot 1: booted on without installing"; break; }
  sleep 2
done
power_cut
tr -d '\r' < "$OUT/console-1.log" | grep -aE 'update-install|wristlink bundle hook|rauc' > "$OUT/update-1.txt"
printf 'boot 1 (slot A, the installation): qemu ended after %s s\n' "$(elapsed "$t1")" | tee -a "$OUT/timings.txt"
grep -q "installing $next" "$OUT/update-1.txt"; check "boot 1: update-install accepted and installed $next" $? "$(tail -5 "$OUT/update-1.txt")"
grep -q "rebooting into the trial" "$OUT/update-1.txt"; check "boot 1: it rebooted into the trial" $? "$(tail -5 "$OUT/update-1.txt")"
grep -q "slot B's boot files written" "$OUT/update-1.txt"; check "boot 1: the bundle's hook wrote slot B's boot files" $? "$(grep -i hook "$OUT/update-1.txt" | tail -3)"
grep -E 'RAUC.s service is up|installed .* in [0-9]+ s' "$OUT/update-1.txt" | sed 's/^.*update-install: /boot 1: /' >> "$OUT/timings.txt"

# --- the card after the installation -------------------------------------------------
mcopy -n -i "$fat" ::/wristlink-slot.txt "$OUT/slot-after-1.txt"
tr -d '\r' < "$OUT/slot-after-1.txt" | grep -q '^# state boot=B committed=A trial=B A=good B=bad$' && tr -d '\r' < "$OUT/slot-after-1.txt" | grep -qx 'os_prefix=slot-b/'
check "after boot 1: wristlink-slot.txt names slot B on trial (os_prefix=slot-b/)" $? "$(cat "$OUT/slot-after-1.txt")"
mcopy -n -i "$fat" ::/slot-b/cmdline.txt "$OUT/cmdline-b.txt" && grep -q 'root=PARTUUID=574c0001-03 ' "$OUT/cmdline-b.txt" && grep -q 'rauc.slot=B' "$OUT/cmdline-b.txt"
check "after boot 1: slot-b/cmdline.txt says root=PARTUUID=574c0001-03 rauc.slot=B" $? "$(cat "$OUT/cmdline-b.txt" 2>&1)"
mkdir -p "$OUT/bundle-boot"; unsquashfs -q -f -d "$OUT/bundle-boot" "$bundle" boot.sha256 > /dev/null 2>&1
bad_files=0
while read -r sum name; do
  [ "$name" = cmdline.txt ] && continue
  [ "$(mcopy -n -i "$fat" "::/slot-b/$name" - 2>/dev/null | sha256sum | cut -d' ' -f1)" = "$sum" ] || bad_files=$((bad_files + 1))
done < "$OUT/bundle-boot/boot.sha256"
[ "$bad_files" -eq 0 ] && [ -s "$OUT/bundle-boot/boot.sha256" ]; rc=$?; check "after boot 1: slot-b/ holds the bundle's boot files byte for byte ($(wc -l < "$OUT/bundle-boot/boot.sha256") files)" "$rc" "$bad_files differ"
mdir -b -i "$fat" ::/wristlink/update/done 2>/dev/null | grep -q "${bundle##*/}.reason" && ! mdir -b -i "$fat" ::/wristlink/update 2>/dev/null | grep -q '/update/[^/]*\.raucb$'
check "after boot 1: the bundle is in wristlink/update/done/ with its reason" $? "$(mdir -/ -b -i "$fat" ::/wristlink/update 2>&1)"
mcopy -n -i "$fat" "::/wristlink/update/done/${bundle##*/}.reason" - 2>/dev/null | tr -d '\r' | sed 's/^/done reason: /' | tee -a "$OUT/summary.txt"
dd if="$disk" of="$OUT/boot-1.vfat" bs=1M iflag=skip_bytes,count_bytes skip="$boot_off" count="$boot_len" status=none
fsck.vfat -n "$OUT/boot-1.vfat" > "$OUT/fsck-1.txt" 2>&1; check "after boot 1: the boot partition is clean (fsck.vfat -n)" $? "$(tail -3 "$OUT/fsck-1.txt")"
rm -f "$OUT/boot-1.vfat"

# --- boot 2: the firmware's choice, slot B ----------------------------------------------
firmware_files 2
[ "$(cat "$OUT/2/prefix")" = slot-b/ ]; check "boot 2: the firmware starts slot B" $? "$(cat "$OUT/2/prefix")"
t2=$(date +%s.%N)
run_qemu 2 phone
# until the report has ended and trial-end has decided (after READY=1 and the phone's link)
# (and what the wrist showed: trial-end's last line once it kept the slot)
while kill -0 "$qemu_pid" 2>/dev/null && ! { grep -aq 'wl-report: end' "$OUT/console-2.log" && grep -aqE 'trial-end: (the wrist showed|the firmware was told|.*the firmware is not running|the firmware.s state directory is missing|no bonded phone|slot B: its firmware)' "$OUT/console-2.log"; } 2>/dev/null; do
  [ "$(awk -v a="$t2" -v b="$(date +%s.%N)" "BEGIN { print (b - a > $LIMIT) }")" = 0 ] || { fail "boot 2: no report in $LIMIT s"; break; }
  sleep 2
done
power_cut
printf 'boot 2 (slot B): report after %s s; wristlink.service ready %s s after the kernel started\n' "$(elapsed "$t2")" \
  "$(awk -v u="$(field 2 service-active-us)" 'BEGIN { printf "%.1f", u / 1e6 }')" | tee -a "$OUT/timings.txt"
field 2 "mount /" | grep -Eq '^/dev/mmcblk0p3 ext4 ro,'; rc=$?; check "boot 2: / is slot B's root, partition 3, read-only ($(field 2 'mount /'))" "$rc" "$(field 2 'mount /')"
case "$(field 2 slot)" in "boot=A committed=A trial=B A=good B=bad"|"boot=B committed=B trial=none A=good B=good") true ;; *) false ;; esac
rc=$?; check "boot 2: the backend reads slot B's trial begun or B kept ($(field 2 slot))" "$rc" "$(field 2 slot)"
tr -d '\r' < "$OUT/console-2.log" | grep -a 'trial-end: \|rauc-boot-backend: ' | sed 's/^.*\] //; s/^/boot 2: /' | tr -cd '[:print:]\n' >> "$OUT/summary.txt"
tr -d '\r' < "$OUT/console-2.log" | grep -aq 'rauc-boot-backend: slot B on trial: the next boot is A unless B is marked good'
check "boot 2: wristlink-trial-begin.service pointed the next boot back at A" $? "$(tr -d '\r' < "$OUT/console-2.log" | grep -a 'rauc-boot-backend' | tail -2)"
tr -d '\r' < "$OUT/console-2.log" | grep -aq "trial-end: a bonded phone's link is back (encrypted)"; check "boot 2: trial-end waited for the bonded phone's link (the relay's phone, encrypted with the bond's key)" $? "$(tr -d '\r' < "$OUT/console-2.log" | grep -a 'trial-end' | tail -3)"
tr -d '\r' < "$OUT/console-2.log" | grep -aq "trial-end: slot B reached READY on its trial and a bonded phone's link came back"; check "boot 2: trial-end kept slot B once wristlink.service was ready and the phone was back" $? "$(tr -d '\r' < "$OUT/console-2.log" | grep -a 'trial-end' | tail -2)"
tr -d '\r' < "$OUT/console-2.log" | grep -aq "trial-end: the wrist showed update-done"
check "boot 2: the wrist showed update-done (trial-end's notice, SIGUSR1, the firmware's own line)" $? "$(tr -d '\r' < "$OUT/console-2.log" | grep -a 'trial-end' | tail -2)"
svc="$(field 2 service)"
case " $svc " in *" ActiveState=active "*" SubState=running "*) true ;; *) false ;; esac; check "boot 2: wristlink.service reached READY=1 ($svc)" $? "$svc"
report 2 | grep -q '^journal: loaded 1 bonded phone(s) from /var/lib/wristlink/bonds'; check "boot 2: the bond is loaded" $? "$(report 2 | grep '^journal:' | head -5)"
[ "$(field 2 system)" = running ]; rc=$?; check "boot 2: no failed unit (system $(field 2 system), failed: $(field 2 failed-units))" "$rc" "$(field 2 failed-units)"
mcopy -n -i "$fat" ::/wristlink-slot.txt "$OUT/slot-after-2.txt"
tr -d '\r' < "$OUT/slot-after-2.txt" | grep -qx 'os_prefix=slot-b/' && tr -d '\r' < "$OUT/slot-after-2.txt" | grep -qx '# state boot=B committed=B trial=none A=good B=good'
check "after boot 2: wristlink-slot.txt names slot B, committed, no trial: the next boot is B" $? "$(cat "$OUT/slot-after-2.txt")"
mcopy -n -i "$fat" "::/wristlink/update/done/${bundle##*/}.reason" - 2>/dev/null | tr -d '\r' | grep -q "; kept: slot B reached READY on its trial and a bonded phone's link came back\$"
check "after boot 2: the bundle's reason in done/ says kept" $? "$(mcopy -n -i "$fat" "::/wristlink/update/done/${bundle##*/}.reason" - 2>&1)"
printf 'install-boot-test: %s s, %d failed\n' "$(elapsed "$T0")" "$fails" | tee -a "$OUT/timings.txt"
[ "$fails" -eq 0 ]
