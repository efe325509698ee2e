#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Zero 2 W's Bluetooth chip on the end of QEMU's PL011, for the image's boot test.

Design. On a Zero 2 W the radio's Bluetooth half (CYW43438) sits on the
PL011 UART; the device tree's `brcm,bcm43438-bt` node makes the kernel
attach it by itself (serdev, `hci_uart`'s Broadcom protocol) and `btbcm`
programs it: HCI Reset, Read Local Version, the vendor commands (Read
Verbose Config 0xfc79, Download Minidriver 0xfc2e, the patch file's Write
RAM 0xfc4c records and Launch RAM 0xfc4e, UART baud 0xfc18 ...), then the
standard set-up. QEMU's `-M raspi3b` has the UART but no chip. This program
is the chip: QEMU's first `-serial` (the PL011) is a Unix socket it
listens on; it reads H4 packets from it (bounded: a command's length is at
most 255, ACL data at most 1,024 bytes, an unknown packet type is skipped a
byte at a time and counted), answers the Broadcom vendor commands (OGF
0x3f) itself as a CYW43438 does (Read Local Version reports Broadcom,
LMP subversion 0x2209, the number btbcm maps to BCM43430A1), and hands
every other HCI packet to a Bumble controller (`wl-ctrl`). A Bumble phone
on the same LocalLink plays the bonded iPhone (Tests/VM/phone.py: ANCS,
AMS, CTS served behind encryption), with the key of the bond the boot test
places on the data partition (Tests/Image/bonds): it scans for the
wearable's advertisement, connects, encrypts with the stored key, waits
for the ANCS subscription and then rings a call and keeps it ringing.

Everything is bounded: the wait for QEMU (--connect-timeout), the phone's
wait for the advertisement (--timeout), the whole run (--limit); the relay
ends when QEMU closes the socket, and phone-summary.json says whether the
scenario reached its last step (holding the call).

Results in --results DIR: relay.log (every vendor command, the firmware's
size, the time stamps), timings.json (seconds from QEMU's connection, which
is the kernel's start within a fraction of a second since QEMU loads the
kernel itself: `qemu_connected`, `firmware_launched`, `advertising` (the
first LE Set (Extended) Advertising Enable 1 from the kernel), `connected`,
`encrypted`, `subscribed`, `call_sent`), the phone's events.jsonl and
phone-summary.json.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "VM"))
import phone as P  # noqa: E402  (Tests/VM/phone.py)
from bumble import hci, link as bumble_link  # noqa: E402
from bumble.controller import Controller  # noqa: E402

log = logging.getLogger("relay")

MAX_CMD = 3 + 255
MAX_ACL = 1024
# What btbcm's set-up reads from a CYW43438 (drivers/bluetooth/btbcm.c):
# the return parameters after the status byte, of the lengths it checks.
BCM_SUBVER_43430A1 = 0x2209
BROADCOM = 15  # company identifier
VENDOR_REPLIES = {
    0xFC79: bytes([43, 0, 0, 0, 0x82, 0x01]),    # Read Verbose Config: chip id 43, build 0x0182
    0xFC6E: bytes(8),                            # Read Controller Features
    0xFC5A: bytes(4),                            # Read USB Product (not asked over UART)
    0xFC1D: bytes(5),                            # Read PCM Int Params
    0xFC2E: b"",                                 # Download Minidriver
    0xFC4C: b"",                                 # Write RAM (a patch record)
    0xFC4E: b"",                                 # Launch RAM
    0xFC18: b"",                                 # Update UART Baud Rate
    0xFC45: b"",                                 # Write UART Clock Setting
    0xFC27: b"",                                 # Set Sleep Mode
    0xFC01: b"",                                 # Write BD ADDR
    0xFC1C: b"",                                 # Write PCM Int Params
}
ADV_ENABLE = 0x200A
EXT_ADV_ENABLE = 0x2039


