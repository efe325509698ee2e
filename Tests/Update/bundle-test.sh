#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-update, part 2: update bundles (docs/updates.md, "Bundles",
# "Refused bundles"; issue 32's proof 4, on the host). A small card image
# in the two-slot layout (four MBR partitions: a FAT with slot-a/, root A
# with the image's /etc/rauc/system.conf from board/image/rauc-system.conf
# and a keyring, an empty root B, a data partition; no loop device) is
# made, and scripts/build-bundle builds and signs real RAUC bundles from
# it with Debian's rauc and a development key made by scripts/bundle-key
# in a temporary WL_BUNDLE_KEY_DIR. Then board/image/update-check, as the
# card runs it against its system.conf and keyring, must accept the good
# bundle and refuse, each with its reason: a bundle signed by an unknown
# key, one for another board (compatible wristlink-pi4), a truncated file,
# an empty one, and one older than the running version; the check writes
# nothing (every file's name, size and time the same before and after). build-bundle
# must refuse an image whose keyring is not its key's certificate. The
# bundle carries board/image/bundle-hook as its root slot's post-install
# hook, and a version given to build-bundle is the manifest's.
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CHECK="$ROOT/board/image/update-check"
WORK="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', expected '$3'"; fi; }

# The keys: the development key (made once, then the same), and another.
export WL_BUNDLE_KEY_DIR="$WORK/keys"
[ "$("$ROOT/scripts/bundle-key" 2>/dev/null)" = "$WORK/keys" ] && [ -f "$WORK/keys/key.pem" ] && [ -f "$WORK/keys/cert.pem" ] && ok || bad "bundle-key did not make key.pem and cert.pem"
expect "the private key's mode" "$(stat -c %a "$WORK/keys/key.pem")" 600
sum1=$(sha256sum "$WORK/keys/cert.pem"); "$ROOT/scripts/bundle-key" > /dev/null
expect "bundle-key keeps the key it made" "$(sha256sum "$WORK/keys/cert.pem")" "$sum1"
WL_BUNDLE_KEY_DIR="$WORK/stranger" "$ROOT/scripts/bundle-key" > /dev/null 2>&1

# card NAME BOARD CERT: $WORK/NAME/wristlink-9.9.9-1+deb13-BOARD.img, the
# layout scripts/build-image makes, in small; its keyring is CERT.
card() {
  d="$WORK/$1"; mkdir -p "$d/root/etc/rauc" "$d/boot/slot-a/overlays" "$d/boot/slot-b"
  sed -e "s/@BOARD@/$2/" -e "s/@DISK@/574c0001/" "$ROOT/board/image/rauc-system.conf" > "$d/root/etc/rauc/system.conf"
  cp "$3" "$d/root/etc/rauc/keyring.pem"
  head -c 65536 /dev/urandom > "$d/root/etc/random-contents"   # a squashfs over 4 KiB
  head -c 4096 /dev/urandom > "$d/boot/slot-a/vmlinuz"
  head -c 2048 /dev/urandom > "$d/boot/slot-a/initrd.img"
  echo "console=ttyS1,115200 root=LABEL=wlroot-a rauc.slot=A ro" > "$d/boot/slot-a/cmdline.txt"
  echo overlays > "$d/boot/slot-a/overlays/README"
  truncate -s 16M "$d/boot.vfat"; mkfs.vfat -n RASPIFIRM "$d/boot.vfat" > /dev/null
  mcopy -s -i "$d/boot.vfat" "$d/boot/slot-a" "$d/boot/slot-b" ::/
  truncate -s 8M "$d/a.ext4" "$d/b.ext4" "$d/data.ext4"
  mkfs.ext4 -q -F -L wlroot-a -O ^has_journal -d "$d/root" "$d/a.ext4"
  mkfs.ext4 -q -F -L wlroot-b -O ^has_journal "$d/b.ext4"
  mkfs.ext4 -q -F -L wldata "$d/data.ext4"
  img="$d/wristlink-9.9.9-1+deb13-$2.img"
  truncate -s 50M "$img"
  printf 'label: dos\nlabel-id: 0x574c0001\nstart=2048, size=32768, type=c\nstart=34816, size=16384, type=83\nstart=51200, size=16384, type=83\nstart=67584, size=16384, type=83\n' |
    sfdisk -q "$img"
  n=0
  for p in boot.vfat a.ext4 b.ext4 data.ext4; do
    set -- 2048 34816 51200 67584; shift $n; n=$((n + 1))
    dd if="$d/$p" of="$img" bs=512 seek="$1" conv=notrunc,sparse status=none
  done
}
card zero pi-zero-2w "$WORK/keys/cert.pem"
card pi4 pi4 "$WORK/keys/cert.pem"
card stranger pi-zero-2w "$WORK/stranger/cert.pem"
OUT="$WORK/out"; mkdir -p "$OUT"
if "$ROOT/scripts/build-bundle" pi-zero-2w "$WORK/zero/wristlink-9.9.9-1+deb13-pi-zero-2w.img" "$OUT" > "$WORK/build.log" 2>&1; then ok; else bad "build-bundle failed: $(tail -3 "$WORK/build.log")"; fi
good="$OUT/wristlink-9.9.9-1+deb13-pi-zero-2w.raucb"
rauc info --keyring="$WORK/keys/cert.pem" --output-format=shell "$good" > "$WORK/info" 2>/dev/null && ok || bad "rauc info refused the good bundle"
grep -qx "RAUC_MF_COMPATIBLE='wristlink-pi-zero-2w'" "$WORK/info" && grep -qx "RAUC_MF_VERSION='9.9.9-1+deb13'" "$WORK/info" && ok || bad "the bundle's manifest: $(head -3 "$WORK/info")"
# The hook (board/image/bundle-hook) is in the bundle, registered for the root slot.
grep -qx "RAUC_IMAGE_HOOKS_0='post-install'" "$WORK/info" && ok || bad "the root image's hooks: $(grep HOOKS "$WORK/info")"
unsquashfs -cat "$good" hook 2>/dev/null | cmp -s - "$ROOT/board/image/bundle-hook" && ok || bad "the bundle's hook is not board/image/bundle-hook"
# A version given to build-bundle (a test's version N+1) is the manifest's and the name's.
"$ROOT/scripts/build-bundle" pi-zero-2w "$WORK/zero/wristlink-9.9.9-1+deb13-pi-zero-2w.img" "$WORK/next" 9.9.10-1+deb13 > "$WORK/build-next.log" 2>&1 &&
  rauc info --keyring="$WORK/keys/cert.pem" --output-format=shell "$WORK/next/wristlink-9.9.10-1+deb13-pi-zero-2w.raucb" 2>/dev/null | grep -qx "RAUC_MF_VERSION='9.9.10-1+deb13'" && ok ||
  bad "build-bundle with a version: $(tail -2 "$WORK/build-next.log")"
