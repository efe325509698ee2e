#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fuel gauge's overlay (board/overlays/wristlink-max17048.dts) compiles
# with dtc as the Pi's firmware needs it (-@: symbols and fixups) and says
# what the README says: a MAX17048 at 0x36 on the `i2c1` bus, the bus on.
#   Tests/Overlay/check-overlay.sh [BASE.dtb...]
# Each BASE device tree given (e.g. Debian's bcm2837-rpi-zero-2-w.dtb from
# the image root) must also take the overlay (fdtoverlay) and then hold the
# gauge under the header's I2C controller, /soc/i2c@7e804000.
# Needs dtc, fdtget and fdtoverlay (device-tree-compiler).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
DTS=board/overlays/wristlink-max17048.dts
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
fail() { echo "check-overlay: $*" >&2; exit 1; }
expect() {   # expect WHAT GOT WANT
  [ "$2" = "$3" ] || fail "$1 is '$2', want '$3'"
}

dtc -q -@ -I dts -O dtb -o "$out/o.dtbo" "$DTS"
node=/fragment@0/__overlay__/fuel-gauge@36
expect "the gauge's compatible" "$(fdtget -t s "$out/o.dtbo" "$node" compatible)" "maxim,max17048"
expect "the gauge's reg" "$(fdtget -t x "$out/o.dtbo" "$node" reg)" "36"
expect "the bus's status" "$(fdtget -t s "$out/o.dtbo" /fragment@0/__overlay__ status)" "okay"
expect "the bus's #address-cells" "$(fdtget -t x "$out/o.dtbo" /fragment@0/__overlay__ '#address-cells')" "1"
expect "the bus's #size-cells" "$(fdtget -t x "$out/o.dtbo" /fragment@0/__overlay__ '#size-cells')" "0"
# The target is a label the firmware resolves from the base tree's symbols.
expect "the target label" "$(fdtget -t s "$out/o.dtbo" /__fixups__ i2c1)" "/fragment@0:target:0"

n=0
for base in "$@"; do
  fdtoverlay -i "$base" -o "$out/applied.dtb" "$out/o.dtbo" || fail "$base does not take the overlay"
  bus=/soc/i2c@7e804000
  expect "$base: the gauge" "$(fdtget -t s "$out/applied.dtb" "$bus/fuel-gauge@36" compatible)" "maxim,max17048"
  expect "$base: the bus" "$(fdtget -t s "$out/applied.dtb" "$bus" status)" "okay"
  expect "$base: the bus's pins" "$(fdtget -t u "$out/applied.dtb" "$(fdtget -t s "$out/applied.dtb" /__symbols__ i2c1_gpio2)" brcm,pins)" "2 3"
  n=$((n + 1))
done
applied=""; [ "$n" -eq 0 ] || applied=", applied to $n base tree(s)"
echo "check-overlay: $DTS: maxim,max17048 at 0x36 on i2c1$applied"
