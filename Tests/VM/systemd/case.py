#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The systemd case: the Debian package of the firmware under a real systemd
(Debian trixie, systemd as PID 1) against the kernel's Bluetooth stack, a
Bumble iPhone behind /dev/vhci and the gpio-sim lines of board/vm.

Runs INSIDE the trixie VM, started by guest.sh at each of two boots of the
same disk (Tests/VM/NOTES.md, "The systemd case"):

  boot 1 (--phase 1): 1 install, 2 start-notify (hardening, pairing with
          consent, a call answered by a button), 3 watchdog, 4 kill-9,
          5 controller-gone; guest.sh then reboots (qemu exits, run.sh boots
          the disk again)
  boot 2 (--phase 2): 6 reboot (started at boot, bond kept, the phone
          reconnects), 7 journal (priorities, no notification contents,
          both boots)

Unlike Tests/VM/suite.py the firmware runs as the unit ships: no --events
file. What it does is read where a wearer's tools would see it: the journal
(`journalctl -f -o json`), `systemctl show`, /proc of the main process, the
gpio-sim lines and the phone. Every wait has a timeout; a part that fails
records why and the parts after it that need it are not run. Results:
OUT/summary.txt (one "PASS|FAIL N name seconds [why]" line per part, as
Tests/VM/run-vm.sh prints them), OUT/case-N.log; the phone's keystore is kept
in OUT/phone1/ so boot 2's phone still holds its bond.
"""
from __future__ import annotations

import argparse
import asyncio
import glob
import json
import logging
import os
import sys
import time

VMDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, VMDIR)
import phone as P  # noqa: E402

from bumble import link as bumble_link  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

log = logging.getLogger("case")
UNIT = "wristlink.service"
OUTPUTS = ("led-notify", "led-call", "vibration")
LINES = ("led-notify", "led-call", "vibration", "accept", "reject")
# Recognisable notification contents: part 7 looks for them in the journal.
SECRET_TITLE, SECRET_MESSAGE = "Zyxwv-Title-7Q", "Qwert-Message-7Q"
PHONE_HEX = P.PHONE_ADDR.replace(":", "").lower()
STATE_BONDS = "/var/lib/private/wristlink/bonds"  # DynamicUser's StateDirectory


class PartFailed(Exception):
    pass


def check(condition, what: str) -> None:
    if not condition:
        raise PartFailed(what)


async def run(*argv: str, timeout: float = 60, ok: bool = True) -> str:
    """A command's stdout (stderr folded in), without blocking the loop:
    Bumble's controller must keep answering the kernel meanwhile."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        stdin=asyncio.subprocess.DEVNULL)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise PartFailed(f"{' '.join(argv)} did not finish in {timeout:g} s") from None
    text = out.decode(errors="replace")
    log.info("$ %s -> %d\n%s", " ".join(argv), proc.returncode, text.rstrip()[-3000:])
    if ok and proc.returncode != 0:
        raise PartFailed(f"{' '.join(argv)} exited {proc.returncode}: {text.strip()[-400:]}")
    return text


async def show(unit: str, *props: str) -> dict[str, str]:
    text = await run("systemctl", "show", unit, "--no-pager", *(f"--property={p}" for p in props))
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        out[key] = value
    return out


async def wait_state(unit: str, timeout: float, what: str, predicate) -> dict[str, str]:
    end = time.monotonic() + timeout
    while True:
        s = await show(unit, "ActiveState", "SubState", "MainPID", "NRestarts", "Result",
                       "InvocationID", "ExecMainStatus")
        if predicate(s):
            return s
        if time.monotonic() > end:
            raise PartFailed(f"{unit}: {what} not reached within {timeout:g} s (last: {s})")
        await asyncio.sleep(0.3)


