#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs INSIDE the trixie VM at every boot (wl-vm-test.service of the image,
# from the repository shared read-only over 9p at /mnt/wl/repo; results to
# /mnt/wl/out). The boot's phase comes from the kernel command line
# (wl.phase=1|2, set by run.sh): loads the Bluetooth modules, runs case.py
# for the phase (bounded by WL_PHASE_TIMEOUT, from OUT/params.env), saves
# the journal and the boot times, then ends the boot: phase 1 reboots,
# phase 2 powers off (qemu runs with -no-reboot, so either ends qemu).
set -u
OUT=/mnt/wl/out
REPO=/mnt/wl/repo
PHASE="$(sed -n 's/.*wl\.phase=\([0-9]\).*/\1/p' /proc/cmdline)"
[ -n "$PHASE" ] || { echo "wl-vm: no wl.phase= on the kernel command line; nothing to do"; exit 0; }
[ -f "$OUT/params.env" ] && . "$OUT/params.env"
TIMES="$OUT/timings-$PHASE.txt"
T0=$(cut -d' ' -f1 /proc/uptime)
log() { printf '[guest %s %7ss] %s\n' "$PHASE" "$(cut -d' ' -f1 /proc/uptime)" "$*" | tee -a "$OUT/guest-$PHASE.log"; }
end_boot() {
    journalctl -b -o short-monotonic --no-pager > "$OUT/journal-$PHASE.txt" 2>&1
    systemd-analyze time > "$OUT/boot-time-$PHASE.txt" 2>&1
    printf '%-24s %7.2f s\n' "guest uptime at the end" "$(cut -d' ' -f1 /proc/uptime)" >> "$TIMES"
    sync
    if [ "$PHASE" = 1 ]; then systemctl reboot; else systemctl poweroff; fi
    exit 0
}
printf '%-24s %7.2f s\n' "guest uptime at start" "$T0" > "$TIMES"
log "kernel $(uname -r), systemd $(systemctl --version | head -1 | cut -d' ' -f2), $(nproc) cpu(s)"

# Kernel SMP needs ECDH (P-256), AES-CMAC and a DRBG (as Tests/VM/guest.sh)
for m in ecdh_generic ecc cmac aes_generic drbg bluetooth hci_vhci; do
    modprobe "$m" 2>>"$OUT/modprobe-$PHASE.err" || echo "modprobe $m failed" >> "$OUT/modprobe-$PHASE.err"
done
test -c /dev/vhci || { echo "FAIL 0 vm-setup 0.0 no /dev/vhci (hci_vhci)" >> "$OUT/summary.txt"; end_boot; }
# wl-vm-gpiosim.service makes the chip at boot; should it have failed, try once more here
test -s /run/wl-vm/sim || { log "no gpio-sim chip from wl-vm-gpiosim.service: making it now"; sh "$REPO/Tests/VM/systemd/gpio-sim-chip.sh"; }
test -s /run/wl-vm/sim || { echo "FAIL 0 vm-setup 0.0 no gpio-sim chip (wl-vm-gpiosim.service)" >> "$OUT/summary.txt"; end_boot; }

# the whole HCI + mgmt traffic of the boot, for a failed part (btmon decodes mgmt)
btmon -w "$OUT/hci-$PHASE.btsnoop" >/dev/null 2>&1 &
BTMON=$!
log "case.py phase $PHASE"
P=$(cut -d' ' -f1 /proc/uptime)
PYTHONDONTWRITEBYTECODE=1 timeout --signal=TERM --kill-after=10 "${WL_PHASE_TIMEOUT:-400}" \
    /opt/wl-venv/bin/python "$REPO/Tests/VM/systemd/case.py" --phase "$PHASE" --out "$OUT" \
    --repo "$REPO" --debs "$OUT/debs" > "$OUT/case-$PHASE.stdout" 2>&1
rc=$?
[ "$rc" -eq 124 ] && echo "FAIL 0 phase-$PHASE-timeout 0.0 case.py killed after ${WL_PHASE_TIMEOUT:-400} s" >> "$OUT/summary.txt"
printf '%-24s %7.2f s\n' "case.py phase $PHASE" "$(awk -v p="$P" '{ print $1 - p }' /proc/uptime)" >> "$TIMES"
log "case.py exited $rc"
kill -INT "$BTMON" 2>/dev/null
end_boot
