#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The VM suite: boot one of Debian's own kernels under virtme-ng (TCG, no KVM)
# once and run every case (guest.sh -> suite.py) against the firmware's
# release binary.
#   run-vm.sh [CASES]        CASES: e.g. 1,2, or all-but-8 (default: all)
# Env: WL_VM_KERNEL: bookworm (default: the host's installed 6.1,
#      /boot/vmlinuz-KVER), trixie (6.12), k618 (trixie-backports' 6.18) or
#      k7 (trixie-backports' newest 7.x), each from fetch-kernel.sh and
#      booted from .build/vm/NAME/root/boot so that vng finds its modules
#      beside it,
#      VM_CPUS (default 1), VM_MEMORY (default 1G), VM_TIMEOUT (default 590 s,
#      the hard bound on the whole boot), WL_FIRMWARE (default
#      .build/release/wristlink; on a kernel without GPIO uAPI v1 (k7)
#      Tests/VM/firmware-gpiod2.sh, the libgpiod 2 build), WL_SUITE_TIMEOUT, WL_CONSENT_MS, WL_KEEP=1
#      (keep the artifacts of passed cases too), WL_VM_TAG (a word added to
#      the results folder's name: two runs of one kernel at once).
# Results: .build/vm/out/run-<date>-<kernel>/ (.build/vm/out/latest links the
# newest, latest-<kernel> the newest of that kernel; the 10 newest are kept);
# a failed case keeps cases/N-name/. Exit 0 when every case passed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
VENV="$CACHE/venv"
FIRMWARE="${WL_FIRMWARE:-$ROOT/.build/release/wristlink}"
CASES="${1:-}"
KERNEL="${WL_VM_KERNEL:-bookworm}"

# KDIR: where the kernel's kver, gpio-sim/ and test-power/ are; guest.sh
# picks the gpio-sim.ko and test_power.ko whose kver is the running kernel's.
case "$KERNEL" in
  bookworm)        KDIR="$CACHE" ;;
  trixie|k618|k7)  KDIR="$CACHE/$KERNEL" ;;
  *) echo "run-vm: WL_VM_KERNEL=$KERNEL: bookworm, trixie, k618 or k7" >&2; exit 2 ;;
esac
# Debian's 7.x kernels are built without CONFIG_GPIO_CDEV_V1, the GPIO
# character device's first ABI, the only one libgpiod 1.6 speaks: the host
# build (bookworm, libgpiod 1.6) cannot request a line there, so such a
# kernel runs the libgpiod 2 build (the one for trixie) unless WL_FIRMWARE
# says otherwise.
KCONFIG="$KDIR/config"; [ "$KERNEL" = bookworm ] && KCONFIG="/boot/config-$(cat "$KDIR/kver" 2>/dev/null)"
if grep -q '^# CONFIG_GPIO_CDEV_V1 is not set' "$KCONFIG" 2>/dev/null; then
  [ -n "${WL_FIRMWARE:-}" ] || FIRMWARE="$HERE/firmware-gpiod2.sh"
  if [ -f "$FIRMWARE" ] && readelf -d "$FIRMWARE" 2>/dev/null | grep -q 'libgpiod\.so\.2\]'; then
    echo "run-vm: $KERNEL has no GPIO uAPI v1 (CONFIG_GPIO_CDEV_V1) and $FIRMWARE uses libgpiod 1.6, which needs it: use the libgpiod 2 build (WL_FIRMWARE=$HERE/firmware-gpiod2.sh, make pi-x86_64-trixie)" >&2
    exit 2
  fi
fi
for f in "$KDIR/kver" "$VENV/bin/vng" "$KDIR/gpio-sim/gpio-sim.ko" "$KDIR/test-power/test_power.ko" "$FIRMWARE"; do
  [ -e "$f" ] || { echo "run-vm: $f missing: run Tests/VM/setup.sh and build the firmware first (make test-vm does both)" >&2; exit 2; }
done
KVER="$(cat "$KDIR/kver")"
case "$KERNEL" in
  bookworm) KIMG="/boot/vmlinuz-$KVER" ;;
  # Not the .build/vm/NAME/vmlinuz symlink: vng looks for the modules by
  # walking up from the image's path to a directory with lib/modules.
  *)        KIMG="$KDIR/root/boot/vmlinuz-$KVER" ;;
esac
OUT="$CACHE/out/run-$(date +%Y%m%d-%H%M%S)-$KERNEL${WL_VM_TAG:+-$WL_VM_TAG}"
mkdir -p "$OUT"
ln -sfn "$OUT" "$CACHE/out/latest"
ln -sfn "$OUT" "$CACHE/out/latest-$KERNEL"

export PATH="$VENV/bin:$PATH"   # vng runs virtme-run from PATH
env | grep '^WL_[A-Z_]*=[A-Za-z0-9_./,-]*$' | sed 's/^/export /' > "$OUT/params.env" || true
T0=$(date +%s.%N)
echo "test-vm: kernel $KVER ($KERNEL), firmware $FIRMWARE, results in $OUT"
# qemu reopens its stdout: a plain '> file' gets overwritten, so tee it.
set +e
timeout --signal=TERM --kill-after=10 "${VM_TIMEOUT:-590}" \
  vng --disable-kvm --run "$KIMG" \
      --memory "${VM_MEMORY:-1G}" --cpus "${VM_CPUS:-1}" \
      --rwdir="$OUT" \
      --exec ". $OUT/params.env; bash $HERE/guest.sh $OUT $FIRMWARE $CASES" > >(tee "$OUT/console.log" | grep --line-buffered -E '^[0-9:.]+ suite (==|(PASS|FAIL|INFO) )' || true) 2>&1
vng_rc=$?
set -e
wall=$(echo "$(date +%s.%N) - $T0" | bc)
printf '%-22s %6.2f s\n' "host wall (vng)" "$wall" >> "$OUT/timings.txt"
# keep the ten most recent runs (five of each kernel when both run)
ls -1dt "$CACHE"/out/run-* 2>/dev/null | tail -n +11 | xargs -r rm -rf

SUMMARY="$OUT/summary.txt"
echo
echo "---- VM suite on $KERNEL's $KVER: case, result, seconds ($OUT) ----"
if [ -s "$SUMMARY" ]; then
  awk '$1=="PASS"||$1=="FAIL" { r=$4; $1=$1; printf "  %-4s %-2s %-18s %6.1f s", $1, $2, $3, $4; $1=$2=$3=$4=""; sub(/^ +/, ""); if ($0 != "") printf "  %s", $0; printf "\n" }
       $1=="INFO" { print "  " $0 }' "$SUMMARY"
else
  echo "  no summary: the guest did not get to the suite (vng exit $vng_rc; see $OUT/console.log)"
fi
for d in "$OUT"/cases/*/; do
  [ -d "$d" ] && echo "  kept for inspection: $d (why.txt, firmware-*.log, *.events.jsonl, hci.btsnoop, *.att.btsnoop)"
done
npass=$(grep -c '^PASS' "$SUMMARY" 2>/dev/null || true)
nfail=$(grep -c '^FAIL' "$SUMMARY" 2>/dev/null || true)
printf 'test-vm (%s, %s): %s passed, %s failed; total wall time %.1f s\n' "$KERNEL" "$KVER" "${npass:-0}" "${nfail:-0}" "$wall"
[ "${npass:-0}" -gt 0 ] && [ "${nfail:-0}" -eq 0 ] && [ "$vng_rc" -eq 0 ]