# ----------------------------------------------------------------------------
class Journal:
    """`journalctl -f -o json` of this boot, read as it comes. `unit` lines
    are the unit's own (firmware and systemd about it)."""

    def __init__(self):
        self.entries: list[dict] = []
        self.proc = None
        self.task = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            "journalctl", "-b", "-f", "-o", "json", "--no-pager", "--lines=all", "-u", UNIT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                return
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            message = entry.get("MESSAGE")
            if isinstance(message, list):  # journald's binary-safe form
                entry["MESSAGE"] = bytes(message).decode(errors="replace")
            self.entries.append(entry)

    def mark(self) -> int:
        return len(self.entries)

    @staticmethod
    def firmware(entry: dict) -> bool:
        return entry.get("SYSLOG_IDENTIFIER") == "wristlink" or entry.get("_COMM") == "wristlink"

    def since(self, mark: int, text: str, firmware: bool = True) -> list[dict]:
        return [e for e in self.entries[mark:]
                if text in str(e.get("MESSAGE", "")) and (not firmware or self.firmware(e))]

    async def wait(self, timeout: float, mark: int, text: str, firmware: bool = True) -> dict:
        end = time.monotonic() + timeout
        while True:
            found = self.since(mark, text, firmware)
            if found:
                return found[0]
            if time.monotonic() > end:
                who = "the firmware" if firmware else "the unit"
                raise PartFailed(f"no journal line from {who} containing {text!r} within {timeout:g} s")
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        if self.proc and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


class Gpio:
    def __init__(self, sim: str):
        self.sim = sim

    def _path(self, name: str, leaf: str) -> str:
        return f"{self.sim}/sim_gpio{LINES.index(name)}/{leaf}"

    def value(self, name: str) -> int:
        with open(self._path(name, "value")) as f:
            return int(f.read().strip())

    def values(self) -> dict[str, int]:
        return {n: self.value(n) for n in OUTPUTS}

    async def press(self, name: str, ms: int = 150) -> None:
        with open(self._path(name, "pull"), "w") as f:
            f.write("pull-up")
        await asyncio.sleep(ms / 1000)
        with open(self._path(name, "pull"), "w") as f:
            f.write("pull-down")

    async def wait_value(self, name: str, value: int, timeout: float) -> None:
        end = time.monotonic() + timeout
        while self.value(name) != value:
            if time.monotonic() > end:
                raise PartFailed(f"gpio-sim {name} never read {value} within {timeout:g} s")
            await asyncio.sleep(0.01)

    async def transitions(self, name: str, seconds: float) -> int:
        values, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            values.append(self.value(name))
            await asyncio.sleep(0.02)
        return sum(1 for a, b in zip(values, values[1:]) if a != b)


