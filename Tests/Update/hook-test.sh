#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-update, part 3: the bundle's hook (board/image/bundle-hook,
# docs/updates.md "The bundle's hook") as RAUC 1.13 runs it after writing
# the target root slot (`hook slot-post-install` with RAUC_SLOT_BOOTNAME,
# RAUC_SLOT_CLASS and RAUC_BUNDLE_MOUNT_POINT), against a directory laid
# out as the boot partition (slot-a/ booted, slot-b/ with stale files from
# an earlier version) and a bundle's contents (boot/ with a kernel, initrd,
# device tree, overlays/README and slot A's cmdline.txt; boot.sha256):
# - slot-b/ then holds exactly the bundle's files, byte for byte, with
#   cmdline.txt saying root=PARTUUID=574c0001-03 rauc.slot=B; no .new file left,
#   the stale files gone, slot-a/ and wristlink-slot.txt untouched;
# - refused, with slot-b/ and everything else untouched: the target being
#   the slot the firmware starts next, a file whose bytes differ from its
#   sum, a file boot.sha256 does not name, a name with `..`, a cmdline.txt
#   without slot A's root, a slot that is not A or B, another hook name;
# - a damaged file found only after the folder was emptied (the sum checked
#   on the written copy): the hook fails, so RAUC would not call set-primary;
# - killed after each of its writes (WL_CRASH_AFTER, SIGKILL as at a power
#   cut): slot-a/ and wristlink-slot.txt untouched, and the hook run again
#   completes slot-b/.
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
HOOK="$HERE/../../board/image/bundle-hook"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', expected '$3'"; fi; }

# A bundle's contents: boot/ and boot.sha256 as scripts/build-bundle makes them.
B="$WORK/bundle"
mkdir -p "$B/boot/overlays"
head -c 300000 /dev/urandom > "$B/boot/vmlinuz"
head -c 200000 /dev/urandom > "$B/boot/initrd.img"
head -c 30000 /dev/urandom > "$B/boot/bcm2837-rpi-zero-2-w.dtb"
head -c 2000 /dev/urandom > "$B/boot/overlays/dwc2.dtbo"
echo "overlays of this slot" > "$B/boot/overlays/README"
echo "console=tty0 console=ttyS1,115200 root=PARTUUID=574c0001-02 rw ro systemd.volatile=state quiet rauc.slot=A" > "$B/boot/cmdline.txt"
sums() { (cd "$B/boot" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum) > "$B/boot.sha256"; }
sums
cp -a "$B" "$WORK/bundle.orig"

# A boot partition: slot A booted and next, slot B with an old version's files.
fresh() {
  rm -rf "$DIR"; mkdir -p "$DIR/slot-a/overlays" "$DIR/slot-b/overlays"
  echo "kernel A" > "$DIR/slot-a/vmlinuz"
  echo "root=PARTUUID=574c0001-02 rauc.slot=A" > "$DIR/slot-a/cmdline.txt"
  echo "old kernel B" > "$DIR/slot-b/vmlinuz"
  echo "old stale file" > "$DIR/slot-b/bcm2710-old.dtb"
  echo "old readme" > "$DIR/slot-b/overlays/README"
  printf '# Wristlink boot slot\n# state boot=A committed=A trial=none A=good B=bad\n# sum 1\nos_prefix=slot-a/\n' > "$DIR/wristlink-slot.txt"
}
DIR="$WORK/boot"
hook() { WL_BOOT_DIR="$DIR" RAUC_SLOT_BOOTNAME="${SLOT:-B}" RAUC_SLOT_CLASS="${CLASS:-rootfs}" RAUC_BUNDLE_MOUNT_POINT="$B" "$HOOK" "${@:-slot-post-install}"; }
tree() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum); }
untouched_a() { (cd "$DIR" && sha256sum slot-a/vmlinuz slot-a/cmdline.txt wristlink-slot.txt); }

