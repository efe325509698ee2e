#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-update, part 4: the installation from the card's bookkeeping
# (board/image/update-install, docs/updates.md "Installing from the card")
# on a directory laid out as the boot partition (slot-a/, slot-b/,
# wristlink-slot.txt written by the real rauc-boot-backend, bundles in
# wristlink/update/), with a fake update-check (it refuses bundles whose
# name says "refused") and a fake rauc: `rauc service` sleeps, `rauc status`
# answers, `rauc install` asks the real D-Bus daemon started with
# board/image/update-bus.conf for its id (so the bus is up and the address
# handed down), then does what the scenario says: the backend's calls of a
# successful installation (set-state B bad, set-primary B), a failure with
# RAUC's words, or a hang. Checked:
# - a refused bundle goes to failed/ with BUNDLE.reason (the check's
#   words), a good one to done/ with its reason, the slot file then names
#   B on trial, the reboot is asked for, one installation per boot;
# - a failed installation: failed/ with rauc's words, no reboot; a hung
#   one: stopped at WL_INSTALL_TIMEOUT, failed/ saying so;
# - a bundle left in installing/ (cut off) goes to failed/, not retried;
# - nothing is installed while a trial is open; a broken check (exit 2)
#   leaves the bundles where they are; at most WL_MAX_BUNDLES per boot;
# - the wrist: led-notify (the card's board.conf first) blinks while a
#   bundle installs, led-call flickers after a failed installation; no
#   LED line or a line gpioset cannot take installs all the same;
# - after every run: the bus daemon, the service and gpioset stopped, the
#   run folder gone, no temporary file left on the boot folder.
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
INSTALL="$ROOT/board/image/update-install"
BACKEND="$ROOT/board/image/rauc-boot-backend"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', expected '$3'"; fi; }
command -v dbus-daemon > /dev/null && command -v dbus-send > /dev/null || { echo "install-test: needs dbus-daemon and dbus-send (package dbus)"; exit 1; }

mkdir -p "$WORK/bin"
cat > "$WORK/bin/rauc" <<'SH'
#!/bin/sh
case "$1" in --mount=*) [ -d "${1#--mount=}" ] || { echo "no mount folder $1"; exit 2; }; shift ;; esac
case "$1" in
  service) echo $$ > "$FAKE/service.pid"; exec sleep 600 ;;
  status) [ -z "${FAKE_NO_STATUS:-}" ] || exit 1; echo "booted from: A" ;;
  install)
    dbus-send --bus="$DBUS_SYSTEM_BUS_ADDRESS" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetId > "$FAKE/bus-id" 2>&1 || { echo "no bus"; exit 1; }
    echo "$2" > "$FAKE/installed"
    case "$FAKE_INSTALL" in
      ok) "$BACKEND" set-state B bad && "$BACKEND" set-primary B && echo "  0% Installing" && echo "100% Installing done." && echo "Installing \`$2\` succeeded" ;;
      fail) echo " 40% Checking bundle"; echo "LastError: Installation error: failed to run slot hook: Child process exited with code 1" >&2; echo "Installing \`$2\` failed"; exit 1 ;;
      hang) exec sleep 600 ;;
    esac ;;
  *) exit 2 ;;
esac
SH
cat > "$WORK/bin/update-check" <<'SH'
#!/bin/sh
case "$1" in
  *broken*) echo "update-check: cannot read /etc/rauc/system.conf" >&2; exit 2 ;;
  *refused*) echo "refused: for another board: the bundle is 'wristlink-pi4', this card is 'wristlink-pi-zero-2w'"; exit 1 ;;
  *) echo "accept 0.1.1-1+deb13" ;;
