#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds test_power.ko out of tree for a Debian kernel that has no
# CONFIG_TEST_POWER (none of bookworm's 6.1, trixie's 6.12, backports' 6.18
# and 7.x has it): the kernel's own fake power supplies, test_ac (Mains),
# test_battery (Battery) and test_usb (USB), driven through its module
# parameters (/sys/module/test_power/parameters/battery_capacity, ...).
# Used by setup.sh (6.1, the installed headers) and fetch-kernel.sh (6.12,
# 6.18 and 7.x, the unpacked headers), like gpio-sim/build.sh.
#
#   build.sh SOURCE_TARBALL TOPDIR KERNEL_BUILD_DIR OUT_DIR KVER [MAKE_ARG...]
#
# SOURCE_TARBALL: linux-source-X.Y.tar.xz from Debian's linux-source-X.Y (same
#   version as the kernel); TOPDIR: its top directory (linux-source-X.Y).
# Takes drivers/power/supply/test_power.c as it is (one file, it builds out
# of tree unchanged) and builds it with ./Kbuild.
# Writes OUT_DIR/test_power.ko and OUT_DIR/kver. MAKE_ARGs go to the kernel's make.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC_TAR="${1:?usage: build.sh SOURCE_TARBALL TOPDIR KERNEL_BUILD_DIR OUT_DIR KVER [MAKE_ARG...]}"
TOP="${2:?}"; KDIR="${3:?}"; TP="${4:?}"; KVER="${5:?}"
shift 5

rm -rf "$TP"; mkdir -p "$TP"
tar -xf "$SRC_TAR" -C "$TP" --strip-components=1 "$TOP/drivers/power/supply/test_power.c"
mv "$TP/drivers/power/supply/test_power.c" "$TP/test_power.c"
rm -rf "$TP/drivers"
cp "$HERE/Kbuild" "$TP/Kbuild"
make -s -C "$KDIR" M="$TP" "$@" modules
echo "$KVER" > "$TP/kver"
modinfo "$TP/test_power.ko" | grep -E '^(vermagic|depends)'
