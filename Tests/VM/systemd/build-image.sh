#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds (once) the Debian trixie disk image of the systemd VM case
# (Tests/VM/NOTES.md, "The systemd case"): mmdebstrap minbase from Debian's
# trixie packages + systemd as PID 1, udev, bluez (for a bluetooth.service
# to mask), libgpiod3, python3 with a venv of the pinned Bumble
# (../requirements.txt), trixie's own kernel with gpio-sim built out of tree
# when the kernel lacks it; an ext4 image made with `mkfs.ext4 -d` (no loop
# device), and the kernel, initrd and config copied beside it.
#
# Cache: $WL_VM_IMAGE_CACHE (default /var/cache/wristlink/vm-trixie), outside
# the clone so CI runs on one machine share it; one folder per key, the key
# being a hash of this script, image/, requirements.txt and gpio-sim/
# (the package list lives in this script). Prints the folder on stdout's last
# line. Needs root (mmdebstrap --mode=root). Bounded: WL_IMAGE_TIMEOUT
# (default 1800 s) for the whole build.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VMDIR="$(cd "$HERE/.." && pwd)"
ROOT="$(cd "$VMDIR/../.." && pwd)"
BASE="${WL_VM_IMAGE_CACHE:-/var/cache/wristlink/vm-trixie}"
MIRROR="${WL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
LIMIT="${WL_IMAGE_TIMEOUT:-1800}"

PACKAGES=(
  systemd systemd-sysv udev kmod dbus
  linux-image-amd64 initramfs-tools
  python3 python3-venv
  libgpiod3 gpiod
  bluez
  procps
  # build only (in-chroot.sh removes them): gpio-sim against this kernel
  linux-headers-amd64 linux-source make xz-utils
)

key="$( { cat "$HERE/build-image.sh"; cat "$HERE"/image/*; cat "$VMDIR/requirements.txt" "$VMDIR"/gpio-sim/*; } | sha256sum | cut -c1-16)"
OUT="$BASE/$key"
if [ -f "$OUT/ready" ]; then
  echo "build-image: cached ($OUT)"
  echo "$OUT"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "build-image: needs root (mmdebstrap --mode=root)" >&2; exit 1; }
"$ROOT/scripts/ensure-packages" mmdebstrap e2fsprogs debian-archive-keyring >&2

mkdir -p "$BASE"
exec 9>"$BASE/.lock"
flock -w "$LIMIT" 9 || { echo "build-image: another build holds $BASE/.lock" >&2; exit 1; }
if [ -f "$OUT/ready" ]; then echo "$OUT"; exit 0; fi   # built while we waited

T0=$(date +%s)
WORK="$BASE/.build-$key"
# an interrupted mmdebstrap may leave its chroot mounts (proc, sys, dev)
for old in "$BASE"/.build-*; do
  [ -d "$old" ] || continue
  { findmnt -rn -o TARGET | grep "^$old/" || true; } | sort -r | xargs -r -n1 umount -l
  rm -rf --one-file-system "$old"
done
mkdir -p "$WORK/stage"
cp "$HERE"/image/* "$VMDIR/requirements.txt" "$WORK/stage/"
cp -r "$VMDIR/gpio-sim" "$WORK/stage/gpio-sim"
cp "${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}" "$WORK/stage/host-ca.crt"
pkgs="$(printf '%s\n' "${PACKAGES[@]}" | grep -v '^#' | paste -sd, -)"
echo "build-image: mmdebstrap trixie ($MIRROR) into $WORK/root" >&2
timeout "$LIMIT" mmdebstrap --mode=root --variant=minbase --components=main \
  --include="$pkgs" \
  --customize-hook="cp -r '$WORK/stage' \"\$1/tmp/wl-image\"" \
  --customize-hook='chroot "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 sh /tmp/wl-image/in-chroot.sh' \
  trixie "$WORK/root" "$MIRROR" >&2
T1=$(date +%s)

KVER="$(ls "$WORK/root/lib/modules" | head -1)"
mkdir -p "$WORK/out"
cp "$WORK/root/boot/vmlinuz-$KVER" "$WORK/out/vmlinuz"
cp "$WORK/root/boot/initrd.img-$KVER" "$WORK/out/initrd.img"
cp "$WORK/root/boot/config-$KVER" "$WORK/out/config"
echo "$KVER" > "$WORK/out/kver"
chroot "$WORK/root" dpkg-query -W -f='${Package} ${Version}\n' > "$WORK/out/packages.txt"
used_kb=$(du -sk "$WORK/root" | cut -f1)
size_mb=$(( used_kb / 1024 + 768 ))   # room for the journal, the package, bonds
truncate -s "${size_mb}M" "$WORK/out/root.img"
mkfs.ext4 -q -F -L wlroot -d "$WORK/root" "$WORK/out/root.img"
T2=$(date +%s)
printf 'mmdebstrap %d s, mkfs %d s, root %d MiB, image %d MiB (sparse)\n' \
  $((T1 - T0)) $((T2 - T1)) $((used_kb / 1024)) "$size_mb" | tee "$WORK/out/build-times.txt" >&2
touch "$WORK/out/ready"
rm -rf "$OUT"; mv "$WORK/out" "$OUT"; rm -rf "$WORK"
# keep only this key's image
for d in "$BASE"/*/; do [ "$d" = "$OUT/" ] || rm -rf "$d"; done
echo "$OUT"