esac
SH
# gpioset: its arguments appended to gpioset.log; it holds its lines until
# killed (the blink) or exits (the flicker, under timeout); FAKE_GPIO=busy:
# it cannot take the line
cat > "$WORK/bin/gpioset" <<'SH'
#!/bin/sh
echo "$*" >> "$FAKE/gpioset.log"
[ "${FAKE_GPIO:-}" != busy ] || { echo "gpioset: unable to request lines: Device or resource busy" >&2; exit 1; }
echo $$ >> "$FAKE/gpioset.pids"
exec sleep 600
SH
chmod +x "$WORK/bin/rauc" "$WORK/bin/update-check" "$WORK/bin/gpioset"
# the board files: the card's names led-notify, the packaged one led-call too
printf '# the card board\r\nname pi-zero-2w\r\noutput led-notify line=GPIO17\r\n' > "$WORK/card-board.conf"
printf 'name pi-zero-2w\noutput led-notify line=GPIO5\noutput led-call   line=GPIO27\noutput vibration line=GPIO18 kind=motor\n' > "$WORK/board.conf"
printf '[slot.rootfs.0]\ndevice=%s\n' "$WORK/dev-a" > "$WORK/system.conf"; : > "$WORK/dev-a"

DIR="$WORK/boot"
fresh() {
  rm -rf "$DIR" "$WORK/fake"; mkdir -p "$DIR/slot-a" "$DIR/slot-b" "$DIR/wristlink/update" "$WORK/fake"
  echo kernel > "$DIR/slot-a/vmlinuz"; echo kernel > "$DIR/slot-b/vmlinuz"
  WL_BOOT_DIR="$DIR" "$BACKEND" init A
  rm -f "$WORK/rebooted"
}
bundle() { for n in "$@"; do head -c 1000 /dev/urandom > "$DIR/wristlink/update/$n"; done; }
run() {  # run: update-install with the fakes; its exit code in $rc, output in $WORK/out
  FAKE="$WORK/fake" BACKEND="$BACKEND" PATH="$WORK/bin:$PATH" WL_BOOT_DIR="$DIR" WL_RUN_DIR="$WORK/run" \
    WL_RAUC="$WORK/bin/rauc" WL_UPDATE_CHECK="$WORK/bin/update-check" WL_BACKEND="$BACKEND" \
    WL_BUS_CONF="$ROOT/board/image/update-bus.conf" WL_MODPROBE=true WL_REBOOT="touch $WORK/rebooted" \
    WL_RAUC_CONF="$WORK/system.conf" WL_START_TIMEOUT="${WL_START_TIMEOUT:-10}" \
    WL_GPIOSET="$WORK/bin/gpioset" WL_BOARD_FILES="${BOARD_FILES-$WORK/card-board.conf $WORK/board.conf}" \
    "$INSTALL" > "$WORK/out" 2>&1 && rc=0 || rc=$?
}
slot_state() { WL_BOOT_DIR="$DIR" "$BACKEND" status; }
after_run() {  # after_run NAME: children stopped, run folder gone, no temporary file
  if [ -f "$WORK/fake/service.pid" ] && kill -0 "$(cat "$WORK/fake/service.pid")" 2>/dev/null; then bad "$1: rauc service still runs"; else ok; fi
  [ -z "$(pgrep -f "address=unix:path=$WORK/run/bus" || true)" ] && ok || bad "$1: the update bus still runs"
  [ ! -e "$WORK/run" ] && ok || bad "$1: $WORK/run left behind"
  [ -z "$(find "$DIR" -name '*.new')" ] && ok || bad "$1: temporary files left: $(find "$DIR" -name '*.new')"
  left=""
  for p in $(cat "$WORK/fake/gpioset.pids" 2>/dev/null); do ! kill -0 "$p" 2>/dev/null || left="$left $p"; done
  [ -z "$left" ] && ok || bad "$1: gpioset still runs:$left"
}
gpio_log() { cat "$WORK/fake/gpioset.log" 2>/dev/null; }
reason() { tr -d '\r' < "$DIR/wristlink/update/$1.reason"; }

