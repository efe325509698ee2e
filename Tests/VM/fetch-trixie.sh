#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches Debian trixie's amd64 kernel (Linux 6.12, what a Pi flashed today
# runs) for the VM suite on a bookworm host WITHOUT installing anything into
# the host: a private apt configuration (its own state, cache and sources
# list, trixie on the host's own mirror hosts, signed-by the
# debian-archive-keyring), `apt-get download`, `dpkg-deb -x`.
#
#   Tests/VM/fetch-trixie.sh        (setup.sh calls it; needs no root)
#
# Result in .build/vm/trixie/ (WL_VM_CACHE/trixie), reusable by other VMs:
#   kver                 e.g. 6.12.118+deb13-amd64
#   vmlinuz              -> root/boot/vmlinuz-KVER (the unsigned image package's)
#   config               -> root/boot/config-KVER
#   modules              -> root/usr/lib/modules/KVER (depmod run; vng finds it
#                           itself: it walks up from the image to root/lib/modules)
#   gpio-sim/gpio-sim.ko built against the trixie headers (no CONFIG_GPIO_SIM)
#   root/                the unpacked image, headers, headers-common, kbuild
#   glibc/               trixie's libc6, only to run trixie's kbuild tools
#   apt/apt.conf         the private apt configuration (apt-get -c apt/apt.conf)
#   debs/                the downloaded packages
# Building gpio-sim on bookworm (details in NOTES.md): the headers' Makefile
# includes /usr/src/... (rewritten to root/usr/src/...); trixie's modpost,
# objtool and resolve_btfids need glibc 2.38 (bookworm: 2.36), so each tool
# that needs more than the host's glibc is wrapped to run under trixie's own
# loader and libc; the compiler is the host's gcc (12) instead of gcc-14,
# with the one gcc-14-only flag (-fmin-function-alignment) and BTF (pahole)
# switched off when the host lacks them.
# Idempotent: a stamp (complete: kernel version + the hashes of this script,
# gpio-sim/build.sh and gpio-sim/Kbuild) skips everything, without network.
# Env: WL_SETUP_NET_TIMEOUT (900 s, bounds every network step),
#      WL_VM_TRIXIE_REFRESH=1 (look for a newer kernel again),
#      WL_VM_TRIXIE_MIRROR, WL_VM_TRIXIE_SECURITY_MIRROR (default: the host's).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
T="$CACHE/trixie"
NET_TIMEOUT="${WL_SETUP_NET_TIMEOUT:-900}"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
mkdir -p "$T"

