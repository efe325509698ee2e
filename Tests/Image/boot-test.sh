#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The SD-card image's boot test (docs/sd-image.md, "Boot test"), in QEMU
# from a copy of the image itself: the kernel, initrd and device tree are
# taken from its boot partition as the Pi's firmware would (config.txt's
# kernel= and initramfs, under the os_prefix= of the wristlink-slot.txt it
# includes: slot-a/, docs/updates.md), the kernel command line from that
# slot's cmdline.txt plus `wristlink.boot-report` (the image's own report on the
# console, board/image/boot-report) and a console for the machine.
#   boot-test.sh IMAGE
# Before the first boot the copy gets what a wearer would put on the card:
# a policy.conf with an error on the boot partition, and a bond file on the
# data partition (Tests/Image/bonds, written into the partition's ext4).
#   boot 1, -M raspi3b with the Zero 2 W's device tree: multi-user with no
#     failed unit, / read-only, /var a tmpfs, wristlink.service active and
#     waiting for a controller (QEMU has no Bluetooth chip), its outputs
#     requested on gpiochip0 (pinctrl-bcm2835) and low, the journal naming
#     policy.conf and its line and the defaults in use, one bonded phone
#     loaded; config.txt's dwc2 overlay line, the USB controller in
#     peripheral mode and the USB console's units there (the port itself
#     needs hardware); then the power is cut (qemu killed with SIGKILL)
#     while it runs.
#   boot 2, -M virt (the same root, about twice as fast; no GPIO there, so
#     the service waits for its lines): a clean boot (the root was never
#     written, the data partition's journal at most replayed), the bond file
#     byte for byte the same and loaded again, the journal of boot 1 kept
#     on the data partition (two boots, boot 1's firmware lines), and the
#     report on the card the wearer asked for (wristlink/report-request put
#     on the boot partition before): report.txt written with the version,
#     doctor, the bonded phone's address and boot 1's log, the request
#     gone, the settings files untouched, the FAT clean.
#   boot 3, -M raspi3b, a fresh copy customised as Raspberry Pi Imager 1.x
#     does with firstrun.sh: the script on the boot partition and
#     `systemd.run=/boot/firstrun.sh systemd.run_success_action=reboot
#     systemd.unit=kernel-command-line.target` appended to cmdline.txt (the
#     kernel gets that command line; Imager edits the top's cmdline.txt,
#     which the firmware does not read with os_prefix=slot-a/, so on a card
#     the kernel would not get them: the test gives them anyway, so the
#     image's defence against them stays tested): multi-user with no failed unit,
#     wristlink.service running, kernel-command-line.service masked and never
#     run, what was ignored in the journal and the report, cmdline.txt and
#     firstrun.sh left as they were.
#   boot 4, -M raspi3b, a fresh copy customised the cloud-init way
#     (user-data, network-config, meta-data on the boot partition): the same,
#     the journal naming the three files.
#   boot 5, -M raspi3b, a fresh copy with the bond, a Bluetooth chip on the
#     PL011 (Tests/Image/bt-boot-test.sh): the kernel attaches it and loads
#     its patch, the firmware advertises, the bonded phone reconnects,
#     encrypts, subscribes and rings a call that drives led-call and the
#     motor; kernel start -> advertising -> subscribed in timings.txt.
# Before the boots, the Imager repository file (scripts/imager-repo) written
# for the image is checked against it (Tests/Image/imager-repo-check.py).
# Each boot is bounded (IMAGE_BOOT_TIMEOUT, default 420 s). Results and the
# consoles: .build/image/boot-test/; timings.txt has each boot's kernel
# start -> wristlink.service ready (READY=1) and systemd-analyze's split,
# analyze-1.txt boot 1's slowest units and the service's critical chain
# (recorded, not checked). Exit 0 when every check passed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
IMAGE="${1:?usage: boot-test.sh IMAGE}"
LIMIT="${IMAGE_BOOT_TIMEOUT:-420}"
OUT="$ROOT/.build/image/boot-test"
"$ROOT/scripts/ensure-packages" qemu-system-arm mtools e2fsprogs python3 device-tree-compiler dosfstools >&2
rm -rf "$OUT"; mkdir -p "$OUT"
T0=$(date +%s.%N)
# pass, fail, check, elapsed, report, field: boot-files.sh
. "$HERE/boot-files.sh"

