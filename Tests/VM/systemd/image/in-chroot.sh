#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the mmdebstrap root (a customize hook of build-image.sh, with
# the network and the stage folder /tmp/wl-image: image/*, requirements.txt,
# gpio-sim/{build.sh,Kbuild}): gpio-sim for the image's
# own kernel, the Bumble venv, the test units, then removes the build-only
# packages. Prints what it found in the kernel configuration.
set -eu
S=/tmp/wl-image
KVER="$(ls /lib/modules | head -1)"
CONFIG="/boot/config-$KVER"
echo "in-chroot: kernel $KVER"
grep -E '^(# )?CONFIG_(GPIO_SIM|IRQ_SIM|BT_HCIVHCI|GPIO_CDEV|GPIO_CDEV_V1|CONFIGFS_FS|NET_9P_VIRTIO|9P_FS)[= ]' "$CONFIG" || true

# ------------------------------------------------------------ gpio-sim.ko
# Tests/VM/gpio-sim/build.sh (shared with setup.sh and fetch-kernel.sh),
# copied in with its Kbuild, against this root's linux-source and headers.
if grep -q '^CONFIG_GPIO_SIM=[ym]' "$CONFIG"; then
    echo "in-chroot: the kernel has gpio-sim"
else
    TAR="$(ls /usr/src/linux-source-*.tar.* | head -1)"
    bash "$S/gpio-sim/build.sh" "$TAR" "$(basename "$TAR" | sed 's/\.tar\..*//')" \
        "/lib/modules/$KVER/build" /tmp/gpio-sim-build "$KVER"
    install -D -m 0644 /tmp/gpio-sim-build/gpio-sim.ko "/lib/modules/$KVER/updates/gpio-sim.ko"
    depmod "$KVER"
    rm -rf /tmp/gpio-sim-build
fi

# ------------------------------------------------------------ Bumble venv
python3 --version
python3 -m venv /opt/wl-venv
# host-ca.crt: the build machine's CA bundle (build-image.sh copies it in;
# an HTTPS proxy may sign PyPI's certificates); deleted with $S below.
/opt/wl-venv/bin/pip install -q --disable-pip-version-check --no-cache-dir --cert "$S/host-ca.crt" \
    --no-deps -r "$S/requirements.txt"
/opt/wl-venv/bin/pip check
/opt/wl-venv/bin/python -c 'import bumble, bumble.controller, bumble.transport.vhci; print("bumble", bumble.__version__ if hasattr(bumble, "__version__") else "ok")'

# ------------------------------------------------------------ units, rules
for u in wl-vm-gpiosim.service wl-vm-test.service bthelper@.service; do
    install -m 0644 "$S/$u" "/etc/systemd/system/$u"
done
install -m 0644 "$S/99-wl-vm-bthelper.rules" /etc/udev/rules.d/99-wl-vm-bthelper.rules
systemctl enable wl-vm-gpiosim.service wl-vm-test.service
# Raspberry Pi OS gives the gpiochip devices to the group gpio
# (raspberrypi-sys-mods, 99-com.rules); Debian has neither the group nor the rule.
groupadd --system gpio
install -m 0644 "$S/60-wl-vm-gpio.rules" /etc/udev/rules.d/60-wl-vm-gpio.rules
# nothing periodic or networked in a test boot
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
         dpkg-db-backup.timer systemd-tmpfiles-clean.timer; do
    systemctl mask "$u" 2>/dev/null || true
done
mkdir -p /mnt/wl/repo /mnt/wl/out /var/log/journal
cat >> /etc/fstab <<'FSTAB'
/dev/vda / ext4 rw,noatime 0 1
wlrepo /mnt/wl/repo 9p trans=virtio,version=9p2000.L,ro,msize=262144 0 0
wlout /mnt/wl/out 9p trans=virtio,version=9p2000.L,rw,msize=262144 0 0
FSTAB
echo wristlink-vm > /etc/hostname
passwd -d root >/dev/null   # console login for debugging (a throwaway VM)
# A small initrd (MODULES=list: the virtio disk and ext4 only) unpacks in
# seconds under TCG; MODULES=most made 36 MB.
sed -i 's/^MODULES=.*/MODULES=list/' /etc/initramfs-tools/initramfs.conf
printf 'virtio_pci\nvirtio_blk\next4\n' >> /etc/initramfs-tools/modules
update-initramfs -u -k "$KVER" >/dev/null

# ------------------------------------------------------------ clean up
apt-get purge -y -qq "linux-source-*" "linux-headers-*" make >/dev/null
apt-get autoremove --purge -y -qq >/dev/null
apt-get clean
rm -rf /usr/src/* /var/lib/apt/lists/* "$S"