# --- the good case ---------------------------------------------------------------
fresh; a_before=$(untouched_a); b_before=$(tree "$DIR/slot-b")
if hook > "$WORK/out" 2>&1; then ok; else bad "the hook failed: $(cat "$WORK/out")"; fi
sed 's/574c0001-02/574c0001-03/; s/rauc\.slot=A/rauc.slot=B/' "$B/boot/cmdline.txt" > "$WORK/cmdline-b.txt"
expect "slot B's cmdline.txt" "$(cat "$DIR/slot-b/cmdline.txt")" "$(cat "$WORK/cmdline-b.txt")"
grep -q 'root=PARTUUID=574c0001-03 ' "$DIR/slot-b/cmdline.txt" && grep -q 'rauc.slot=B$' "$DIR/slot-b/cmdline.txt" && ok || bad "cmdline.txt: $(cat "$DIR/slot-b/cmdline.txt")"
# every other file byte for byte, nothing else in the folder
(cd "$B/boot" && find . -type f ! -name cmdline.txt | LC_ALL=C sort | xargs sha256sum) > "$WORK/want"
(cd "$DIR/slot-b" && find . -type f ! -name cmdline.txt | LC_ALL=C sort | xargs sha256sum) > "$WORK/got"
expect "slot B's files are the bundle's" "$(cat "$WORK/got")" "$(cat "$WORK/want")"
expect "slot B holds nothing else" "$(cd "$DIR/slot-b" && find . -type f | wc -l)" "$(cd "$B/boot" && find . -type f | wc -l)"
expect "slot A and the slot file untouched" "$(untouched_a)" "$a_before"
grep -q "slot B's boot files written" "$WORK/out" && ok || bad "the hook said: $(cat "$WORK/out")"
# run again: the same result (RAUC retries an installation from scratch)
first=$(tree "$DIR/slot-b")
hook > /dev/null 2>&1 && expect "the hook run twice" "$(tree "$DIR/slot-b")" "$first" || bad "the hook failed the second time"
# slot A as the target (B booted): cmdline.txt keeps slot A's
fresh; sed -i 's|os_prefix=slot-a/|os_prefix=slot-b/|' "$DIR/wristlink-slot.txt"
SLOT=A hook > "$WORK/out" 2>&1 && expect "slot A's cmdline.txt" "$(cat "$DIR/slot-a/cmdline.txt")" "$(cat "$B/boot/cmdline.txt")" || bad "the hook for slot A failed: $(cat "$WORK/out")"

# --- refusals: nothing written -----------------------------------------------------
refused() {  # refused NAME PATTERN [HOOK-ARGUMENT]: the hook fails saying PATTERN; the boot folder unchanged
  before=$(tree "$DIR")
  if hook "$@" > "$WORK/out" 2>&1; then bad "$name: the hook succeeded"; else
    case "$(cat "$WORK/out")" in *$pattern*) ok ;; *) bad "$name: said '$(cat "$WORK/out")', expected '*$pattern*'" ;; esac
  fi
  expect "$name: nothing written" "$(tree "$DIR")" "$before"
}
fresh; sed -i 's|os_prefix=slot-a/|os_prefix=slot-b/|' "$DIR/wristlink-slot.txt"
name="the next boot's slot as the target" pattern="the one the firmware starts next" refused
fresh
name="slot C" pattern="neither A nor B" SLOT=C refused
name="another class" pattern="is not rootfs" CLASS=appfs refused
name="another hook" pattern="unknown hook" refused slot-pre-install
echo extra > "$B/boot/extra.dtb"
name="a file the sums do not name" pattern="name different files" refused
rm "$B/boot/extra.dtb"
printf '%s  ../../etc/passwd\n' "$(sha256sum < "$B/boot/vmlinuz" | cut -d' ' -f1)" >> "$B/boot.sha256"
name="a name with .." pattern="unsafe name" refused
sums
sed -i 's/rauc.slot=A/rauc.slot=X/; s/root=PARTUUID=574c0001-02/root=LABEL=wlroot-a/' "$B/boot/cmdline.txt"; sums
name="a cmdline.txt without slot A's root" pattern="to rewrite" refused
rm -rf "$B"; cp -a "$WORK/bundle.orig" "$B"
echo changed >> "$B/boot/cmdline.txt"
name="cmdline.txt not matching its sum" pattern="does not match its sum" refused
rm -rf "$B"; cp -a "$WORK/bundle.orig" "$B"
# A file whose bytes differ from its sum (found on the written copy): fails,
# slot A untouched, no file named vmlinuz in slot B.
echo damage >> "$B/boot/vmlinuz"
fresh; a_before=$(untouched_a)
if hook > "$WORK/out" 2>&1; then bad "the hook took a damaged kernel"; else
  grep -q "reads back as" "$WORK/out" && ok || bad "damaged kernel: said '$(cat "$WORK/out")'"
fi
[ ! -e "$DIR/slot-b/vmlinuz" ] && ok || bad "a damaged kernel got its name in slot B"
expect "damaged kernel: slot A and the slot file untouched" "$(untouched_a)" "$a_before"
rm -rf "$B"; cp -a "$WORK/bundle.orig" "$B"

# --- killed after each write ---------------------------------------------------------
fresh; hook > /dev/null 2>&1; want=$(tree "$DIR/slot-b")
k=1; cuts=0
while [ "$k" -le 100 ]; do
  fresh; a_before=$(untouched_a)
  if WL_CRASH_AFTER=$k hook > /dev/null 2>&1; then break; fi
  cuts=$((cuts + 1))
  expect "cut after write $k: slot A and the slot file untouched" "$(untouched_a)" "$a_before"
  hook > /dev/null 2>&1 && expect "cut after write $k: run again, slot B complete" "$(tree "$DIR/slot-b")" "$want" || bad "cut after write $k: the hook failed when run again"
  k=$((k + 1))
done
[ "$cuts" -ge 10 ] && ok || bad "only $cuts cuts made"
echo "hook-test: $checks passed, $fails failed ($cuts cuts)"
[ "$fails" -eq 0 ]