# --- the copy and what the wearer puts on it --------------------------------
disk="$OUT/sd.img"
cp --sparse=always "$IMAGE" "$disk"
image_partitions "$disk" "$OUT"
fat="$disk@@$boot_off"
# The slot the firmware starts and its files (boot-files.sh)
slot_boot_files "$fat" "$OUT"
tr -d '\r' < "$OUT/config.txt" | grep -qx 'include wristlink-slot.txt' && st=0 || st=1; check "the image: config.txt includes wristlink-slot.txt" "$st" "$(tr -d '\r' < "$OUT/config.txt" | grep include)"
[ "$prefix" = slot-a/ ] && st=0 || st=1; check "the image: the firmware starts slot A (os_prefix=$prefix)" "$st" "$(cat "$OUT/wristlink-slot.txt")"
# slot B: no file, only its empty overlays/ (the image makes both folders
# with room for an update's entries: docs/updates.md, "Power cuts")
[ "$(mdir -/ -b -i "$fat" ::/slot-b 2>&1)" = "::/slot-b/overlays/" ] && st=0 || st=1
check "the image: slot B's folder holds no file, only an empty overlays/" "$st" "$(mdir -/ -b -i "$fat" ::/slot-b 2>&1 | head -3)"
mcopy -n -i "$fat" ::/wristlink/policy.conf "$OUT/policy.conf"
# line 3 of the wearer's edit names an output the board does not have
{ printf '# edited on a laptop\n\nalert News led-notfy=blink\n'; tr -d '\r' < "$OUT/policy.conf"; } > "$OUT/policy-bad.conf"
mcopy -o -i "$fat" "$OUT/policy-bad.conf" ::/wristlink/policy.conf
place_bond "$disk" "$HERE/bonds" "$OUT"
bond_sum="$(sha256sum < "$HERE/bonds" | cut -c1-16)"
echo "boot-test: slot $prefix, kernel $kernel_file, initrd $initrd_file, device tree bcm2837-rpi-zero-2-w.dtb + overlays: ${overlays[*]##*/}"
pad_power_of_two "$disk"
cmdline="$(tr -d '\r\n' < "$OUT/cmdline.txt") wristlink.boot-report"
echo "boot-test: image ${IMAGE##*/}, cmdline.txt: $(tr -d '\r\n' < "$OUT/cmdline.txt")"

# --- a boot: qemu in the background, its console in a file -------------------
qemu_pid=""
start_qemu() {  # start_qemu NAME ARGS...
  local name=$1; shift
  : > "$OUT/console-$name.log"
  qemu-system-aarch64 "$@" -display none -no-reboot -monitor none > "$OUT/qemu-$name.log" 2>&1 &
  qemu_pid=$!
}
wait_report() {  # wait_report NAME: until the report's last line, qemu's exit or the limit
  local name=$1 t0=$2
  while kill -0 "$qemu_pid" 2>/dev/null; do
    grep -q 'wl-report: end' "$OUT/console-$name.log" 2>/dev/null && return 0
    if [ "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a > '"$LIMIT"') }')" = 1 ]; then
      echo "boot-test: boot $name: no report in ${LIMIT} s" >&2; return 1
    fi
    sleep 1
  done
  echo "boot-test: qemu ended during boot $name ($(tail -3 "$OUT/qemu-$name.log"))" >&2
  return 1
}
power_cut() { kill -KILL "$qemu_pid" 2>/dev/null || true; wait "$qemu_pid" 2>/dev/null || true; }
boot() {  # boot N MACHINE QEMU-ARGS...: boots, waits for the report, cuts the power, keeps the report
  local n=$1 machine=$2 t0 rc=0; shift 2
  t0=$(date +%s.%N)
  start_qemu "$n" "$@"
  wait_report "$n" "$t0" || rc=$?
  power_cut
  printf 'boot %s (%s): report after %s s\n' "$n" "$machine" "$(elapsed "$t0")" | tee -a "$OUT/timings.txt"
  report "$n" > "$OUT/report-$n.txt"
  return $rc
}
# the report's lines, with or without the kernel's "[ time] unit[pid]: " before them
# where boot N's time went (systemd-analyze in the guest, board/image/boot-report):
# the phases in timings.txt; for boot 1 (wristlink.boot-analyze) the slowest
# units and wristlink.service's critical chain in analyze-1.txt; recorded,
# not checked
analyze() {
  report "$1" | grep -E '^(analyze|blame|critical-chain): ' > "$OUT/analyze-$1.txt"
  printf 'boot %s: %s\n' "$1" "$(field "$1" analyze)" >> "$OUT/timings.txt"
}