# nothing to do
fresh; rmdir "$DIR/wristlink/update"; run
expect "no update folder: exit" "$rc" 0
fresh; run
expect "no bundle: exit" "$rc" 0; grep -q "no bundle" "$WORK/out" && ok || bad "no bundle: said $(cat "$WORK/out")"

# a refused bundle and a good one: the refused one to failed/, the good one installed
fresh; bundle a-refused.raucb b-good.raucb
FAKE_INSTALL=ok run
expect "refused + good: exit" "$rc" 0
[ -f "$DIR/wristlink/update/failed/a-refused.raucb" ] && ok || bad "the refused bundle is not in failed/: $(cat "$WORK/out")"
case "$(reason failed/a-refused.raucb)" in "refused: for another board"*) ok ;; *) bad "the refusal's reason: $(reason failed/a-refused.raucb)" ;; esac
[ -f "$DIR/wristlink/update/done/b-good.raucb" ] && ok || bad "the good bundle is not in done/: $(cat "$WORK/out")"
case "$(reason done/b-good.raucb)" in "installed 0.1.1-1+deb13 in "*"trial=B"*) ok ;; *) bad "done's reason: $(reason done/b-good.raucb)" ;; esac
expect "installed from installing/" "$(cat "$WORK/fake/installed")" "$DIR/wristlink/update/installing/b-good.raucb"
grep -q ':1\.' "$WORK/fake/bus-id" 2>/dev/null || grep -q 'string "' "$WORK/fake/bus-id" && ok || bad "the bus did not answer: $(cat "$WORK/fake/bus-id")"
expect "the slot state after the installation" "$(slot_state)" "boot=B committed=A trial=B A=good B=bad"
[ -f "$WORK/rebooted" ] && ok || bad "no reboot after the installation"
expect "update/ emptied" "$(find "$DIR/wristlink/update" -maxdepth 1 -type f | wc -l)" 0
after_run "refused + good"
expect "while installing: the card's led-notify blinks, 0.2 s on every second" "$(gpio_log)" "-C wristlink-update -t 200ms,800ms GPIO17=1"
grep -q 'the notify LED (GPIO17) blinks while the bundle installs' "$WORK/out" && ok || bad "the blink is not said: $(cat "$WORK/out")"
# a trial open: the next boot leaves a new bundle alone
bundle c-next.raucb; rm -f "$WORK/rebooted"
FAKE_INSTALL=ok run
expect "during a trial: exit" "$rc" 0
[ -f "$DIR/wristlink/update/c-next.raucb" ] && [ ! -f "$WORK/rebooted" ] && ok || bad "a bundle was touched during a trial: $(cat "$WORK/out")"

# one installation per boot: the second accepted bundle waits
fresh; bundle x1.raucb x2.raucb
FAKE_INSTALL=ok run
[ -f "$DIR/wristlink/update/done/x1.raucb" ] && [ -f "$DIR/wristlink/update/x2.raucb" ] && ok || bad "not one installation per boot: $(ls -R "$DIR/wristlink/update")"

