#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 32's proofs 2 and 3 in QEMU (docs/updates.md, "Proofs 2 and 3"):
# power cuts during an installation from the card, and a trial whose
# firmware never becomes ready.
#   fault-boot-test.sh IMAGE
# IMAGE: scripts/build-image's Zero 2 W .img (make image-build). The test
# builds a bundle of the next version whose firmware never becomes ready:
# slot A's root with a drop-in that starts `sleep infinity` as
# wristlink.service (Type=notify: no READY=1 ever comes; named zz-… so it
# comes after the image's own drop-in, which sets ExecStart= too), written into a
# copy of the root with debugfs, signed by scripts/build-bundle like any
# bundle. On a sparse copy of the image with a bond on the data partition
# (Tests/Image/bonds) and the bundle in wristlink/update/, five boots of
# -M raspi3b from the files the Pi's firmware would load (boot-files.sh),
# each bounded by FAULT_BOOT_TIMEOUT (default 600 s); the card carries
# over from one to the next, as a wearer's would:
#   boot 0 (A): a copy of the bundle damaged inside its payload (4 KiB
#     inverted 4 MiB into the file: its signed manifest is whole, so the
#     card's check passes it): RAUC's install fails when dm-verity finds
#     the damaged block; the bundle goes to failed/ with RAUC's words, the
#     slot state is untouched, the call LED flickers, the firmware starts
#     on A, the FAT is clean;
#   the wearer copies the bundle again (undamaged);
#   boot 1 (A): the power is cut while RAUC copies the root into slot B
#     (CUT_COPY_S, 10 s, after its "Checking slot rootfs.1 (B) done." line);
#     then the slot state is untouched (A committed, no trial, the firmware
#     starts slot-a/), the bundle sits in installing/, the FAT is clean;
#   the wearer copies the bundle again;
#   boot 2 (A): the cut-off bundle goes to failed/ saying so, the new copy
#     is installed, and the power is cut while the bundle's hook writes
#     slot-b/ (CUT_HOOK_S, 8 s, after its "writing" line); then again the
#     slot state is untouched and the bundle sits in installing/;
#   the wearer copies the bundle again;
#   boot 3 (A): the initrd repairs the FAT the cut left unclean (fsck.fat
#     -a), the cut-off one goes to failed/, the new copy is installed
#     completely, the reboot into the trial (QEMU exits: -no-reboot); the
#     slot state says B on trial, the bundle is in done/, the FAT is clean;
#   boot 4 (B, wristlink.trial-ready-s=60 added to its command line): B's
#     firmware never becomes ready; the trial's bound marks B bad, moves
#     the bundle to failed/ with the reason, leaves update-failed for the
#     wrist and reboots; wristlink.service never reached READY on B;
#   boot 5 (the firmware's choice, A): READY=1 with the bond loaded, no
#     failed unit, no trial open, the firmware's "update failed" at its
#     start; the power is cut; after it the data
#     partition (its journal replayed on a copy, as a mount would) and the
#     FAT pass their checkers (e2fsck -fn, fsck.vfat -n), the bond is the
#     one placed, and the journal holds the initrd's repair at boot 3.
# Results and consoles in .build/image/fault-boot-test/; the durations in
# timings.txt. Exit 0 when every check passed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
IMAGE="${1:?usage: fault-boot-test.sh IMAGE}"
LIMIT="${FAULT_BOOT_TIMEOUT:-600}"
CUT_COPY_S="${CUT_COPY_S:-10}"
CUT_HOOK_S="${CUT_HOOK_S:-8}"
OUT="$ROOT/.build/image/fault-boot-test"
"$ROOT/scripts/ensure-packages" qemu-system-arm mtools e2fsprogs python3 device-tree-compiler dosfstools rauc squashfs-tools >&2
rm -rf "$OUT"; mkdir -p "$OUT"
T0=$(date +%s.%N)
. "$ROOT/Tests/Image/boot-files.sh"   # the image boot tests' shared steps and checks

