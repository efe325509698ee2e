#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs Wristlink on a Raspberry Pi without the Debian package (run as
# root on the Pi, from an unpacked release tarball or a checkout with a
# built binary). The package (`make deb`, then `apt install
# ./wristlink_..._arm64.deb`; README) is the preferred way: this script
# refuses to run beside it.
#   board/install.sh BOARD [BINARY]
# BOARD is a folder in board/ (pi-zero-2w, pi4, pi5). BINARY defaults to the
# tarball's wristlink beside board/, else a checkout's .build/release/wristlink.
# It copies the binary to /usr/local/bin, the board and policy files to
# /etc/wristlink (keeping files already there: they may be edited), the unit
# to /etc/systemd/system (its /usr paths rewritten to /usr/local), the
# bthelper@.service drop-in of the package to /etc/systemd/system,
# README.md and docs/ to /usr/local/share/doc/wristlink (the unit's
# Documentation=), masks bluetoothd (the firmware owns the controller; see
# board/deb/postinst for why masking), and enables and (re)starts the
# service. Idempotent: run it again to upgrade, and the new binary is the
# one running.
set -eu
board="${1:?usage: board/install.sh BOARD [BINARY]  (BOARD: pi-zero-2w, pi4, pi5)}"
here="$(cd "$(dirname "$0")" && pwd)"
default="$here/../.build/release/wristlink"
[ -f "$here/../wristlink" ] && default="$here/../wristlink"
binary="${2:-$default}"
[ -f "$here/$board/board.conf" ] || { echo "no board file $here/$board/board.conf" >&2; exit 2; }
[ -x "$binary" ] || { echo "no binary at $binary (build with: make pi, or swift build -c release)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
if dpkg-query -W -f='${Status}' wristlink 2>/dev/null | grep -q "ok installed"; then
    echo "the wristlink package is installed: upgrade it with apt install ./wristlink_..._arm64.deb instead" >&2
    exit 1
fi

install -D -m 0755 "$binary" /usr/local/bin/wristlink
install -d -m 0755 /etc/wristlink
[ -f /etc/wristlink/board.conf ] || install -m 0644 "$here/$board/board.conf" /etc/wristlink/board.conf
[ -f /etc/wristlink/policy.conf ] || install -m 0644 "$here/policy.conf" /etc/wristlink/policy.conf
sed -e 's|/usr/bin/wristlink|/usr/local/bin/wristlink|g' -e 's|file:///usr/share/doc/|file:///usr/local/share/doc/|' \
    "$here/wristlink.service" > /etc/systemd/system/wristlink.service
chmod 0644 /etc/systemd/system/wristlink.service
install -D -m 0644 "$here/deb/bthelper-wristlink.conf" /etc/systemd/system/bthelper@.service.d/wristlink.conf
install -d -m 0755 /usr/local/share/doc/wristlink
for doc in README.md docs; do
    [ -e "$here/../$doc" ] && cp -r "$here/../$doc" /usr/local/share/doc/wristlink/ 2>/dev/null || true
done
getent group gpio >/dev/null || groupadd --system gpio
systemctl mask bluetooth.service
systemctl daemon-reload
systemctl stop bluetooth.service 2>/dev/null || true
systemctl enable wristlink.service
# restart, not start: on an upgrade the old binary would keep running.
systemctl restart wristlink.service
echo "installed; follow it with: journalctl -u wristlink -f; check it with: wristlink doctor"
echo "pair: the wearable is in pairing mode until it has a bond; on the iPhone, open Settings > Bluetooth and choose Wristlink,"
echo "then press accept on the wearable while the pairing light blinks."