# The checks below report each result; a failing one must not end the run.
# No pipefail either: `… | grep -q` ends the pipe at the first match, and
# the writer's SIGPIPE would count as the check failing.
set +e +o pipefail

# --- the Imager repository file, checked against the image -------------------
"$ROOT/scripts/imager-repo" "$OUT/imager-repo.json" "$IMAGE" > /dev/null 2> "$OUT/imager-repo.log"
"$HERE/imager-repo-check.py" "$OUT/imager-repo.json" "$IMAGE" > "$OUT/imager-repo-check.txt" 2>&1
check "the Imager repository file matches the image (size, sha256, pi3-64bit)" $? "$(grep FAIL "$OUT/imager-repo-check.txt" | head -3)"

# --- boot 1: raspi3b, the Zero 2 W's device tree ------------------------------
# The power is cut while the firmware runs (a flat battery).
ok=0; boot 1 raspi3b -M raspi3b -accel tcg,thread=single -kernel "$OUT/vmlinuz" -initrd "$OUT/initrd.img" \
  -dtb "$OUT/zero-2-w.dtb" -append "$cmdline wristlink.boot-analyze $RASPI_QEMU_APPEND" \
  -drive "file=$disk,if=sd,format=raw,cache=unsafe" -serial null -serial "file:$OUT/console-1.log" || ok=$?
if [ "$ok" -ne 0 ]; then
  fail "boot 1: no report (console: $OUT/console-1.log)"
