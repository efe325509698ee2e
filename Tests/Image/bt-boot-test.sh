#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The SD-card image meets a phone over its own Bluetooth UART (docs/sd-image.md,
# "Bluetooth over the UART in QEMU"): one boot of a copy of the image in
# -M raspi3b with the Zero 2 W's device tree, as the boot test's first boot,
# but QEMU's first -serial (the PL011, where the Zero 2 W's CYW43438 sits)
# is a Unix socket to Tests/Image/bt-uart-relay.py: a CYW43438 answering
# btbcm's vendor commands in front of a Bumble controller, and a Bumble phone
# holding the bond placed on the data partition (Tests/Image/bonds).
#   bt-boot-test.sh IMAGE [OUT]     (OUT: .build/image/bt-boot by default)
# Checked: the kernel attached the controller by itself (hci_uart's
# Broadcom driver on serial0, no btattach) and btbcm sent the image's
# brcm/BCM43430A1.hcd record by record (compared with the file in the
# image's root); wristlink.service active, never restarted; the bonded phone
# reconnected and encrypted with the stored key (no new pairing),
# subscribed, and the call it rang drove led-call and the vibration motor
# (GPIO27 and GPIO18 seen high in the guest's debugfs; the default policy
# rings a call without asking for its attributes). Recorded in OUT/timings.txt: kernel start ->
# advertising and advertising -> subscribed (the firmware's journal, the
# guest's clock), and the same seen from the relay (host clock, from QEMU's
# connection). A button press cannot be driven: QEMU's bcm2835 GPIO model
# has no inputs (see docs/sd-image.md). Bounded: IMAGE_BOOT_TIMEOUT (420 s)
# for the report, the relay's own limits. Exit 0 when every check passed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
IMAGE="${1:?usage: bt-boot-test.sh IMAGE [OUT]}"
OUT="${2:-$ROOT/.build/image/bt-boot}"
LIMIT="${IMAGE_BOOT_TIMEOUT:-420}"
BOOT_NAME="${BT_BOOT_NAME:-bt}"   # how the lines name this boot (boot-test.sh: 5)
PY="${WL_BT_PYTHON:-$ROOT/.build/vm/venv/bin/python}"
"$ROOT/scripts/ensure-packages" qemu-system-arm mtools e2fsprogs python3 device-tree-compiler >&2
if [ ! -x "$PY" ] || ! "$PY" -c 'import bumble' 2>/dev/null; then
  # the VM suite's venv (Bumble, pinned in Tests/VM/requirements.txt)
  "$ROOT/Tests/VM/setup.sh" >&2
fi
rm -rf "$OUT"; mkdir -p "$OUT"
T0=$(date +%s.%N)
# pass, fail, check, elapsed: boot-files.sh (report and field below: one console)
. "$HERE/boot-files.sh"

# --- the copy, the bond on its data partition, what the Pi's firmware would start
disk="$OUT/sd.img"
cp --sparse=always "$IMAGE" "$disk"
image_partitions "$disk" "$OUT"
fat="$disk@@$boot_off"
place_bond "$disk" "$HERE/bonds" "$OUT"
# the patch file the image holds, to compare with what btbcm sent
dd if="$disk" of="$OUT/root.ext4" bs=1M iflag=skip_bytes,count_bytes skip="$root_off" count="$root_len" status=none
debugfs -R "dump /usr/lib/firmware/brcm/BCM43430A1.hcd $OUT/BCM43430A1.hcd" "$OUT/root.ext4" >/dev/null 2>&1
rm -f "$OUT/root.ext4"
# the slot the firmware starts and its files (boot-files.sh, as boot-test.sh)
slot_boot_files "$fat" "$OUT"
pad_power_of_two "$disk"
# the report waits (at most 240 s) for the firmware's subscription, then 5 s for the call
cmdline="$(tr -d '\r\n' < "$OUT/cmdline.txt") wristlink.boot-report wristlink.boot-report-phone=240 $RASPI_QEMU_APPEND"

