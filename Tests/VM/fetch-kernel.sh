#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches one of Debian trixie's amd64 kernels for the VM suite on a bookworm
# host WITHOUT installing anything into the host: a private apt
# configuration (its own state, cache and sources list, on the host's own
# mirror hosts, signed-by the debian-archive-keyring), `apt-get download`,
# `dpkg-deb -x`.
#
#   Tests/VM/fetch-kernel.sh NAME      (setup.sh calls it; needs no root)
#
# NAME (also WL_VM_KERNEL / VM_KERNELS):
#   trixie  Linux 6.12, what trixie's linux-image-amd64 points at (trixie,
#           trixie-updates, trixie-security)
#   k618    Linux 6.18 from trixie-backports (the series Raspberry Pi OS runs
#           since April 2026), pinned: K618_VERSION below
#   k7      the newest Linux 7.x in trixie-backports, pinned: K7_VERSION below
# Bumping a pinned kernel: `apt-cache -c .build/vm/k7/apt/apt.conf policy
# linux-image-amd64` (after a fetch) shows trixie-backports' newest; set the
# version below (or WL_VM_K618_VERSION / WL_VM_K7_VERSION for one run) and
# run setup.sh again. A package that trixie-backports' index no longer lists
# (backports keeps only the newest `linux` source: 6.18's headers and source
# left it when 6.19 came, its signed image is still listed) is fetched from
# the mirror's pool by file name and must match a hash in POOL_SHA256.
#
# Result in .build/vm/NAME/ (WL_VM_CACHE/NAME), reusable by other VMs:
#   kver                 e.g. 6.12.118+deb13-amd64
#   vmlinuz              -> root/boot/vmlinuz-KVER (7.x ships the image as
#                           usr/lib/modules/KVER/vmlinuz.unsigned: linked there)
#   config               -> the kernel's config
#   modules              -> root/usr/lib/modules/KVER (depmod run; vng finds it
#                           itself: it walks up from the image to root/lib/modules)
#   gpio-sim/gpio-sim.ko the kernel's own module when its config has
#                        CONFIG_GPIO_SIM=m (7.x), else built against the
#                        kernel's headers from its linux-source (6.12, 6.18)
#   test-power/test_power.ko  the same for CONFIG_TEST_POWER (the fake
#                        battery): none of the kernels has it, so it is built
#                        for each (test-power/build.sh), 7.x included
#   root/                the unpacked image and modules (and headers, kbuild)
#   glibc/               trixie's libc6, only to run trixie's kbuild tools
#   apt/apt.conf         the private apt configuration (apt-get -c apt/apt.conf)
#   debs/                the downloaded packages (kept: a fetch again, after
#                        a change to this script, downloads nothing)
# Building gpio-sim or test_power on bookworm (details in NOTES.md): the headers' Makefile
# includes /usr/src/... (rewritten to root/usr/src/...); trixie's modpost,
# objtool and resolve_btfids need glibc 2.38 (bookworm: 2.36), so each tool
# that needs more than the host's glibc is wrapped to run under trixie's own
# loader and libc; the compiler is the host's gcc (12) instead of gcc-14,
# with the one gcc-14-only flag (-fmin-function-alignment) and BTF (pahole)
# switched off when the host lacks them.
# Idempotent: a stamp (complete: kernel version + the hashes of this script,
# gpio-sim/build.sh, gpio-sim/Kbuild, test-power/build.sh and
# test-power/Kbuild) skips everything, without network.
# Env: WL_SETUP_NET_TIMEOUT (900 s, bounds every network step),
#      WL_VM_KERNEL_REFRESH=1 (fetch the lists again; for trixie: look for a
#      newer 6.12), WL_VM_DEBIAN_MIRROR, WL_VM_DEBIAN_SECURITY_MIRROR
#      (default: the host's).
set -euo pipefail