# --- the bundle N+1 whose firmware never becomes ready ------------------------------
base="${IMAGE##*/}"; version="${base#wristlink-}"; version="${version%-pi-zero-2w.img}"
upstream="${version%%-*}"; rest="${version#"$upstream"}"
next="$(echo "$upstream" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')$rest"
t=$(date +%s.%N)
mkdir -p "$OUT/never"
never_img="$OUT/never/$base"
cp --sparse=always "$IMAGE" "$never_img"
image_partitions "$never_img" "$OUT/never"
dd if="$never_img" of="$OUT/never/root.ext4" bs=1M iflag=skip_bytes,count_bytes skip="$root_off" count="$root_len" conv=sparse status=none
cat > "$OUT/never/zz-never-ready.conf" <<'EOF'
# Tests/Update/fault-boot-test.sh: a firmware that never becomes ready
[Service]
ExecStart=
ExecStart=/bin/sleep infinity
EOF
debugfs -w -f - "$OUT/never/root.ext4" > "$OUT/never/debugfs.log" 2>&1 <<EOF
mkdir /etc/systemd/system/wristlink.service.d
write $OUT/never/zz-never-ready.conf /etc/systemd/system/wristlink.service.d/zz-never-ready.conf
sif /etc/systemd/system/wristlink.service.d/zz-never-ready.conf mode 0100644
EOF
debugfs -R 'cat /etc/systemd/system/wristlink.service.d/zz-never-ready.conf' "$OUT/never/root.ext4" 2>/dev/null | grep -qx 'ExecStart=/bin/sleep infinity' || {
  cat "$OUT/never/debugfs.log"; echo "fault-boot-test: the drop-in is not in the copy of the root" >&2; exit 1; }
dd if="$OUT/never/root.ext4" of="$never_img" bs=1M oflag=seek_bytes seek="$root_off" conv=notrunc,sparse status=none
rm -f "$OUT/never/root.ext4"
"$ROOT/scripts/build-bundle" pi-zero-2w "$never_img" "$OUT/bundle" "$next" > "$OUT/build-bundle.log" 2>&1 || {
  tail -5 "$OUT/build-bundle.log"; echo "fault-boot-test: build-bundle failed" >&2; exit 1; }
rm -f "$never_img"
bundle="$OUT/bundle/wristlink-$next-pi-zero-2w.raucb"
name="${bundle##*/}"
echo "fault-boot-test: image $version, never-ready bundle $next ($(( $(stat -c %s "$bundle") / 1048576 )) MiB, $(elapsed "$t") s)" | tee -a "$OUT/timings.txt"

# --- the card ---------------------------------------------------------------------
disk="$OUT/sd.img"
cp --sparse=always "$IMAGE" "$disk"
image_partitions "$disk" "$OUT"
fat="$disk@@$boot_off"
mmd -i "$fat" ::/wristlink/update 2>/dev/null || true
copy_bundle() { mcopy -o -i "$fat" "$bundle" "::/wristlink/update/$name"; }
# the damaged copy: 4 KiB inverted 4 MiB into the file (inside the
# squashfs's data, far from its superblock and the signature at the end)
damaged="$OUT/damaged.raucb"
python3 - "$bundle" "$damaged" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
at = 4 * 1048576
data[at:at + 4096] = bytes(b ^ 0xFF for b in data[at:at + 4096])
open(sys.argv[2], "wb").write(data)
EOF
mcopy -o -i "$fat" "$damaged" "::/wristlink/update/$name"
place_bond "$disk" "$ROOT/Tests/Image/bonds" "$OUT"
pad_power_of_two "$disk"