set +e +o pipefail
# --- the boot: the relay first (QEMU connects to it as it starts) -------------
sock="$OUT/bt.sock"
"$PY" "$HERE/bt-uart-relay.py" --socket "$sock" --results "$OUT" --limit "$((LIMIT + 60))" \
  > "$OUT/relay.out" 2>&1 &
relay_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.2; done
t0=$(date +%s.%N)
: > "$OUT/console.log"
qemu-system-aarch64 -M raspi3b -accel tcg,thread=single -kernel "$OUT/vmlinuz" -initrd "$OUT/initrd.img" \
  -dtb "$OUT/zero-2-w.dtb" -append "$cmdline" -drive "file=$disk,if=sd,format=raw,cache=unsafe" \
  -serial "unix:$sock" -serial "file:$OUT/console.log" -display none -no-reboot -monitor none > "$OUT/qemu.log" 2>&1 &
qemu_pid=$!
got=1
while kill -0 "$qemu_pid" 2>/dev/null; do
  grep -q 'wl-report: end' "$OUT/console.log" 2>/dev/null && { got=0; break; }
  [ "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a > '"$LIMIT"') }')" = 1 ] && break
  sleep 1
done
kill -KILL "$qemu_pid" 2>/dev/null; wait "$qemu_pid" 2>/dev/null
printf 'boot %s (raspi3b, Bluetooth on the PL011): report after %s s\n' "$BOOT_NAME" "$(elapsed "$t0")" | tee -a "$OUT/timings.txt"
# the relay ends when QEMU closes the socket; bounded all the same
for _ in $(seq 50); do kill -0 "$relay_pid" 2>/dev/null || break; sleep 0.2; done
kill "$relay_pid" 2>/dev/null; wait "$relay_pid" 2>/dev/null
report() { tr -d '\r' < "$OUT/console.log" | sed -n 's/^.*wl-report: //p'; }
field() { report | sed -n "s|^$1: ||p" | head -1; }
report > "$OUT/report.txt"
if [ "$got" -ne 0 ]; then
  fail "boot $BOOT_NAME: no report in $LIMIT s (console: $OUT/console.log, relay: $OUT/relay.log)"
fi

# --- the controller: attached by the kernel, the patch loaded through btbcm ---
report | grep -q '^bt-kernel: hci_uart_bcm serial0-0' && report | grep -q "^bt-kernel: Bluetooth: hci0: BCM43430A1 'brcm/BCM43430A1.hcd' Patch"
rc=$?; check "boot $BOOT_NAME: the kernel attached the UART's controller itself (hci_uart_bcm on serial0) and btbcm loaded brcm/BCM43430A1.hcd" $rc "$(report | grep '^bt-kernel' | head -12)"
# the .hcd is a list of HCI commands (opcode, length, parameters): what the relay got must be them
python3 - "$OUT/BCM43430A1.hcd" "$OUT/timings.json" > "$OUT/patch-check.txt" 2>&1 <<'PY'
import json, struct, sys
data = open(sys.argv[1], 'rb').read(1 << 20)
got = json.load(open(sys.argv[2]))
records, payload, i = 0, 0, 0
while i + 3 <= len(data) and records < 10000:
    op, n = struct.unpack_from('<HB', data, i)
    if op == 0xFC4C:
        records += 1; payload += n - 4
    i += 3 + n
