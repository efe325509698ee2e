#!/usr/bin/env bash
# Boot Debian's own kernel under virtme-ng (TCG, no KVM) and run guest.sh in it.
#   run-vm.sh [SCENARIO_JSON]
# Env: VM_CPUS (default 1), VM_MEMORY (default 1G), VM_TIMEOUT (default 300 s),
#      WL_IO_CAP (stand-in mgmt IO capability, default 3 = NoInputNoOutput)
# Results: .build/vm/out/run-<date>/ (also .build/vm/out/latest), exit 0 on PASS.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
VENV="$CACHE/venv"
SCENARIO="${1:-$HERE/scenarios/default.json}"

for f in "$CACHE/kver" "$VENV/bin/vng" "$CACHE/gpio-sim/gpio-sim.ko" "$CACHE/standin"; do
  [ -e "$f" ] || { echo "run-vm: $f missing: run setup.sh first" >&2; exit 2; }
done
KVER="$(cat "$CACHE/kver")"
[ "$(uname -r)" != "$KVER" ] || true
OUT="$CACHE/out/run-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
ln -sfn "$OUT" "$CACHE/out/latest"

export PATH="$VENV/bin:$PATH"   # vng runs virtme-run from PATH
# Experiment knobs for the guest (e.g. WL_IO_CAP=1 for numeric comparison)
env | grep '^WL_[A-Z_]*=[A-Za-z0-9_./-]*$' > "$OUT/params.env" || true
T0=$(date +%s.%N)
echo "run-vm: kernel $KVER, results in $OUT"
# qemu reopens its stdout: a plain '> file' gets overwritten, so tee it.
set +e
timeout --signal=TERM "${VM_TIMEOUT:-300}" \
  vng --disable-kvm --run "/boot/vmlinuz-$KVER" \
      --memory "${VM_MEMORY:-1G}" --cpus "${VM_CPUS:-1}" \
      --rwdir="$OUT" \
      --exec "bash $HERE/guest.sh $OUT $SCENARIO" 2>&1 | tee "$OUT/console.log"
vng_rc=${PIPESTATUS[0]}
set -e
T1=$(date +%s.%N)
wall=$(echo "$T1 - $T0" | bc)
printf '%-22s %6.2f s\n' "host wall (vng)" "$wall" >> "$OUT/timings.txt"

# Decode the guest's HCI/mgmt trace on the host (btmon reads btsnoop files
# without Bluetooth sockets). btmon 5.66 may crash part-way: best effort.
if [ -s "$OUT/hci.btsnoop" ] && command -v btmon >/dev/null; then
  btmon -r "$OUT/hci.btsnoop" > "$OUT/hci.txt" 2>&1 || echo "(btmon exited $?)" >> "$OUT/hci.txt"
fi
echo
echo "---- results ($OUT) ----"
cat "$OUT/result.txt" 2>/dev/null || echo "no result.txt (guest did not finish; vng rc $vng_rc)"
echo "---- timings ----"
cat "$OUT/timings.txt"
npass=$(grep -c '^PASS' "$OUT/result.txt" 2>/dev/null || true)
nfail=$(grep -c '^FAIL' "$OUT/result.txt" 2>/dev/null || true)
[ -f "$OUT/result.txt" ] || nfail=1
# keep the five most recent runs
ls -1dt "$CACHE"/out/run-* 2>/dev/null | tail -n +6 | xargs -r rm -rf
echo "vm: ${npass:-0} passed, ${nfail:-0} failed"
if grep -q '^RESULT PASS' "$OUT/result.txt" 2>/dev/null; then
  exit 0
fi
exit 1
