#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-update, part 5: a slot's trial (docs/updates.md, "The trial")
# with the real rauc-boot-backend on a directory laid out as the boot
# partition, the kernel command line of the booted slot in a file, and
# the two units' condition (the grep of wristlink-trial-begin.service and
# wristlink-trial-end.service, read from the unit files):
# - no trial open: the condition is false (nothing runs at a normal boot);
# - slot B installed (set-state B bad, set-primary B), booted from B:
#   begin-trial points the next boot at A, then trial-end (READY) keeps B:
#   boot=B committed=B trial=none, B good;
# - the trial boot of B never reaches READY (a reset after begin-trial):
#   the next boot is A, whose trial-end marks B bad and closes the trial;
# - the bundle of the trial (in wristlink/update/done/ with update-install's
#   reason): its reason then says kept, or it is moved to failed/ saying
#   the trial boot never reached READY; another bundle's reason untouched;
# - a reset before begin-trial: the next boot is B again (the window the
#   design names), and the trial goes on;
# - the bound (trial-end watch): on B's trial boot past the bound and not
#   ready, B is marked bad, the bundle moved to failed/ saying so, and the
#   system rebooted; after trial-end kept B, or on A's boot, the watch does
#   nothing; the bound from the kernel command line, and 300 s when that
#   is not a number or outside 30..3600;
# - a bonded wearable (the firmware's "loaded N bonded phone(s)"): B is
#   kept once a bonded phone's link is back ("session secured"), waited
#   for; with the phone away trial-end keeps nothing and the bound ends
#   the trial, its reason saying the phone did not come back; without a
#   bond, kept at READY;
# - the wrist: a kept slot leaves the firmware's notice update-done and
#   tells the running firmware (SIGUSR1, here a stand-in command); a failed
#   trial closed on A leaves update-failed and tells it; the watch leaves
#   update-failed without telling (it reboots: the next start shows it);
#   no decision, no notice; a firmware that is not running or a missing
#   state directory is said and changes nothing else.
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
IMG="$HERE/../../board/image"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fails=0 checks=0
ok() { checks=$((checks + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', expected '$3'"; fi; }
DIR="$WORK/boot"
export WL_BOOT_DIR="$DIR" WL_PROC_CMDLINE="$WORK/cmdline" WL_BACKEND="$IMG/rauc-boot-backend"
export WL_TRIAL_LOCK="$WORK/trial.lock" WL_PROC_UPTIME="$WORK/uptime" WL_REBOOT="echo REBOOT"
echo "400.12 700.00" > "$WORK/uptime"
# the firmware's log of this boot and wristlink.service's state, as trial-end reads them
export WL_FIRMWARE_LOG="cat $WORK/fwlog" WL_SERVICE_STATE="cat $WORK/svc" WL_POLL_S=1
# the firmware's state directory and the signal that tells it to look
# (the stand-in for SIGUSR1 does what the firmware would: takes the
# notice and says "update done")
cat > "$WORK/tell" <<EOF
#!/bin/sh
touch "$WORK/told"
n=\$(cat "$WORK/state/notice") && rm -f "$WORK/state/notice" && echo "update \${n#update-}" >> "$WORK/fwlog"
EOF
chmod +x "$WORK/tell"
export WL_NOTICE_DIR="$WORK/state" WL_TELL_FIRMWARE="$WORK/tell" WL_SHOWN_WAIT_S=2
# the watch's stop of the failed slot's firmware, recorded
export WL_STOP_FIRMWARE="touch $WORK/stopped"
notice() { cat "$WORK/state/notice" 2>/dev/null || echo none; }
told() { [ -e "$WORK/told" ] && echo told || echo not-told; }
: > "$WORK/fwlog"; printf 'ActiveState=activating\nSubState=start\nNRestarts=0\n' > "$WORK/svc"
fresh() {
  rm -rf "$DIR" "$WORK/state" "$WORK/told" "$WORK/stopped"; mkdir -p "$DIR/slot-a" "$DIR/slot-b" "$DIR/wristlink/update/done" "$WORK/state"
  echo kernel > "$DIR/slot-a/vmlinuz"; echo kernel > "$DIR/slot-b/vmlinuz"
  "$WL_BACKEND" init A
}
booted() { echo "console=ttyS1,115200 root=PARTUUID=574c0001-0$2 ro rauc.slot=$1" > "$WORK/cmdline"; }
st() { "$WL_BACKEND" status; }
# a bundle installed into B as update-install leaves it, and an older one
installed() {
  D="$DIR/wristlink/update/done"
  echo bundle > "$D/new.raucb"; echo old > "$D/old.raucb"
  printf 'installed 0.1.1-1+deb13 in 99 s on 2026-12-04 08:49 UTC; slot state: boot=B committed=A trial=B A=good B=bad; the next boot tries it\r\n' > "$D/new.raucb.reason"
  printf 'installed 0.1.0 in 90 s; slot state: boot=A committed=A trial=none A=good B=bad; kept: slot A reached READY on its trial\r\n' > "$D/old.raucb.reason"
  old_reason=$(cat "$D/old.raucb.reason")
}
for unit in wristlink-trial-begin.service wristlink-trial-end.service wristlink-trial-watch.service; do
  grep -q '^ExecCondition=/usr/bin/grep -q "^# state .\* trial=\[AB\] " /boot/firmware/wristlink-slot.txt$' "$IMG/$unit" && ok || bad "$unit: another condition: $(grep ExecCondition "$IMG/$unit")"
done
trial_open() { grep -q "^# state .* trial=[AB] " "$DIR/wristlink-slot.txt"; }

fresh; booted A 2
trial_open && bad "a fresh card has a trial open" || ok
"$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
trial_open && ok || bad "after the installation no trial is open: $(st)"
# the trial boot of B
booted B 3
"$WL_BACKEND" begin-trial 2> /dev/null
expect "B's trial boot after begin-trial" "$(st)" "boot=A committed=A trial=B A=good B=bad"
trial_open && ok || bad "the trial is not open during B's trial boot"
out=$("$IMG/trial-end")
expect "B ready: trial-end keeps B" "$(st)" "boot=B committed=B trial=none A=good B=good"
case "$out" in *"slot B reached READY"*) ok ;; *) bad "trial-end said: $out" ;; esac
expect "B kept: the bundle's reason" "$(tr -d '\r' < "$D/new.raucb.reason")" "installed 0.1.1-1+deb13 in 99 s on 2026-12-04 08:49 UTC; slot state: boot=B committed=A trial=B A=good B=bad; kept: slot B reached READY on its trial"
expect "B kept: the other bundle's reason untouched" "$(cat "$D/old.raucb.reason")" "$old_reason"
[ -f "$D/new.raucb" ] && [ ! -e "$DIR/wristlink/update/failed" ] && [ -z "$(find "$DIR" -name '*.new')" ] && ok || bad "B kept: the bundle moved or a temporary file left"
trial_open && bad "the trial is still open after B was kept" || ok
expect "B kept: the wrist (the firmware took the notice)" "$(notice) $(told)" "none told"
case "$out" in *"trial-end: the wrist showed update-done"*) ok ;; *) bad "B kept: trial-end said: $out" ;; esac
[ ! -e "$WORK/state/notice.new" ] && ok || bad "B kept: a notice.new left"
# the next boot is B and nothing happens
"$WL_BACKEND" begin-trial 2> /dev/null
expect "B's next boot" "$(st)" "boot=B committed=B trial=none A=good B=good"