T0=$(date +%s.%N)
phase() { printf '[trixie %6.1fs] %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*"; }
fail()  { echo "fetch-trixie: $*" >&2; exit 1; }
bounded() {   # a network step: bounded by WL_SETUP_NET_TIMEOUT
  local rc=0
  timeout "$NET_TIMEOUT" "$@" || rc=$?
  [ "$rc" -eq 124 ] && fail "'$*' did not finish in ${NET_TIMEOUT}s (WL_SETUP_NET_TIMEOUT): is the Debian mirror reachable?"
  return "$rc"
}

INPUTS="$(cat "$0" "$HERE/gpio-sim/build.sh" "$HERE/gpio-sim/Kbuild" | sha256sum | cut -c1-16)"
if [ -z "${WL_VM_TRIXIE_REFRESH:-}" ] && [ -f "$T/complete" ] && [ -f "$T/gpio-sim/gpio-sim.ko" ] \
   && [ "$(cut -d' ' -f2 "$T/complete")" = "$INPUTS" ] && [ -e "$T/vmlinuz" ] && [ -e "$T/modules/modules.dep" ]; then
  phase "up to date: $(cat "$T/kver")"
  exit 0
fi
rm -f "$T/complete"

# ------------------------------------------------------------ private apt
# Trixie's Release files are signed by the trixie archive keys; bookworm's
# debian-archive-keyring (2023.3+deb12u1 and later) ships them.
[ -f /usr/share/keyrings/debian-archive-trixie-automatic.gpg ] && [ -f "$KEYRING" ] \
  || fail "no trixie archive keys in /usr/share/keyrings (debian-archive-keyring too old?)"
# The host's mirror hosts, from apt's own view of its sources.
host_uri() { apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null | awk -v r="$1" '$1==r { print $2; exit }'; }
. /etc/os-release
MIRROR="${WL_VM_TRIXIE_MIRROR:-$(host_uri "${VERSION_CODENAME:-bookworm}")}"
SECURITY="${WL_VM_TRIXIE_SECURITY_MIRROR:-$(host_uri "${VERSION_CODENAME:-bookworm}-security")}"
MIRROR="${MIRROR:-http://deb.debian.org/debian/}"
SECURITY="${SECURITY:-http://deb.debian.org/debian-security/}"

A="$T/apt"
mkdir -p "$A/state/lists/partial" "$A/cache/archives/partial" "$A/sources.list.d" "$A/preferences.d" "$T/debs"
touch "$A/state/status"
cat > "$A/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR trixie main
deb [signed-by=$KEYRING] $MIRROR trixie-updates main
deb [signed-by=$KEYRING] $SECURITY trixie-security main
EOF
{
  echo "Dir::State \"$A/state\";"
  echo "Dir::State::status \"$A/state/status\";"
  echo "Dir::Cache \"$A/cache\";"
  echo "Dir::Etc::sourcelist \"$A/sources.list\";"
  echo "Dir::Etc::sourceparts \"$A/sources.list.d\";"
  echo "Dir::Etc::preferences \"$A/preferences\";"
  echo "Dir::Etc::preferencesparts \"$A/preferences.d\";"
  echo 'APT::Architecture "amd64";'
  echo 'APT::Architectures { "amd64"; };'
  echo 'Acquire::Languages "none";'
  # root's downloads into this tree: _apt cannot write here
  [ "$(id -u)" -eq 0 ] && echo 'APT::Sandbox::User "root";'
} > "$A/apt.conf"
APT=(-c "$A/apt.conf" -q)
if [ -n "${WL_VM_TRIXIE_REFRESH:-}" ] || [ -z "$(find "$A/state/lists" -maxdepth 1 -name '*trixie*_Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
  phase "apt: trixie lists from $MIRROR and $SECURITY"
  bounded apt-get "${APT[@]}" update >/dev/null || fail "apt-get update (private trixie lists) failed"
fi

show() {   # show PACKAGE FIELD: the field of the candidate version
  local out; out="$(apt-cache "${APT[@]}" show --no-all-versions "$1" 2>/dev/null)" || true
  printf '%s\n' "$out" | awk -v k="$2: " 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }'
}
KVER="$(show linux-image-amd64 Depends | sed -n 's/^linux-image-\([0-9][^ ,]*\).*/\1/p')"
case "$KVER" in 6.12.*-amd64) ;; *) fail "trixie's linux-image-amd64 points at '$KVER', not a 6.12 amd64 kernel";; esac
ABI="${KVER%-amd64}"
PV="$(show "linux-image-$KVER-unsigned" Version)"
PKGS=("linux-image-$KVER-unsigned" "linux-headers-$KVER" "linux-headers-$ABI-common" "linux-kbuild-$ABI")
[ "$(show linux-source-6.12 Version)" = "$PV" ] || fail "linux-source-6.12 is $(show linux-source-6.12 Version), the kernel $PV; they must match"
phase "kernel $KVER ($PV)"

