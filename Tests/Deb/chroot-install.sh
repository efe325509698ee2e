#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs a wristlink package in a fresh Debian chroot (mmdebstrap minbase
# with systemd, bluez and the suite's libgpiod, no systemd running: the
# maintainer scripts' chroot path) and checks what each step leaves behind:
# install (bluetooth.service masked with the package's marker, the unit
# enabled, the gpio group), reinstall (no change), a reinstall of bluez (its
# postinst's deb-systemd-helper unmask leaves our mask alone), remove (the
# mask undone, an edited conffile kept), install again (the edit kept, the
# mask back), purge (conffiles, state, mask and enablement gone).
#   Tests/Deb/chroot-install.sh PACKAGE.deb [SUITE]    (SUITE default trixie)
# Needs root and the Debian mirror (WL_DEBIAN_MIRROR). Not part of `make
# test`: building the chroot takes ~2.5 min and ~300 MB (cached in
# .build/deb-chroot-SUITE; delete it to start afresh). Bounded by
# WL_CHROOT_TIMEOUT (default 900 s) per apt/mmdebstrap call.
set -eu
deb="${1:?usage: Tests/Deb/chroot-install.sh PACKAGE.deb [SUITE]}"
suite="${2:-trixie}"
[ -f "$deb" ] || { echo "chroot-install: no package $deb" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "chroot-install: needs root" >&2; exit 1; }
cd "$(dirname "$0")/../.."
limit="${WL_CHROOT_TIMEOUT:-900}"
mirror="${WL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
case "$suite" in trixie) gpiod=libgpiod3 ;; bookworm) gpiod=libgpiod2 ;; *) echo "SUITE: trixie or bookworm" >&2; exit 2 ;; esac
root="$PWD/.build/deb-chroot-$suite"
scripts/ensure-packages mmdebstrap debian-archive-keyring
if [ ! -f "$root/.ready" ]; then
    rm -rf "$root"
    start=$(date +%s)
    timeout "$limit" mmdebstrap --mode=root --variant=minbase --include="$gpiod,systemd,bluez" \
        "$suite" "$root" "$mirror" >/dev/null
    touch "$root/.ready"
    echo "chroot-install: $suite chroot in $(($(date +%s) - start)) s"
fi
name="$(basename "$deb")"
cp "$deb" "$root/tmp/$name"
failures=0
in_root() { timeout "$limit" chroot "$root" env DEBIAN_FRONTEND=noninteractive sh -c "$1" 2>&1 \
    | grep -v -E '/proc/ is not mounted|invocation environment|mileage may vary' || true; }
expect() { # expect DESCRIPTION SHELL-TEST (run in the chroot)
    if chroot "$root" sh -c "$2" >/dev/null 2>&1; then echo "  ok: $1"; else echo "  FAIL: $1"; failures=$((failures + 1)); fi
}
masked='[ "$(readlink /etc/systemd/system/bluetooth.service)" = /dev/null ]'
enabled='[ -L /etc/systemd/system/multi-user.target.wants/wristlink.service ]'

echo "chroot-install: apt-get install ./$name"
in_root "cd /tmp && apt-get install -y ./$name" | grep '^wristlink:' | sed 's/^/    /'
expect "bluetooth.service masked" "$masked"
expect "the package's mask marker" "[ -f /var/lib/wristlink-package/masked-bluetooth.service ]"
expect "wristlink.service enabled" "$enabled"
expect "gpio group" "getent group gpio"
expect "conffiles in place" "[ -f /etc/wristlink/board.conf ] && [ -f /etc/wristlink/policy.conf ]"

echo "chroot-install: reinstall"
in_root "cd /tmp && apt-get install -y --reinstall ./$name" >/dev/null
expect "still masked and enabled" "$masked && $enabled"

echo "chroot-install: reinstall bluez (its postinst: deb-systemd-helper unmask bluetooth.service)"
in_root "apt-get install -y --reinstall bluez" >/dev/null
expect "still masked" "$masked"

echo "chroot-install: edit board.conf, apt-get remove"
chroot "$root" sh -c 'echo "# edited by the test" >> /etc/wristlink/board.conf'
in_root "apt-get remove -y wristlink" | grep '^wristlink:' | sed 's/^/    /'
expect "bluetooth.service unmasked" "[ ! -e /etc/systemd/system/bluetooth.service ] && [ ! -L /etc/systemd/system/bluetooth.service ]"
expect "the edited conffile kept" "tail -1 /etc/wristlink/board.conf | grep -q 'edited by the test'"
expect "the binary gone" "[ ! -e /usr/bin/wristlink ]"

echo "chroot-install: install again"
in_root "cd /tmp && apt-get install -y ./$name" >/dev/null
expect "masked and enabled again" "$masked && $enabled"
expect "the edit survived" "tail -1 /etc/wristlink/board.conf | grep -q 'edited by the test'"

echo "chroot-install: apt-get purge (with a bond file in the state directory)"
chroot "$root" sh -c 'mkdir -p /var/lib/private/wristlink && echo bond > /var/lib/private/wristlink/bonds'
in_root "apt-get purge -y wristlink" | grep '^wristlink:' | sed 's/^/    /'
expect "conffiles gone" "[ ! -e /etc/wristlink ]"
expect "state gone" "[ ! -e /var/lib/private/wristlink ] && [ ! -e /var/lib/wristlink ]"
expect "unmasked, not enabled" "[ ! -L /etc/systemd/system/bluetooth.service ] && [ ! -L /etc/systemd/system/multi-user.target.wants/wristlink.service ]"
rm -f "$root/tmp/$name"
echo "chroot-install: $name on $suite: $failures failed"
[ "$failures" -eq 0 ]
