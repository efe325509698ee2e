#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The SD-card image's dwc2 overlay (board/image/dwc2.dts, docs/sd-image.md
# "The USB status console") compiles with dtc as the Pi's firmware needs it
# (-@) and says what config.txt's `dtoverlay=dwc2,dr_mode=peripheral` needs:
# the SoC's USB controller (label `usb`) on, in peripheral mode, and a
# `dr_mode` parameter (__overrides__) pointing at that node.
#   Tests/Overlay/check-dwc2-overlay.sh [BASE.dtb...]
# Each BASE device tree given (e.g. Debian's bcm2837-rpi-zero-2-w.dtb) must
# also take it (fdtoverlay) and then have /soc/usb@7e980000 in peripheral
# mode. fdtoverlay of dtc 1.6.1 (Debian bookworm) fails with
# FDT_ERR_NOTFOUND when an overlay node's phandle (there for
# __overrides__ only) meets a target that has one; the Pi's firmware merges
# them, so the copy applied here has that phandle removed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
DTS=board/image/dwc2.dts
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
fail() { echo "check-dwc2-overlay: $*" >&2; exit 1; }
expect() {   # expect WHAT GOT WANT
  [ "$2" = "$3" ] || fail "$1 is '$2', want '$3'"
}

dtc -q -@ -I dts -O dtb -o "$out/o.dtbo" "$DTS"
node=/fragment@0/__overlay__
expect "the controller's dr_mode" "$(fdtget -t s "$out/o.dtbo" "$node" dr_mode)" "peripheral"
expect "the controller's status" "$(fdtget -t s "$out/o.dtbo" "$node" status)" "okay"
expect "the target label" "$(fdtget -t s "$out/o.dtbo" /__fixups__ usb)" "/fragment@0:target:0"
# dr_mode = <&node>, "dr_mode": the node's phandle, then the property's name
ph="$(fdtget -t x "$out/o.dtbo" "$node" phandle)"
expect "the dr_mode parameter" "$(fdtget -t bx "$out/o.dtbo" /__overrides__ dr_mode)" \
  "$(printf '0 0 0 %x 64 72 5f 6d 6f 64 65 0' "0x$ph")"

n=0
for base in "$@"; do
  cp "$out/o.dtbo" "$out/applied.dtbo"
  fdtput -d "$out/applied.dtbo" "$node" phandle
  fdtoverlay -i "$base" -o "$out/applied.dtb" "$out/applied.dtbo" || fail "$base does not take the overlay"
  expect "$base: the controller's dr_mode" "$(fdtget -t s "$out/applied.dtb" /soc/usb@7e980000 dr_mode)" "peripheral"
  n=$((n + 1))
done
applied=""; [ "$n" -eq 0 ] || applied=", applied to $n base tree(s)"
echo "check-dwc2-overlay: $DTS: the usb controller in peripheral mode, dr_mode parameter$applied"
