#!/usr/bin/env bash
# The VM suite: boot Debian's own kernel under virtme-ng (TCG, no KVM) once and
# run every case (guest.sh -> suite.py) against the firmware's release binary.
#   run-vm.sh [CASES]        CASES: e.g. 1,2 (default: all)
# Env: VM_CPUS (default 1), VM_MEMORY (default 1G), VM_TIMEOUT (default 590 s,
#      the hard bound on the whole boot), WL_FIRMWARE (default
#      .build/release/wristlink), WL_SUITE_TIMEOUT, WL_CONSENT_MS, WL_KEEP=1
#      (keep the artifacts of passed cases too).
# Results: .build/vm/out/run-<date>/ (.build/vm/out/latest links the newest;
# the 5 newest are kept); a failed case keeps cases/N-name/. Exit 0 when
# every case passed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
VENV="$CACHE/venv"
FIRMWARE="${WL_FIRMWARE:-$ROOT/.build/release/wristlink}"
CASES="${1:-}"

for f in "$CACHE/kver" "$VENV/bin/vng" "$CACHE/gpio-sim/gpio-sim.ko" "$FIRMWARE"; do
  [ -e "$f" ] || { echo "run-vm: $f missing: run Tests/VM/setup.sh and build the firmware first (make test-vm does both)" >&2; exit 2; }
done
KVER="$(cat "$CACHE/kver")"
OUT="$CACHE/out/run-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
ln -sfn "$OUT" "$CACHE/out/latest"

export PATH="$VENV/bin:$PATH"   # vng runs virtme-run from PATH
env | grep '^WL_[A-Z_]*=[A-Za-z0-9_./,-]*$' | sed 's/^/export /' > "$OUT/params.env" || true
T0=$(date +%s.%N)
echo "test-vm: kernel $KVER, firmware $FIRMWARE, results in $OUT"
# qemu reopens its stdout: a plain '> file' gets overwritten, so tee it.
set +e
timeout --signal=TERM --kill-after=10 "${VM_TIMEOUT:-590}" \
  vng --disable-kvm --run "/boot/vmlinuz-$KVER" \
      --memory "${VM_MEMORY:-1G}" --cpus "${VM_CPUS:-1}" \
      --rwdir="$OUT" \
      --exec ". $OUT/params.env; bash $HERE/guest.sh $OUT $FIRMWARE $CASES" > >(tee "$OUT/console.log" | grep --line-buffered -E '^[0-9:.]+ suite (==|(PASS|FAIL|INFO) )' || true) 2>&1
vng_rc=$?
set -e
wall=$(echo "$(date +%s.%N) - $T0" | bc)
printf '%-22s %6.2f s\n' "host wall (vng)" "$wall" >> "$OUT/timings.txt"
# keep the five most recent runs
ls -1dt "$CACHE"/out/run-* 2>/dev/null | tail -n +6 | xargs -r rm -rf

SUMMARY="$OUT/summary.txt"
echo
echo "---- VM suite: case, result, seconds ($OUT) ----"
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
printf 'test-vm: %s passed, %s failed; total wall time %.1f s\n' "${npass:-0}" "${nfail:-0}" "$wall"
[ "${npass:-0}" -gt 0 ] && [ "${nfail:-0}" -eq 0 ] && [ "$vng_rc" -eq 0 ]