# B's trial boot is reset after begin-trial: A boots, closes the trial
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null
booted A 2   # the reset: the firmware starts boot=A
out=$("$IMG/trial-end")
expect "B's trial failed: A's trial-end" "$(st)" "boot=A committed=A trial=none A=good B=bad"
case "$out" in *"slot B's trial failed"*) ok ;; *) bad "trial-end said: $out" ;; esac
F="$DIR/wristlink/update/failed"
[ -f "$F/new.raucb" ] && [ ! -e "$D/new.raucb" ] && [ ! -e "$D/new.raucb.reason" ] && ok || bad "B failed: the bundle is not in failed/: $(find "$DIR/wristlink")"
case "$(tr -d '\r' < "$F/new.raucb.reason" 2>/dev/null)" in "installed 0.1.1-1+deb13 in 99 s"*"failed: its trial boot of slot B never reached READY"*"back on slot A") ok ;; *) bad "B failed: the reason: $(cat "$F/new.raucb.reason" 2>&1)" ;; esac
expect "B failed: the other bundle untouched" "$(cat "$D/old.raucb.reason")" "$old_reason"
expect "B failed, closed on A: the wrist" "$(notice) $(told)" "none told"
case "$out" in *"trial-end: the wrist showed update-failed"*) ok ;; *) bad "B failed: trial-end said: $out" ;; esac

# a reset before begin-trial: B again
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B
expect "a reset before begin-trial: the firmware starts B again" "$(sed -n 's/^os_prefix=//p' "$DIR/wristlink-slot.txt")" "slot-b/"

