#!/bin/sh
# Runs inside the mmdebstrap root (a customize hook of build-image.sh, with
# the network and the stage folder /tmp/wl-image): gpio-sim for the image's
# own kernel, the Bumble venv, the test units, then removes the build-only
# packages. Prints what it found in the kernel configuration.
set -eu
S=/tmp/wl-image
KVER="$(ls /lib/modules | head -1)"
CONFIG="/boot/config-$KVER"
echo "in-chroot: kernel $KVER"
grep -E '^(# )?CONFIG_(GPIO_SIM|IRQ_SIM|BT_HCIVHCI|GPIO_CDEV|GPIO_CDEV_V1|CONFIGFS_FS|NET_9P_VIRTIO|9P_FS)[= ]' "$CONFIG" || true

# ------------------------------------------------------------ gpio-sim.ko
if grep -q '^CONFIG_GPIO_SIM=[ym]' "$CONFIG"; then
    echo "in-chroot: the kernel has gpio-sim"
else
    B=/tmp/gpio-sim-build
    rm -rf "$B"; mkdir -p "$B"
    TAR="$(ls /usr/src/linux-source-*.tar.* | head -1)"
    TOP="$(basename "$TAR" | sed 's/\.tar\..*//')"
    tar -xf "$TAR" -C "$B" --strip-components=1 \
        "$TOP/drivers/gpio/gpio-sim.c" "$TOP/drivers/gpio/gpiolib.h" "$TOP/kernel/irq/irq_sim.c"
    mv "$B/drivers/gpio/gpio-sim.c" "$B/gpio-sim-core.c"
    mv "$B/drivers/gpio/gpiolib.h" "$B/gpiolib.h"
    mv "$B/kernel/irq/irq_sim.c" "$B/irq_sim.c"
    if grep -q '^CONFIG_IRQ_SIM=y' "$CONFIG"; then
        echo "in-chroot: CONFIG_IRQ_SIM=y: building gpio-sim.c alone"
        printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-core.o\nccflags-y := -I$(src)\n' > "$B/Kbuild"
    else
        # irq_to_desc() is not exported to modules (Tests/VM/setup.sh)
        grep -q 'handle_simple_irq(irq_to_desc(irqnum))' "$B/irq_sim.c"
        sed -i 's/handle_simple_irq(irq_to_desc(irqnum))/generic_handle_irq(irqnum)/' "$B/irq_sim.c"
        cp "$S/Kbuild" "$B/Kbuild"
    fi
    make -s -C "/lib/modules/$KVER/build" M="$B" modules
    install -D -m 0644 "$B/gpio-sim.ko" "/lib/modules/$KVER/updates/gpio-sim.ko"
    depmod "$KVER"
    modinfo "/lib/modules/$KVER/updates/gpio-sim.ko" | grep -E '^(vermagic|depends)'
    rm -rf "$B"
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