class Relay:
    def __init__(self, args, results: str):
        self.args = args
        self.t0: float | None = None
        self.timings: dict[str, float] = {}
        self.results = results
        self.writer: asyncio.StreamWriter | None = None
        self.vendor_counts: dict[str, int] = {}
        self.patch_bytes = 0
        self.skipped = 0
        self.closed = asyncio.Event()
        self.link = bumble_link.LocalLink()
        self.ctrl = Controller("wl-ctrl", host_sink=self, link=self.link,
                               public_address=args.kernel_addr)
        self.ctrl.manufacturer_company_identifier = BROADCOM
        self.ctrl.lmp_subversion = BCM_SUBVER_43430A1
        self.ctrl.hci_revision = 0  # ROM; the patch's build after Launch RAM

    def mark(self, name: str) -> None:
        if name not in self.timings and self.t0 is not None:
            self.timings[name] = round(time.monotonic() - self.t0, 2)
            log.info("TIMING %s %.2f s", name, self.timings[name])
            self.save()

    def save(self) -> None:
        with open(os.path.join(self.results, "timings.json"), "w") as f:
            json.dump({"timings": self.timings, "vendor_commands": self.vendor_counts,
                       "patch_bytes": self.patch_bytes, "skipped_bytes": self.skipped}, f, indent=1)

    # the controller's packets to the kernel (Bumble's host sink)
    def on_packet(self, packet: bytes) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(packet)

    def command_complete(self, opcode: int, status: int, params: bytes) -> None:
        body = bytes([1]) + struct.pack("<H", opcode) + bytes([status]) + params
        self.on_packet(bytes([hci.HCI_EVENT_PACKET, hci.HCI_COMMAND_COMPLETE_EVENT, len(body)]) + body)

    def on_command(self, packet: bytes) -> None:
        opcode = struct.unpack_from("<H", packet, 1)[0]
        params = packet[4:]
        if opcode >> 10 == 0x3F:
            name = f"0x{opcode:04x}"
            self.vendor_counts[name] = self.vendor_counts.get(name, 0) + 1
            if opcode == 0xFC4C:
                self.patch_bytes += max(0, len(params) - 4)
            elif opcode == 0xFC2E:
                self.mark("firmware_download")
            elif opcode == 0xFC4E:
                self.ctrl.hci_revision = 0x0182
                self.mark("firmware_launched")
            elif opcode == 0xFC01 and len(params) == 6:
                self.ctrl._public_address = hci.Address(params, hci.Address.PUBLIC_DEVICE_ADDRESS)
            if opcode != 0xFC4C or self.vendor_counts[name] == 1:
                log.info("vendor command %s (%d bytes)", name, len(params))
            reply = VENDOR_REPLIES.get(opcode)
            if reply is None:
                log.warning("vendor command %s unknown here: Unknown HCI Command", name)
                self.command_complete(opcode, 0x01, b"")
            else:
                self.command_complete(opcode, 0x00, reply)
            return
        if opcode in (ADV_ENABLE, EXT_ADV_ENABLE) and params[:1] == b"\x01":
            self.mark("advertising")
        self.ctrl.on_packet(packet)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.writer is not None:
            writer.close()
            return
        self.writer = writer
        self.t0 = time.monotonic()
        self.mark("qemu_connected")
        try:
            while True:
                kind = (await reader.readexactly(1))[0]
                if kind == hci.HCI_COMMAND_PACKET:
                    head = await reader.readexactly(3)
                    packet = bytes([kind]) + head + await reader.readexactly(head[2])
                    self.on_command(packet)
                elif kind == hci.HCI_ACL_DATA_PACKET:
                    head = await reader.readexactly(4)
                    length = struct.unpack_from("<H", head, 2)[0]
                    if length > MAX_ACL:
                        log.warning("ACL packet of %d bytes (more than %d): dropped", length, MAX_ACL)
                        await reader.readexactly(length)
                        continue
                    self.ctrl.on_packet(bytes([kind]) + head + await reader.readexactly(length))
                else:
                    self.skipped += 1
                    if self.skipped <= 20:
                        log.warning("byte 0x%02x where a packet type was expected: skipped", kind)
        except (asyncio.IncompleteReadError, ConnectionError):
            log.info("QEMU closed the UART")
        finally:
            self.save()
            self.closed.set()


def write_keystore(path: str, kernel_addr: str, ltk_hex: str) -> None:
    """The phone's half of the bond in Tests/Image/bonds: the same key, for the wearable's address."""
    keys = {"ltk": {"value": ltk_hex, "authenticated": True}, "address_type": 0}
    with open(path, "w") as f:
        json.dump({"__DEFAULT__": {f"{kernel_addr}/P": keys, kernel_addr: keys}}, f)


