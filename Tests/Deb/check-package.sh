#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks a built wristlink package (docs/debian-package.md) on its real
# bytes: dpkg-deb's listing (paths, modes, owners), its control fields
# (Depends against the binary's NEEDED libraries), conffiles, the maintainer
# scripts, the unit and drop-in as shipped, the gzip headers, and that the
# man page names every command the packaged binary's `help` lists.
#   Tests/Deb/check-package.sh PACKAGE.deb
# CHECK_LIBRARY_PATH: LD_LIBRARY_PATH for running the packaged binary's
# `help` when its libgpiod is not the host's (a trixie build on bookworm).
# Prints one line per check; exits 1 after listing every failure.
set -eu
deb="${1:?usage: Tests/Deb/check-package.sh PACKAGE.deb}"
[ -f "$deb" ] || { echo "check-package: no package $deb" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
pass() { passes=$((passes + 1)); }
fail() { failures=$((failures + 1)); echo "check-package: FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...: COMMAND succeeds
    what="$1"; shift
    if "$@" >/dev/null 2>&1; then pass; else fail "$what"; fi
}

dpkg-deb -c "$deb" | awk '{ print $1, $2, $6 }' > "$work/listing"
dpkg-deb -e "$deb" "$work/control"
dpkg-deb -x "$deb" "$work/root"
field() { dpkg-deb -f "$deb" "$1"; }

# --- paths, modes, owners --------------------------------------------------
has() { # has MODE PATH: the listing holds PATH with MODE, owned by root
    if grep -qxF -e "$1 root/root ./$2" "$work/listing"; then pass; else fail "$2 missing or not $1 root/root"; fi
}
has -rwxr-xr-x usr/bin/wristlink
has -rw-r--r-- usr/lib/systemd/system/wristlink.service
has -rw-r--r-- "usr/lib/systemd/system/bthelper@.service.d/wristlink.conf"
has -rw-r--r-- etc/wristlink/board.conf
has -rw-r--r-- etc/wristlink/policy.conf
for board in pi-zero-2w pi4 pi5; do
    has -rw-r--r-- "usr/share/wristlink/board/$board/board.conf"
done
has -rw-r--r-- usr/share/wristlink/board/policy.conf
has -rw-r--r-- usr/share/doc/wristlink/copyright
has -rw-r--r-- usr/share/doc/wristlink/changelog.Debian.gz
has -rw-r--r-- usr/share/doc/wristlink/README.md
has -rw-r--r-- usr/share/doc/wristlink/docs/config.md
has -rw-r--r-- usr/share/man/man1/wristlink.1.gz
# Nothing but directories and regular files, nothing outside the FHS
# places above, no /usr/local.
if awk '$1 !~ /^[-d]/' "$work/listing" | grep -q .; then fail "a link or special file in the package"; else pass; fi
if awk '{ print $3 }' "$work/listing" | grep -v -E '^\./($|etc/|etc/wristlink/|usr/($|bin/|lib/($|systemd/)|share/($|doc/|man/|wristlink/)))' | grep -q .; then
    fail "files outside etc/wristlink, usr/bin, usr/lib/systemd, usr/share/{doc,man,wristlink}"
else pass; fi
if awk '$1 ~ /^d/ && $1 != "drwxr-xr-x"' "$work/listing" | grep -q .; then fail "a directory not 0755"; else pass; fi

# --- control ---------------------------------------------------------------
check "Package is wristlink" test "$(field Package)" = wristlink
arch="$(field Architecture)"
version="$(field Version)"
check "file name is wristlink_VERSION_ARCH.deb" test "$(basename "$deb")" = "wristlink_${version}_$arch.deb"
case "$version" in
*+deb13|*+deb12) pass ;;
*) fail "version $version has no +deb13/+deb12 suite suffix" ;;
esac
check "conffiles are exactly the board and policy files" \
    test "$(cat "$work/control/conffiles")" = "$(printf '/etc/wristlink/board.conf\n/etc/wristlink/policy.conf')"
