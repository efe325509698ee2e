#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-update: board/image/rauc-boot-backend (docs/updates.md) on a
# directory laid out as the boot partition would be (config.txt including
# wristlink-slot.txt, slot-a/ and slot-b/ with a kernel each), driven
# through the calls RAUC 1.13 makes for an update (mark the target bad,
# write it, mark it active; in the trial boot mark it good, or fall back),
# and a power cut after every file-system step of every call
# (WL_CRASH_AFTER=k, the process killed with SIGKILL): after each cut the
# slot file must be byte for byte the one before the call or the one after
# it, parse, and name a slot directory that holds a kernel, and the call
# run again must finish the change. Then bad input (unknown slots and
# states, damaged state files) must be refused with the file unchanged and
# no temporary file left; a read-only mount (tmpfs, as root) must be made
# writable for a change and read-only again, a failed write included.
# Last, the files are put on a real FAT file system
# (mkfs.vfat, mtools: no kernel mount needed) and fsck.vfat -n must find it
# clean. Every loop is bounded (a call has at most MAX_STEPS steps).
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
BACKEND="$HERE/../../board/image/rauc-boot-backend"
MAX_STEPS=20
WORK="$(mktemp -d)"
trap 'umount "$WORK/mnt" 2>/dev/null || true; rm -rf "$WORK"' EXIT
fails=0 checks=0 cuts=0
ok() { checks=$((checks + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', expected '$3'"; fi; }

# A boot partition: what the firmware reads, two slots with a kernel each.
fresh() {
  rm -rf "$1"; mkdir -p "$1/slot-a/overlays" "$1/slot-b/overlays"
  printf 'arm_64bit=1\nenable_uart=1\ninclude wristlink-slot.txt\n' > "$1/config.txt"
  for s in a b; do
    echo "kernel of slot $s" > "$1/slot-$s/vmlinuz"
    echo "console=ttyS1,115200 root=LABEL=wlroot-$s rauc.slot=$(echo $s | tr ab AB) ro" > "$1/slot-$s/cmdline.txt"
    : > "$1/slot-$s/overlays/README"
  done
}
be() { WL_BOOT_DIR="$DIR" WL_PROC_CMDLINE="$DIR.cmdline" "$BACKEND" "$@"; }
booted() { echo "console=ttyS1,115200 root=LABEL=wlroot-$1 rauc.slot=$(echo "$1" | tr ab AB) ro" > "$DIR.cmdline"; }
status() { be status 2>/dev/null || echo "(status failed)"; }

# What the GPU firmware would boot: config.txt, its include, the last
# os_prefix; the prefix must name a directory holding a kernel.
firmware_slot() {
  prefix=""
  for f in config.txt $(sed -n 's/^include //p' "$1/config.txt"); do
    [ -f "$1/$f" ] || { echo "missing-$f"; return; }
    p=$(sed -n 's/^os_prefix=//p' "$1/$f" | tail -1)
    [ -z "$p" ] || prefix=$p
  done
  if [ -n "$prefix" ] && [ -f "$1/${prefix}vmlinuz" ]; then echo "$prefix"; else echo "unbootable($prefix)"; fi
}

# cut_everywhere NAME SLOT CALL...: for k = 1, 2, ... run CALL killed after
# its k-th step on a copy of $DIR, until it finishes without being killed.
# After every cut: the slot file is the old one or the new one, whole; it
# parses; the firmware finds a kernel; CALL run again gives the new file.
cut_everywhere() {
  name=$1 me=$2; shift 2
  booted "$me"
  cp -a "$DIR" "$WORK/before"
  before=$(cat "$DIR/wristlink-slot.txt")
  be "$@" 2>/dev/null || { bad "$name: '$*' failed without a cut"; return; }
  after=$(cat "$DIR/wristlink-slot.txt")
  after_status=$(status)
  if [ "$before" != "$after" ]; then   # the previous selection is kept beside it
    expect "$name: '$*': wristlink-slot.old" "$(cat "$DIR/wristlink-slot.old" 2>/dev/null)" "$before"
  fi
  rm -rf "$WORK/done"; mv "$DIR" "$WORK/done"
  k=1
  while [ "$k" -le "$MAX_STEPS" ]; do
    rm -rf "$DIR"; cp -a "$WORK/before" "$DIR"
    rc=0; WL_CRASH_AFTER=$k be "$@" 2>/dev/null || rc=$?
    [ "$rc" -eq 137 ] || break   # finished: no k-th step
    cuts=$((cuts + 1))
    now=$(cat "$DIR/wristlink-slot.txt" 2>/dev/null || echo MISSING)
    if [ "$now" = "$before" ] || [ "$now" = "$after" ]; then ok; else bad "$name: cut after step $k of '$*': wristlink-slot.txt is neither the old nor the new file: $now"; fi
    if be status > /dev/null 2>&1; then ok; else bad "$name: cut after step $k of '$*': the slot file does not parse"; fi
    case "$(firmware_slot "$DIR")" in slot-a/|slot-b/) ok ;; *) bad "$name: cut after step $k of '$*': firmware would boot $(firmware_slot "$DIR")" ;; esac
    if [ -f "$DIR/wristlink-slot.old" ]; then   # the copy kept is a whole slot file too
      rm -rf "$WORK/old"; cp -a "$DIR" "$WORK/old"; cp "$DIR/wristlink-slot.old" "$WORK/old/wristlink-slot.txt"
      WL_BOOT_DIR="$WORK/old" "$BACKEND" status > /dev/null 2>&1 && ok || bad "$name: cut after step $k of '$*': wristlink-slot.old does not parse"
    fi
    be "$@" 2>/dev/null || bad "$name: '$*' again after a cut at step $k failed"
    expect "$name: '$*' again after a cut at step $k" "$(status)" "$after_status"
    for t in wristlink-slot.new wristlink-slot.old.new; do
      [ ! -e "$DIR/$t" ] || bad "$name: $t left after '$*' finished"
    done
    k=$((k + 1))
  done
  [ "$k" -gt 1 ] || [ "$before" = "$after" ] || bad "$name: '$*' changed the file without a single counted step"
  [ "$k" -le "$MAX_STEPS" ] || bad "$name: '$*' still running after $MAX_STEPS steps"
  rm -rf "$DIR" "$WORK/before"; mv "$WORK/done" "$DIR"
}

DIR="$WORK/boot"

# --- an update that proves itself: A committed, B installed, tried, kept ---
fresh "$DIR"; be init A
expect "fresh card" "$(status)" "boot=A committed=A trial=none A=good B=bad"
expect "fresh card: firmware" "$(firmware_slot "$DIR")" "slot-a/"
booted a
expect "get-current on A" "$(be get-current)" "A"
# the image's command lines name the root by partition (PARTUUID), without rauc.slot= too
echo "console=ttyS1,115200 root=PARTUUID=574c0001-03 ro" > "$DIR.cmdline"; expect "get-current from root=PARTUUID=…-03" "$(be get-current)" "B"
echo "console=ttyS1,115200 root=PARTUUID=574c0001-02 ro" > "$DIR.cmdline"; expect "get-current from root=PARTUUID=…-02" "$(be get-current)" "A"
booted a
cut_everywhere "update ok" a set-state B bad
cut_everywhere "update ok" a set-primary B
expect "B armed" "$(status)" "boot=B committed=A trial=B A=good B=bad"
expect "B armed: get-primary" "$(be get-primary)" "B"
expect "B armed: firmware" "$(firmware_slot "$DIR")" "slot-b/"
cut_everywhere "update ok" b begin-trial
expect "B on trial" "$(status)" "boot=A committed=A trial=B A=good B=bad"
expect "B on trial: a reset boots A" "$(firmware_slot "$DIR")" "slot-a/"
cut_everywhere "update ok" b set-state B good
expect "B kept" "$(status)" "boot=B committed=B trial=none A=good B=good"
expect "B kept: firmware" "$(firmware_slot "$DIR")" "slot-b/"
booted b
expect "B kept: get-current" "$(be get-current)" "B"
expect "B kept: get-state B" "$(be get-state B)" "good"
# begin-trial on a committed slot changes nothing
cut_everywhere "update ok" b begin-trial
expect "begin-trial on the committed slot" "$(status)" "boot=B committed=B trial=none A=good B=good"
# and the next update goes back into A
cut_everywhere "update back into A" b set-state A bad
cut_everywhere "update back into A" b set-primary A
cut_everywhere "update back into A" a begin-trial
cut_everywhere "update back into A" a set-state A good
expect "A kept" "$(status)" "boot=A committed=A trial=none A=good B=good"

# --- a trial that fails: the reset after begin-trial comes back to A --------
fresh "$DIR"; be init A
cut_everywhere "trial fails" a set-state B bad
cut_everywhere "trial fails" a set-primary B
cut_everywhere "trial fails" b begin-trial
expect "trial fails: the next boot" "$(firmware_slot "$DIR")" "slot-a/"
# A boots again (watchdog reset or power cycle); its begin-trial does nothing
cut_everywhere "trial fails" a begin-trial
expect "trial fails: back on A" "$(status)" "boot=A committed=A trial=B A=good B=bad"
# rauc status mark-active booted (the fallback's clean-up) closes the trial
cut_everywhere "trial fails" a set-primary A
expect "trial fails: closed" "$(status)" "boot=A committed=A trial=none A=good B=bad"
expect "trial fails: get-state B" "$(be get-state B)" "bad"

# --- a trial cut short before B ever started: mark-bad cancels it ---------
fresh "$DIR"; be init A
be set-state B bad; be set-primary B
cut_everywhere "cancel" a set-state B bad
expect "cancel: armed trial dropped" "$(status)" "boot=A committed=A trial=none A=good B=bad"

# --- refused: overwriting the fallback while a trial is open --------------
fresh "$DIR"; be init A
be set-state B bad; be set-primary B; booted b; be begin-trial 2>/dev/null
keep=$(cat "$DIR/wristlink-slot.txt")
rc=0; be set-state A bad 2>"$WORK/err" || rc=$?
expect "mark the committed slot bad during a trial: exit" "$rc" "1"
grep -q "refusing to mark A bad" "$WORK/err" && ok || bad "no reason given: $(cat "$WORK/err")"
expect "mark the committed slot bad during a trial: file" "$(cat "$DIR/wristlink-slot.txt")" "$keep"

# --- bad input -------------------------------------------------------------
fresh "$DIR"; be init A
keep=$(cat "$DIR/wristlink-slot.txt")
refused() {   # refused NAME EXIT CALL...: exit code, a reason, the file as it was, no temporary file
  name=$1 want=$2; shift 2
  rc=0; be "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  expect "$name: exit" "$rc" "$want"
  [ -s "$WORK/err" ] && ok || bad "$name: no reason on stderr"
  [ ! -s "$WORK/out" ] && ok || bad "$name: printed '$(cat "$WORK/out")' on stdout"
  expect "$name: file unchanged" "$(cat "$DIR/wristlink-slot.txt" 2>/dev/null)" "$keep"
  for t in wristlink-slot.new wristlink-slot.old.new; do [ ! -e "$DIR/$t" ] || bad "$name: $t left"; done
}
refused "unknown slot" 2 set-primary C
refused "lower-case slot" 2 set-state a good
refused "unknown state" 2 set-state B maybe
refused "missing slot" 2 get-state
refused "extra argument" 2 get-primary B
refused "unknown command" 2 reboot
refused "no command" 2
rm -rf "$DIR/slot-b"
refused "slot without boot files" 2 set-primary B
fresh "$DIR"; be init A
echo "console=ttyS1 root=/dev/mmcblk0p2" > "$DIR.cmdline"
rc=0; WL_BOOT_DIR="$DIR" WL_PROC_CMDLINE="$DIR.cmdline" "$BACKEND" get-current > /dev/null 2>&1 || rc=$?
expect "get-current without a slot on the command line" "$rc" "2"
# Damaged state files: each refused with exit 3 by every command that reads it.
damage() {   # damage NAME SED-SCRIPT
  fresh "$DIR"; be init A
  sed -i "$2" "$DIR/wristlink-slot.txt"
  keep=$(cat "$DIR/wristlink-slot.txt")
  for call in "get-primary" "get-state A" "status" "set-primary B" "set-state B good" "set-state B bad"; do
    # shellcheck disable=SC2086
    refused "$1 ($call)" 3 $call
  done
}
damage "flipped state, old sum" 's/trial=none A=good B=bad/trial=none A=good B=good/'
damage "wrong sum" 's/^# sum [0-9]*/# sum 12345/'
damage "prefix of the other slot" 's|os_prefix=slot-a/|os_prefix=slot-b/|'
damage "truncated" '4d'
damage "extra line" '$a dtoverlay=foo'
damage "empty" 'd'
damage "binary garbage" '2s/.*/\x01\x02 * ? [/'
# consistent sum but an impossible state (committed slot bad)
fresh "$DIR"; be init A
s='# state boot=A committed=A trial=none A=bad B=bad'
sum=$(printf '%s\n%s\n' "$s" "os_prefix=slot-a/" | cksum | cut -d' ' -f1)
printf '%s\n%s\n# sum %s\n%s\n' "$(sed -n 1p "$DIR/wristlink-slot.txt")" "$s" "$sum" "os_prefix=slot-a/" > "$DIR/wristlink-slot.txt"
keep=$(cat "$DIR/wristlink-slot.txt")
refused "impossible state with a good sum" 3 get-primary
rm -f "$DIR/wristlink-slot.txt"; keep=""
refused "no slot file" 3 get-primary

# --- a read-only mount is made writable for the change, and read-only after
# (needs root and a tmpfs mount; skipped, and said so, where neither works)
MNT="$WORK/mnt"; mkdir -p "$MNT"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=1m tmpfs "$MNT" 2>/dev/null; then
  fresh "$WORK/layout"; cp -a "$WORK/layout/." "$MNT/"
  WL_BOOT_DIR="$MNT" "$BACKEND" init A
  mount -o remount,ro "$MNT"
  WL_BOOT_DIR="$MNT" "$BACKEND" set-primary B && ok || bad "set-primary on a read-only mount failed"
  expect "read-only mount: written" "$(WL_BOOT_DIR="$MNT" "$BACKEND" status)" "boot=B committed=A trial=B A=good B=bad"
  expect "read-only mount: read-only again" "$(findmnt -n -o OPTIONS "$MNT" | cut -d, -f1)" "ro"
  # a write that fails (the file system full) leaves it read-only too, the slot file whole
  mount -o remount,rw "$MNT"; head -c 2M /dev/zero > "$MNT/fill" 2>/dev/null || true; mount -o remount,ro "$MNT"
  keep=$(cat "$MNT/wristlink-slot.txt")
  WL_BOOT_DIR="$MNT" "$BACKEND" set-primary A 2>/dev/null && bad "set-primary on a full file system succeeded" || ok
  expect "full file system: read-only again" "$(findmnt -n -o OPTIONS "$MNT" | cut -d, -f1)" "ro"
  expect "full file system: slot file unchanged" "$(cat "$MNT/wristlink-slot.txt")" "$keep"
  umount "$MNT"
  remount="read-only mount remounted"
else
  remount="read-only remount not tried (needs root and tmpfs mounts)"
fi

# --- the files on a real FAT ------------------------------------------------
if command -v mkfs.vfat > /dev/null && command -v mcopy > /dev/null && command -v fsck.vfat > /dev/null; then
  fresh "$DIR"; be init A; be set-state B bad; be set-primary B; booted b; be begin-trial 2>/dev/null; be set-state B good
  size=$(wc -c < "$DIR/wristlink-slot.txt")
  [ "$size" -le 512 ] && ok || bad "wristlink-slot.txt is $size bytes: more than one sector"
  img="$WORK/boot.vfat"
  truncate -s 64M "$img"
  mkfs.vfat -F 32 -n RASPIFIRM "$img" > /dev/null
  (cd "$DIR" && mcopy -s -p -Q -i "$img" config.txt wristlink-slot.txt wristlink-slot.old slot-a slot-b ::/) > "$WORK/mcopy" 2>&1 ||
    bad "mcopy to the FAT image: $(cat "$WORK/mcopy")"
  expect "FAT: wristlink-slot.txt read back" "$(mtype -i "$img" ::/wristlink-slot.txt | tr -d '\r')" "$(cat "$DIR/wristlink-slot.txt")"
  if fsck.vfat -n "$img" > "$WORK/fsck" 2>&1; then ok; else bad "fsck.vfat -n: $(cat "$WORK/fsck")"; fi
else
  bad "mkfs.vfat, mcopy or fsck.vfat missing (dosfstools, mtools)"
fi

if [ "$fails" -ne 0 ]; then
  echo "test-update: $fails of $((checks + fails)) checks failed ($cuts power cuts)"
  exit 1
fi
echo "test-update: rauc-boot-backend: $checks checks passed, $cuts power cuts (one after every file-system step of every call), $remount, FAT clean"
