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
    for _ in $(seq 1 50); do
      sleep 0.05
      v=$(cat "$SIM/sim_gpio$off/value")
      [ "$v" = "$level" ] && break
    done
    kill "$gp" 2>/dev/null; wait "$gp" 2>/dev/null
    check "output $name=$level reads back in sim_gpio$off/value ($v)" test "$v" = "$level"
  done
done

# Inputs: gpiomon sees the edges produced by writing the pull attribute.
for name in accept reject; do
  off=$(gpiofind "$name" | cut -d' ' -f2)
  echo pull-down > "$SIM/sim_gpio$off/pull"
  timeout 10 gpiomon --num-events=2 --format='%e %o' "$CHIP" "$off" > "$OUT/gpiomon-$name.txt" 2>&1 &
  gm=$!
  sleep 0.5
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
phase_start bluetooth
mkdir -p "$OUT/phone"
rm -f "$OUT/keys.txt"
btmon -w "$OUT/hci.btsnoop" > /dev/null 2>&1 &
BTMON=$!
"$PY" "$HERE/phone.py" --results "$OUT/phone" --scenario "$SCENARIO" --timeout 140 \
  > "$OUT/phone/stdout.txt" 2>&1 &
PHONE=$!
# the stand-in waits for hci0 (Index Added) by itself
"$STANDIN" --fetch --action negative --bogus-action --mtu 40 --timeout 160 \
  --keys "$OUT/keys.txt" --summary "$OUT/standin-summary.json" \
  > "$OUT/standin.log" 2>&1 &
STANDIN_PID=$!
wait "$PHONE"; phone_rc=$?
log "phone exited with $phone_rc"
sleep 1
kill -TERM "$STANDIN_PID" 2>/dev/null
for _ in $(seq 1 50); do kill -0 "$STANDIN_PID" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$STANDIN_PID" 2>/dev/null
wait "$STANDIN_PID" 2>/dev/null
kill -INT "$BTMON" 2>/dev/null; wait "$BTMON" 2>/dev/null
dmesg > "$OUT/dmesg.txt"
phase_end

# --------------------------------------------------------------- verdict
phase_start verdict
J() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$@" 2>/dev/null; }
EV="$OUT/phone/events.jsonl"
check "phone scenario completed (phone-summary ok)" test "$(J "$OUT/phone/phone-summary.json" ok)" = True
check "phone saw ANCS solicitation advertisement (AD 0x15)" grep -q '"event": "advertisement"' "$EV"
check "pairing completed (phone 'paired' event)" grep -q '"event": "paired"' "$EV"
check "stand-in answered User Confirmation Request" test "$(J "$OUT/standin-summary.json" pairing_confirms)" -ge 1
check "kernel reported a New Long Term Key (bond stored)" test -s "$OUT/keys.txt"
check "ANCS access refused before pairing (security raised on error 0x05)" \
  test "$(J "$OUT/standin-summary.json" security_raises)" -ge 1
check "stand-in subscribed (phone session_start)" grep -q '"event": "session_start"' "$EV"
check "stand-in received Notification Source PDUs" test "$(J "$OUT/standin-summary.json" ns_count)" -ge 1
check "incoming call (UID 1) seen by stand-in" grep -q '"001a010101000000"\|NS PDU 001a010101000000' "$OUT/standin.log"
check "PreExisting replay seen by stand-in" grep -q 'NS PDU 0004040100000000' "$OUT/standin.log"
check "Control Point writes logged by phone" test -s "$OUT/phone/cp_writes.txt"
check "Data Source response reassembled by stand-in" grep -q 'DS response complete' "$OUT/standin.log"
check "Perform Notification Action -> Removed on NS" grep -q 'NS PDU 021a010001000000' "$OUT/standin.log"
check "unknown UID -> ATT error 0xA2" grep -q '"code": "0xA2"' "$EV"
check "bonded reconnection re-encrypted without new pairing" \
  bash -c "grep -q '\"event\": \"encrypting_with_bond\"' '$EV' && test \$(grep -c '\"event\": \"paired\"' '$EV') -eq 1"
check "Service Changed indications received by stand-in" test "$(J "$OUT/standin-summary.json" sc_indications)" -ge 2
check "re-subscribed after ANCS re-added" test "$(grep -c '"event": "session_start"' "$EV")" -ge 3
phase_end

total=$(ts)
printf '%-22s %6.2f s\n' "guest total" "$total" >> "$TIMES"
if [ "$fails" -eq 0 ]; then echo "RESULT PASS" >> "$RESULT"; else echo "RESULT FAIL ($fails)" >> "$RESULT"; fi
log "done: $fails failure(s)"
cat "$TIMES" | tee -a "$OUT/guest.log"
sync
exit $(( fails > 0 ))
