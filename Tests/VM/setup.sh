#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Idempotent host setup for the Wristlink VM integration harness (run as root).
#  - Debian packages: qemu (TCG), Debian's own 6.1 kernel + headers + source,
#    busybox (virtme-ng's initramfs), gpiod 1.6, bluez tools, libbluetooth-dev,
#    curl (fetch-kernel.sh: files that left an index)
#  - Python venv with pinned virtme-ng + bumble  -> .build/vm/venv
#  - out-of-tree gpio-sim.ko for the installed kernel -> .build/vm/gpio-sim/
#  - out-of-tree test_power.ko (the fake battery) for it -> .build/vm/test-power/
#  - for each of trixie (6.12), k618 (6.18) and k7 (7.x) that WL_VM_KERNELS
#    names (default "bookworm trixie k618 k7"): that kernel, its modules,
#    gpio-sim.ko and test_power.ko, fetched without installing them (fetch-kernel.sh NAME;
#    the packages cached in .build/vm/NAME/debs) -> .build/vm/NAME/
# Every step is skipped when its result is already there; the network steps
# are bounded (WL_SETUP_NET_TIMEOUT, default 900 s) so `make test` cannot hang.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
PYTHON_BASE="${WL_VM_PYTHON:-/root/.pyenv/versions/3.11.7/bin/python3}"
NET_TIMEOUT="${WL_SETUP_NET_TIMEOUT:-900}"
mkdir -p "$CACHE"

T0=$(date +%s.%N)
phase() { local now; now=$(date +%s.%N); printf '[setup %6.1fs] %s\n' "$(echo "$now - $T0" | bc)" "$*"; }
command -v bc >/dev/null || { timeout 900 apt-get install -y -q bc >/dev/null 2>&1 || true; }

# ---------------------------------------------------------------- packages
APT_PKGS=(
  qemu-system-x86 busybox-static kmod
  linux-image-amd64 linux-headers-amd64 linux-source-6.1
  build-essential xz-utils bc file curl
  gpiod
  bluez libbluetooth-dev
)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  phase "apt: installing ${missing[*]}"
  # apt-get update only if the lists are missing or older than a day
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages' -mtime -1 2>/dev/null | head -1)" ]; then
    timeout "$NET_TIMEOUT" apt-get update -q
  fi
  DEBIAN_FRONTEND=noninteractive timeout "$NET_TIMEOUT" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  phase "apt: all packages present"
fi

# Kernel version = what the linux-image-amd64 metapackage points at.
KVER="$(dpkg-query -W -f='${Depends}' linux-image-amd64 | sed -n 's/.*linux-image-\([0-9][^ ,]*\).*/\1/p')"
[ -n "$KVER" ] && [ -f "/boot/vmlinuz-$KVER" ] || { echo "setup: cannot find kernel image ($KVER)"; exit 1; }
[ -e "/lib/modules/$KVER/build/Makefile" ] || { echo "setup: headers for $KVER missing"; exit 1; }
KPKGVER="$(dpkg-query -W -f='${Version}' "linux-image-$KVER")"
SRCVER="$(dpkg-query -W -f='${Version}' linux-source-6.1)"
if [ "$KPKGVER" != "$SRCVER" ]; then
  echo "setup: linux-image-$KVER is $KPKGVER but linux-source-6.1 is $SRCVER; they must match"; exit 1
fi
echo "$KVER" > "$CACHE/kver"
phase "kernel $KVER ($KPKGVER)"

# -------------------------------------------------------------- python venv
VENV="$CACHE/venv"
REQ="$HERE/requirements.txt"
stamp="$VENV/.req-$(sha256sum "$REQ" | cut -c1-16)"
if [ ! -e "$stamp" ]; then
  phase "venv: creating $VENV"
  rm -rf "$VENV"
  "$PYTHON_BASE" -m venv "$VENV"
  timeout "$NET_TIMEOUT" "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -r "$REQ"
  "$VENV/bin/pip" check
  touch "$stamp"
else
  phase "venv: up to date"
fi

# ------------------------------------------- gpio-sim.ko and test_power.ko
# Each built out of tree from linux-source-6.1 (NAME/build.sh) into
# $CACHE/NAME, again when the kernel or the build files changed.
build_module() {  # build_module NAME FILE
  local out="$CACHE/$1"
  if [ ! -f "$out/$2" ] || [ "$(cat "$out/kver" 2>/dev/null)" != "$KVER" ] \
     || [ "$HERE/$1/Kbuild" -nt "$out/$2" ] || [ "$HERE/$1/build.sh" -nt "$out/$2" ]; then
    phase "$1: building from linux-source-6.1 against /lib/modules/$KVER/build"
    "$HERE/$1/build.sh" "$(ls /usr/src/linux-source-6.1.tar.* | head -1)" linux-source-6.1 \
        "/lib/modules/$KVER/build" "$out" "$KVER"
  else
    phase "$1: up to date"
  fi
}
build_module gpio-sim gpio-sim.ko
build_module test-power test_power.ko

# ------------------------------------- trixie's 6.12, backports' 6.18 and 7.x
for k in ${WL_VM_KERNELS:-bookworm trixie k618 k7}; do
  k="${k//,/}"
  case "$k" in
    bookworm|"") ;;
    trixie|k618|k7) "$HERE/fetch-kernel.sh" "$k" ;;
    *) echo "setup: WL_VM_KERNELS names '$k': bookworm, trixie, k618 or k7"; exit 1 ;;
  esac
done

phase "done"