# ------------------------------------------------------------ the pins
K618_VERSION="${WL_VM_K618_VERSION:-6.18.15-1~bpo13+1}"
K7_VERSION="${WL_VM_K7_VERSION:-7.3.4-1~bpo13+1}"
# Files no longer in trixie-backports' index, checked against these SHA-256
# (recorded 2026-12-02 from deb.debian.org's pool; the 6.18 image itself is
# still in the index, so apt checks it).
POOL_SHA256=(
  "linux-headers-6.18.15+deb13-amd64_6.18.15-1~bpo13+1_amd64.deb 1b19c975adf29e89c4cb2680e862db89b787fc5144a638b001854b075b4cc255"
  "linux-headers-6.18.15+deb13-common_6.18.15-1~bpo13+1_all.deb a54ed9b3be5247fe2e003423e067cb8e8b06e4a44a09459b85cfec0afbcbd5ef"
  "linux-kbuild-6.18.15+deb13_6.18.15-1~bpo13+1_amd64.deb 5e64129020cdb5effd6ed3895ca89608ef17bcf643eedfc8013dad89bab70a02"
  "linux-source-6.18_6.18.15-1~bpo13+1_all.deb 1638c9e5f4307c722231d8000e30cd2fa2fb71f55e081ff9eecfd0a756955c18"
)

KNAME="${1:?usage: fetch-kernel.sh trixie|k618|k7}"
case "$KNAME" in
  trixie) SERIES=6.12; PIN="" ;;
  k618)   SERIES=6.18; PIN="$K618_VERSION" ;;
  k7)     SERIES=7;    PIN="$K7_VERSION" ;;
  *) echo "fetch-kernel: unknown kernel '$KNAME' (trixie, k618 or k7)" >&2; exit 2 ;;
esac

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WL_VM_CACHE:-$ROOT/.build/vm}"
T="$CACHE/$KNAME"
NET_TIMEOUT="${WL_SETUP_NET_TIMEOUT:-900}"
REFRESH="${WL_VM_KERNEL_REFRESH:-${WL_VM_TRIXIE_REFRESH:-}}"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
mkdir -p "$T"

T0=$(date +%s.%N)
phase() { printf '[%s %6.1fs] %s\n' "$KNAME" "$(echo "$(date +%s.%N) - $T0" | bc)" "$*"; }
fail()  { echo "fetch-kernel $KNAME: $*" >&2; exit 1; }
bounded() {   # a network step: bounded by WL_SETUP_NET_TIMEOUT
  local rc=0
  timeout "$NET_TIMEOUT" "$@" || rc=$?
  [ "$rc" -eq 124 ] && fail "'$*' did not finish in ${NET_TIMEOUT}s (WL_SETUP_NET_TIMEOUT): is the Debian mirror reachable?"
  return "$rc"
}

INPUTS="$(cat "$0" "$HERE/gpio-sim/build.sh" "$HERE/gpio-sim/Kbuild" \
              "$HERE/test-power/build.sh" "$HERE/test-power/Kbuild" | sha256sum | cut -c1-16)"
if [ -z "$REFRESH" ] && [ -f "$T/complete" ] && [ -f "$T/gpio-sim/gpio-sim.ko" ] && [ -f "$T/test-power/test_power.ko" ] \
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
MIRROR="${WL_VM_DEBIAN_MIRROR:-${WL_VM_TRIXIE_MIRROR:-$(host_uri "${VERSION_CODENAME:-bookworm}")}}"
SECURITY="${WL_VM_DEBIAN_SECURITY_MIRROR:-${WL_VM_TRIXIE_SECURITY_MIRROR:-$(host_uri "${VERSION_CODENAME:-bookworm}-security")}}"
MIRROR="${MIRROR:-http://deb.debian.org/debian/}"
SECURITY="${SECURITY:-http://deb.debian.org/debian-security/}"
MIRROR="${MIRROR%/}/"