else
  # The version line (docs/versions.md): the VERSION file's version, the git revision, the libgpiod 2 API, the
  # licence; the same line as the image manifest's beside the image (scripts/build-image), when it is there.
  ver="$(field 1 version)"
  echo "$ver" | grep -Eq "^wristlink $(cat "$ROOT/VERSION") \(git [0-9a-z+-]+, libgpiod 2 API\), licence Apache-2.0\$"
  check "boot 1: the report opens with the firmware's version line ($ver)" $? "$ver"
  manifest="$(dirname "$IMAGE")/pi-zero-2w.manifest"
  if [ -f "$manifest" ]; then
    grep -qxF "# $ver" "$manifest"; check "boot 1: the image manifest has the same version line" $? "$(sed -n 3p "$manifest")"
  fi
  [ "$(field 1 battery)" = none ]; check "boot 1: the report's battery line says none (QEMU has no fuel gauge)" $? "$(field 1 battery)"
  [ "$(field 1 system)" = running ]; rc=$?; check "boot 1: multi-user, no failed unit (system $(field 1 system), failed: $(field 1 failed-units))" $rc "system $(field 1 system), failed: $(field 1 failed-units)"
  field 1 "mount /" | grep -Eq '^/dev/mmcblk0p2 ext4 ro,'; rc=$?; check "boot 1: / is the SD card's root of slot A, read-only ($(field 1 'mount /'))" $rc "$(field 1 'mount /')"
  [ "$(field 1 slot)" = "boot=A committed=A trial=none A=good B=bad" ]; check "boot 1: rauc-boot-backend reads the card's slot state: A committed and good, B bad (empty)" $? "$(field 1 slot)"
  field 1 "mount /var" | grep -q ' tmpfs '; check "boot 1: /var is a tmpfs" $? "$(field 1 'mount /var')"
  [ "$(field 1 initrd-mounts)" = "none said" ]; check "boot 1: the initrd mounted /var, /tmp, the data and boot partitions and configfs without a complaint" $? "$(field 1 initrd-mounts)"
  field 1 watchdog | grep -Eq '^configured=15s .*watchdog0 .*BCM2835'; check "boot 1: the hardware watchdog is the BCM2835's and the image sets systemd's to 15 s (not armed in QEMU: boot-files.sh)" $? "$(field 1 watchdog)"
  field 1 "mount /tmp" | grep -Eq '^tmpfs tmpfs rw,nosuid,nodev'; check "boot 1: /tmp is a tmpfs (nosuid, nodev)" $? "$(field 1 'mount /tmp')"
  field 1 "mount /boot/firmware" | grep -Eq 'vfat ro,'; check "boot 1: the boot partition is mounted read-only" $? "$(field 1 'mount /boot/firmware')"
  field 1 "mount /var/lib/private/wristlink" | grep -Eq '^/dev/mmcblk0p4\[/state\] ext4 rw,'; check "boot 1: the data partition's state/ holds the firmware's state" $? "$(field 1 'mount /var/lib/private/wristlink')"
  field 1 "mount /var/log/journal" | grep -Eq '^/dev/mmcblk0p4\[/journal\] ext4 rw,'; check "boot 1: the journal is kept on the data partition's journal/" $? "$(field 1 'mount /var/log/journal')"
  svc="$(field 1 service)"
  bad=0; for want in ActiveState=active SubState=running NRestarts=0; do case " $svc " in *" $want "*) ;; *) bad=1 ;; esac; done
  check "boot 1: wristlink.service active, never restarted ($svc)" $bad "$svc"
  report 1 | grep -q '^journal: .*error controller: gone: waiting for the Bluetooth controller'; check "boot 1: the journal says it waits for a Bluetooth controller" $? "$(report 1 | grep '^journal:' | tail -5)"
  ! report 1 | grep -q '^journal: .*dropped a command'; check "boot 1: no management command dropped while the controller is absent" $? "$(report 1 | grep 'dropped a command' | head -3)"
  report 1 | grep -Eq '^journal: .*/boot/firmware/wristlink/policy.conf:3: .*led-notfy.*using the defaults in /etc/wristlink/policy.conf'; check "boot 1: a policy.conf error: the journal names the file and line 3, the defaults run" $? "$(report 1 | grep '^journal:' | head -5)"
  report 1 | grep -q '^journal: loaded 1 bonded phone(s) from /var/lib/wristlink/bonds'; check "boot 1: the bond file placed on the data partition is loaded" $? "$(report 1 | grep '^journal:' | head -8)"
  report 1 | grep -Eq '^gpiochip gpiochip0: gpiochip0 \[pinctrl-bcm2835\]'; check "boot 1: gpiochip0 is pinctrl-bcm2835" $? "$(report 1 | grep '^gpiochip')"
  gpios="$(report 1 | grep '^gpio: ' || true)"
  n_out=$(printf '%s\n' "$gpios" | grep -cE 'GPIO(17|18|27) .*[|]wristlink *[)] *out lo' || true)
  n_in=$(printf '%s\n' "$gpios" | grep -cE 'GPIO(22|23) .*[|]wristlink *[)] *in ' || true)
  [ "$n_out" -eq 3 ] && [ "$n_in" -eq 2 ]; check "boot 1: led-notify, led-call, vibration requested on gpiochip0 and low; both buttons held" $? "$gpios"
  report 1 | grep -q '^imager: no Raspberry Pi Imager customisation on this card'; check "boot 1: the journal says the card has no Imager customisation" $? "$(report 1 | grep '^imager')"
  field 1 "wifi-sdio-host /soc/mmc@7e300000" | grep -q disabled && [ -z "$(field 1 wifi-interfaces)" ]
  check "boot 1: Wi-Fi off (its SDIO host disabled by the overlay, no wireless interface)" $? "$(report 1 | grep '^wifi')"
  # The USB status console (docs/sd-image.md): config.txt's line, the
  # controller in peripheral mode in the tree the kernel got, the gadget's
  # and the console's units on the image. QEMU's raspi3b has a host-only
  # model of the controller: what became of the gadget there is recorded,
  # not checked (the port itself needs a Zero 2 W and a computer).
  tr -d '\r' < "$OUT/config.txt" | grep -qx 'dtoverlay=dwc2,dr_mode=peripheral'
  check "boot 1: config.txt has dtoverlay=dwc2,dr_mode=peripheral" $? "$(grep dtoverlay "$OUT/config.txt")"
  [ "$(field 1 usb-dr-mode)" = peripheral ]; check "boot 1: the USB controller is in peripheral mode in the running device tree" $? "$(field 1 usb-dr-mode)"
  field 1 usb-gadget-unit | grep -q 'LoadState=loaded' && field 1 usb-console-unit | grep -q 'LoadState=loaded' && field 1 usb-console-unit | grep -q 'UnitFileState=enabled'
  check "boot 1: the USB gadget's and console's units are on the image, the console enabled for /dev/ttyGS0" $? "$(report 1 | grep '^usb-')"
  report 1 | grep '^usb-' | sed 's/^/INFO boot 1: /' | tee -a "$OUT/summary.txt"
  active_us="$(field 1 service-active-us)"
  printf 'boot 1 (raspi3b): wristlink.service ready %s s after the kernel started\n' "$(awk -v u="${active_us:-0}" 'BEGIN { printf "%.1f", u / 1e6 }')" | tee -a "$OUT/timings.txt"
  analyze 1