# ------------------------------------------------------------- download
deb_of() { local f; for f in "$T/debs/$1_${2#*:}_"*.deb; do [ -f "$f" ] && echo "$f"; return 0; done; }
want=()
for p in "${PKGS[@]}" linux-source-6.12; do [ -n "$(deb_of "$p" "$PV")" ] || want+=("$p=$PV"); done
LIBC_V="$(show libc6 Version)"
[ -n "$(deb_of libc6 "$LIBC_V")" ] || want+=("libc6=$LIBC_V")
if ((${#want[@]})); then
  phase "apt: downloading ${want[*]}"
  (cd "$T/debs" && bounded apt-get "${APT[@]}" download "${want[@]}" >/dev/null) || fail "apt-get download failed"
fi

# -------------------------------------------------------------- unpack
phase "unpacking into $T/root"
rm -rf "$T/root" "$T/glibc"
for p in "${PKGS[@]}"; do dpkg-deb -x "$(deb_of "$p" "$PV")" "$T/root"; done
ln -s usr/lib "$T/root/lib"    # merged /usr: vng looks for <root>/lib/modules
HDR="$T/root/usr/src/linux-headers-$KVER"
sed -i "s|^include /usr/src/|include $T/root/usr/src/|" "$HDR/Makefile"
grep -q "^include $T/root/usr/src/linux-headers-$ABI-common/Makefile" "$HDR/Makefile" || fail "unexpected $HDR/Makefile"
phase "depmod $KVER"
depmod -b "$T/root" "$KVER"
ln -sfn "root/boot/vmlinuz-$KVER" "$T/vmlinuz"
ln -sfn "root/boot/config-$KVER" "$T/config"
ln -sfn "root/usr/lib/modules/$KVER" "$T/modules"
echo "$KVER" > "$T/kver"

# Trixie's kbuild tools that need a newer glibc than the host's run under
# trixie's own loader and libc (the other libraries they use, libelf and
# zlib, are the host's: same sonames).
mkdir -p "$T/glibc"
dpkg-deb -x "$(deb_of libc6 "$LIBC_V")" "$T/glibc"
G="$T/glibc/usr/lib/x86_64-linux-gnu"
HOST_GLIBC="$(getconf GNU_LIBC_VERSION | awk '{print $2}')"
wrapped=()
while IFS= read -r f; do
  case "$(file -b "$f")" in ELF*dynamically\ linked*) ;; *) continue;; esac
  need="$(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
  [ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$HOST_GLIBC" | sort -V | tail -1)" != "$HOST_GLIBC" ] || continue
  mv "$f" "$f.trixie-glibc"
  printf '#!/bin/sh\n# fetch-trixie.sh: needs glibc %s, the host has %s\nexec %s --library-path %s:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu "$0.trixie-glibc" "$@"\n' \
    "$need" "$HOST_GLIBC" "$G/ld-linux-x86-64.so.2" "$G" > "$f"
  chmod +x "$f"
  wrapped+=("${f##*/}")
done < <(find "$T/root/usr/lib/linux-kbuild-$ABI" -type f -perm -u+x)
phase "kbuild tools run under trixie's glibc $LIBC_V: ${wrapped[*]:-none}"

# ------------------------------------------------------------ gpio-sim.ko
GS="$T/gpio-sim"
case "$(grep -E '^(# )?CONFIG_GPIO_SIM[ =]' "$T/config")" in
  CONFIG_GPIO_SIM=m)
    phase "gpio-sim: the kernel's own module (CONFIG_GPIO_SIM=m)"
    rm -rf "$GS"; mkdir -p "$GS"
    xz -dc "$(find "$T/modules/kernel/drivers/gpio" -name 'gpio-sim.ko*' | head -1)" > "$GS/gpio-sim.ko"
    echo "$KVER" > "$GS/kver" ;;
  "# CONFIG_GPIO_SIM is not set")
    phase "gpio-sim: building from linux-source-6.12 against the trixie headers with the host's gcc"
    rm -rf "$T/src"; mkdir -p "$T/src"
    dpkg-deb --fsys-tarfile "$(deb_of linux-source-6.12 "$PV")" | tar -x -C "$T/src" --wildcards './usr/src/linux-source-6.12.tar.*'
    MAKE_ARGS=(CC=gcc)
    gcc -fmin-function-alignment=16 -x c -c /dev/null -o /dev/null 2>/dev/null \
      || MAKE_ARGS+=(CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=)   # gcc < 14: -falign-functions (the kernel's own fallback)
    command -v pahole >/dev/null || MAKE_ARGS+=(CONFIG_DEBUG_INFO_BTF_MODULES=)   # no BTF for the module
    "$HERE/gpio-sim/build.sh" "$(ls "$T"/src/usr/src/linux-source-6.12.tar.* | head -1)" linux-source-6.12 \
        "$HDR" "$GS" "$KVER" "${MAKE_ARGS[@]}"
    echo "${MAKE_ARGS[*]}" > "$GS/make-args"
    rm -rf "$T/src" ;;
  *) fail "CONFIG_GPIO_SIM=y or unknown in $T/config: guest.sh would need no module";;
esac

echo "$KVER $INPUTS" > "$T/complete"
phase "done: $T/vmlinuz, $T/modules, $GS/gpio-sim.ko ($(du -sh "$T" | cut -f1) in $T)"