qemu_pid=""
run_qemu() {  # run_qemu N [EXTRA]: boots the slot the firmware would start; console in $OUT/console-N.log
  local d="$OUT/$1"
  mkdir -p "$d"
  slot_boot_files "$fat" "$d"
  printf '%s\n' "$prefix" > "$d/prefix"
  : > "$OUT/console-$1.log"
  qemu-system-aarch64 -M raspi3b -accel tcg,thread=single -kernel "$d/vmlinuz" -initrd "$d/initrd.img" -dtb "$d/zero-2-w.dtb" \
    -append "$(tr -d '\r\n' < "$d/cmdline.txt") wristlink.boot-report $RASPI_QEMU_APPEND ${2:-}" \
    -drive "file=$disk,if=sd,format=raw,cache=unsafe" -serial null -serial "file:$OUT/console-$1.log" \
    -display none -no-reboot -monitor none > "$OUT/qemu-$1.log" 2>&1 &
  qemu_pid=$!
  boot_t=$(date +%s.%N)
}
power_cut() { kill -KILL "$qemu_pid" 2>/dev/null || true; wait "$qemu_pid" 2>/dev/null || true; }
trap power_cut EXIT
console() { tr -d '\r' < "$OUT/console-$1.log" | tr -cd '[:print:]\n'; }
# wait_for N REGEX: until console N matches REGEX (0), QEMU has exited (1)
# or the boot has taken LIMIT s (2)
wait_for() {
  while :; do
    console "$1" | grep -aqE "$2" && return 0
    kill -0 "$qemu_pid" 2>/dev/null || { console "$1" | grep -aqE "$2" && return 0; return 1; }
    [ "$(awk -v a="$boot_t" -v b="$(date +%s.%N)" "BEGIN { print (b - a > $LIMIT) }")" = 0 ] || return 2
    sleep 1
  done
}
# wait_exit N: until QEMU exits (0), the boot goes on to its report
# instead (3), or LIMIT s (2)
wait_exit() {
  while kill -0 "$qemu_pid" 2>/dev/null; do
    [ "$(awk -v a="$boot_t" -v b="$(date +%s.%N)" "BEGIN { print (b - a > $LIMIT) }")" = 0 ] || return 2
    console "$1" | grep -aq 'wl-report: end' && return 3
    sleep 1
  done
}
slot_state() { mcopy -n -i "$fat" ::/wristlink-slot.txt - 2>/dev/null | tr -d '\r' | sed -n 's/^# state //p'; }
slot_prefix() { mcopy -n -i "$fat" ::/wristlink-slot.txt - 2>/dev/null | tr -d '\r' | sed -n 's/^os_prefix=//p'; }
in_dir() { mdir -b -i "$fat" "::/wristlink/update/$1" 2>/dev/null | grep -q "/$2\$"; }
reason() { mcopy -n -i "$fat" "::/wristlink/update/$1/$name.reason" - 2>/dev/null | tr -d '\r'; }
fat_clean() {  # fat_clean LABEL: fsck.vfat -n of the boot partition
  dd if="$disk" of="$OUT/boot.vfat" bs=1M iflag=skip_bytes,count_bytes skip="$boot_off" count="$boot_len" status=none
  fsck.vfat -n "$OUT/boot.vfat" > "$OUT/fsck-$1.txt" 2>&1; local rc=$?
  rm -f "$OUT/boot.vfat"; return "$rc"
}
untouched="boot=A committed=A trial=none A=good B=bad"
set +e +o pipefail

# --- boot 0: a bundle damaged inside its payload -----------------------------------------
run_qemu 0
wait_for 0 'wl-report: end'; rc=$?
power_cut
printf 'boot 0 (A, a bundle damaged inside its payload): report after %s s\n' "$(elapsed "$boot_t")" | tee -a "$OUT/timings.txt"
check "boot 0: the boot report came" "$rc" "wait $rc"
console 0 | grep -a 'update-install\|verity' | sed 's/^.*\] //; s/^/boot 0: /' | head -n 12 >> "$OUT/summary.txt"
console 0 | grep -aq "update-install: $name moved to wristlink/update/failed/: failed: rauc install"
check "boot 0: RAUC's installation of the damaged bundle failed and it went to failed/" $? "$(console 0 | grep -a 'update-install' | tail -3)"
console 0 | grep -aqE 'verity.*(corrupted|verification failed)'
check "boot 0: dm-verity found the damaged block (the kernel's line)" $? "$(console 0 | grep -a 'verity\|I/O error' | head -3)"
console 0 | grep -aq 'flickered: the installation failed'
check "boot 0: the call LED flickered for the failed installation" $? "$(console 0 | grep -a 'update-install' | tail -2)"
[ "$(slot_state)" = "$untouched" ] && [ "$(slot_prefix)" = slot-a/ ]
rc=$?; check "after boot 0: the slot state is untouched, the firmware starts slot A ($(slot_state))" "$rc" "$(slot_state) $(slot_prefix)"
in_dir failed "$name" && reason failed | grep -q '^failed: rauc install: .*; slot state: boot=A committed=A trial=none A=good B=bad$'
check "after boot 0: the damaged bundle is in failed/ with RAUC's words and the slot state" $? "$(reason failed)"
reason failed | sed 's/^/failed reason (boot 0): /' >> "$OUT/summary.txt"
svc="$(field 0 service)"
case " $svc " in *" ActiveState=active "*" SubState=running "*) true ;; *) false ;; esac; check "boot 0: wristlink.service reached READY=1 on slot A" $? "$svc"
fat_clean 0; check "after boot 0: the boot partition is clean (fsck.vfat -n)" $? "$(tail -3 "$OUT/fsck-0.txt")"
copy_bundle

