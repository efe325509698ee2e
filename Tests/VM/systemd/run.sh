#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The systemd case (Tests/VM/NOTES.md, "The systemd case"): the Debian
# package of the firmware in a Debian trixie VM with systemd as PID 1,
# booted twice from one disk under qemu (TCG, no KVM).
#   run.sh [DEB...]     default: .build/deb/wristlink_*_amd64.deb (make deb)
# The disk is a qcow2 overlay on the cached image of build-image.sh (built
# first if missing). 9p shares: the repository read-only (wlrepo: guest.sh,
# case.py, phone.py, board/vm) and the run's folder read-write (wlout:
# results, the packages, the phone's keystore across the two boots).
# Env: WL_VM_IMAGE (an image folder instead of build-image.sh's), VM_MEMORY (1G), VM_CPUS (1), VM_BOOT1_TIMEOUT (700 s), VM_BOOT2_TIMEOUT
#      (500 s): the hard bounds on each qemu; WL_PHASE_TIMEOUT (case.py in
#      each boot, 380 s).
# Results: .build/vm/systemd/run-<date>/ (latest links the newest; 3 kept).
# Exit 0 when all seven parts passed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
RUNS="$ROOT/.build/vm/systemd"
T0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

if [ "$#" -gt 0 ]; then debs=("$@"); else debs=("$ROOT"/.build/deb/wristlink_*_amd64.deb); fi
for d in "${debs[@]}"; do
  [ -f "$d" ] || { echo "test-systemd: no package $d (make deb builds it)" >&2; exit 2; }
done
"$ROOT/scripts/ensure-packages" qemu-system-x86 qemu-utils
IMG="${WL_VM_IMAGE:-$("$HERE/build-image.sh" | tail -1)}"   # WL_VM_IMAGE: an image folder to use as it is
for f in root.img vmlinuz initrd.img kver; do
  [ -f "$IMG/$f" ] || { echo "test-systemd: $IMG/$f missing" >&2; exit 2; }
done
image_s=$(elapsed "$T0")

OUT="$RUNS/run-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT/debs"
ln -sfn "$OUT" "$RUNS/latest"
ls -1dt "$RUNS"/run-* 2>/dev/null | tail -n +4 | xargs -r rm -rf
cp "${debs[@]}" "$OUT/debs/"
# A package linked against libgpiod 1.6 (libgpiod2, Debian 12) cannot be
# installed on trixie, which has only libgpiod3: until the amd64 package is
# the trixie build, bookworm's libgpiod2 goes in beside it, said loudly.
for d in "${debs[@]}"; do
  if dpkg-deb -f "$d" Depends | grep -q 'libgpiod2'; then
    echo "test-systemd: NOTE: ${d##*/} depends on libgpiod2 (libgpiod 1.6, bookworm), which trixie does not have: installing bookworm's libgpiod2 beside it" | tee "$OUT/NOTE-libgpiod2.txt"
    (cd "$OUT/debs" && timeout "${WL_SETUP_NET_TIMEOUT:-900}" apt-get download -q -o APT::Sandbox::User=root libgpiod2 >/dev/null)
  fi
done
: > "$OUT/summary.txt"
echo "export WL_PHASE_TIMEOUT=${WL_PHASE_TIMEOUT:-380}" > "$OUT/params.env"
qemu-img create -q -f qcow2 -b "$IMG/root.img" -F raw "$OUT/disk.qcow2"
echo "test-systemd: kernel $(cat "$IMG/kver"), image $IMG, package(s) ${debs[*]##*/}, results in $OUT"

boot() {  # boot PHASE TIMEOUT
  local phase=$1 limit=$2 b0 rc
  b0=$(date +%s.%N)
  set +e
  timeout --signal=TERM --kill-after=10 "$limit" \
    qemu-system-x86_64 -accel tcg -machine q35 -cpu max -m "${VM_MEMORY:-1G}" -smp "${VM_CPUS:-1}" \
      -display none -no-reboot -serial "file:$OUT/console-$phase.log" -monitor none -nic none \
      -kernel "$IMG/vmlinuz" -initrd "$IMG/initrd.img" \
      -append "root=/dev/vda rw console=ttyS0 quiet mitigations=off wl.phase=$phase" \
      -drive "file=$OUT/disk.qcow2,if=virtio,format=qcow2,cache=unsafe" \
      -device virtio-rng-pci \
      -virtfs "local,path=$ROOT,mount_tag=wlrepo,security_model=none,readonly=on" \
      -virtfs "local,path=$OUT,mount_tag=wlout,security_model=none"
  rc=$?
  set -e
  printf '%-24s %7.1f s (qemu exit %d)\n' "host: boot $phase" "$(elapsed "$b0")" "$rc" | tee -a "$OUT/timings.txt"
  grep -E '^(PASS|FAIL) ' "$OUT/summary.txt" | sed 's/^/  /' | tail -n +"$((${shown:-0} + 1))"
  shown=$(grep -cE '^(PASS|FAIL) ' "$OUT/summary.txt" || true)
  return "$rc"
}
shown=0
printf '%-24s %7.1f s\n' "host: image (cached?)" "$image_s" >> "$OUT/timings.txt"
boot1_rc=0; boot "1" "${VM_BOOT1_TIMEOUT:-700}" || boot1_rc=$?
boot2_rc=0
if grep -q '^PASS 5 ' "$OUT/summary.txt"; then
  boot "2" "${VM_BOOT2_TIMEOUT:-500}" || boot2_rc=$?
else
  echo "FAIL 6 reboot 0.0 not run: boot 1 did not pass" >> "$OUT/summary.txt"
  echo "FAIL 7 journal 0.0 not run: boot 1 did not pass" >> "$OUT/summary.txt"
fi

echo
echo "---- systemd case: part, result, seconds ($OUT) ----"
awk '$1=="PASS"||$1=="FAIL" { printf "  %-4s %-2s %-16s %6.1f s", $1, $2, $3, $4; $1=$2=$3=$4=""; sub(/^ +/, ""); if ($0 != "") printf "  %s", $0; printf "\n" }
     $1=="INFO" { print "  " $0 }' "$OUT/summary.txt"
for phase in 1 2; do
  [ -f "$OUT/timings-$phase.txt" ] && sed "s/^/  boot $phase: /" "$OUT/timings-$phase.txt"
  [ -f "$OUT/boot-time-$phase.txt" ] && sed -n "1s/^/  boot $phase: /p" "$OUT/boot-time-$phase.txt"
done
sed 's/^/  /' "$OUT/timings.txt"
npass=$(grep -c '^PASS' "$OUT/summary.txt" || true)
nfail=$(grep -c '^FAIL' "$OUT/summary.txt" || true)
printf 'test-systemd: %s passed, %s failed; total wall time %s s (logs: console-N.log, case-N.log, journal-N.txt)\n' \
  "${npass:-0}" "${nfail:-0}" "$(elapsed "$T0")"
[ "${npass:-0}" -eq 7 ] && [ "${nfail:-0}" -eq 0 ] && [ "$boot1_rc" -eq 0 ] && [ "$boot2_rc" -eq 0 ]