A="$T/apt"
mkdir -p "$A/state/lists/partial" "$A/cache/archives/partial" "$A/sources.list.d" "$A/preferences.d" "$T/debs"
touch "$A/state/status"
{
  echo "deb [signed-by=$KEYRING] $MIRROR trixie main"
  echo "deb [signed-by=$KEYRING] $MIRROR trixie-updates main"
  echo "deb [signed-by=$KEYRING] $SECURITY trixie-security main"
  # trixie's own libc6 (for the kbuild tools) comes from the lines above
  [ -z "$PIN" ] || echo "deb [signed-by=$KEYRING] $MIRROR trixie-backports main"
} > "$A/sources.list.new"
if cmp -s "$A/sources.list.new" "$A/sources.list"; then
  rm "$A/sources.list.new"
else
  rm -f "$A/state/lists/"*_Packages*
  mv "$A/sources.list.new" "$A/sources.list"
fi
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
lists_update() {
  phase "apt: lists from $MIRROR and $SECURITY"
  bounded apt-get "${APT[@]}" update >/dev/null || fail "apt-get update (private lists) failed"
}
# trixie follows linux-image-amd64: its lists are refreshed daily; a pinned
# kernel needs them only once (and again when a pin is not in them).
AGE=(); [ -n "$PIN" ] || AGE=(-mtime -1)
if [ -n "$REFRESH" ] || [ -z "$(find "$A/state/lists" -maxdepth 1 -name '*_Packages*' "${AGE[@]}" 2>/dev/null | head -1)" ]; then
  lists_update
fi

show() {   # show PACKAGE[=VERSION] FIELD: the field of that (or the candidate) version
  local out; out="$(apt-cache "${APT[@]}" show --no-all-versions "$1" 2>/dev/null)" || true
  printf '%s\n' "$out" | awk -v k="$2: " 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }'
}
known() { [ -n "$(show "$1=$2" Version)" ]; }   # known PACKAGE VERSION: in the index

if [ -z "$PIN" ]; then
  KVER="$(show linux-image-amd64 Depends | sed -n 's/^linux-image-\([0-9][^ ,]*\).*/\1/p')"
  case "$KVER" in $SERIES.*-amd64) ;; *) fail "trixie's linux-image-amd64 points at '$KVER', not a $SERIES amd64 kernel";; esac
  ABI="${KVER%-amd64}"
  PV="$(show "linux-image-$KVER-unsigned" Version)"
else
  PV="$PIN"
  case "$PV" in "$SERIES".*) ;; *) fail "pinned version $PV is not a $SERIES kernel";; esac
  ABI="${PV%%-*}+deb13"; KVER="$ABI-amd64"