depends="$(field Depends)"
# Every NEEDED library is covered by a dependency, and nothing else is named.
needed="$(readelf -d "$work/root/usr/bin/wristlink" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
echo "$needed" | grep -qx 'libc.so.6' && pass || fail "the binary does not need libc.so.6?"
for lib in $needed; do
    case "$lib" in
    libc.so.6|libm.so.6|ld-linux-*) want=libc6 ;;
    libgpiod.so.2) want=libgpiod2 ;;
    libgpiod.so.3) want=libgpiod3 ;;
    *) fail "the binary needs $lib, which this check does not know"; continue ;;
    esac
    if echo "$depends" | tr ',' '\n' | grep -q "^ *$want (>= [0-9]"; then pass; else fail "Depends ($depends) lacks a versioned $want for $lib"; fi
done
for dep in $(echo "$depends" | tr ',' '\n' | sed 's/^ *\([^ ]*\).*/\1/'); do
    case "$dep" in
    libc6) pass ;;
    libgpiod2) echo "$needed" | grep -qx libgpiod.so.2 && pass || fail "Depends on libgpiod2 without NEEDED libgpiod.so.2" ;;
    libgpiod3) echo "$needed" | grep -qx libgpiod.so.3 && pass || fail "Depends on libgpiod3 without NEEDED libgpiod.so.3" ;;
    *) fail "Depends names $dep, which the binary does not need" ;;
    esac
done
case "$version" in
*+deb13) echo "$depends" | grep -q libgpiod2 && fail "a trixie package depends on libgpiod2 (trixie has libgpiod3 only)" || pass ;;
esac
size="$(field Installed-Size)"
kib="$(du -sk "$work/root" | cut -f1)"
check "Installed-Size $size KiB is the tree's ($kib KiB)" test "$size" -ge $((kib * 9 / 10)) -a "$size" -le $((kib * 11 / 10))

# --- maintainer scripts ----------------------------------------------------
for script in postinst prerm postrm; do
    f="$work/control/$script"
    check "$script exists and is executable" test -x "$f"
    check "$script is a POSIX shell script with set -e" sh -n "$f"
    check "$script sets -e" grep -qx 'set -e' "$f"
done
check "postinst masks bluetooth.service" grep -q 'ln -s /dev/null "$mask"' "$work/control/postinst"
check "postinst enables the unit with deb-systemd-helper" grep -q 'deb-systemd-helper enable "$unit"' "$work/control/postinst"
check "postinst starts it only with systemd running" grep -q '\[ -d /run/systemd/system \]' "$work/control/postinst"
check "prerm stops the unit on remove" grep -q 'deb-systemd-invoke stop wristlink.service' "$work/control/prerm"
check "postrm purge deletes the state" grep -q 'rm -rf /var/lib/wristlink /var/lib/private/wristlink' "$work/control/postrm"

# --- the unit and the drop-in ----------------------------------------------
unit="$work/root/usr/lib/systemd/system/wristlink.service"
check "ExecStart runs /usr/bin/wristlink with /etc/wristlink's files" \
    grep -qx 'ExecStart=/usr/bin/wristlink run --link bluez:hci0 --gpio chip --board /etc/wristlink/board.conf --policy /etc/wristlink/policy.conf --state-dir /var/lib/wristlink' "$unit"
check "Documentation points into /usr/share/doc/wristlink" grep -q '^Documentation=.*file:///usr/share/doc/wristlink/README.md' "$unit"
check "Restart=always" grep -qx 'Restart=always' "$unit"
check "no start-rate limit (StartLimitIntervalSec=0)" grep -qx 'StartLimitIntervalSec=0' "$unit"
if grep -E '^(Conflicts|After|Requires|Wants|BindsTo)=.*bluetooth' "$unit" >/dev/null; then
    fail "the unit still names bluetooth.service in a dependency"