fi
id1="$(field 1 machine-id)"

# --- boot 2: virt, after the power cut ----------------------------------------
# The wearer asks for the report on the card (an empty wristlink/report-request);
# the settings files as they are now, to compare after.
: > "$OUT/report-request"
mcopy -o -i "$fat" "$OUT/report-request" ::/wristlink/report-request
mcopy -n -i "$fat" ::/wristlink/board.conf "$OUT/before-2-board.conf"
mcopy -n -i "$fat" ::/wristlink/policy.conf "$OUT/before-2-policy.conf"
# cryptomgr.notests=1 (virt only): a kernel crypto self-test that starts
# late in this boot (cryptomgr_test; Debian's 6.12 runs them, DH and RSA
# are built in) held virt's one emulated core for minutes under TCG (soft
# lockups from 110 s, the card's report timed out: main's image, 2026-12-03,
# twice in four runs). What this boot checks is the data partition and the
# report, not the kernel's crypto; on a Pi's real cores the tests take
# milliseconds, and the raspi3b boots keep them.
cmdline2="$(printf '%s' "$cmdline" | sed -E 's/console=[^ ]+//g') console=ttyAMA0 cryptomgr.notests=1"
ok=0; boot 2 virt -M virt -cpu cortex-a53 -m 1G -accel tcg,thread=single -kernel "$OUT/vmlinuz" -initrd "$OUT/initrd.img" \
  -append "$cmdline2" -drive "file=$disk,if=virtio,format=raw,cache=unsafe" -serial "file:$OUT/console-2.log" -nic none \
  -device i6300esb || ok=$?
if [ "$ok" -ne 0 ]; then
  fail "boot 2: no report (console: $OUT/console-2.log)"