# --- boot 1: a power cut while RAUC writes slot B --------------------------------------
run_qemu 1
wait_for 1 'rauc install: .*Checking slot rootfs\.1 \(B\) done\.'; rc=$?
check "boot 1: RAUC began writing slot B" "$rc" "wait $rc; $(console 1 | grep -a 'update-install\|rauc install' | tail -3)"
sleep "$CUT_COPY_S"; power_cut
printf 'boot 1 (A, cut %s s into the copy of the root): %s s\n' "$CUT_COPY_S" "$(elapsed "$boot_t")" | tee -a "$OUT/timings.txt"
console 1 | grep -aq 'rauc install: .*Copying image to rootfs\.1 done\.'
[ $? -ne 0 ]; check "boot 1: the cut came before the copy was done" $? "$(console 1 | grep -a 'rauc install' | tail -2)"
[ "$(slot_state)" = "$untouched" ] && [ "$(slot_prefix)" = slot-a/ ]
rc=$?; check "after boot 1: the slot state is untouched, the firmware starts slot A ($(slot_state))" "$rc" "$(slot_state) $(slot_prefix)"
in_dir installing "$name"; check "after boot 1: the bundle is in installing/" $? "$(mdir -/ -b -i "$fat" ::/wristlink/update 2>&1)"
fat_clean 1; check "after boot 1: the boot partition is clean (fsck.vfat -n)" $? "$(tail -3 "$OUT/fsck-1.txt")"
copy_bundle

# --- boot 2: the cut-off bundle to failed/, a power cut while the hook writes slot-b/ ---
run_qemu 2
wait_for 2 "wristlink bundle hook: writing slot B's boot files"; rc=$?
check "boot 2: the bundle's hook began writing slot-b/" "$rc" "wait $rc; $(console 2 | grep -a 'update-install\|rauc install\|hook' | tail -3)"
sleep "$CUT_HOOK_S"; power_cut
printf 'boot 2 (A, cut %s s into the hook): %s s\n' "$CUT_HOOK_S" "$(elapsed "$boot_t")" | tee -a "$OUT/timings.txt"
console 2 | grep -aq "wristlink bundle hook: slot B's boot files written"
[ $? -ne 0 ]; check "boot 2: the cut came before the hook was done" $? "$(console 2 | grep -a 'hook' | tail -2)"
console 2 | grep -aq "update-install: $name moved to wristlink/update/failed/: refused: its installation was cut off"
check "boot 2: the bundle cut off at boot 1 went to failed/ saying so" $? "$(console 2 | grep -a 'update-install' | head -3)"
[ "$(slot_state)" = "$untouched" ] && [ "$(slot_prefix)" = slot-a/ ]
rc=$?; check "after boot 2: the slot state is untouched, the firmware starts slot A ($(slot_state))" "$rc" "$(slot_state) $(slot_prefix)"
in_dir installing "$name"; check "after boot 2: the new copy is in installing/" $? "$(mdir -/ -b -i "$fat" ::/wristlink/update 2>&1)"
fat_clean 2; echo "after boot 2: fsck.vfat -n says: $(grep -v '^fsck.fat\|^$' "$OUT/fsck-2.txt" | head -3 | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
copy_bundle

