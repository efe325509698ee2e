#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs INSIDE the virtme-ng guest (one of Debian's kernels: 6.1, 6.12, 6.18, 7.x; host
# filesystem shared read-only, $OUT shared read-write). Started by run-vm.sh:
#   guest.sh OUT_DIR FIRMWARE [CASES]
# Loads the modules (gpio-sim, test_power: the battery at 80 %, discharging),
# creates the gpio-sim chip of board/vm, writes the VM policy, then runs
# suite.py (all cases in one Python process). Writes
# $OUT/summary.txt (suite.py) and $OUT/timings.txt.
set -u
OUT="${1:?usage: guest.sh OUT_DIR FIRMWARE [CASES]}"
FIRMWARE="${2:?usage: guest.sh OUT_DIR FIRMWARE [CASES]}"
CASES="${3:-}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
PY="$CACHE/venv/bin/python"
TIMES="$OUT/timings.txt"
mkdir -p "$OUT"
: > "$TIMES"
T0=$(date +%s.%N)
ts()  { echo "$(date +%s.%N) - $T0" | bc; }
log() { printf '[guest %6.2fs] %s\n' "$(ts)" "$*" | tee -a "$OUT/guest.log"; }
die() { log "SETUP FAILED: $*"; echo "FAIL 0 vm-setup 0.0 $*" >> "$OUT/summary.txt"; sync; exit 1; }
phase_end() { printf '%-22s %6.2f s\n' "$1" "$(echo "$(date +%s.%N) - $2" | bc)" >> "$TIMES"; }

log "guest up: kernel $(uname -r), $(nproc) cpu(s), uptime $(cut -d' ' -f1 /proc/uptime) s"
printf '%-22s %6.2f s\n' "guest boot (uptime)" "$(cut -d' ' -f1 /proc/uptime)" >> "$TIMES"

# --------------------------------------------------------------- modules
P=$(date +%s.%N)
modprobe configfs 2>/dev/null
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
# An out-of-tree module built for this kernel: setup.sh's (6.1) or
# fetch-kernel.sh's (the others) DIR/FILE whose DIR/kver is this kernel's;
# inserted unless it is loaded already.
load_built() {  # load_built DIR FILE MODULE
  local ko=""
  for d in "$CACHE/$1" "$CACHE"/*/"$1"; do
    [ "$(cat "$d/kver" 2>/dev/null)" = "$(uname -r)" ] && ko="$d/$2"
  done
  [ -n "$ko" ] || die "no $2 built for $(uname -r)"
  grep -q "^$3 " /proc/modules || insmod "$ko" || die "insmod $ko"
}
# gpio-sim.ko (built for 6.1, 6.12 and 6.18, the kernel's own on 7.x).
load_built gpio-sim gpio-sim.ko gpio_sim
# test_power.ko (the fake battery: test_ac, test_battery, test_usb), built
# for every kernel (none of Debian's has CONFIG_TEST_POWER). A known start
# for the battery case: 80 %, discharging.
load_built test-power test_power.ko test_power
TPP=/sys/module/test_power/parameters
echo 80 > "$TPP/battery_capacity" && echo discharging > "$TPP/battery_status" || die "cannot write $TPP"
test -d /sys/class/power_supply/test_battery || die "no /sys/class/power_supply/test_battery after insmod"
log "test_power: $(ls /sys/class/power_supply | tr '\n' ' '); test_battery $(cat /sys/class/power_supply/test_battery/type) capacity $(cat /sys/class/power_supply/test_battery/capacity) status $(cat /sys/class/power_supply/test_battery/status)"
# Kernel SMP needs ECDH (P-256), AES-CMAC and a DRBG: load them up front so a
# missing request_module() helper cannot stall pairing.
for m in ecdh_generic ecc cmac aes_generic drbg bluetooth hci_vhci; do
  modprobe "$m" 2>>"$OUT/modprobe.err" || echo "modprobe $m failed" >> "$OUT/modprobe.err"
done
test -c /dev/vhci || die "no /dev/vhci (hci_vhci)"
phase_end modules "$P"

# --------------------------------------------------------------- gpio-sim
# board/vm: outputs led-notify, led-call, vibration; buttons accept, reject
P=$(date +%s.%N)
LINES=(led-notify led-call vibration accept reject)
CFG=/sys/kernel/config/gpio-sim/wristlink
if [ ! -d "$CFG" ]; then
  mkdir "$CFG" "$CFG/bank0"
  echo wristlink-vm > "$CFG/bank0/label"
  echo ${#LINES[@]} > "$CFG/bank0/num_lines"
  for i in "${!LINES[@]}"; do
    mkdir "$CFG/bank0/line$i"
    echo "${LINES[$i]}" > "$CFG/bank0/line$i/name"
  done
  echo 1 > "$CFG/live"
fi
CHIP="$(cat "$CFG/bank0/chip_name")"
SIM="/sys/devices/platform/$(cat "$CFG/dev_name")/$CHIP"
test -c "/dev/$CHIP" || die "gpio-sim chip /dev/$CHIP missing"
for i in "${!LINES[@]}"; do
  echo pull-down > "$SIM/sim_gpio$i/pull"   # buttons released, outputs at rest
done
gpioinfo "$CHIP" > "$OUT/gpioinfo.txt" 2>&1
log "gpio-sim: /dev/$CHIP ($SIM)"
phase_end gpio-sim "$P"

# --------------------------------------------------------------- policy
# The default policy plus a per-app rule: messages from MobileSMS light
# led-call (long enough to be seen by polling gpio-sim) instead of Social's
# led-notify blink and tap.
POLICY="$OUT/vm-policy.conf"
{
  cat "$ROOT/board/policy.conf"
  echo
  echo "# --- added by Tests/VM/guest.sh ---"
  echo "pattern rule-flash on 1200"
  echo "rule app=com.apple.MobileSMS led-call=rule-flash"
} > "$POLICY"

# --------------------------------------------------------------- suite
P=$(date +%s.%N)
STATE="$(mktemp -d /tmp/wristlink-state.XXXXXX)"   # guest tmpfs: a fresh state directory
log "suite: firmware $FIRMWARE, state directory $STATE"
timeout --signal=TERM "${WL_SUITE_TIMEOUT:-560}" \
  "$PY" "$HERE/suite.py" --out "$OUT" --root "$ROOT" --firmware "$FIRMWARE" \
    --board "$ROOT/board/vm/board.conf" --policy "$POLICY" --state-dir "$STATE" \
    --sim "$SIM" --lines "$(IFS=,; echo "${LINES[*]}")" --consent-ms "${WL_CONSENT_MS:-4000}" \
    ${CASES:+--cases "$CASES"} ${WL_KEEP:+--keep} 2>&1 | tee "$OUT/suite.stdout"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 124 ] && echo "FAIL 0 suite-timeout 0.0 suite.py killed after ${WL_SUITE_TIMEOUT:-560} s" >> "$OUT/summary.txt"
log "suite.py exited $rc"
cp -a "$STATE" "$OUT/state" 2>/dev/null
phase_end suite "$P"
dmesg > "$OUT/dmesg.txt"
printf '%-22s %6.2f s\n' "guest total" "$(ts)" >> "$TIMES"
sync
exit "$rc"