# the bound: B's trial boot, never ready
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null
out=$("$IMG/trial-end" watch 2>&1)
expect "B not ready by the bound: the watch" "$(st)" "boot=A committed=A trial=none A=good B=bad"
case "$out" in *"slot B: its firmware was not ready 300 s after its kernel started (wristlink.service: ActiveState=activating SubState=start NRestarts=0)"*"rebooting into slot A"*REBOOT) ok ;; *) bad "watch said: $out" ;; esac
case "$(tr -d '\r' < "$F/new.raucb.reason" 2>/dev/null)" in "installed 0.1.1-1+deb13 in 99 s"*"failed: slot B's trial boot: its firmware was not ready 300 s after its kernel started"*"back on slot A") ok ;; *) bad "B not ready: the reason: $(cat "$F/new.raucb.reason" 2>&1)" ;; esac
[ ! -e "$D/new.raucb" ] && [ -f "$F/new.raucb" ] && ok || bad "B not ready: the bundle is not in failed/"
expect "B not ready: the other bundle untouched" "$(cat "$D/old.raucb.reason")" "$old_reason"
# the next boot (A) finds no trial: trial-end's condition is false
trial_open && bad "B not ready: a trial is still open" || ok
expect "B not ready: the wrist (after the reboot)" "$(notice) $(told)" "update-failed not-told"
[ -e "$WORK/stopped" ] && ok || bad "B not ready: the watch did not stop B's firmware before leaving the notice"
[ "$(stat -c %a "$WORK/state/notice")" = 644 ] && [ ! -e "$WORK/state/notice.new" ] && ok || bad "B not ready: the notice's mode or a notice.new left"
# B ready first: the watch then does nothing
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null
"$IMG/trial-end" > /dev/null
out=$("$IMG/trial-end" watch 2>&1)
expect "B kept before the bound: the watch leaves it" "$(st)" "boot=B committed=B trial=none A=good B=good"
case "$out" in *REBOOT*) bad "the watch rebooted a kept slot: $out" ;; *"not the trial's boot"*) ok ;; *) bad "watch said: $out" ;; esac
# A's boot while B is on trial: the watch is not A's
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null; booted A 2
out=$("$IMG/trial-end" watch 2>&1)
case "$out" in *"not the trial's boot"*) ok ;; *) bad "the watch on A's boot said: $out" ;; esac
expect "the watch on A's boot changes nothing" "$(st)" "boot=A committed=A trial=B A=good B=bad"
# the bound from the command line; a bad one is 300 s
for arg in "wristlink.trial-ready-s=45:45 s" "wristlink.trial-ready-s=4x:300 s" "wristlink.trial-ready-s=5:300 s" "wristlink.trial-ready-s=99999:300 s"; do
  fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
  booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null
  echo "console=ttyS1,115200 root=PARTUUID=574c0001-03 ro rauc.slot=B ${arg%%:*}" > "$WORK/cmdline"
  out=$("$IMG/trial-end" watch 2>&1)
  case "$out" in *"was not ready ${arg#*:} after"*REBOOT) ok ;; *) bad "${arg%%:*}: the watch said: $out" ;; esac
done
# below the bound it waits: uptime 43 s, bound 45 s, the clock moved on by the test
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null
echo "console=ttyS1,115200 root=PARTUUID=574c0001-03 ro rauc.slot=B wristlink.trial-ready-s=45" > "$WORK/cmdline"
echo "43.50 80.00" > "$WORK/uptime"
( sleep 1; echo "45.01 82.00" > "$WORK/uptime" ) &
t0=$(date +%s)
out=$("$IMG/trial-end" watch 2>&1)
wait
waited=$(( $(date +%s) - t0 ))
[ "$waited" -ge 1 ] && [ "$waited" -le 4 ] && ok || bad "the watch waited $waited s for a bound 2 s away"
case "$out" in *"until 45 s"*"was not ready 45 s"*REBOOT) ok ;; *) bad "the watch below its bound said: $out" ;; esac