def bond_from_fixture(path: str) -> tuple[str, str]:
    """(phone address, LTK hex) from the first `ltk` line of a wristlink-bonds file."""
    with open(path) as f:
        for line in f.read(65536).splitlines()[:100]:
            fields = line.split()
            if len(fields) == 9 and fields[0] == "ltk":
                a = fields[1]
                return ":".join(a[i:i + 2] for i in range(0, 12, 2)).upper(), fields[8]
    raise SystemExit(f"bt-uart-relay: no ltk line in {path}")


async def main_async(args) -> int:
    os.makedirs(args.results, exist_ok=True)
    P.patch_bumble()
    relay = Relay(args, args.results)
    phone_addr, ltk = bond_from_fixture(args.bonds)
    keystore = os.path.join(args.results, "keystore.json")
    write_keystore(keystore, args.kernel_addr, ltk)
    scenario = {
        "existing": [],
        "apps": {"com.apple.mobilephone": "Phone"},
        "steps": [
            {"do": "connect", "timeout": args.timeout},
            {"do": "wait_subscribed", "timeout": 120},
            {"do": "notify", "uid": 1, "category": "incoming_call",
             "flags": ["positive", "negative"], "app": "com.apple.mobilephone",
             "title": "Bob", "message": "Incoming call", "positive_label": "Answer",
             "negative_label": "Decline", "date": "20261204T010000"},
            {"do": "sleep", "seconds": args.ring_seconds},
        ],
    }
    rec = P.Recorder(args.results)
    original_event = rec.event

    def event(name: str, **fields) -> None:
        original_event(name, **fields)
        if name == "connected":
            relay.mark("connected")
        elif name == "encryption_change" and fields.get("encrypted"):
            relay.mark("encrypted")
        elif name == "session_start":
            relay.mark("subscribed")
        elif name == "ns_sent":
            relay.mark("call_sent")
    rec.event = event
    device, phone = await P.build_phone(relay.link, rec, scenario, phone_addr, keystore=keystore)
    if os.path.exists(args.socket):
        os.unlink(args.socket)
    server = await asyncio.start_unix_server(relay.serve, path=args.socket)
    log.info("listening on %s; phone %s, wearable's controller %s", args.socket, phone_addr, args.kernel_addr)
    try:
        await asyncio.wait_for(_wait_connected(relay), args.connect_timeout)
    except asyncio.TimeoutError:
        log.error("QEMU did not connect in %s s", args.connect_timeout)
        return 2
    # The scenario ends by holding the call (its last step); the run ends
    # when QEMU closes the UART, or at --limit.
    scenario_task = asyncio.create_task(phone.run())
    try:
        await asyncio.wait_for(relay.closed.wait(), args.limit)
    except asyncio.TimeoutError:
        log.error("QEMU still running after %s s", args.limit)
    scenario_task.cancel()
    steps = [r.get("index") for r in rec.history if r["event"] == "step"]
    failed = [r for r in rec.history if r["event"] in ("step_timeout", "step_failed")]
    ok = not failed and bool(steps) and max(steps) == len(scenario["steps"]) - 1
    summary = {"ok": ok, "last_step": max(steps) if steps else None, "counts": rec.counts,
               "timings": relay.timings}
    with open(os.path.join(args.results, "phone-summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log.info("scenario %s (last step %s)", "reached its last step" if ok else "FAILED", summary["last_step"])
    server.close()
    relay.save()
    return 0 if ok else 1


async def _wait_connected(relay: Relay) -> None:
    while relay.t0 is None:
        await asyncio.sleep(0.05)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--socket", required=True, help="Unix socket QEMU's PL011 connects to")
    p.add_argument("--results", required=True)
    p.add_argument("--bonds", default=os.path.join(HERE, "bonds"))
    p.add_argument("--kernel-addr", default="F0:57:11:00:00:01")
    p.add_argument("--connect-timeout", type=float, default=60)
    p.add_argument("--timeout", type=float, default=400, help="for the wearable's advertisement")
    p.add_argument("--ring-seconds", type=float, default=600)
    p.add_argument("--limit", type=float, default=900)
    args = p.parse_args()
    os.makedirs(args.results, exist_ok=True)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s.%(msecs)03d %(name)s %(levelname)s %(message)s",
                        datefmt="%H:%M:%S",
                        handlers=[logging.FileHandler(os.path.join(args.results, "relay.log"))])
    logging.getLogger("bumble").setLevel(logging.WARNING)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