want = {"records": records, "payload": payload}
have = {"records": got["vendor_commands"].get("0xfc4c", 0), "payload": got["patch_bytes"]}
print("file", len(data), "bytes:", want, "relay:", have, "launch", got["vendor_commands"].get("0xfc4e", 0))
sys.exit(0 if records > 0 and want == have and got["vendor_commands"].get("0xfc4e") == 1 else 1)
PY
rc=$?; check "boot $BOOT_NAME: the relay got the image's patch record by record ($(cat "$OUT/patch-check.txt"))" $rc "$(cat "$OUT/patch-check.txt")"
svc="$(field service)"
bad=0; for want in ActiveState=active SubState=running NRestarts=0; do case " $svc " in *" $want "*) ;; *) bad=1 ;; esac; done
check "boot $BOOT_NAME: wristlink.service active, never restarted ($svc)" $bad "$svc"
# The kernel's patch download over the emulated UART can end after the
# firmware has started (a loaded host, the faster boot): then the firmware
# says it waits for the controller and takes it when it answers, as it
# would on a Pi whose controller comes up late. Checked: it advertised on
# it, after at most one such wait.
waits=$(report | grep -c '^journal: .*waiting for the Bluetooth controller')
report | grep -q '^journal: session advertising' && [ "$waits" -le 1 ] && rc=0 || rc=1
check "boot $BOOT_NAME: the firmware found the controller and advertised on it (waited for it first: $waits)" $rc "$(report | grep '^journal:' | head -8)"
# --- the bonded phone: reconnected, encrypted with the stored key, subscribed --
ev="$OUT/events.jsonl"
report | grep -q '^journal: bonded phone connected: c0:ff:ee:12:34:56' && report | grep -q '^journal: session secured' \
  && grep -q '"event": "encryption_change", "encrypted": true' "$ev" && ! grep -q '"event": "paired"' "$ev"
rc=$?; check "boot $BOOT_NAME: the phone of the bond on the data partition reconnected and encrypted with the stored key (no new pairing)" $rc "$(report | grep '^journal:' | head -10)"
report | grep -q '^journal: session subscribed' && grep -q '"event": "session_start"' "$ev"
rc=$?; check "boot $BOOT_NAME: the firmware subscribed to ANCS" $rc "$(report | grep '^journal:' | tail -5)"
grep -q '"event": "ns_sent".*"category": 1' "$ev"
rc=$?; check "boot $BOOT_NAME: the phone rang a call after the subscription (IncomingCall, Notification Source)" $rc "$(grep -c ns_sent "$ev") notifications sent"
high="$(report | grep '^gpio-high: ')"
printf '%s\n' "$high" | grep -q '^gpio-high: GPIO27 ' && printf '%s\n' "$high" | grep -q '^gpio-high: GPIO18 '
rc=$?; check "boot $BOOT_NAME: the call rings: led-call (GPIO27) and the motor (GPIO18) seen high in the guest's debugfs ($(printf '%s' "$high" | grep -v sampled | paste -sd, -))" $rc "$high"
# --- the figures: the firmware's session lines carry the guest's monotonic clock
mono() { report | grep "^phone-session: .*$1" | head -1 | sed -nE 's/^phone-session: \[ *([0-9.]+)\].*/\1/p'; }
adv="$(mono 'session advertising')"; sub="$(mono 'session subscribed')"
if [ -n "$adv" ] && [ -n "$sub" ]; then
  printf 'boot %s: kernel start -> advertising %.1f s, advertising -> subscribed %.1f s (the firmware journal, guest clock)\n' \
    "$BOOT_NAME" "$adv" "$(awk -v a="$adv" -v b="$sub" 'BEGIN { print b - a }')" | tee -a "$OUT/timings.txt"
fi
python3 - "$OUT/timings.json" "$BOOT_NAME" >> "$OUT/timings.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["timings"]
f = lambda k: t.get(k)
print("boot " + sys.argv[2] + " (relay, host clock from QEMU's start): firmware download %s s, launched %s s, advertising %s s, "
      "connected %s s, encrypted %s s, subscribed %s s, call %s s" % tuple(
          f(k) for k in ("firmware_download", "firmware_launched", "advertising", "connected", "encrypted",
                         "subscribed", "call_sent")))
PY
tail -1 "$OUT/timings.txt"
rm -f "$disk"
printf 'bt-boot-test: %d failed, %s s in all (console, relay and phone logs in %s)\n' "$fails" "$(elapsed "$T0")" "$OUT"
[ "$fails" -eq 0 ]