# a bonded wearable: B is kept only once a bonded phone's link is back
bound45() { echo "console=ttyS1,115200 root=PARTUUID=574c0001-03 ro rauc.slot=B wristlink.trial-ready-s=45" > "$WORK/cmdline"; }
printf 'wristlink 0.1.1 starting\nloaded 1 bonded phone(s) from /var/lib/wristlink/bonds\nsession advertising\n' > "$WORK/fwlog"
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null; bound45
echo "44.00 80.00" > "$WORK/uptime"
( sleep 1; printf 'session connected\nsession secured\n' >> "$WORK/fwlog" ) &
out=$("$IMG/trial-end" 2>&1); wait
expect "bonded, the phone back while trial-end waits: B kept" "$(st)" "boot=B committed=B trial=none A=good B=good"
case "$out" in *"1 bonded phone(s): keeping it once"*"link is back"*"slot B reached READY on its trial and a bonded phone's link came back"*) ok ;; *) bad "bonded, phone back: trial-end said: $out" ;; esac
case "$(tr -d '\r' < "$D/new.raucb.reason")" in *"; kept: slot B reached READY on its trial and a bonded phone's link came back") ok ;; *) bad "bonded, phone back: the reason: $(cat "$D/new.raucb.reason")" ;; esac
# the phone stays away: trial-end leaves the trial to the bound, which ends it
printf 'loaded 2 bonded phone(s) from /var/lib/wristlink/bonds\nsession advertising\n' > "$WORK/fwlog"
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null; bound45
echo "44.00 80.00" > "$WORK/uptime"
( sleep 1; echo "45.50 82.00" > "$WORK/uptime" ) &
out=$("$IMG/trial-end" 2>&1); wait
expect "bonded, the phone away: trial-end keeps nothing" "$(st)" "boot=A committed=A trial=B A=good B=bad"
expect "bonded, the phone away: nothing on the wrist yet" "$(notice) $(told)" "none not-told"
case "$out" in *"no bonded phone's link came back by 45 s: slot B is not kept"*) ok ;; *) bad "bonded, phone away: trial-end said: $out" ;; esac
printf 'ActiveState=active\nSubState=running\nNRestarts=0\n' > "$WORK/svc"
out=$("$IMG/trial-end" watch 2>&1)
expect "bonded, the phone away: the bound ends the trial" "$(st)" "boot=A committed=A trial=none A=good B=bad"
case "$(tr -d '\r' < "$F/new.raucb.reason" 2>/dev/null)" in *"failed: slot B's trial boot: its firmware was ready but no bonded phone's link had come back 45 s after its kernel started (wristlink.service ActiveState=active SubState=running NRestarts=0); back on slot A") ok ;; *) bad "bonded, phone away: the reason: $(cat "$F/new.raucb.reason" 2>&1)" ;; esac
# a wearable with no bond (the firmware said 0, or nothing): kept at READY
for log in 'loaded 0 bonded phone(s) from /var/lib/wristlink/bonds' ''; do
  printf '%s\n' "$log" > "$WORK/fwlog"
  fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
  booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null; bound45
  out=$("$IMG/trial-end" 2>&1)
  expect "no bond ('$log'): B kept at READY" "$(st)" "boot=B committed=B trial=none A=good B=good"
done
# the firmware not running (the signal fails): the notice waits for its start
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null
out=$(WL_TELL_FIRMWARE=false "$IMG/trial-end" 2>&1)
expect "firmware not running: B kept all the same" "$(st)" "boot=B committed=B trial=none A=good B=good"
expect "firmware not running: the notice waits" "$(notice)" "update-done"
case "$out" in *"the firmware is not running: it shows it at its next start"*) ok ;; *) bad "firmware not running: trial-end said: $out" ;; esac
# told, but the firmware never says it showed it: said, within the wait
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null
: > "$WORK/fwlog"
out=$(WL_TELL_FIRMWARE=true "$IMG/trial-end" 2>&1)
expect "told, not shown: B kept, the notice left for the next start" "$(st) $(notice)" "boot=B committed=B trial=none A=good B=good update-done"
case "$out" in *"told to show update-done but did not say it did within 2 s"*) ok ;; *) bad "told, not shown: trial-end said: $out" ;; esac
# no state directory: said, and the decision stands
fresh; "$WL_BACKEND" set-state B bad; "$WL_BACKEND" set-primary B; installed
booted B 3; "$WL_BACKEND" begin-trial 2> /dev/null; rm -rf "$WORK/state"
out=$("$IMG/trial-end" 2>&1) && rc=0 || rc=$?
expect "no state directory: B kept, trial-end succeeds" "$(st) $rc" "boot=B committed=B trial=none A=good B=good 0"
case "$out" in *"state directory is missing: no update-done on the wrist"*) ok ;; *) bad "no state directory: trial-end said: $out" ;; esac
echo "trial-test: $checks passed, $fails failed"
[ "$fails" -eq 0 ]