# ----------------------------------------------------------------------------
class Case:
    def __init__(self, args):
        self.args = args
        self.out = args.out
        with open("/run/wl-vm/sim") as f:
            self.gpio = Gpio(f.read().strip())
        self.journal = Journal()
        self.summary = open(os.path.join(self.out, "summary.txt"), "a", buffering=1)
        self.step = ""
        self.transport = None

    def note(self, text: str) -> None:
        self.step = text
        log.info("  . %s", text)

    # -- the phone and the controller --------------------------------------------
    async def start_phone(self) -> None:
        P.patch_bumble()
        self.link = bumble_link.LocalLink()
        results = os.path.join(self.out, "phone1")
        self.rec = P.Recorder(results) if self.args.phase == 1 else P.Recorder(results + "-boot2")
        scenario = {"existing": [], "steps": [],
                    "apps": {"com.apple.mobilephone": "Phone", "com.apple.mobilemail": "Mail"}}
        self.device, self.phone = await P.build_phone(
            self.link, self.rec, scenario, P.PHONE_ADDR,
            keystore=os.path.join(results, "keystore.json"), name="iPhone 1")

    async def open_vhci(self) -> None:
        self.transport = await open_transport("vhci")
        self.kernel_ctrl = Controller("wl-ctrl", host_source=self.transport.source,
                                      host_sink=self.transport.sink, link=self.link,
                                      public_address=P.KERNEL_CTRL_ADDR)

    async def close_vhci(self) -> None:
        await self.transport.close()
        self.link.remove_controller(self.kernel_ctrl)
        self.transport = None

    async def phone_step(self, **step) -> None:
        try:
            await self.phone.run_step(step)
        except asyncio.TimeoutError:
            raise PartFailed(f"phone: step {step['do']} timed out") from None

    async def phone_wait(self, timeout: float, mark: int, name: str, **fields) -> dict:
        try:
            return await self.rec.wait_for(
                lambda r: r["event"] == name and all(r.get(k) == v for k, v in fields.items()),
                timeout, since=mark)
        except asyncio.TimeoutError:
            raise PartFailed(f"phone: no {name} {fields or ''} within {timeout:g} s") from None

    async def reconnect_bonded(self, journal_mark: int) -> None:
        """The bonded phone connects, waits for the wearable's Security
        Request and encrypts with its bond; no pairing, no consent."""
        if self.phone.connection is not None:
            await self.phone_step(do="disconnect", timeout=10)
        pm = self.rec.mark()
        self.note("the phone connects (bonded)")
        await self.phone_step(do="connect", timeout=40, encrypt_if_bonded=False)
        await self.journal.wait(40, journal_mark, "session subscribed")
        await self.phone_step(do="wait_subscribed", timeout=20)
        check(self.rec.since(pm, "security_request", bonded=True), "the phone got no Security Request")
        check(not self.rec.since(pm, "paired"), "the phone paired again")
        check(not self.journal.since(journal_mark, "consent-requested"), "the wearable asked for consent again")

    # -- bookkeeping -----------------------------------------------------------------
    async def part(self, number: int, name: str, body, timeout: float) -> bool:
        log.info("== part %d %s (timeout %g s)", number, name, timeout)
        self.step = "start"
        reason, seconds = await P.run_bounded(body, timeout, PartFailed, lambda: self.step)
        line = f"{'PASS' if reason is None else 'FAIL'} {number} {name} {seconds:.1f}"
        if reason is not None:
            line += f" {reason} (at: {self.step})"
        self.summary.write(line + "\n")
        log.info("%s", line)
        return reason is None

    def skip(self, number: int, name: str, why: str) -> None:
        line = f"FAIL {number} {name} 0.0 not run: {why}"
        self.summary.write(line + "\n")
        log.info("%s", line)

    def info(self, text: str) -> None:
        self.summary.write(f"INFO {text}\n")
        log.info("INFO %s", text)

    # -- 1 install -------------------------------------------------------------------
    async def part_install(self) -> None:
        debs = sorted(glob.glob(os.path.join(self.args.debs, "*.deb")))
        check(debs, f"no .deb in {self.args.debs}")
        self.note("hci0 appears before the package: bluetoothd and bthelper@hci0 come up as on a Pi")
        await self.open_vhci()
        before = await wait_state("bluetooth.service", 30, "bluetoothd running",
                                  lambda s: s["ActiveState"] == "active")
        helper = await show("bthelper@hci0.service", "ActiveState")
        self.info(f"before the package: bluetooth.service {before['ActiveState']}, "
                  f"bthelper@hci0 {helper['ActiveState']}")
        self.note(f"apt install {' '.join(os.path.basename(d) for d in debs)}")
        t = time.monotonic()
        await run(
            "sh", "-c", f"cd {self.args.debs} && DEBIAN_FRONTEND=noninteractive apt-get install -y "
            "--no-install-recommends " + " ".join(f"./{os.path.basename(d)}" for d in debs), timeout=240)
        self.info(f"apt install took {time.monotonic() - t:.1f} s")
        bt = await show("bluetooth.service", "LoadState", "ActiveState", "UnitFileState")
        check(bt["LoadState"] == "masked", f"bluetooth.service not masked: {bt}")
        check(bt["ActiveState"] in ("inactive", "failed"), f"bluetoothd still runs: {bt}")
        helper = await show("bthelper@hci0.service", "DropInPaths", "Requires", "ActiveState")
        check(any("wristlink" in p or "bthelper" in p for p in helper["DropInPaths"].split()),
              f"no bthelper@.service drop-in: {helper}")
        self.info(f"bthelper@hci0 after the package: Requires={helper['Requires']!r} "
                  f"DropInPaths={helper['DropInPaths']!r} ActiveState={helper['ActiveState']}")
        self.bthelper_requires_bluetooth = "bluetooth.service" in helper["Requires"].split()
        fw = await show(UNIT, "UnitFileState", "LoadState", "FragmentPath")
        check(fw["LoadState"] == "loaded", f"{UNIT} not loaded: {fw}")
        check(fw["UnitFileState"] == "enabled", f"{UNIT} not enabled: {fw}")
        self.unit_path = fw["FragmentPath"]
        # The VM's lines are board/vm's: the board file is a conffile, and the
        # wearer (here the test) edits it for the wiring.
        with open(os.path.join(self.args.repo, "board/vm/board.conf")) as src:
            board = src.read()
        with open("/etc/wristlink/board.conf", "w") as dst:
            dst.write(board)

    # -- 2 start, Type=notify, hardening, pairing, a call ---------------------------------
    async def part_start(self) -> None:
        s, j = self, self.journal
        state = await show(UNIT, "ActiveState")
        if state["ActiveState"] != "inactive":
            s.note("the package started the unit: stop it (it had the package's board file)")
            await run("systemctl", "stop", UNIT, timeout=60)
        s.note("no controller: hci0 goes away")
        await s.close_vhci()
        jm = j.mark()
        s.note("systemctl start --no-block: without a controller nothing advertises; the firmware says it "
               "waits for the controller and sends READY=1 (started, not timed out by systemd)")
        await run("systemctl", "start", "--no-block", UNIT)
        await j.wait(30, jm, "waiting for the Bluetooth controller", firmware=True)
        st = await wait_state(UNIT, 20, "active (running) while waiting",
                              lambda x: x["ActiveState"] == "active" and x["SubState"] == "running")
        waiting_pid = st["MainPID"]
        check(not j.since(jm, "session advertising"), "advertising without a controller?")
        s.note("hci0 comes back: the firmware advertises, the same process, systemd still says active")
        opened = time.time()
        await s.open_vhci()
        adv = await j.wait(40, jm, "session advertising")
        # Index Added sets it up at once; a missed or early one costs the
        # controller probe's interval (2 s doubling to 30 s): say which.
        gone = len(j.since(jm, "controller: gone"))
        s.info(f"late controller: advertising {int(adv['__REALTIME_TIMESTAMP']) / 1e6 - opened:.2f} s after "
               f"/dev/vhci was opened; 'controller: gone' {gone} time(s) since the start")
        st = await wait_state(UNIT, 20, "active (running)",
                              lambda x: x["ActiveState"] == "active" and x["SubState"] == "running")
        # Not compared: the journal times of systemd's "Started" and the
        # firmware's line (its stdout stream may reach journald after
        # systemd has acted on READY=1, sent just before the line).
        await j.wait(10, jm, "Started ", firmware=False)
        check(adv, "no 'session advertising'")
        check(st["MainPID"] == waiting_pid, f"the process that waited is the one advertising: {waiting_pid} then {st['MainPID']}")
        s.main_pid = int(st["MainPID"])
        await s.check_hardening(s.main_pid)

        s.note("pairing with consent")
        pm, jm = s.rec.mark(), j.mark()
        await s.phone_step(do="connect", timeout=40)
        await j.wait(40, jm, "pairing consent-requested")
        check(not s.rec.since(pm, "paired"), "paired before the wearer pressed")
        s.note("press accept on gpio-sim")
        await s.gpio.press("accept", 150)
        await s.phone_wait(20, pm, "paired")
        await j.wait(20, jm, "session subscribed")
        await s.phone_step(do="wait_subscribed", timeout=20)
        check(os.path.exists(STATE_BONDS), f"no bond file {STATE_BONDS}")
        with open(STATE_BONDS) as f:
            check(PHONE_HEX in f.read().lower(), "the bond file does not name the phone")
        st_bonds = os.stat(STATE_BONDS)
        check(st_bonds.st_mode & 0o777 == 0o600, f"bond file mode {st_bonds.st_mode & 0o777:o}")

        s.note("an incoming call rings on gpio-sim")
        pm = s.rec.mark()
        await s.phone_step(do="notify", uid=1, category="incoming_call", flags=["positive", "negative"],
                     app="com.apple.mobilephone", title=SECRET_TITLE, message=SECRET_MESSAGE,
                     positive_label="Answer", negative_label="Decline", date="20260101T120500")
        await s.gpio.wait_value("led-call", 1, 10)
        for line in ("led-call", "vibration"):
            n = await s.gpio.transitions(line, 2.5)
            check(n >= 3, f"{line} toggled {n} times in 2.5 s of ringing")
        s.note("answered with a press on accept")
        await s.gpio.press("accept", 150)
        await s.phone_wait(10, pm, "cp_write", hex="020100000000")
        await s.phone_wait(5, pm, "action", uid=1, action="positive")
        await s.gpio.wait_value("led-call", 0, 5)
        await s.gpio.wait_value("vibration", 0, 5)

        s.note("wristlink doctor beside the running service: every check passes (exit 0)")
        lines = (await run("/usr/bin/wristlink", "doctor", timeout=60)).splitlines()
        for want in ("ok   bluetoothd: not running", "ok   bluetooth.service: masked, ",
                     "ok   bthelper@ drop-in: /usr/lib/systemd/system/bthelper@.service.d/wristlink.conf",
                     "ok   controller hci0: powered, ", "ok   wristlink.service: active (running), last exit status ",
                     "ok   output led-notify: led-notify (", "ok   button accept: accept (",
                     "ok   state directory /var/lib/wristlink: mode 0700, -> private/wristlink (the service's DynamicUser=",
                     "ok   bonds /var/lib/wristlink/bonds: 1 bonded phone, "):
            check(any(line.startswith(want) for line in lines), f"doctor printed no line starting {want!r}: {lines}")
        held = [line for line in lines if line.startswith(("ok   output ", "ok   button "))]
        check(len(held) == 5 and all(", held by the running service" in line for line in held),
              f"not every board line held by the running service: {held}")

    async def check_hardening(self, pid: int) -> None:
        """What the unit file asks for is what systemd applied, and the main
        process runs with it (/proc)."""
        wanted = {
            "Type": "notify", "NotifyAccess": "main", "DynamicUser": "yes", "NoNewPrivileges": "yes",
            "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
            "PrivateMounts": "yes", "ProtectProc": "invisible", "ProcSubset": "pid",
            "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectKernelLogs": "yes",
            "ProtectControlGroups": "yes", "ProtectClock": "yes", "ProtectHostname": "yes",
            "RestrictRealtime": "yes", "RestrictSUIDSGID": "yes", "RemoveIPC": "yes",
            "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "DevicePolicy": "closed",
            "CapabilityBoundingSet": "cap_net_admin", "AmbientCapabilities": "cap_net_admin",
            "RestrictNamespaces": "yes", "SystemCallArchitectures": "native",
            "SystemCallErrorNumber": ("EPERM", "1"), "UMask": "0077",  # systemd 257 prints 1
        }
        got = await show(UNIT, *wanted, "RestrictAddressFamilies", "SystemCallFilter",
                         "DeviceAllow", "IPAddressDeny", "SupplementaryGroups", "WatchdogUSec",
                         "StateDirectory")
        wrong = {k: got.get(k) for k, v in wanted.items()
                 if got.get(k) not in (v if isinstance(v, tuple) else (v,))}
        check(not wrong, f"systemctl show differs from the unit: {wrong}")
        families = set(got["RestrictAddressFamilies"].split())
        check(families == {"AF_UNIX", "AF_BLUETOOTH"}, f"RestrictAddressFamilies={got['RestrictAddressFamilies']}")
        check(len(got["SystemCallFilter"].split()) > 50, "SystemCallFilter is empty")
        check("gpiochip" in got["DeviceAllow"], f"DeviceAllow={got['DeviceAllow']}")
        check(got["IPAddressDeny"] != "", f"IPAddressDeny={got['IPAddressDeny']!r}")
        check(got["WatchdogUSec"] in ("30s", "30000000"), f"WatchdogUSec={got['WatchdogUSec']}")
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        uid = int(status["Uid"].split()[0])
        check(uid != 0, "the firmware runs as root")
        check(int(status["CapEff"], 16) == 1 << 12, f"CapEff={status['CapEff']} (wanted CAP_NET_ADMIN only)")
        check(int(status["CapBnd"], 16) == 1 << 12, f"CapBnd={status['CapBnd']}")
        check(status.get("NoNewPrivs", "").strip() == "1", "NoNewPrivs is off")
        check(status.get("Seccomp", "").strip() == "2", f"Seccomp={status.get('Seccomp')} (wanted 2, filter)")
        gpio_gid = int((await run("getent", "group", "gpio")).split(":")[2])
        check(str(gpio_gid) in status["Groups"].split(), f"not in the gpio group: Groups={status['Groups']}")
        self.info(f"hardening: uid {uid}, CapEff {status['CapEff'].strip()}, Seccomp 2, "
                  f"groups {status['Groups'].strip()}, {len(got['SystemCallFilter'].split())} syscalls allowed")

    # -- 3 watchdog, 4 kill -9 ---------------------------------------------------------------
    async def outputs_lit(self) -> None:
        """An unread email: the unread indicator (led-notify) stays on."""
        await self.phone_step(do="notify", uid=len(self.rec.history) + 100, category="email",
                        app="com.apple.mobilemail", title=SECRET_TITLE, message=SECRET_MESSAGE,
                        date="20260101T122000")
        await self.gpio.wait_value("led-notify", 1, 10)
        # The email's own alert flickers led-notify (on 60 off 140, 5 times:
        # 1 s); only after it is the unread indicator held on.
        await asyncio.sleep(1.5)
        await self.gpio.wait_value("led-notify", 1, 10)

    async def restart_after(self, signal_name: str, why: str, timeout: float) -> dict:
        """Sends `signal_name` to the main process; waits for systemd to
        run ExecStopPost and start a new main process. Samples the outputs
        meanwhile: held while the old process lives, all 0 from its end to
        the new process."""
        before = await show(UNIT, "MainPID", "NRestarts")
        pid, restarts = int(before["MainPID"]), int(before["NRestarts"])
        # systemd logs a control process that succeeded (ExecStopPost) at
        # debug level only, and `systemctl show` forgets it at the restart.
        await run("systemd-analyze", "log-level", "debug")
        jm = self.journal.mark()
        self.note(f"kill -{signal_name} {pid} ({why})")
        await run("kill", f"-{signal_name}", str(pid))
        t0 = time.monotonic()
        # The last WATCHDOG=1 systemd had from the old process (a stopped
        # process sends no more): CLOCK_MONOTONIC in µs, time.monotonic()'s clock.
        ping_us = int((await show(UNIT, "WatchdogTimestampMonotonic")).get("WatchdogTimestampMonotonic") or 0)
        samples = []  # (seconds, main process alive, outputs)
        end = t0 + timeout
        while True:
            alive = os.path.exists(f"/proc/{pid}")
            samples.append((time.monotonic() - t0, alive, self.gpio.values()))
            st = await show(UNIT, "ActiveState", "SubState", "MainPID", "NRestarts")
            if int(st["NRestarts"]) > restarts and st["ActiveState"] == "active" and int(st["MainPID"]) not in (0, pid):
                break
            if time.monotonic() > end:
                raise PartFailed(f"not restarted within {timeout:g} s (state {st})")
        seconds = time.monotonic() - t0
        gone = [v for (t, alive, v) in samples if not alive]
        check(all(x == 0 for v in gone for x in v.values()),
              f"an output read 1 between the old process's end and the new one: {gone}")
        await run("systemd-analyze", "log-level", "info")
        stop_post = [e for e in self.journal.since(jm, "Control process exited", firmware=False)]
        check(stop_post, "no ExecStopPost (control process) in the journal")
        check(all("status=0/SUCCESS" in e["MESSAGE"] for e in stop_post),
              f"ExecStopPost failed: {[e['MESSAGE'] for e in stop_post]}")
        self.main_pid = int(st["MainPID"])
        self.info(f"{why}: new main process {self.main_pid} {seconds:.1f} s after kill -{signal_name}; "
                  f"{len(samples)} samples, {len(gone)} with the old process gone, all outputs 0")
        since_ping = t0 + seconds - ping_us / 1e6 if ping_us else None
        return {"seconds": seconds, "mark": jm, "samples": samples, "since_ping": since_ping}

    async def part_watchdog(self) -> None:
        s = self
        await s.outputs_lit()
        r = await s.restart_after("STOP", "watchdog", 30 + 30)
        check(s.journal.since(r["mark"], "Watchdog timeout", firmware=False),
              "no 'Watchdog timeout' from systemd in the journal")
        held = [v for (t, alive, v) in r["samples"] if alive]
        check(held and held[0]["led-notify"] == 1, "led-notify was not held on while the process was stopped")
        # The firmware pings every WatchdogSec/2 (15 s), so the stop comes up
        # to 15 s after the last ping: what must hold is WatchdogSec (30 s)
        # from that ping to the restart (1 s for the polling).
        since_ping = r["since_ping"]
        check(since_ping is not None, "systemd has no WatchdogTimestampMonotonic for the old process")
        check(since_ping >= 29, f"restarted {since_ping:.1f} s after the last watchdog ping "
              f"({r['seconds']:.1f} s after the stop): before WatchdogSec?")
        s.info(f"watchdog: restarted {since_ping:.1f} s after the last ping, {r['seconds']:.1f} s after the stop")
        s.note("the phone reconnects")
        await s.reconnect_bonded(r["mark"])

    async def part_kill9(self) -> None:
        s = self
        with open(STATE_BONDS, "rb") as f:
            bonds = f.read()
        await s.outputs_lit()
        r = await s.restart_after("9", "kill -9", 30)
        check(s.journal.since(r["mark"], "status=9/KILL", firmware=False)
              or s.journal.since(r["mark"], "signal=KILL", firmware=False), "systemd did not see the SIGKILL")
        with open(STATE_BONDS, "rb") as f:
            check(f.read() == bonds, "the bond file changed")
        await s.journal.wait(20, r["mark"], "loaded 1 bonded phone(s)")
        await s.reconnect_bonded(r["mark"])

    # -- 5 the controller goes away and comes back -------------------------------------------
    async def part_controller(self) -> None:
        s, j = self, self.journal
        before = await show(UNIT, "MainPID", "NRestarts")
        if s.phone.connection is not None:
            await s.phone_step(do="disconnect", timeout=10)
        jm = j.mark()
        s.note("close /dev/vhci: hci0 goes away")
        await s.close_vhci()
        await j.wait(15, jm, "error controller: gone")
        await asyncio.sleep(2)
        st = await show(UNIT, "ActiveState", "MainPID", "NRestarts")
        check(st["ActiveState"] == "active", f"not active without the controller: {st}")
        s.note("open /dev/vhci: hci0 comes back (udev starts bthelper@hci0 again)")
        await s.open_vhci()
        await j.wait(30, jm, "session advertising")
        await s.reconnect_bonded(jm)
        st = await show(UNIT, "ActiveState", "MainPID", "NRestarts")
        check(st["ActiveState"] == "active", f"{UNIT} {st}")
        check(st["MainPID"] == before["MainPID"] and st["NRestarts"] == before["NRestarts"],
              f"restarted instead of waiting for the controller: {before} -> {st}")
        bt = await show("bluetooth.service", "ActiveState")
        helper = await show("bthelper@hci0.service", "ActiveState", "Result")
        check(bt["ActiveState"] != "active", "bluetoothd runs")
        self.info(f"after hci0 came back: bthelper@hci0 {helper['ActiveState']} ({helper['Result']}), "
                  f"bluetooth.service {bt['ActiveState']}")

    # -- 6 the second boot, 7 the journal ------------------------------------------------------
    async def part_reboot(self) -> None:
        s, j = self, self.journal
        s.note("the unit was started at boot (by multi-user.target)")
        st = await wait_state(UNIT, 60, "started at boot",
                              lambda x: x["ActiveState"] in ("activating", "active"))
        self.info(f"boot 2: before the controller {UNIT} is {st['ActiveState']}/{st['SubState']}")
        await s.open_vhci()
        await wait_state(UNIT, 60, "active (running)",
                         lambda x: x["ActiveState"] == "active" and x["SubState"] == "running")
        await j.wait(20, 0, "loaded 1 bonded phone(s)")
        with open(STATE_BONDS) as f:
            check(PHONE_HEX in f.read().lower(), "the bond did not survive the reboot")
        await s.reconnect_bonded(0)

    async def part_journal(self) -> None:
        s = self
        s.note("journalctl -p warning -u wristlink (both boots)")
        warn = [json.loads(line) for line in
                (await run("journalctl", "-o", "json", "--no-pager", "-p", "warning", "-u", UNIT)).splitlines()
                if line.startswith("{")]
        allj = [json.loads(line) for line in
                (await run("journalctl", "-o", "json", "--no-pager", "-u", UNIT)).splitlines()
                if line.startswith("{")]
        fw_all = [e for e in allj if Journal.firmware(e)]
        fw_warn = [e for e in warn if Journal.firmware(e)]
        check(fw_warn, "no warning from the firmware in the journal (the controller went away in part 5)")
        check(all(int(e["PRIORITY"]) <= 4 for e in warn), "journalctl -p warning printed a lower priority")
        msgs = {str(e.get("MESSAGE")) for e in fw_warn}
        check(any("error controller: gone" in m for m in msgs), f"the controller warning is missing: {msgs}")
        by_text = {}
        for e in fw_all:
            by_text.setdefault(str(e.get("MESSAGE")).split(" (")[0], set()).add(int(e["PRIORITY"]))
        for text, prio in (("session subscribed", 6), ("pairing consent-requested", 5),
                           ("error controller: gone: waiting for the Bluetooth controller", 4)):
            check(by_text.get(text) == {prio}, f"{text!r}: priorities {by_text.get(text)}, wanted {prio}")
        check(not any(str(e.get("MESSAGE")).startswith("<") for e in fw_all),
              "a raw '<N>' prefix reached the journal")
        boots = {e.get("_BOOT_ID") for e in fw_all}
        check(len(boots) == 2, f"firmware lines from {len(boots)} boot(s), wanted 2 (persistent journal)")
        everything = await run("journalctl", "-o", "export", "--no-pager", timeout=120)
        for secret in (SECRET_TITLE, SECRET_MESSAGE):
            check(secret not in everything, f"the notification text {secret!r} is in the journal")
        self.info(f"journal: {len(fw_all)} firmware lines over 2 boots, {len(fw_warn)} at warning or above; "
                  f"priorities seen {sorted({int(e['PRIORITY']) for e in fw_all})}")

    # -- the boot's parts ------------------------------------------------------------------------
    async def main(self) -> bool:
        t0 = time.monotonic()
        await self.journal.start()
        await self.start_phone()
        self.info(f"boot {self.args.phase}: phone ready {time.monotonic() - t0:.1f} s after Python started")
        if self.args.phase == 1:
            parts = [(1, "install", self.part_install, 300), (2, "start-notify", self.part_start, 150),
                     (3, "watchdog", self.part_watchdog, 120), (4, "kill-9", self.part_kill9, 90),
                     (5, "controller-gone", self.part_controller, 90)]
        else:
            parts = [(6, "reboot", self.part_reboot, 120), (7, "journal", self.part_journal, 60)]
        ok_all, failed = True, None
        for number, name, body, timeout in parts:
            if failed is not None and number != 7:
                self.skip(number, name, f"part {failed} failed")
                ok_all = False
                continue
            ok = await self.part(number, name, body, timeout)
            if not ok:
                ok_all, failed = False, number
        await self.journal.stop()
        if self.transport is not None:
            await self.transport.close()
        return ok_all


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--phase", type=int, choices=(1, 2), required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--debs", required=True, help="folder with the package(s) to install")
    args = p.parse_args()
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s.%(msecs)03d %(name)s %(message)s", datefmt="%H:%M:%S",
        handlers=[logging.FileHandler(os.path.join(args.out, f"case-{args.phase}.log")),
                  logging.StreamHandler(sys.stdout)])
    logging.getLogger("bumble").setLevel(logging.WARNING)
    logging.getLogger("phone").setLevel(logging.WARNING)
    return 0 if asyncio.run(Case(args).main()) else 1


if __name__ == "__main__":
    sys.exit(main())