else
  kernel2="$(report 2 | grep '^kernel: ' || true)"
  ! printf '%s\n' "$kernel2" | grep -E 'vda2' | grep -Eqi 'recover|error|orphan' && ! report 2 | grep -E '^fsck: ' | grep -qi 'vda2\|wlroot'
  check "boot 2: after the power cut the root needed nothing (never written)" $? "$kernel2"
  field 2 watchdog | grep -Eq '^configured=15s RuntimeWatchdogUSec=15s .*watchdog0 i6300ESB timer state=active timeout=15$'
  st=$?; check "boot 2: systemd armed a hardware watchdog for 15 s (QEMU's i6300esb: $(field 2 watchdog))" "$st" "$(field 2 watchdog)"
  ! printf '%s\n' "$kernel2" | grep -E 'vda4' | grep -qi 'error'; check "boot 2: the data partition mounted without errors" $? "$kernel2"
  case "$(field 2 system)" in running|degraded) true ;; *) false ;; esac
  rc=$?; check "boot 2: the boot finished (system $(field 2 system); the service waits for GPIO lines virt does not have)" $rc "system $(field 2 system)"
  report 2 | grep -q "^data: bonds [0-9]* 600 $bond_sum"; check "boot 2: the bond file is byte for byte the one placed (mode 600)" $? "$(report 2 | grep '^data:')"
  report 2 | grep -q '^journal: loaded 1 bonded phone(s) from /var/lib/wristlink/bonds'; check "boot 2: one bonded phone loaded again" $? "$(report 2 | grep '^journal:' | head -8)"
  [ "$(report 2 | grep -c '^data: ')" -eq 1 ]; check "boot 2: the data partition holds the bond file and nothing else" $? "$(report 2 | grep '^data:')"
  [ "$(field 2 journal-boots)" = 2 ] && [ -n "$id1" ] && [ "$(field 2 machine-id)" = "$id1" ]
  rc=$?; check "boot 2: the journal on the data partition kept boot 1 through the power cut (journal boots: $(field 2 journal-boots), one machine ID)" $rc "journal boots $(field 2 journal-boots), machine IDs $id1 / $(field 2 machine-id)"
  report 2 | grep -q '^previous-boot: .*waiting for the Bluetooth controller'; check "boot 2: boot 1's last firmware lines are there" $? "$(report 2 | grep '^previous-boot:' | head -5)"
  # The report on the card: written, the request gone, the settings files untouched, the FAT clean.
  mcopy -n -i "$fat" ::/wristlink/report.txt "$OUT/report-2.txt" 2>/dev/null; got=$?
  [ "$got" -eq 0 ] && tr -d '\r' < "$OUT/report-2.txt" | grep -Eq "^wristlink $(cat "$ROOT/VERSION") " \
    && tr -d '\r' < "$OUT/report-2.txt" | grep -q '^== wristlink doctor' \
    && tr -d '\r' < "$OUT/report-2.txt" | grep -q '^c0:ff:ee:12:34:56$' \
    && ! tr -d '\r' < "$OUT/report-2.txt" | grep -qi '00112233445566778899aabbccddeeff' \
    && tr -d '\r' < "$OUT/report-2.txt" | sed -n '/^== the previous boot: the firmware/,/^==/p' | grep -q 'waiting for the Bluetooth controller'
  check "boot 2: report-request made wristlink/report.txt: version, doctor, the bonded phone's address without its key, boot 1's firmware log" $? "$(head -c 600 "$OUT/report-2.txt" 2>/dev/null)"
  ! mdir -b -i "$fat" ::/wristlink 2>/dev/null | grep -qi 'report-request\|report.txt.new'; check "boot 2: the request was removed (and no report.txt.new left)" $? "$(mdir -b -i "$fat" ::/wristlink 2>&1)"
  mcopy -n -i "$fat" ::/wristlink/board.conf "$OUT/after-2-board.conf" && mcopy -n -i "$fat" ::/wristlink/policy.conf "$OUT/after-2-policy.conf" \
    && cmp -s "$OUT/before-2-board.conf" "$OUT/after-2-board.conf" && cmp -s "$OUT/before-2-policy.conf" "$OUT/after-2-policy.conf"
  check "boot 2: board.conf and policy.conf byte for byte as before the report" $? "$(cmp "$OUT/before-2-policy.conf" "$OUT/after-2-policy.conf" 2>&1)"
  dd if="$disk" of="$OUT/boot-2.vfat" bs=1M iflag=skip_bytes,count_bytes skip="$boot_off" count="$boot_len" status=none
  fsck.vfat -n "$OUT/boot-2.vfat" > "$OUT/fsck-boot-2.txt" 2>&1; check "boot 2: the boot partition is clean after the report (fsck.vfat -n)" $? "$(tail -3 "$OUT/fsck-boot-2.txt")"
  # (no READY figure: virt has no GPIO, so the service waits for its lines)
  analyze 2
