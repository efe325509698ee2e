#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds gpio-sim.ko out of tree for a Debian kernel that has no CONFIG_GPIO_SIM
# (neither bookworm's 6.1, trixie's 6.12 nor backports' 6.18 has it; 6.1 and
# 6.12 lack CONFIG_IRQ_SIM too).
# Used by setup.sh (6.1, the installed headers) and fetch-kernel.sh (6.12 and 6.18, the
# unpacked headers).
#
#   build.sh SOURCE_TARBALL TOPDIR KERNEL_BUILD_DIR OUT_DIR KVER [MAKE_ARG...]
#
# SOURCE_TARBALL: linux-source-X.Y.tar.xz from Debian's linux-source-X.Y (same
#   version as the kernel); TOPDIR: its top directory (linux-source-X.Y).
# Takes drivers/gpio/gpio-sim.c (renamed gpio-sim-core.c), drivers/gpio/gpiolib.h
# and kernel/irq/irq_sim.c (and, from 6.17, drivers/gpio/dev-sync-probe.[ch]),
# builds them as one module with ./Kbuild; the one
# source change: irq_to_desc() is not exported to modules, so irq_sim.c calls
# generic_handle_irq(irqnum) instead of handle_simple_irq(irq_to_desc(irqnum))
# (fails if that line is gone, so a changed source is noticed).
# Writes OUT_DIR/gpio-sim.ko and OUT_DIR/kver. MAKE_ARGs go to the kernel's make.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC_TAR="${1:?usage: build.sh SOURCE_TARBALL TOPDIR KERNEL_BUILD_DIR OUT_DIR KVER [MAKE_ARG...]}"
TOP="${2:?}"; KDIR="${3:?}"; GS="${4:?}"; KVER="${5:?}"
shift 5

rm -rf "$GS"; mkdir -p "$GS"
tar -xf "$SRC_TAR" -C "$GS" --strip-components=1 \
    "$TOP/drivers/gpio/gpio-sim.c" "$TOP/drivers/gpio/gpiolib.h" "$TOP/kernel/irq/irq_sim.c"
mv "$GS/drivers/gpio/gpio-sim.c"  "$GS/gpio-sim-core.c"
mv "$GS/drivers/gpio/gpiolib.h"   "$GS/gpiolib.h"
mv "$GS/kernel/irq/irq_sim.c"     "$GS/irq_sim.c"
# 6.17 and later: gpio-sim waits for its platform device's probe through
# the dev-sync-probe helper (drivers/gpio/dev-sync-probe.c, a module of its
# own that Debian's 6.18 does not build either): built into ours.
if grep -q '#include "dev-sync-probe.h"' "$GS/gpio-sim-core.c"; then
  tar -xf "$SRC_TAR" -C "$GS" --strip-components=1 \
      "$TOP/drivers/gpio/dev-sync-probe.c" "$TOP/drivers/gpio/dev-sync-probe.h"
  mv "$GS/drivers/gpio/dev-sync-probe.c" "$GS/drivers/gpio/dev-sync-probe.h" "$GS/"
fi
rm -rf "$GS/drivers" "$GS/kernel"
grep -q 'handle_simple_irq(irq_to_desc(irqnum))' "$GS/irq_sim.c" \
  || { echo "gpio-sim/build.sh: irq_sim.c no longer calls handle_simple_irq(irq_to_desc(irqnum)); check the patch" >&2; exit 1; }
sed -i 's/handle_simple_irq(irq_to_desc(irqnum))/generic_handle_irq(irqnum)/' "$GS/irq_sim.c"
cp "$HERE/Kbuild" "$GS/Kbuild"
make -s -C "$KDIR" M="$GS" "$@" modules
echo "$KVER" > "$GS/kver"
modinfo "$GS/gpio-sim.ko" | grep -E '^(vermagic|depends)'