# a failed installation
fresh; bundle good.raucb
FAKE_INSTALL=fail run
expect "a failed installation: exit" "$rc" 1
[ -f "$DIR/wristlink/update/failed/good.raucb" ] && ok || bad "the failed bundle is not in failed/"
case "$(reason failed/good.raucb)" in "failed: rauc install: "*"failed to run slot hook"*"trial=none"*) ok ;; *) bad "the failure's reason: $(reason failed/good.raucb)" ;; esac
[ ! -f "$WORK/rebooted" ] && ok || bad "rebooted after a failed installation"
expect "the slot state after a failure" "$(slot_state)" "boot=A committed=A trial=none A=good B=bad"
after_run "a failed installation"
expect "a failed installation: the blink, then led-call flickers (the packaged board's)" "$(gpio_log)" "-C wristlink-update -t 200ms,800ms GPIO17=1
-C wristlink-update -t 100ms GPIO27=1"
grep -q 'led GPIO27 flickered: the installation failed' "$WORK/out" && ok || bad "the flicker is not said: $(cat "$WORK/out")"
# no board file names the LEDs, or gpioset cannot take the line: installed all the same
fresh; bundle good.raucb
FAKE_INSTALL=ok BOARD_FILES="$WORK/none.conf" run
expect "no LED line: exit" "$rc" 0
[ -f "$DIR/wristlink/update/done/good.raucb" ] && [ -z "$(gpio_log)" ] && grep -q 'no led-notify line' "$WORK/out" && ok || bad "no LED line: $(cat "$WORK/out")"
fresh; bundle good.raucb
FAKE_INSTALL=ok FAKE_GPIO=busy run
expect "a busy line: exit" "$rc" 0
[ -f "$DIR/wristlink/update/done/good.raucb" ] && grep -q 'gpioset could not drive GPIO17' "$WORK/out" && ok || bad "a busy line: $(cat "$WORK/out")"
after_run "a busy line"

# a hung installation, stopped at the limit
fresh; bundle good.raucb
t0=$(date +%s)
FAKE_INSTALL=hang WL_INSTALL_TIMEOUT=2 run
expect "a hung installation: exit" "$rc" 1
[ $(( $(date +%s) - t0 )) -lt 30 ] && ok || bad "the hung installation took $(( $(date +%s) - t0 )) s"
case "$(reason failed/good.raucb 2>/dev/null)" in "failed: rauc install: did not finish in 2 s"*) ok ;; *) bad "the hang's reason: $(reason failed/good.raucb 2>&1)" ;; esac
after_run "a hung installation"

# RAUC's service never answers: failed/, nothing installed
fresh; bundle good.raucb
FAKE_INSTALL=ok FAKE_NO_STATUS=1 WL_START_TIMEOUT=2 run
expect "no service: exit" "$rc" 1
case "$(reason failed/good.raucb 2>/dev/null)" in "failed: RAUC's service did not start"*) ok ;; *) bad "no service's reason: $(reason failed/good.raucb 2>&1)" ;; esac
[ ! -f "$WORK/fake/installed" ] && ok || bad "installed without a service"
after_run "no service"

# a bundle cut off in installing/: to failed/, not retried
fresh; mkdir -p "$DIR/wristlink/update/installing"; head -c 100 /dev/urandom > "$DIR/wristlink/update/installing/cut.raucb"
FAKE_INSTALL=ok run
[ -f "$DIR/wristlink/update/failed/cut.raucb" ] && [ ! -f "$WORK/fake/installed" ] && ok || bad "a cut-off bundle: $(cat "$WORK/out")"
case "$(reason failed/cut.raucb)" in *"cut off"*"boot=A"*) ok ;; *) bad "the cut-off reason: $(reason failed/cut.raucb)" ;; esac

# the check cannot run: the bundles stay
fresh; bundle a-broken.raucb b.raucb
FAKE_INSTALL=ok run
expect "a broken check: exit" "$rc" 2
[ -f "$DIR/wristlink/update/a-broken.raucb" ] && [ -f "$DIR/wristlink/update/b.raucb" ] && [ ! -d "$DIR/wristlink/update/failed" ] && ok || bad "a broken check moved bundles: $(ls -R "$DIR/wristlink/update")"

# at most WL_MAX_BUNDLES (here 4) a boot
fresh; bundle r1-refused.raucb r2-refused.raucb r3-refused.raucb r4-refused.raucb r5-refused.raucb r6-refused.raucb
run
expect "six refused bundles: four looked at" "$(ls "$DIR/wristlink/update/failed" | grep -c 'raucb$')" 4
expect "six refused bundles: two left" "$(ls "$DIR/wristlink/update" | grep -c 'raucb$')" 2
echo "install-test: $checks passed, $fails failed"
[ "$fails" -eq 0 ]