fi
# --- boots 3 and 4: Raspberry Pi Imager's two kinds of customisation ---------
# Each on a fresh copy of the image, as Imager 1.x leaves a card it has
# written and customised; -M raspi3b as boot 1, the kernel command line
# from that copy's cmdline.txt plus the boot report.
imager_copy() {  # imager_copy NAME: a fresh copy in $idisk, its boot partition $ifat
  idisk="$OUT/sd-$1.img"
  cp --sparse=always "$IMAGE" "$idisk"
  ifat="$idisk@@$boot_off"
}
raspi_boot() {  # raspi_boot N DISK CMDLINE
  boot "$1" raspi3b -M raspi3b -accel tcg,thread=single -kernel "$OUT/vmlinuz" -initrd "$OUT/initrd.img" \
    -dtb "$OUT/zero-2-w.dtb" -append "$3 $RASPI_QEMU_APPEND" \
    -drive "file=$2,if=sd,format=raw,cache=unsafe" -serial null -serial "file:$OUT/console-$1.log"
}
wearable_runs() {  # wearable_runs N: multi-user and wristlink.service running, as in boot 1
  local n=$1 svc bad=0 want
  [ "$(field "$n" system)" = running ]; rc=$?; check "boot $n: multi-user, no failed unit (system $(field "$n" system), failed: $(field "$n" failed-units))" $rc "system $(field "$n" system), failed: $(field "$n" failed-units)"
  svc="$(field "$n" service)"
  for want in ActiveState=active SubState=running NRestarts=0; do case " $svc " in *" $want "*) ;; *) bad=1 ;; esac; done
  check "boot $n: wristlink.service active, never restarted ($svc)" $bad "$svc"
  report "$n" | grep -q '^journal: .*waiting for the Bluetooth controller'; check "boot $n: the firmware runs and waits for a Bluetooth controller" $? "$(report "$n" | grep '^journal:' | tail -3)"
  printf 'boot %s (raspi3b): wristlink.service ready %s s after the kernel started\n' "$n" "$(awk -v u="$(field "$n" service-active-us)" 'BEGIN { printf "%.1f", u / 1e6 }')" | tee -a "$OUT/timings.txt"
  analyze "$n"
}
same_file() {  # same_file N FAT-PATH LOCAL-FILE: the card's file is byte for byte LOCAL-FILE after boot N
  mcopy -n -i "$ifat" "::/$2" "$OUT/after-$1-${2##*/}" 2>/dev/null && cmp -s "$OUT/after-$1-${2##*/}" "$3"
  check "boot $1: $2 on the card left as Imager wrote it" $? "$(cmp "$OUT/after-$1-${2##*/}" "$3" 2>&1)"
}

# boot 3: firstrun.sh, and its arguments appended to cmdline.txt's one line
# (Imager writes ::/cmdline.txt, the top's; the kernel is given the slot's
# line with them, as if the firmware read it: see the top)
imager_copy firstrun
cat > "$OUT/firstrun.sh" <<'SH'
#!/bin/bash
# As Raspberry Pi Imager 1.x writes it, shortened: it would set the hostname,
# a user and password, SSH, Wi-Fi and the locale, then take its arguments out
# of /boot/cmdline.txt and delete itself. Here it only says that it ran.
set +e
echo "wl-firstrun: ran" > /dev/console
rm -f /boot/firstrun.sh
sed -i 's| systemd.run.*||g' /boot/cmdline.txt
exit 0
SH
imager_args="systemd.run=/boot/firstrun.sh systemd.run_success_action=reboot systemd.unit=kernel-command-line.target"
printf '%s %s\n' "$(tr -d '\r\n' < "$OUT/cmdline.txt")" "$imager_args" > "$OUT/cmdline-firstrun.txt"
mcopy -i "$ifat" "$OUT/firstrun.sh" ::/firstrun.sh
mcopy -o -i "$ifat" "$OUT/cmdline-firstrun.txt" ::/cmdline.txt
pad_power_of_two "$idisk"
ok=0; raspi_boot 3 "$idisk" "$(tr -d '\r\n' < "$OUT/cmdline-firstrun.txt") wristlink.boot-report" || ok=$?
if [ "$ok" -ne 0 ]; then
  fail "boot 3 (Imager's firstrun.sh): no report, the wearable did not reach multi-user (console: $OUT/console-3.log)"
else
  field 3 cmdline | grep -q " $imager_args"; check "boot 3: the kernel was given Imager's first-run arguments" $? "$(field 3 cmdline)"
  wearable_runs 3
  field 3 kernel-command-line.service | grep -q 'LoadState=masked'; rc=$?; check "boot 3: kernel-command-line.service (systemd.run=) masked, never run ($(field 3 kernel-command-line.service))" $rc "$(field 3 kernel-command-line.service)"
  t="$(field 3 kernel-command-line.target)"
  case "$t" in *ActiveState=active*FragmentPath=/etc/systemd/system/kernel-command-line.target*) true ;; *) false ;; esac
  check "boot 3: systemd.unit=kernel-command-line.target started the image's own target (multi-user)" $? "$t"
  ! grep -q 'wl-firstrun: ran' "$OUT/console-3.log"; check "boot 3: firstrun.sh did not run" $? "$(grep -m1 'wl-firstrun' "$OUT/console-3.log")"
  report 3 | grep -q "^imager: Raspberry Pi Imager customisation ignored: the kernel command line's $imager_args (cmdline.txt)"
  check "boot 3: the journal and the report say the command line's arguments were ignored" $? "$(report 3 | grep '^imager')"
  report 3 | grep -q '^imager: Raspberry Pi Imager customisation ignored: on the boot partition firstrun.sh ('
  check "boot 3: the journal and the report say firstrun.sh was ignored" $? "$(report 3 | grep '^imager')"
  same_file 3 cmdline.txt "$OUT/cmdline-firstrun.txt"
  same_file 3 firstrun.sh "$OUT/firstrun.sh"
