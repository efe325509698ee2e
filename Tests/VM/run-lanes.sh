#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every VM boot of `make test-vm`, in two lanes that run at the same time.
# Each VM is one TCG vCPU, so one host core: on this 2-core machine the two
# lanes together keep both cores busy, and nothing else runs meanwhile (make
# test builds everything first), so the suites' timing checks (gpio-sim
# sampled from Python, the advertising cadence) see the load of one VM per
# core, as when they run alone.
#   lane 1: when WL_IMAGE names the SD-card image, its boot test in QEMU
#           (Tests/Image/boot-test.sh), its installation of an update from
#           the card (issue 32's proof 1, Tests/Update/install-boot-test.sh)
#           and its update under power cuts and a trial that never gets
#           ready (proofs 2 and 3, Tests/Update/fault-boot-test.sh);
#           without an image, Tests/VM/run-vm.sh on the first kernel of
#           VM_KERNELS (VM_CASES: all by default); then the libgpiod 2
#           build's cases on 6.12 (VM_GPIOD2_CASES; none, the default, skips)
#   lane 2: Tests/VM/systemd/run.sh with the amd64 package (building the
#           cached image first if it is missing), then run-vm.sh on the
#           kernels of VM_KERNELS (from the second when lane 1 took the
#           first)
# With the default VM_KERNELS "bookworm trixie k618 k7" and the image (make
# test): lane 1 the image, its update and the update's faults; lane 2
# systemd, 6.1, 6.12, 6.18, 7.x.
# Both lanes run to the end even when one fails; each line is prefixed with
# its lane. Exit 0 only if every run passed. VM_LANES=1 runs the lanes one
# after the other (a busier machine, or to read one lane's output alone).
# VM_CASES_<kernel> (e.g. VM_CASES_bookworm=1,4,5) runs those cases on that
# kernel instead of VM_CASES.
# Env from the Makefile: VM_KERNELS, VM_CASES, VM_GPIOD2_CASES,
# VM_GPIOD2_TIMEOUT, WL_DEB (the amd64 package), WL_SYSTEMD (0 skips the
# systemd case), WL_IMAGE (the SD-card image; empty skips its boot test).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
T0=$(date +%s)

# Case 8 (advertising cadence) is ~100 s of waiting for the firmware's own
# 30 s and 60 s timers, the same code on every kernel over the same mgmt
# commands: it runs on the kernels Raspberry Pi OS runs today and next
# (VM_CADENCE_KERNELS, default "k618 k7"), the others run every case but 8.
suite() {  # suite KERNEL: every case (VM_CASES_KERNEL, else VM_CASES) on one kernel
  local s rc=0 own="VM_CASES_$1" cases
  s=$(date +%s)
  cases="${!own:-${VM_CASES:-}}"
  if [ -z "$cases" ]; then
    case " ${VM_CADENCE_KERNELS:-k618 k7} " in *" $1 "*) ;; *) cases=all-but-8 ;; esac
  fi
  WL_VM_KERNEL=$1 "$HERE/run-vm.sh" $cases || rc=1
  echo "$lane_name: the suite on $1 in $(( $(date +%s) - s )) s"
  return $rc
}

gpiod2() {
  local s rc=0
  [ -n "${VM_GPIOD2_CASES:-}" ] && [ "${VM_GPIOD2_CASES}" != none ] || return 0
  s=$(date +%s)
  echo "test-vm: the libgpiod 2 build (.build/pi-x86_64-trixie/wristlink), kernel 6.12, cases $VM_GPIOD2_CASES"
  VM_TIMEOUT=${VM_GPIOD2_TIMEOUT:-300} WL_VM_KERNEL=trixie WL_VM_TAG=gpiod2 \
    WL_FIRMWARE="$ROOT/Tests/VM/firmware-gpiod2.sh" "$HERE/run-vm.sh" "$VM_GPIOD2_CASES" || rc=1
  echo "$lane_name: the libgpiod 2 cases in $(( $(date +%s) - s )) s"
  return $rc
}

systemd_case() {
  local s rc=0
  [ "${WL_SYSTEMD:-1}" != 0 ] || return 0
  s=$(date +%s)
  "$HERE/systemd/run.sh" ${WL_DEB:-} || rc=1
  echo "$lane_name: the systemd case in $(( $(date +%s) - s )) s"
  return $rc
}