# --- boot 3: installed completely, the reboot into the trial -----------------------------
run_qemu 3
wait_exit 3; rc=$?
printf 'boot 3 (A, the installation): qemu ended after %s s\n' "$(elapsed "$boot_t")" | tee -a "$OUT/timings.txt"
power_cut
console 3 | grep -a 'update-install\|hook' | sed 's/^.*\] //; s/^/boot 3: /' > "$OUT/update-3.txt"
console 3 | grep -aq 'FAT-fs (mmcblk0p1): error'
[ $? -ne 0 ]; check "boot 3: Linux found no error in the boot partition" $? "$(console 3 | grep -a 'FAT-fs' | head -3)"
console 3 | grep -aq "rebooting into the trial of $next"; check "boot 3: installed $next and rebooted into the trial" $? "wait $rc; $(tail -4 "$OUT/update-3.txt")"
[ "$(slot_state)" = "boot=B committed=A trial=B A=good B=bad" ] && [ "$(slot_prefix)" = slot-b/ ]
rc=$?; check "after boot 3: slot B is on trial ($(slot_state))" "$rc" "$(slot_state) $(slot_prefix)"
in_dir done "$name"; check "after boot 3: the bundle is in done/" $? "$(mdir -/ -b -i "$fat" ::/wristlink/update 2>&1)"
fat_clean 3; check "after boot 3: the boot partition is clean (fsck.vfat -n)" $? "$(tail -3 "$OUT/fsck-3.txt")"

# --- boot 4: B's firmware never becomes ready; the bound sends it back -------------------
run_qemu 4 wristlink.trial-ready-s=60
wait_exit 4; rc=$?
printf 'boot 4 (B on trial, bound 60 s): qemu ended after %s s\n' "$(elapsed "$boot_t")" | tee -a "$OUT/timings.txt"
power_cut
[ "$(cat "$OUT/4/prefix")" = slot-b/ ]; check "boot 4: the firmware started slot B" $? "$(cat "$OUT/4/prefix")"
[ "$rc" -eq 0 ]; check "boot 4: the trial boot ended by itself (a reboot)" $? "wait $rc (2: still running after $LIMIT s; 3: it went on to its boot report)"
console 4 | grep -a 'trial-end\|rauc-boot-backend' | sed 's/^.*\] //; s/^/boot 4: /' | tee -a "$OUT/summary.txt" > /dev/null
console 4 | grep -aq "trial-end: slot B: its firmware was not ready 60 s after its kernel started (wristlink.service: .*ActiveState=activating.*): slot B marked bad"
check "boot 4: the trial's bound marked B bad" $? "$(console 4 | grep -a 'trial-end' | tail -3)"
console 4 | grep -aqE 'wristlink-trial-end.*(Finished|Started)|trial-end: slot B reached READY'
[ $? -ne 0 ]; check "boot 4: B was never kept" $? "$(console 4 | grep -a 'trial-end' | tail -3)"
[ "$(slot_state)" = "boot=A committed=A trial=none A=good B=bad" ] && [ "$(slot_prefix)" = slot-a/ ]
rc=$?; check "after boot 4: A is the next boot, no trial ($(slot_state))" "$rc" "$(slot_state) $(slot_prefix)"
in_dir failed "$name" && ! in_dir done "$name" && reason failed | grep -q "; failed: slot B's trial boot: its firmware was not ready 60 s after its kernel started (wristlink.service .*); back on slot A\$"
check "after boot 4: the bundle is in failed/ with the reason" $? "$(mdir -/ -b -i "$fat" ::/wristlink/update 2>&1); $(reason failed)"
reason failed | sed 's/^/failed reason: /' >> "$OUT/summary.txt"