fi
# The image and its modules: 7.x splits them (linux-binary-unsigned-KVER
# with usr/lib/modules/KVER/vmlinuz.unsigned, linux-modules-KVER,
# linux-base-KVER with the config); earlier kernels ship one package,
# unsigned or (when the unsigned one has left the index) signed: the
# signature does not matter to qemu's direct boot.
image_pkgs() {
  if known "linux-binary-unsigned-$KVER" "$PV"; then
    echo "linux-binary-unsigned-$KVER linux-modules-$KVER linux-base-$KVER"
  elif known "linux-image-$KVER-unsigned" "$PV"; then
    echo "linux-image-$KVER-unsigned"
  elif known "linux-image-$KVER" "$PV"; then
    echo "linux-image-$KVER"
  fi
}
IMAGE_PKGS=($(image_pkgs))
if ((${#IMAGE_PKGS[@]} == 0)) && [ -n "$PIN" ]; then
  lists_update; IMAGE_PKGS=($(image_pkgs))
fi
((${#IMAGE_PKGS[@]})) || fail "no image package for $KVER at $PV in the index (newest linux-image-amd64 there: $(show linux-image-amd64 Version))"
phase "kernel $KVER ($PV): ${IMAGE_PKGS[*]}"

# ------------------------------------------------------------- download
deb_of() { local f; for f in "$T/debs/$1_${2#*:}_"*.deb; do [ -f "$f" ] && echo "$f"; return 0; done; }
pool_pin() { local e; for e in "${POOL_SHA256[@]}"; do case "$e" in "$1_${2#*:}_"*) echo "$e"; return 0;; esac; done; }
fetch() {   # fetch PKG=VERSION...: into debs/ unless there; apt when indexed, else the pool by pinned hash
  local pv p v e f sum apt_want=()
  for pv in "$@"; do
    p="${pv%%=*}"; v="${pv#*=}"
    [ -z "$(deb_of "$p" "$v")" ] || continue
    if known "$p" "$v"; then apt_want+=("$pv"); continue; fi
    e="$(pool_pin "$p" "$v")"
    [ -n "$e" ] || fail "$p=$v is not in the index and has no pinned hash in POOL_SHA256"
    f="${e%% *}"; sum="${e##* }"
    phase "pool: $f (not in the index; checked against its pinned SHA-256)"
    bounded curl -fsS -o "$T/debs/$f.part" "${MIRROR}pool/main/l/linux/$(printf %s "$f" | sed 's/+/%2B/g; s/~/%7E/g')" \
      || fail "downloading $f from ${MIRROR}pool/main/l/linux/ failed"
    [ "$(sha256sum "$T/debs/$f.part" | cut -d' ' -f1)" = "$sum" ] || { rm -f "$T/debs/$f.part"; fail "$f: SHA-256 differs from the pinned one"; }
    mv "$T/debs/$f.part" "$T/debs/$f"
  done
  if ((${#apt_want[@]})); then
    phase "apt: downloading ${apt_want[*]}"
    (cd "$T/debs" && bounded apt-get "${APT[@]}" download "${apt_want[@]}" >/dev/null) || fail "apt-get download failed"
  fi
}
fetch "${IMAGE_PKGS[@]/%/=$PV}"

# -------------------------------------------------------------- unpack
phase "unpacking into $T/root"
rm -rf "$T/root" "$T/glibc"
for p in "${IMAGE_PKGS[@]}"; do dpkg-deb -x "$(deb_of "$p" "$PV")" "$T/root"; done
ln -s usr/lib "$T/root/lib"    # merged /usr: vng looks for <root>/lib/modules
MOD="$T/root/usr/lib/modules/$KVER"
mkdir -p "$T/root/boot"
if [ ! -e "$T/root/boot/vmlinuz-$KVER" ]; then
  # A hard link, not a symlink: vng walks up from the path it is given.
  ln "$(ls "$MOD"/vmlinuz* | head -1)" "$T/root/boot/vmlinuz-$KVER" || fail "no vmlinuz in ${IMAGE_PKGS[*]}"
fi
[ -e "$T/root/boot/config-$KVER" ] || ln -s "../usr/lib/modules/$KVER/config" "$T/root/boot/config-$KVER"
[ -s "$T/root/boot/config-$KVER" ] || fail "no config in ${IMAGE_PKGS[*]}"
phase "depmod $KVER"
depmod -b "$T/root" "$KVER"
ln -sfn "root/boot/vmlinuz-$KVER" "$T/vmlinuz"
ln -sfn "root/boot/config-$KVER" "$T/config"
ln -sfn "root/usr/lib/modules/$KVER" "$T/modules"
echo "$KVER" > "$T/kver"

# ------------------------------------------- gpio-sim.ko and test_power.ko
# Each module is the kernel's own when its config has it as a module (=m),
# else built out of tree from the kernel's linux-source against its headers
# (prepare_build: fetched, unpacked and made to run on bookworm once for
# both).
HDR=""; SRC_TAR=""; MAKE_ARGS=()
prepare_build() {
  [ -z "$HDR" ] || return 0
  MM="$(echo "$KVER" | cut -d. -f1,2)"
  HPKGS=("linux-headers-$KVER" "linux-headers-$ABI-common" "linux-kbuild-$ABI")
  LIBC_V="$(show libc6 Version)"
  fetch "${HPKGS[@]/%/=$PV}" "linux-source-$MM=$PV" "libc6=$LIBC_V"
  for p in "${HPKGS[@]}"; do dpkg-deb -x "$(deb_of "$p" "$PV")" "$T/root"; done
  HDR="$T/root/usr/src/linux-headers-$KVER"
  # 6.12: `include /usr/src/…-common/Makefile`; 6.18 also sets
  # KBUILD_OUTPUT=/usr/src/…-amd64 (an O= for the headers' own tree)
  sed -i -E "s#(^|[ =])/usr/src/#\1$T/root/usr/src/#g" "$HDR/Makefile"
  grep -q "^include $T/root/usr/src/linux-headers-$ABI-common/Makefile" "$HDR/Makefile" || fail "unexpected $HDR/Makefile"

  # Trixie's kbuild tools that need a newer glibc than the host's run under
  # trixie's own loader and libc (the other libraries they use, libelf,
  # zlib and libssl, are the host's: same sonames).
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
    printf '#!/bin/sh\n# fetch-kernel.sh: needs glibc %s, the host has %s\nexec %s --library-path %s:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu "$0.trixie-glibc" "$@"\n' \
      "$need" "$HOST_GLIBC" "$G/ld-linux-x86-64.so.2" "$G" > "$f"
    chmod +x "$f"
    wrapped+=("${f##*/}")
  done < <(find "$T/root/usr/lib/linux-kbuild-$ABI" -type f -perm -u+x)
  phase "kbuild tools run under trixie's glibc $LIBC_V: ${wrapped[*]:-none}"

  rm -rf "$T/src"; mkdir -p "$T/src"
  dpkg-deb --fsys-tarfile "$(deb_of "linux-source-$MM" "$PV")" | tar -x -C "$T/src" --wildcards "./usr/src/linux-source-$MM.tar.*"
  SRC_TAR="$(ls "$T"/src/usr/src/linux-source-$MM.tar.* | head -1)"
  MAKE_ARGS=(CC=gcc)
  gcc -fmin-function-alignment=16 -x c -c /dev/null -o /dev/null 2>/dev/null \
    || MAKE_ARGS+=(CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=)   # gcc < 14: -falign-functions (the kernel's own fallback)
  command -v pahole >/dev/null || MAKE_ARGS+=(CONFIG_DEBUG_INFO_BTF_MODULES=)   # no BTF for the module
}
# module CONFIG_NAME DIR KO IN_TREE_DIR: DIR/KO for this kernel (the build script is DIR/build.sh)
module() {
  local config="$1" dir="$2" ko="$3" in_tree="$4" out="$T/$2" own
  case "$(grep -E "^(# )?$config[ =]" "$T/config")" in
    "$config=m")
      phase "$dir: the kernel's own module ($config=m)"
      rm -rf "$out"; mkdir -p "$out"
      own="$(find "$T/modules/kernel/$in_tree" -name "${ko%.ko}.ko*" | head -1)"
      [ -n "$own" ] || fail "$config=m but no ${ko%.ko}.ko* in $T/modules/kernel/$in_tree"
      case "$own" in
        *.xz) xz -dc "$own" > "$out/$ko" ;;
        *.zst) zstd -qdc "$own" > "$out/$ko" ;;
        *) cp "$own" "$out/$ko" ;;
      esac
      echo "$KVER" > "$out/kver" ;;
    "# $config is not set")
      prepare_build
      phase "$dir: building from linux-source-$MM against the $KVER headers with the host's gcc"
      "$HERE/$dir/build.sh" "$SRC_TAR" "linux-source-$MM" "$HDR" "$out" "$KVER" "${MAKE_ARGS[@]}"
      echo "${MAKE_ARGS[*]}" > "$out/make-args" ;;
    *) fail "$config=y or unknown in $T/config: guest.sh would need no module";;
  esac
}
module CONFIG_GPIO_SIM gpio-sim gpio-sim.ko drivers/gpio
module CONFIG_TEST_POWER test-power test_power.ko drivers/power/supply
rm -rf "$T/src"

echo "$KVER $INPUTS" > "$T/complete"
phase "done: $T/vmlinuz, $T/modules, $T/gpio-sim/gpio-sim.ko, $T/test-power/test_power.ko ($(du -sh "$T" | cut -f1) in $T)"
