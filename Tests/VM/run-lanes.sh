#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every VM boot of `make test-vm`, in two lanes that run at the same time.
# Each VM is one TCG vCPU, so one host core: on this 2-core machine the two
# lanes together keep both cores busy, and nothing else runs meanwhile (make
# test builds everything first), so the suites' timing checks (gpio-sim
# sampled from Python, the advertising cadence) see the load of one VM per
# core, as when they run alone.
#   lane 1: Tests/VM/run-vm.sh on the first kernel of VM_KERNELS (VM_CASES:
#           all by default), the SD-card image's boot test in QEMU when
#           WL_IMAGE names the image (Tests/Image/boot-test.sh), the
#           libgpiod 2 build's cases (VM_GPIOD2_CASES; none skips), then
#           run-vm.sh on the 3rd, 5th... kernel of VM_KERNELS
#   lane 2: Tests/VM/systemd/run.sh with the amd64 package (building the
#           cached image first if it is missing), then run-vm.sh on the
#           2nd, 4th... kernel of VM_KERNELS
# With the default VM_KERNELS "bookworm trixie k618 k7": lane 1 6.1, the
# image, libgpiod 2, 6.18; lane 2 systemd, 6.12, 7.x.
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

suite() {  # suite KERNEL: every case (VM_CASES_KERNEL, else VM_CASES) on one kernel
  local s rc=0 own="VM_CASES_$1"
  s=$(date +%s)
  WL_VM_KERNEL=$1 "$HERE/run-vm.sh" ${!own:-${VM_CASES:-}} || rc=1
  echo "$lane_name: the suite on $1 in $(( $(date +%s) - s )) s"
  return $rc
}

gpiod2() {
  local s rc=0
  [ "${VM_GPIOD2_CASES:-1,2,14}" != none ] || return 0
  s=$(date +%s)
  echo "test-vm: the libgpiod 2 build (.build/pi-x86_64-trixie/wristlink), kernel 6.12, cases ${VM_GPIOD2_CASES:-1,2,14}"
  VM_TIMEOUT=${VM_GPIOD2_TIMEOUT:-300} WL_VM_KERNEL=trixie WL_VM_TAG=gpiod2 \
    WL_FIRMWARE="$ROOT/Tests/VM/firmware-gpiod2.sh" "$HERE/run-vm.sh" "${VM_GPIOD2_CASES:-1,2,14}" || rc=1
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

image_boot() {
  local s rc=0
  [ -n "${WL_IMAGE:-}" ] || return 0
  s=$(date +%s)
  "$ROOT/Tests/Image/boot-test.sh" "$WL_IMAGE" || rc=1
  echo "$lane_name: the SD-card image's boot test in $(( $(date +%s) - s )) s"
  return $rc
}

kernels=(${VM_KERNELS:-bookworm trixie k618 k7})
# Lane 1: the first kernel's suite, the image's boot test, the libgpiod 2
# cases, then the 3rd, 5th... kernels; lane 2: the systemd case, then the
# 2nd, 4th... kernels. With the figures of Tests/VM/NOTES.md ("Current figures":
# about 270 s per suite, 380 s for the boot test, 110 s for the libgpiod 2
# cases, 490 s for the systemd case) that splits about 1030 s against
# 1030 s with four kernels.
lane1() {
  local rc=0 i; lane_name="lane 1"
  suite "${kernels[0]}" || rc=1
  image_boot || rc=1
  gpiod2 || rc=1
  for ((i = 2; i < ${#kernels[@]}; i += 2)); do suite "${kernels[i]}" || rc=1; done
  return $rc
}
lane2() {
  local rc=0 i; lane_name="lane 2"
  systemd_case || rc=1
  for ((i = 1; i < ${#kernels[@]}; i += 2)); do suite "${kernels[i]}" || rc=1; done
  return $rc
}

prefix() { sed -u "s/^/[$1] /"; }

if [ "${VM_LANES:-2}" = 1 ]; then
  lane1 2>&1 | prefix 1; rc1=${PIPESTATUS[0]}
  lane2 2>&1 | prefix 2; rc2=${PIPESTATUS[0]}
else
  ( lane1 2>&1 | prefix 1; exit "${PIPESTATUS[0]}" ) & pid1=$!
  ( lane2 2>&1 | prefix 2; exit "${PIPESTATUS[0]}" ) & pid2=$!
  wait "$pid1"; rc1=$?
  wait "$pid2"; rc2=$?
fi
echo "test-vm: lane 1 $([ "$rc1" = 0 ] && echo passed || echo FAILED), lane 2 $([ "$rc2" = 0 ] && echo passed || echo FAILED); $(( $(date +%s) - T0 )) s wall"
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