fi

# boot 4: cloud-init's NoCloud files, cmdline.txt as built
imager_copy cloudinit
printf '#cloud-config\nhostname: wristlink-test\nmanage_etc_hosts: true\nusers:\n- name: wearer\n  groups: users,adm,dialout,gpio\n  shell: /bin/bash\n  lock_passwd: false\n  passwd: "$5$testsalt$0123456789abcdefghijklmnopqrstuvwxyzABCDE"\nssh_pwauth: true\ntimezone: Europe/London\n' > "$OUT/user-data"
printf 'network:\n  version: 2\n  wifis:\n    renderer: networkd\n    wlan0:\n      dhcp4: true\n      regulatory-domain: GB\n      access-points:\n        "test-ssid":\n          password: "not-a-real-one"\n      optional: true\n' > "$OUT/network-config"
printf 'instance-id: wristlink-test\n' > "$OUT/meta-data"
for f in user-data network-config meta-data; do mcopy -i "$ifat" "$OUT/$f" "::/$f"; done
pad_power_of_two "$idisk"
ok=0; raspi_boot 4 "$idisk" "$cmdline" || ok=$?
if [ "$ok" -ne 0 ]; then
  fail "boot 4 (Imager's cloud-init files): no report (console: $OUT/console-4.log)"
else
  wearable_runs 4
  report 4 | grep -q '^imager: Raspberry Pi Imager customisation ignored: on the boot partition user-data network-config meta-data ('
  check "boot 4: the journal and the report say user-data, network-config and meta-data were ignored" $? "$(report 4 | grep '^imager')"
  ! report 4 | grep -q "^imager: .*kernel command line"; check "boot 4: no command-line customisation reported" $? "$(report 4 | grep '^imager')"
  same_file 4 user-data "$OUT/user-data"
fi
rm -f "$OUT"/sd-firstrun.img "$OUT"/sd-cloudinit.img

# --- boot 5: the image meets a phone over its own Bluetooth UART ------------
# Tests/Image/bt-boot-test.sh (a fresh copy with the bond, -M raspi3b as
# boot 1, a CYW43438 and a Bumble phone behind the PL011): its checks and
# figures join this summary and timings.txt.
BT_BOOT_NAME=5 "$HERE/bt-boot-test.sh" "$IMAGE" "$OUT/bt" > "$OUT/bt-boot.log" 2>&1; rc=$?
grep -E '^(PASS|FAIL) ' "$OUT/bt/summary.txt" 2>/dev/null >> "$OUT/summary.txt"
grep -E '^(PASS|FAIL) ' "$OUT/bt/summary.txt" 2>/dev/null
bt_fails=$(grep -c '^FAIL ' "$OUT/bt/summary.txt" 2>/dev/null || true)
if [ "$rc" -ne 0 ] && [ "${bt_fails:-0}" -eq 0 ]; then bt_fails=1; fail "boot 5: bt-boot-test.sh ended with $rc ($OUT/bt-boot.log)"; fi
fails=$((fails + ${bt_fails:-0}))
grep '^boot 5' "$OUT/bt/timings.txt" 2>/dev/null | tee -a "$OUT/timings.txt"

printf 'boot-test: %d failed, %s s in all (consoles and reports in %s)\n' "$fails" "$(elapsed "$T0")" "$OUT"
[ "$fails" -eq 0 ]
