#!/usr/bin/env bash
# Every VM boot of `make test-vm`, in two lanes that run at the same time.
# Each VM is one TCG vCPU, so one host core: on this 2-core machine the two
# lanes together keep both cores busy, and nothing else runs meanwhile (make
# test builds everything first), so the suites' timing checks (gpio-sim
# sampled from Python, the advertising cadence) see the load of one VM per
# core, as when they run alone.
#   lane "suite":   Tests/VM/run-vm.sh on each kernel of VM_KERNELS in turn
#                   (VM_CASES: all by default)
#   lane "systemd": Tests/VM/systemd/run.sh with the amd64 package (building
#                   the cached image first if it is missing), then the
#                   libgpiod 2 build's cases (VM_GPIOD2_CASES; none skips)
# Both lanes run to the end even when one fails; each line is prefixed with
# its lane. Exit 0 only if every run passed. VM_LANES=1 runs the lanes one
# after the other (a busier machine, or to read one lane's output alone).
# Env from the Makefile: VM_KERNELS, VM_CASES, VM_GPIOD2_CASES,
# VM_GPIOD2_TIMEOUT, WL_DEB (the amd64 package), WL_SYSTEMD (0 skips the
# systemd case).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
T0=$(date +%s)

lane_suite() {
  local rc=0 k s
  for k in ${VM_KERNELS:-bookworm trixie}; do
    s=$(date +%s)
    WL_VM_KERNEL=$k "$HERE/run-vm.sh" ${VM_CASES:-} || rc=1
    echo "lane suite: $k in $(( $(date +%s) - s )) s"
  done
  return $rc
}

lane_systemd() {
  local rc=0 s
  if [ "${WL_SYSTEMD:-1}" != 0 ]; then
    s=$(date +%s)
    "$HERE/systemd/run.sh" ${WL_DEB:-} || rc=1
    echo "lane systemd: the systemd case in $(( $(date +%s) - s )) s"
  fi
  if [ "${VM_GPIOD2_CASES:-1,2}" != none ]; then
    s=$(date +%s)
    echo "test-vm: the libgpiod 2 build (.build/pi-x86_64-trixie/wristlink), kernel 6.12, cases ${VM_GPIOD2_CASES:-1,2}"
    VM_TIMEOUT=${VM_GPIOD2_TIMEOUT:-300} WL_VM_KERNEL=trixie WL_VM_TAG=gpiod2 \
      WL_FIRMWARE="$ROOT/Tests/VM/firmware-gpiod2.sh" "$HERE/run-vm.sh" "${VM_GPIOD2_CASES:-1,2}" || rc=1
    echo "lane systemd: the libgpiod 2 cases in $(( $(date +%s) - s )) s"
  fi
  return $rc
}

prefix() { sed -u "s/^/[$1] /"; }

if [ "${VM_LANES:-2}" = 1 ]; then
  lane_suite 2>&1 | prefix suite; rc_suite=${PIPESTATUS[0]}
  lane_systemd 2>&1 | prefix systemd; rc_systemd=${PIPESTATUS[0]}
else
  ( lane_suite 2>&1 | prefix suite; exit "${PIPESTATUS[0]}" ) & pid_suite=$!
  ( lane_systemd 2>&1 | prefix systemd; exit "${PIPESTATUS[0]}" ) & pid_systemd=$!
  wait "$pid_suite"; rc_suite=$?
  wait "$pid_systemd"; rc_systemd=$?
fi
echo "test-vm: lane suite $([ "$rc_suite" = 0 ] && echo passed || echo FAILED), lane systemd $([ "$rc_systemd" = 0 ] && echo passed || echo FAILED); $(( $(date +%s) - T0 )) s wall"
[ "$rc_suite" = 0 ] && [ "$rc_systemd" = 0 ]