"$ROOT/scripts/build-bundle" pi4 "$WORK/pi4/wristlink-9.9.9-1+deb13-pi4.img" "$OUT" > "$WORK/build-pi4.log" 2>&1 && ok || bad "build-bundle pi4 failed: $(tail -3 "$WORK/build-pi4.log")"
# An image whose keyring is another key's: build-bundle refuses, writes no bundle.
if "$ROOT/scripts/build-bundle" pi-zero-2w "$WORK/stranger/wristlink-9.9.9-1+deb13-pi-zero-2w.img" "$WORK/stranger-out" > "$WORK/build-s.log" 2>&1; then
  bad "build-bundle signed for an image whose keyring is not its key's"
else
  grep -q "is not the certificate of" "$WORK/build-s.log" && [ -z "$(ls "$WORK/stranger-out")" ] && ok || bad "build-bundle's refusal: $(tail -2 "$WORK/build-s.log")"
fi
# The stranger's bundle: the same contents signed by the unknown key.
WL_BUNDLE_KEY_DIR="$WORK/stranger" "$ROOT/scripts/build-bundle" pi-zero-2w "$WORK/stranger/wristlink-9.9.9-1+deb13-pi-zero-2w.img" "$WORK/stranger" > "$WORK/build-s2.log" 2>&1 ||
  bad "build-bundle with the stranger's key: $(tail -2 "$WORK/build-s2.log")"
stranger="$WORK/stranger/wristlink-9.9.9-1+deb13-pi-zero-2w.raucb"
size=$(stat -c %s "$good")
head -c $((size / 2)) "$good" > "$WORK/half.raucb"
head -c $((size - 100)) "$good" > "$WORK/short.raucb"
: > "$WORK/empty.raucb"

# The card's check, with the card's system.conf and keyring (the zero card's).
conf="$WORK/zero/root/etc/rauc/system.conf"
key="$WORK/zero/root/etc/rauc/keyring.pem"
# every file and folder under the test's folder: name, size, modification time
snapshot() { find "$WORK" -printf '%p %s %T@\n' | LC_ALL=C sort | sha256sum; }
check() {  # check NAME BUNDLE EXIT REASON-PATTERN [RUNNING-VERSION]
  before=$(snapshot)
  out=$(WL_RAUC_CONF="$conf" WL_RAUC_KEYRING="$key" WL_RUNNING_VERSION="${5:-0.1.0-1+deb13}" "$CHECK" "$2" 2>&1) && rc=0 || rc=$?
  after=$(snapshot)
  expect "$1: exit" "$rc" "$3"
  case "$out" in $4) ok ;; *) bad "$1: said '$out', expected '$4'" ;; esac
  expect "$1: nothing written" "$after" "$before"
}
check "the good bundle" "$good" 0 "accept 9.9.9-1+deb13"
check "the same version again" "$good" 0 "accept 9.9.9-1+deb13" 9.9.9-1+deb13
check "signed by an unknown key" "$stranger" 1 "refused: not signed by a key in this card's keyring*"
check "for another board" "$OUT/wristlink-9.9.9-1+deb13-pi4.raucb" 1 "refused: for another board: the bundle is 'wristlink-pi4', this card is 'wristlink-pi-zero-2w'"
check "truncated to half" "$WORK/half.raucb" 1 "refused: not a readable bundle (truncated or damaged)*"
check "100 bytes short" "$WORK/short.raucb" 1 "refused: not a readable bundle (truncated or damaged)*"
check "empty" "$WORK/empty.raucb" 1 "refused: * is empty"
check "no file" "$WORK/none.raucb" 1 "refused: no file *"
check "older than the running version" "$good" 1 "refused: older than the running version: the bundle is 9.9.9-1+deb13, this card runs 10.0.0-1+deb13" 10.0.0-1+deb13
echo "bundle-test: $checks passed, $fails failed"
[ "$fails" -eq 0 ]
