#!/usr/bin/env bash
# Runs INSIDE the virtme-ng guest (Debian's 6.1 kernel, host filesystem shared
# read-only, $OUT shared read-write). Started by run-vm.sh:
#   guest.sh OUT_DIR [SCENARIO_JSON]
# Phases: modules -> gpio-sim chip -> gpio checks -> vhci + Bumble phone ->
# stand-in -> collect. Writes $OUT/result.txt (PASS/FAIL lines) and timings.
set -u
OUT="${1:?usage: guest.sh OUT_DIR [SCENARIO]}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
SCENARIO="${2:-$HERE/scenarios/default.json}"
PY="$CACHE/venv/bin/python"
STANDIN="$CACHE/standin"
KVER="$(uname -r)"
mkdir -p "$OUT"
# knobs written by run-vm.sh (WL_* variables of the host environment)
[ -f "$OUT/params.env" ] && . "$OUT/params.env"
IO_CAP="${WL_IO_CAP:-3}"
RESULT="$OUT/result.txt"
TIMES="$OUT/timings.txt"
: > "$RESULT"; : > "$TIMES"
T0=$(date +%s.%N)
fails=0

ts()   { echo "$(date +%s.%N) - $T0" | bc; }
log()  { printf '[guest %6.2fs] %s\n' "$(ts)" "$*" | tee -a "$OUT/guest.log"; }
pass() { echo "PASS $*" >> "$RESULT"; log "PASS $*"; }
fail() { echo "FAIL $*" >> "$RESULT"; log "FAIL $*"; fails=$((fails+1)); }
check() { local what="$1"; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
phase_start() { PHASE="$1"; PHASE_T=$(date +%s.%N); log "== $1"; }
phase_end() { local d; d=$(echo "$(date +%s.%N) - $PHASE_T" | bc); printf '%-22s %6.2f s\n' "$PHASE" "$d" >> "$TIMES"; }

log "guest up: kernel $KVER, $(nproc) cpu(s), uptime $(cut -d' ' -f1 /proc/uptime) s"
printf '%-22s %6.2f s\n' "guest boot (uptime)" "$(cut -d' ' -f1 /proc/uptime)" >> "$TIMES"

# --------------------------------------------------------------- modules
phase_start modules
modprobe configfs 2>/dev/null
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
if ! lsmod | grep -q '^gpio_sim'; then
  insmod "$CACHE/gpio-sim/gpio-sim.ko" || fail "insmod gpio-sim.ko"
fi
# Kernel SMP needs ECDH (P-256), AES-CMAC and a DRBG. Load them up front so a
# missing request_module() helper cannot stall pairing.
for m in ecdh_generic ecc cmac aes_generic drbg bluetooth hci_vhci; do
  modprobe "$m" 2>>"$OUT/modprobe.err" || echo "modprobe $m failed" >> "$OUT/modprobe.err"
done
check "module gpio-sim loaded" grep -q '^gpio_sim ' /proc/modules
check "module hci_vhci loaded (/dev/vhci)" test -c /dev/vhci
lsmod > "$OUT/lsmod.txt"
phase_end

# --------------------------------------------------------------- gpio-sim
phase_start gpio-sim
# board/vm pin map: outputs led-notify, led-call, vibration; inputs accept, reject
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
DEV="$(cat "$CFG/dev_name")"
SIM="/sys/devices/platform/$DEV/$CHIP"
log "gpio-sim: $DEV -> /dev/$CHIP ($SIM)"
gpiodetect > "$OUT/gpiodetect.txt" 2>&1
gpioinfo "$CHIP" > "$OUT/gpioinfo.txt" 2>&1
check "gpio chip /dev/$CHIP exists" test -c "/dev/$CHIP"
for name in "${LINES[@]}"; do
  check "line '$name' found by name" bash -c "gpiofind '$name' | grep -q '^$CHIP '"
done

# Outputs: gpioset (libgpiod 1.6) holds the line while it runs; the simulator's
# value file shows the level. (gpioset --mode=exit releases at once and
# gpio-sim then drops the line back to its pull.)
for name in led-notify led-call vibration; do
  off=$(gpiofind "$name" | cut -d' ' -f2)
  for level in 1 0; do
    gpioset --mode=signal "$CHIP" "$off=$level" &
    gp=$!
    v=""
    for _ in $(seq 1 200); do   # up to 10 s: the host may be busy
      sleep 0.05
      v=$(cat "$SIM/sim_gpio$off/value")
      [ "$v" = "$level" ] && break
    done
    kill "$gp" 2>/dev/null; wait "$gp" 2>/dev/null
    check "output $name=$level reads back in sim_gpio$off/value ($v)" test "$v" = "$level"
  done
done

# Fact check (informational): what gpio-sim shows after gpioset's default
# --mode=exit has released the line.
off=$(gpiofind led-notify | cut -d' ' -f2)
gpioset "$CHIP" "$off=1"; v=$(cat "$SIM/sim_gpio$off/value")
echo "INFO after 'gpioset $CHIP $off=1' (mode=exit, line released) sim_gpio$off/value=$v" >> "$RESULT"
log "INFO gpioset --mode=exit: value after release = $v"

# Inputs: gpiomon sees the edges produced by writing the pull attribute.
for name in accept reject; do
  off=$(gpiofind "$name" | cut -d' ' -f2)
  echo pull-down > "$SIM/sim_gpio$off/pull"
  timeout 10 gpiomon --num-events=2 --format='%e %o' "$CHIP" "$off" > "$OUT/gpiomon-$name.txt" 2>&1 &
  gm=$!
  # toggle only once gpiomon holds the line (else the edge is lost)
  for _ in $(seq 1 100); do
    gpioinfo "$CHIP" | grep -q "\"$name\".*\[used\]" && break
    sleep 0.1
  done
  echo pull-up > "$SIM/sim_gpio$off/pull"
  sleep 0.3
  echo pull-down > "$SIM/sim_gpio$off/pull"
  wait "$gm"
  check "input $name: gpiomon saw rising then falling edge" \
    bash -c "tr '\n' ' ' < '$OUT/gpiomon-$name.txt' | grep -q '^1 $off 0 $off'"
  check "input $name: gpioget reads pull-up as 1" bash -c \
    "echo pull-up > '$SIM/sim_gpio$off/pull'; test \"\$(gpioget '$CHIP' $off)\" = 1; r=\$?; echo pull-down > '$SIM/sim_gpio$off/pull'; exit \$r"
done
phase_end

# --------------------------------------------------------------- bluetooth
# run_bt TAG SCENARIO STANDIN-ARGS...: phone.py (vhci controller + iPhone) and
# the stand-in side by side until the phone's scenario ends. Closing /dev/vhci
# at the end removes hci0, which is what a reboot looks like to the kernel.
run_bt() {
  local tag="$1" scenario="$2"; shift 2
  mkdir -p "$OUT/$tag"
  "$PY" "$HERE/phone.py" --results "$OUT/$tag" --scenario "$scenario" --timeout 140 \
    --keystore "$OUT/phone-keystore.json" > "$OUT/$tag/stdout.txt" 2>&1 &
  local phone=$!
  # the stand-in waits for hci0 (Index Added) by itself
  "$STANDIN" --timeout 160 --io-cap "$IO_CAP" --keys "$OUT/keys.txt" --summary "$OUT/$tag/standin-summary.json" \
    "$@" > "$OUT/$tag/standin.log" 2>&1 &
  local standin=$!
  wait "$phone"; local rc=$?
  log "$tag: phone exited with $rc"
  sleep 0.5
  kill -TERM "$standin" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$standin" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$standin" 2>/dev/null
  wait "$standin" 2>/dev/null
  return 0
}

rm -f "$OUT/keys.txt" "$OUT/phone-keystore.json"
btmon -w "$OUT/hci.btsnoop" > /dev/null 2>&1 &
BTMON=$!

phase_start bluetooth-pairing
run_bt bt1 "$SCENARIO" --fetch --action negative --bogus-action --mtu 40
phase_end

phase_start bluetooth-reboot
run_bt bt2 "$HERE/scenarios/reboot.json" --fetch --bogus-action --probe-resecure
phase_end

kill -INT "$BTMON" 2>/dev/null; wait "$BTMON" 2>/dev/null
dmesg > "$OUT/dmesg.txt"

# --------------------------------------------------------------- verdict
phase_start verdict
# (no python here: each interpreter start costs seconds under TCG)
J() { local v; v=$(sed -n "s/.*\"$2\": *\([0-9-]*\).*/\1/p" "$1" 2>/dev/null | head -1); echo "${v:--1}"; }
EV="$OUT/bt1/events.jsonl"; SL="$OUT/bt1/standin.log"; SS="$OUT/bt1/standin-summary.json"
check "bt1: phone scenario completed" grep -q '"ok": true' "$OUT/bt1/phone-summary.json"
check "bt1: phone saw ANCS solicitation advertisement (AD 0x15)" grep -q '"event": "advertisement"' "$EV"
check "bt1: ANCS refused before pairing (error 0x05 -> BT_SECURITY raised)" grep -q 'error 0x05 for request 0x12' "$SL"
check "bt1: stand-in answered User Confirmation Request" test "$(J "$SS" pairing_confirms)" -ge 1
check "bt1: pairing completed (phone 'paired' event)" grep -q '"event": "paired"' "$EV"
check "bt1: kernel reported a New Long Term Key (saved)" grep -q '^ltk ' "$OUT/keys.txt"
check "bt1: stand-in subscribed (phone session_start)" grep -q '"event": "session_start"' "$EV"
check "bt1: stand-in received Notification Source PDUs" test "$(J "$SS" ns_count)" -ge 1
check "bt1: PreExisting replay seen" grep -q 'NS PDU 0004040100000000' "$SL"
check "bt1: incoming call UID 1 seen" grep -q 'NS PDU 001a010101000000' "$SL"
check "bt1: Control Point writes logged by phone" test "$(wc -l < "$OUT/bt1/cp_writes.txt")" -ge 8
check "bt1: Data Source response split at MTU-3 and reassembled" \
  bash -c "grep -q 'DS chunk (37 bytes)' '$SL' && grep -q 'DS response complete' '$SL'"
check "bt1: Perform Notification Action -> Removed on NS" grep -q 'NS PDU 021a010001000000' "$SL"
check "bt1: unknown UID -> ATT error 0xA2" grep -q '"code": "0xA2"' "$EV"
check "bt1: bonded reconnection re-encrypted without pairing" \
  bash -c "grep -q '\"event\": \"encrypting_with_bond\"' '$EV' && test \$(grep -c '\"event\": \"paired\"' '$EV') -eq 1"
check "bt1: Service Changed indications received" test "$(J "$SS" sc_indications)" -ge 2
check "bt1: re-subscribed after ANCS re-added" test "$(grep -c '"event": "session_start"' "$EV")" -ge 3
EV="$OUT/bt2/events.jsonl"; SL="$OUT/bt2/standin.log"; SS="$OUT/bt2/standin-summary.json"
check "bt2: hci0 re-created, keys loaded (Load Long Term Keys ok)" \
  grep -q 'complete for 0x0013 Load Long Term Keys: status 0x00' "$SL"
check "bt2: phone scenario completed" grep -q '"ok": true' "$OUT/bt2/phone-summary.json"
check "bt2: kernel sent Security Request, phone encrypted with stored bond" \
  grep -q '"event": "security_request", "auth_req": "0x[0-9A-F]*", "bonded": true' "$EV"
check "bt2: no new pairing (no User Confirmation, no 'paired')" \
  bash -c "test $(J "$SS" pairing_confirms) -eq 0 && ! grep -q '\"event\": \"paired\"' '$EV'"
check "bt2: stand-in received Notification Source PDUs" test "$(J "$SS" ns_count)" -ge 1
phase_end

total=$(ts)
printf '%-22s %6.2f s\n' "guest total" "$total" >> "$TIMES"
if [ "$fails" -eq 0 ]; then echo "RESULT PASS" >> "$RESULT"; else echo "RESULT FAIL ($fails)" >> "$RESULT"; fi
log "done: $fails failure(s)"
cat "$TIMES" | tee -a "$OUT/guest.log"
sync
exit $(( fails > 0 ))