# The image's boots: its boot test, its update from the card (issue 32's
# proof 1), the update under power cuts and a trial that never gets ready
# (proofs 2 and 3); each runs even when one before it failed.
image_boot() {
  local s rc=0 t
  [ -n "${WL_IMAGE:-}" ] || return 0
  for t in "Image/boot-test.sh:the SD-card image's boot test" \
           "Update/install-boot-test.sh:the image installing an update from its card" \
           "Update/fault-boot-test.sh:the image's update under power cuts and a trial that never gets ready"; do
    s=$(date +%s)
    "$ROOT/Tests/${t%%:*}" "$WL_IMAGE" || rc=1
    echo "$lane_name: ${t#*:} in $(( $(date +%s) - s )) s"
  done
  return $rc
}

kernels=(${VM_KERNELS:-bookworm trixie k618 k7})
# Lane 1: the image's boot test, its update and the update's faults (or,
# without an image, the first kernel's suite), the libgpiod 2 cases (none
# unless VM_GPIOD2_CASES names some); lane 2: the systemd case, then every
# kernel's suite. From the clean-clone run of 2026-12-04 on ea1b2d3 (two
# VMs at once, nothing else running): the suites 187 s (6.1), 194 s (6.12),
# 320 s (6.18), 330 s (7.x), the systemd case 262 s, the boot test 362 s,
# the update's installation 344 s, its faults 557 s: lanes of ~1263 s and
# ~1293 s this way, against 1451 s and 1106 s with 6.1 in lane 1.
lane1() {
  local rc=0; lane_name="lane 1"
  if [ -z "${WL_IMAGE:-}" ]; then suite "${kernels[0]}" || rc=1; fi
  image_boot || rc=1
  gpiod2 || rc=1
  return $rc
}
lane2() {
  local rc=0 i first=1; lane_name="lane 2"
  [ -z "${WL_IMAGE:-}" ] || first=0
  systemd_case || rc=1
  for ((i = first; i < ${#kernels[@]}; i++)); do suite "${kernels[i]}" || rc=1; done
  return $rc
}

prefix() { sed -u "s/^/[$1] /"; }

# Each lane's output is kept too (LANE_LOG_DIR, default .build/vm/lanes): the
# summary at the end repeats every failure line, so the last lines of a long
# `make test` name what failed, not only which lane.
LOGS="${LANE_LOG_DIR:-$ROOT/.build/vm/lanes}"
mkdir -p "$LOGS"
: > "$LOGS/lane1.log"; : > "$LOGS/lane2.log"

if [ "${VM_LANES:-2}" = 1 ]; then
  lane1 2>&1 | prefix 1 | tee "$LOGS/lane1.log"; rc1=${PIPESTATUS[0]}
  lane2 2>&1 | prefix 2 | tee "$LOGS/lane2.log"; rc2=${PIPESTATUS[0]}
else
  ( lane1 2>&1 | prefix 1 | tee "$LOGS/lane1.log"; exit "${PIPESTATUS[0]}" ) & pid1=$!
  ( lane2 2>&1 | prefix 2 | tee "$LOGS/lane2.log"; exit "${PIPESTATUS[0]}" ) & pid2=$!
  wait "$pid1"; rc1=$?
  wait "$pid2"; rc2=$?
fi
# What each run took, then every failure line (the cases' FAIL lines, a
# boot's timeout, a run's error), at most 40.
grep -hE "^\[[12]\] lane [12]: " "$LOGS/lane1.log" "$LOGS/lane2.log" || true
if [ "$rc1" != 0 ] || [ "$rc2" != 0 ]; then
  echo "test-vm: failures (whole output in $LOGS):"
  grep -hE "FAIL|[Tt]imed? ?out|Traceback|[Ee]rror" "$LOGS/lane1.log" "$LOGS/lane2.log" | head -n 40 || true
fi
echo "test-vm: lane 1 $([ "$rc1" = 0 ] && echo passed || echo FAILED), lane 2 $([ "$rc2" = 0 ] && echo passed || echo FAILED); $(( $(date +%s) - T0 )) s wall"
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