else pass; fi
check "no /usr/local path in the unit" sh -c "! grep -q /usr/local '$unit'"
# systemd's own checks, on a copy whose commands point into the unpacked
# tree (nothing is installed on this machine): verify prints nothing for a
# clean unit; the exposure score must not get worse than the 1.5 the
# hardening reached (README).
if command -v systemd-analyze >/dev/null; then
    mkdir -p "$work/units"
    sed "s|/usr/bin/wristlink|$work/root/usr/bin/wristlink|g" "$unit" > "$work/units/wristlink.service"
    if verify="$(systemd-analyze verify --man=no "$work/units/wristlink.service" 2>&1)" && [ -z "$verify" ]; then
        pass
    else
        fail "systemd-analyze verify: $verify"
    fi
    exposure="$(systemd-analyze security --offline=yes "$work/units/wristlink.service" 2>/dev/null \
        | sed -n 's/.*Overall exposure level for wristlink.service: \([0-9.]*\).*/\1/p')"
    check "systemd-analyze security exposure ${exposure:-?} is at most 1.5" \
        awk -v e="${exposure:-99}" 'BEGIN { exit !(e + 0 <= 1.5) }'
fi
dropin="$work/root/usr/lib/systemd/system/bthelper@.service.d/wristlink.conf"
check "the bthelper drop-in empties ExecStart" grep -qx 'ExecStart=' "$dropin"

# --- files -----------------------------------------------------------------
gzip_clean() { # no file name, no time stamp, maximum compression
    header="$(od -A n -t x1 -N 10 "$1" | tr -d ' \n')"
    [ "$header" = 1f8b0800000000000203 ]
}
check "changelog.Debian.gz is gzip -9n" gzip_clean "$work/root/usr/share/doc/wristlink/changelog.Debian.gz"
check "wristlink.1.gz is gzip -9n" gzip_clean "$work/root/usr/share/man/man1/wristlink.1.gz"
check "the changelog's top entry is this version" \
    sh -c "gzip -dc '$work/root/usr/share/doc/wristlink/changelog.Debian.gz' | head -1 | grep -qF 'wristlink ($version) '"
check "copyright is machine-readable (DEP-5)" \
    grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' "$work/root/usr/share/doc/wristlink/copyright"
check "copyright: the firmware (Files: *) is Apache-2.0" \
    sh -c "grep -A2 -x 'Files: \\*' '$work/root/usr/share/doc/wristlink/copyright' | grep -qx 'License: Apache-2.0'"
check "/etc/wristlink/board.conf is the Pi Zero 2 W's" grep -qx 'name pi-zero-2w' "$work/root/etc/wristlink/board.conf"
for board in pi4 pi5; do
    check "/etc/wristlink/board.conf names the $board board file" grep -q "/usr/share/wristlink/board/$board/board.conf" "$work/root/etc/wristlink/board.conf"
done
binary="$work/root/usr/bin/wristlink"
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
    if help="$(LD_LIBRARY_PATH="${CHECK_LIBRARY_PATH:-}" "$binary" help 2>&1)"; then
        man="$(gzip -dc "$work/root/usr/share/man/man1/wristlink.1.gz")"
        commands="$(echo "$help" | sed -n '/^COMMANDS:/,/^$/s/^  \([a-z-]*\) .*/\1/p')"
        [ -n "$commands" ] && pass || fail "no commands in the packaged binary's help"
        for c in $commands; do
            if echo "$man" | grep -qx "\.B $c"; then pass; else fail "the man page does not describe '$c'"; fi
        done
        # One version: the binary's version line names the package's upstream version.
        line="$(LD_LIBRARY_PATH="${CHECK_LIBRARY_PATH:-}" "$binary" --version 2>&1)"
        case "$line" in
        "wristlink ${version%%-*} (git "*", licence Apache-2.0") pass ;;
        *) fail "wristlink --version says '$line', the package is $version" ;;
        esac
    else
        fail "the packaged binary does not run here (set CHECK_LIBRARY_PATH?): $help"
    fi
fi

echo "check-package: $(basename "$deb"): $passes checks passed, $failures failed (Depends: $depends)"
[ "$failures" -eq 0 ]