# --- boot 5: slot A, a working wearable -------------------------------------------------
run_qemu 5
wait_for 5 'wl-report: end'; rc=$?
power_cut
printf 'boot 5 (A): report after %s s; wristlink.service ready %s s after the kernel started\n' "$(elapsed "$boot_t")" \
  "$(awk -v u="$(field 5 service-active-us)" 'BEGIN { printf "%.1f", u / 1e6 }')" | tee -a "$OUT/timings.txt"
check "boot 5: the boot report came" "$rc" "wait $rc"
[ "$(cat "$OUT/5/prefix")" = slot-a/ ] && field 5 "mount /" | grep -Eq '^/dev/mmcblk0p2 ext4 ro,'
rc=$?; check "boot 5: the firmware started slot A; / is partition 2 ($(field 5 'mount /'))" "$rc" "$(cat "$OUT/5/prefix") $(field 5 'mount /')"
svc="$(field 5 service)"
case " $svc " in *" ActiveState=active "*" SubState=running "*) true ;; *) false ;; esac; check "boot 5: wristlink.service reached READY=1" $? "$svc"
report 5 | grep -q '^journal: loaded 1 bonded phone(s) from /var/lib/wristlink/bonds'; check "boot 5: the bond is loaded" $? "$(report 5 | grep '^journal:' | head -5)"
console 4 | grep -aq "trial-end: update-failed left in /var/lib/private/wristlink: the firmware shows it at its next start"
check "boot 4: the watch left update-failed for the wrist" $? "$(console 4 | grep -a 'trial-end' | tail -3)"
report 5 | grep -qx 'journal: update failed'; check "boot 5: the firmware showed update-failed at its start (the watch's notice)" $? "$(report 5 | grep '^journal:' | head -8)"
[ "$(field 5 system)" = running ]; rc=$?; check "boot 5: no failed unit (system $(field 5 system))" "$rc" "$(field 5 failed-units)"
[ "$(slot_state)" = "boot=A committed=A trial=none A=good B=bad" ]; check "after boot 5: no trial, A committed" $? "$(slot_state)"
dd if="$disk" of="$OUT/data.ext4" bs=1M iflag=skip_bytes,count_bytes skip="$data_off" count="$data_len" status=none
# the journal replayed first, as the kernel does when it mounts it (on this copy)
e2fsck -E journal_only -p "$OUT/data.ext4" > "$OUT/e2fsck-data.txt" 2>&1
e2fsck -fn "$OUT/data.ext4" >> "$OUT/e2fsck-data.txt" 2>&1; check "after five boots and four power cuts: the data partition is clean (its journal replayed, e2fsck -fn)" $? "$(tail -3 "$OUT/e2fsck-data.txt")"
# what the initrd said at boot 3 (with quiet, kmsg's lines are in the journal only)
rm -rf "$OUT/journal"; debugfs -R "rdump /journal $OUT" "$OUT/data.ext4" > /dev/null 2>&1
# (journald takes the lines' "wristlink-mounts:" as their identifier; every boot the journal holds)
journalctl -D "$OUT/journal" -t wristlink-mounts -o cat --no-pager > "$OUT/initrd-mounts.txt" 2>/dev/null
grep -q '^/dev/mmcblk0p1 (RASPIFIRM) was not unmounted cleanly (a power cut while it was written): fsck.fat -a exit' "$OUT/initrd-mounts.txt"
check "boot 3: the initrd repaired the boot partition the cut left unclean (fsck.fat -a; the journal)" $? "$(head -3 "$OUT/initrd-mounts.txt")"
sed 's/^/journal: /' "$OUT/initrd-mounts.txt" | head -n 16 >> "$OUT/summary.txt"
debugfs -R 'cat /state/bonds' "$OUT/data.ext4" 2>/dev/null | cmp -s - "$ROOT/Tests/Image/bonds"
check "after five boots: the bond on the data partition is the one placed" $? "differs"
rm -f "$OUT/data.ext4"
fat_clean 5; check "after boot 5: the boot partition is clean (fsck.vfat -n)" $? "$(tail -3 "$OUT/fsck-5.txt")"
printf 'fault-boot-test: %s s, %d failed\n' "$(elapsed "$T0")" "$fails" | tee -a "$OUT/timings.txt"
[ "$fails" -eq 0 ]
