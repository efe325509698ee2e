#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Simulated iPhone (ANCS Notification Provider) for the Wristlink VM harness.

One process, two Bumble controllers on one LocalLink:

  kernel hci0 <-> /dev/vhci <-> Bumble Controller "wl-ctrl"  ==LocalLink==  Bumble
  Controller "phone-ctrl" <-> Bumble Host/Device "iPhone" (this file)

The "iPhone" is a GATT server with GAP, GATT (Service Changed) and ANCS
(Notification Source, Control Point, Data Source; every ANCS CCCD write and
every Control Point write answers ATT error 0x05 Insufficient Authentication
until the link is encrypted). Beside ANCS it serves the Apple Media Service (AMS: Remote Command, Entity
Update, Entity Attribute; a player that is playing) and the Current Time
Service (CTS: a fixed local time, 2026-12-01T22:15:03 at UTC+1), both behind
an encrypted link too. It is a central: it scans for an advertisement
carrying the ANCS UUID in AD type 0x15 (List of 128-bit Service Solicitation
UUIDs), connects, pairs (LE Secure Connections, bonding) when the peripheral
sends an SMP Security Request, and re-encrypts with the stored bond on
reconnection. It follows a JSON scenario (see DEFAULT_SCENARIO and NOTES.md).
With "protected": false it is an impostor instead: the same services served
without encryption, and "security_request" says how it meets one ("ignore",
"pair" without a bond).

Results (all in --results DIR):
  phone.log          Bumble + phone log
  events.jsonl       one JSON object per event (connected, paired, subscribed,
                     ns_sent, cp_write, cp_error, ds_sent, ams_command,
                     ams_entity_sent, cts_read, disconnected, battery_read,
                     battery_notified, wearable_service_changed,
                     att_request, att_error, service_changed_pending, ...)
  cp_writes.txt      every Control Point write, hex, one per line
  phone-summary.json final state and whether every step of the scenario passed

Needs Bumble 0.0.236 on Python >= 3.11; patches LocalLink.send_acl_data at
runtime (see patch_bumble()). Tests/Image/bt-uart-relay.py imports this file
(build_phone, Recorder, patch_bumble) for the SD-card image's Bluetooth boot.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import json
import logging
import os
import struct
import sys
import time
import traceback
from dataclasses import dataclass, field

from bumble import att, core, gatt, hci, link as bumble_link, pairing
from bumble.controller import Controller
from bumble.device import ConnectionParametersPreferences, Device, DeviceConfiguration, Peer
from bumble.host import Host
from bumble.keys import JsonKeyStore
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

log = logging.getLogger("phone")

# ----------------------------------------------------------------------------
# ANCS constants (docs/ancs.md)
ANCS_SERVICE = "7905F431-B5CE-4E99-A40F-4B1E122D00D0"
ANCS_NS = "9FBF120D-6301-42D9-8C58-25E699A21DBD"
ANCS_CP = "69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9"
ANCS_DS = "22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB"
ANCS_UUID_LE = core.UUID(ANCS_SERVICE).to_bytes()  # little-endian, 16 bytes
AD_SOLICIT_128 = 0x15
AD_COMPLETE_NAME = 0x09

EV_ADDED, EV_MODIFIED, EV_REMOVED = 0, 1, 2
FLAG_BITS = {"silent": 0x01, "important": 0x02, "preexisting": 0x04,
             "positive": 0x08, "negative": 0x10}
CATEGORIES = {"other": 0, "incoming_call": 1, "missed_call": 2, "voicemail": 3,
              "social": 4, "schedule": 5, "email": 6, "news": 7,
              "health": 8, "business": 9, "location": 10, "entertainment": 11}
ERR_UNKNOWN_COMMAND, ERR_INVALID_COMMAND, ERR_INVALID_PARAMETER, ERR_ACTION_FAILED = (
    0xA0, 0xA1, 0xA2, 0xA3)
ATT_INSUFFICIENT_AUTHENTICATION = 0x05

# Apple Media Service (docs/ams.md): the phone is the Media Source.
AMS_SERVICE = "89D3502B-0F36-433A-8EF4-C502AD55F8DC"
AMS_REMOTE_COMMAND = "9B3C81D8-57B1-4A8A-B8DF-0E56F7CA51C2"
AMS_ENTITY_UPDATE = "2F7CABCE-808D-411F-9A0C-BB92BA96C102"
AMS_ENTITY_ATTRIBUTE = "C6B2F38C-23AB-46D8-A6AB-A3A870BBD5D7"
AMS_INVALID_STATE, AMS_INVALID_COMMAND, AMS_ABSENT_ATTRIBUTE = 0xA0, 0xA1, 0xA2
# RemoteCommandID: Play 0, Pause 1, TogglePlayPause 2, NextTrack 3,
# PreviousTrack 4, VolumeUp 5, VolumeDown 6: what the phone lists.
AMS_COMMANDS = bytes([0, 1, 2, 3, 4, 5, 6])
AMS_PLAYER, AMS_QUEUE, AMS_TRACK = 0, 1, 2
AMS_PLAYBACK_INFO = 1  # Player attribute
AMS_TRUNCATED = 0x01   # EntityUpdateFlags bit 0
# Current Time Service (docs/cts.md): the phone's clock, fixed here so that a
# case can check what the wearable learned: Tuesday 2026-12-01 22:15:03,
# UTC+1 (zone +4 quarter hours, standard time).
CTS_SERVICE = 0x1805
CTS_CURRENT_TIME = 0x2A2B
CTS_LOCAL_TIME_INFORMATION = 0x2A0F
PHONE_LOCAL_TIME = (2026, 12, 1, 22, 15, 3)
PHONE_TIME_ZONE_QUARTERS, PHONE_DST = 4, 0
# The wearable's own services that the phone uses as a GATT client: the
# Battery Service (Battery Level: read, notify) and the GATT service's
# Service Changed (indicate).
BATTERY_SERVICE = 0x180F
BATTERY_LEVEL = 0x2A19
GATT_SERVICE = 0x1801
SERVICE_CHANGED = 0x2A05

# The filler service of `move_ancs` (a service of no meaning that moves ANCS).
FILLER_SERVICE = "5C7E0001-3D0B-4C41-9A5E-57A11F1E0001"
FILLER_CHARACTERISTIC = "5C7E0002-3D0B-4C41-9A5E-57A11F1E0001"

# Attribute IDs that carry a 2-byte max length in Get Notification Attributes
NOTIF_ATTR_WITH_LEN = {1, 2, 3}

# Addresses on the LocalLink. The kernel side gets a public address so that
# the kernel advertises with it and the L2CAP listener bound with
# BDADDR_LE_PUBLIC matches (see NOTES.md).
KERNEL_CTRL_ADDR = "F0:57:11:00:00:01"
PHONE_ADDR = "E1:A5:00:00:00:01"  # static random (top two bits 11)

DEFAULT_SCENARIO = {
    "existing": [
        {"uid": 0, "category": "social", "flags": [],
         "app": "com.apple.MobileSMS", "title": "Alice", "message": "Lunch at noon?",
         "date": "20260101T120000"},
    ],
    "apps": {"com.apple.MobileSMS": "Messages", "com.apple.mobilephone": "Phone"},
    "steps": [
        {"do": "connect", "timeout": 60},
        {"do": "wait_subscribed", "timeout": 60},
        {"do": "notify", "uid": 1, "category": "incoming_call",
         "flags": ["important", "positive", "negative"],
         "app": "com.apple.mobilephone", "title": "Bob",
         "message": "Incoming call", "positive_label": "Answer",
         "negative_label": "Decline", "date": "20260101T120500"},
        {"do": "wait_cp", "count": 1, "timeout": 30},
        {"do": "sleep", "seconds": 2},
    ],
}


# ----------------------------------------------------------------------------
def patch_bumble() -> None:
    """Work around two Bumble 0.0.236 controller shortcuts.

    1. LocalLink.send_acl_data: upstream uses the *sending controller's
       random address* as the source of LE ACL data. The kernel side
       advertises and connects with its public address, so the receiving
       controller looks the data up under a different address and drops it
       ("!!! no connection for 00:00:00:00:00:00"). Use the address the
       connection itself was made with instead.
    2. Controller.on_le_connect_ind: the peripheral's LE Connection Complete
       reports a fixed interval of 12.5 ms, latency 0 and a 100 ms
       supervision timeout ("# FIXME"), whatever the central asked for. Report
       the CONNECT_IND's own interval, latency and timeout, so the kernel
       sees the parameters the phone connected with (the connection
       parameter case depends on it).
    """
    if getattr(bumble_link.LocalLink, "_wristlink_patched", False):
        return
    bumble_link.LocalLink._wristlink_patched = True
    original = bumble_link.LocalLink.send_acl_data

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != core.PhysicalTransport.LE:
            return original(self, sender_controller, destination_address, transport, data)
        destination_controller = self.find_le_controller(destination_address)
        connection = sender_controller.le_connections.get(destination_address)
        source_address = (connection.self_address if connection is not None
                          else sender_controller.random_address)
        if destination_controller is not None:
            asyncio.get_running_loop().call_soon(
                lambda: destination_controller.on_link_acl_data(
                    source_address, transport, data))

    bumble_link.LocalLink.send_acl_data = send_acl_data

    original_connect_ind = Controller.on_le_connect_ind

    def on_le_connect_ind(self, packet) -> None:
        send = self.send_hci_packet

        def send_with_parameters(event) -> None:
            if isinstance(event, hci.HCI_LE_Connection_Complete_Event):
                event = dataclasses.replace(event, connection_interval=packet.interval,
                                            peripheral_latency=packet.latency,
                                            supervision_timeout=packet.timeout)
            send(event)

        self.send_hci_packet = send_with_parameters
        try:
            original_connect_ind(self, packet)
        finally:
            del self.send_hci_packet

    Controller.on_le_connect_ind = on_le_connect_ind


# ----------------------------------------------------------------------------
@dataclass
class Notification:
    uid: int
    category: int
    flags: int
    attrs: dict[int, bytes] = field(default_factory=dict)


async def run_bounded(body, timeout: float, failure: type[BaseException], step) -> tuple[str | None, float]:
    """Runs `body()` for at most `timeout` s: (None, seconds) if it
    returned, else (why, seconds). `failure` is the harness's own check
    exception (its text is the reason); `step()` names where a timeout hit.
    Shared by the VM suite's cases and the systemd case's parts."""
    t0, reason = time.monotonic(), None
    try:
        await asyncio.wait_for(body(), timeout)
    except failure as e:
        reason = str(e)
    except asyncio.TimeoutError:
        reason = f"timed out after {timeout:g} s at: {step()}"
    except Exception as e:  # noqa: BLE001
        reason = f"{type(e).__name__}: {e}"
        logging.getLogger("phone").error("%s", traceback.format_exc())
    return reason, time.monotonic() - t0


def parse_flags(value) -> int:
    if isinstance(value, int):
        return value
    out = 0
    for name in value or []:
        out |= FLAG_BITS[name]
    return out


def parse_category(value) -> int:
    return value if isinstance(value, int) else CATEGORIES[value]


class Recorder:
    def __init__(self, results: str):
        os.makedirs(results, exist_ok=True)
        self.t0 = time.monotonic()
        self.events_file = open(os.path.join(results, "events.jsonl"), "w", buffering=1)
        self.cp_file = open(os.path.join(results, "cp_writes.txt"), "w", buffering=1)
        self.counts: dict[str, int] = {}
        self.waiters: list[tuple[callable, asyncio.Future]] = []
        # Every event, in order, so a test can look back from a mark.
        self.history: list[dict] = []

    def event(self, name: str, **fields) -> None:
        record = {"t": round(time.monotonic() - self.t0, 3), "event": name, **fields}
        self.counts[name] = self.counts.get(name, 0) + 1
        self.history.append(record)
        self.events_file.write(json.dumps(record) + "\n")
        log.info("EVENT %s", json.dumps(record))
        for predicate, future in list(self.waiters):
            if not future.done() and predicate(record):
                future.set_result(record)

    def mark(self) -> int:
        """A position in the history, for `since`/`wait_for(since=)`."""
        return len(self.history)

    def since(self, mark: int, name: str | None = None, **fields) -> list[dict]:
        return [r for r in self.history[mark:]
                if (name is None or r["event"] == name)
                and all(r.get(k) == v for k, v in fields.items())]

    async def wait_for(self, predicate, timeout: float, since: int | None = None):
        """The first event matching `predicate`: one already recorded after
        the mark `since`, else the next one (within `timeout` seconds)."""
        if since is not None:
            for record in self.history[since:]:
                if predicate(record):
                    return record
        future = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self.waiters.append(entry)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self.waiters.remove(entry)


class PhoneDelegate(pairing.PairingDelegate):
    def __init__(self, recorder: Recorder):
        super().__init__(
            io_capability=pairing.PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_YES_NO_INPUT)
        self.recorder = recorder

    async def compare_numbers(self, number: int, digits: int) -> bool:
        self.recorder.event("numeric_comparison", number=f"{number:0{digits}d}")
        return True

    async def confirm(self, auto: bool = False) -> bool:
        self.recorder.event("pairing_confirm", auto=auto)
        return True


# ----------------------------------------------------------------------------
class Phone:
    def __init__(self, device: Device, recorder: Recorder, scenario: dict):
        self.device = device
        self.rec = recorder
        self.scenario = scenario
        self.apps: dict[str, str] = dict(scenario.get("apps", {}))
        self.notifications: dict[int, Notification] = {}
        self.connection = None
        self.session_active = False
        self.replay_task: asyncio.Task | None = None
        self.ancs_present = False
        self.overlong = bool(scenario.get("overlong_values", False))
        # An iPhone serves ANCS, AMS and CTS only over an encrypted link; the
        # impostor of the VM suite ("protected": false) serves them to
        # anyone. How a Security Request is met: "respond" (an iPhone:
        # encrypt with the bond, else pair), "ignore", "pair" (even without
        # a bond: what an impostor without the key can try).
        self.protected = bool(scenario.get("protected", True))
        self.security_request_answer = scenario.get("security_request", "respond")
        for spec in scenario.get("existing", []):
            n = self.make_notification(spec)
            self.notifications[n.uid] = n
        self.build_ancs()
        # AMS and CTS, as an iPhone offers them to a bonded accessory; a
        # scenario may leave either out ("ams": false, "cts": false).
        self.has_ams = bool(scenario.get("ams", True))
        self.has_cts = bool(scenario.get("cts", True))
        self.playing = bool(scenario.get("media_playing", True))
        self.media_values = {
            AMS_PLAYER: {0: b"Music", 2: b"0.5"},
            AMS_QUEUE: {0: b"2", 1: b"12", 2: b"0", 3: b"0"},
            AMS_TRACK: {0: b"The Wristlinks", 1: b"Sans-IO", 2: b"Bounded Buffers", 3: b"215.0"},
        }
        # Per link: the attributes the wearable asked for, per entity, and
        # the Entity Attribute it chose.
        self.ams_wanted: dict[int, bytes] = {}
        self.ams_attribute: tuple[int, int] | None = None
        # Per link: whether the phone, as a GATT client, has the wearable's
        # Service Changed indications on (`battery` step).
        self.watching_service_changed = False
        # Service Changed of the phone's own database, per bonded client
        # (the wearable), by its address: the CCCD value it last wrote,
        # kept across links as the Core spec asks of a server for a bonded
        # client (Vol 3, Part G, 7.1: Bumble forgets it at each
        # disconnection), and the handle range changed while that client was
        # away, indicated once the link is encrypted again.
        self.sc_cccd_by_peer: dict[str, bytes] = {}
        self.sc_pending: dict[str, tuple[int, int]] = {}
        self.fillers = 0
        self.build_ams()
        self.build_cts()
        self.record_att()
        device.on("characteristic_subscription", self.on_subscription)
        device.on("connection", self.on_connection)

    def record_att(self) -> None:
        """Every ATT request the phone's GATT server receives becomes an
        `att_request` event (op: the request's name without ATT_ and
        _REQUEST, link: the connection handle, and its fields: handle, end,
        type, value as hex...), recorded before Bumble handles it; every
        Error Response it sends becomes an `att_error` (request, handle,
        code). Commands, confirmations and the phone's own requests to the
        wearable are not requests received here.

        Also what Bumble 0.0.236 leaves out (its Write Request handler has
        "TODO: check permissions"): a write to an attribute that is not
        writable (a service or characteristic declaration, a read-only
        value) is refused with 0x03 Write Not Permitted, as an iPhone
        refuses it, instead of overwriting the declaration. A wearable that
        writes to a stale cached handle sees that error."""
        server = self.device.gatt_server
        handle_pdu, send_response = server.on_gatt_pdu, server.send_response

        def not_writable(pdu) -> bool:
            if pdu.op_code not in (att.Opcode.ATT_WRITE_REQUEST, att.Opcode.ATT_WRITE_COMMAND):
                return False
            attribute = server.get_attribute(pdu.attribute_handle)
            return attribute is not None and not attribute.permissions & att.Attribute.Permissions.WRITEABLE

        def on_gatt_pdu(bearer, pdu) -> None:
            if pdu.op_code in att.ATT_REQUESTS:
                fields = {}
                for f in dataclasses.fields(pdu):
                    if f.name in ("op_code", "name", "_payload"):
                        continue
                    value = getattr(pdu, f.name, None)
                    key = {"attribute_handle": "handle", "starting_handle": "handle",
                           "ending_handle": "end", "attribute_type": "type",
                           "attribute_group_type": "type", "attribute_value": "value"}.get(f.name, f.name)
                    fields[key] = (value.hex() if isinstance(value, (bytes, bytearray))
                                   else str(value) if isinstance(value, core.UUID)
                                   else value if isinstance(value, int) else repr(value))
                op = att.Opcode(pdu.op_code).name.removeprefix("ATT_").removesuffix("_REQUEST")
                self.rec.event("att_request", op=op, link=getattr(bearer, "handle", None), **fields)
            if not_writable(pdu):
                if pdu.op_code == att.Opcode.ATT_WRITE_REQUEST:
                    server.send_response(bearer, att.ATT_Error_Response(
                        request_opcode_in_error=pdu.op_code, attribute_handle_in_error=pdu.attribute_handle,
                        error_code=att.ErrorCode.WRITE_NOT_PERMITTED))
                return None
            return handle_pdu(bearer, pdu)

        def send(bearer, response) -> None:
            if isinstance(response, att.ATT_Error_Response):
                self.rec.event("att_error", link=getattr(bearer, "handle", None),
                               request=att.Opcode(response.request_opcode_in_error).name,
                               handle=response.attribute_handle_in_error,
                               code=f"0x{response.error_code:02X}")
            return send_response(bearer, response)

        server.on_gatt_pdu = on_gatt_pdu
        server.send_response = send

    # -- GATT database ------------------------------------------------------
    def require_encryption(self, bearer) -> None:
        if not self.protected:
            return
        connection = getattr(bearer, "connection", None) or bearer
        if not connection.is_encrypted:
            raise att.ATT_Error(error_code=ATT_INSUFFICIENT_AUTHENTICATION)

    def secured_cccd(self, characteristic) -> gatt.Descriptor:
        inner = self.device.gatt_server.make_descriptor_value(characteristic)

        def read(bearer):
            self.require_encryption(bearer)
            return inner.read(bearer)

        def write(bearer, value):
            self.require_encryption(bearer)
            return inner.write(bearer, value)

        return gatt.Descriptor(
            gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
            gatt.Descriptor.READABLE | gatt.Descriptor.WRITEABLE,
            att.AttributeValueV2(read, write=write))

    def build_ancs(self) -> None:
        P = gatt.Characteristic.Properties
        self.ns = gatt.Characteristic(ANCS_NS, P.NOTIFY, gatt.Characteristic.READABLE, b"")
        self.cp = gatt.Characteristic(
            ANCS_CP, P.WRITE, gatt.Characteristic.WRITEABLE,
            gatt.CharacteristicValue(write=self.on_cp_write))
        self.ds = gatt.Characteristic(ANCS_DS, P.NOTIFY, gatt.Characteristic.READABLE, b"")
        self.ns.descriptors = [self.secured_cccd(self.ns)]
        self.ds.descriptors = [self.secured_cccd(self.ds)]
        self.ancs = gatt.Service(ANCS_SERVICE, [self.ns, self.cp, self.ds])

    def build_ams(self) -> None:
        """AMS: Remote Command (write, notify), Entity Update (write,
        notify), Entity Attribute (read, write); every value and CCCD needs
        an encrypted link."""
        P = gatt.Characteristic.Properties
        self.rc = gatt.Characteristic(
            AMS_REMOTE_COMMAND, P.WRITE | P.NOTIFY, gatt.Characteristic.WRITEABLE,
            gatt.CharacteristicValue(write=self.on_rc_write))
        self.eu = gatt.Characteristic(
            AMS_ENTITY_UPDATE, P.WRITE | P.NOTIFY, gatt.Characteristic.WRITEABLE,
            gatt.CharacteristicValue(write=self.on_eu_write))
        self.ea = gatt.Characteristic(
            AMS_ENTITY_ATTRIBUTE, P.READ | P.WRITE,
            gatt.Characteristic.READABLE | gatt.Characteristic.WRITEABLE,
            gatt.CharacteristicValue(read=self.on_ea_read, write=self.on_ea_write))
        self.rc.descriptors = [self.secured_cccd(self.rc)]
        self.eu.descriptors = [self.secured_cccd(self.eu)]
        self.ams = gatt.Service(AMS_SERVICE, [self.rc, self.eu, self.ea])

    def build_cts(self) -> None:
        """CTS: Current Time (read, notify) and Local Time Information
        (read), behind an encrypted link."""
        P = gatt.Characteristic.Properties
        self.ct = gatt.Characteristic(
            core.UUID.from_16_bits(CTS_CURRENT_TIME), P.READ | P.NOTIFY, gatt.Characteristic.READABLE,
            gatt.CharacteristicValue(read=self.on_ct_read))
        self.lti = gatt.Characteristic(
            core.UUID.from_16_bits(CTS_LOCAL_TIME_INFORMATION), P.READ, gatt.Characteristic.READABLE,
            gatt.CharacteristicValue(read=self.on_lti_read))
        self.ct.descriptors = [self.secured_cccd(self.ct)]
        self.cts = gatt.Service(core.UUID.from_16_bits(CTS_SERVICE), [self.ct, self.lti])

    def add_ancs(self) -> tuple[int, int]:
        # ANCS is always the last service, so Bumble's next_handle()
        # (1 + number of attributes) hands out the same handles again.
        self.build_ancs()
        self.device.add_service(self.ancs)
        self.ancs_present = True
        rng = (self.ancs.handle, self.ancs.end_group_handle)
        self.rec.event("ancs_added", start=rng[0], end=rng[1],
                       ns=self.ns.handle, cp=self.cp.handle, ds=self.ds.handle)
        return rng

    def remove_ancs(self) -> tuple[int, int]:
        server = self.device.gatt_server
        start, end = self.ancs.handle, self.ancs.end_group_handle
        assert server.attributes[-1].handle == end, "ANCS must be the last service"
        server.attributes = [a for a in server.attributes if not start <= a.handle <= end]
        for h in range(start, end + 1):
            server.attributes_by_handle.pop(h, None)
        server.services.remove(self.ancs)
        for cccds in server.subscribers.values():
            for h in range(start, end + 1):
                cccds.pop(h, None)
        self.ancs_present = False
        self.end_session("ancs_removed")
        self.rec.event("ancs_removed", start=start, end=end)
        return start, end

    def add_filler(self) -> tuple[int, int]:
        """A service of no meaning (one readable characteristic), added
        last: with ANCS taken out first and added after it, ANCS moves up
        by its 3 handles (`move_ancs`)."""
        self.fillers += 1
        value = gatt.Characteristic(FILLER_CHARACTERISTIC, gatt.Characteristic.Properties.READ,
                                    gatt.Characteristic.READABLE, bytes([self.fillers]))
        service = gatt.Service(FILLER_SERVICE, [value])
        self.device.add_service(service)
        rng = (service.handle, service.end_group_handle)
        self.rec.event("filler_added", start=rng[0], end=rng[1])
        return rng

    @staticmethod
    def peer_key(connection) -> str:
        """A client's address as the keystore names it, without the type."""
        return str(connection.peer_address).split("/")[0].upper()

    async def database_changed(self, start: int, end: int) -> None:
        """The database changed over `start`..`end`: indicated now to the
        client on the link (when it has indications on), and kept for every
        other client that had them on, to be indicated when it is back
        (`on_encrypted`), as an iPhone does for a bonded accessory."""
        current = self.peer_key(self.connection) if self.connection is not None else None
        await self.indicate_service_changed(start, end)
        for peer, value in self.sc_cccd_by_peer.items():
            if peer == current or not value[0] & 0x02:
                continue
            old = self.sc_pending.get(peer)
            rng = (min(start, old[0]), max(end, old[1])) if old else (start, end)
            self.sc_pending[peer] = rng
            self.rec.event("service_changed_pending", peer=peer, start=rng[0], end=rng[1])

    def on_encrypted(self, connection) -> None:
        """A link encrypted with the bond: the client's Service Changed CCCD
        as it left it, then the changes made while it was away."""
        if not connection.is_encrypted or connection is not self.connection:
            return
        peer = self.peer_key(connection)
        sc = self.device.gatt_service.service_changed_characteristic
        value = self.sc_cccd_by_peer.get(peer)
        cccds = self.device.gatt_server.subscribers.setdefault(connection, {})
        if value is not None and sc.handle not in cccds:
            cccds[sc.handle] = value
            self.rec.event("service_changed_cccd_restored", peer=peer, value=value.hex())
        pending = self.sc_pending.pop(peer, None)
        if pending is not None:
            asyncio.create_task(self.indicate_pending(connection, peer, pending))

    async def indicate_pending(self, connection, peer: str, rng: tuple[int, int]) -> None:
        sc = self.device.gatt_service.service_changed_characteristic
        value = struct.pack("<HH", *rng)
        try:
            await asyncio.wait_for(self.device.indicate_subscriber(connection, sc, value), 10)
        except Exception as e:  # noqa: BLE001
            self.rec.event("service_changed_failed", error=repr(e), pending=True)
            if connection is not self.connection:  # gone before it confirmed: owed still
                self.sc_pending.setdefault(peer, rng)
            return
        self.rec.event("service_changed_indicated", start=rng[0], end=rng[1], pending=True, peer=peer)

    async def indicate_service_changed(self, start: int, end: int) -> None:
        sc = self.device.gatt_service.service_changed_characteristic
        if self.connection is None:
            return
        value = struct.pack("<HH", start, end)
        try:
            await asyncio.wait_for(
                self.device.indicate_subscriber(self.connection, sc, value), 10)
            self.rec.event("service_changed_indicated", start=start, end=end)
        except Exception as e:  # noqa: BLE001
            self.rec.event("service_changed_failed", error=repr(e))

    # -- notifications --------------------------------------------------------
    def make_notification(self, spec: dict) -> Notification:
        attrs = {}
        for key, attr_id in (("app", 0), ("title", 1), ("subtitle", 2), ("message", 3),
                             ("date", 5), ("positive_label", 6), ("negative_label", 7)):
            if key in spec:
                attrs[attr_id] = spec[key].encode()
        if 3 in attrs:
            attrs[4] = str(len(attrs[3])).encode()
        return Notification(uid=spec["uid"], category=parse_category(spec.get("category", 0)),
                            flags=parse_flags(spec.get("flags", [])), attrs=attrs)

    def category_count(self, category: int) -> int:
        return min(255, sum(1 for n in self.notifications.values() if n.category == category))

    async def send_ns(self, event_id: int, n: Notification, extra_flags: int = 0) -> None:
        pdu = struct.pack("<BBBBI", event_id, (n.flags | extra_flags) & 0xFF, n.category,
                          self.category_count(n.category), n.uid)
        if not self.session_active or self.connection is None:
            self.rec.event("ns_skipped", pdu=pdu.hex(), reason="no session")
            return
        await self.device.notify_subscriber(self.connection, self.ns, pdu)
        self.rec.event("ns_sent", pdu=pdu.hex(), event_id=event_id, uid=n.uid,
                       category=n.category, flags=n.flags | extra_flags)

    async def send_ds(self, response: bytes) -> None:
        if self.connection is None:
            self.rec.event("ds_skipped", response=response.hex(), reason="no connection")
            return
        mtu = self.connection.att_mtu
        chunk = mtu - 3
        parts = [response[i:i + chunk] for i in range(0, len(response), chunk)] or [b""]
        for part in parts:
            await self.device.notify_subscriber(self.connection, self.ds, part)
        self.rec.event("ds_sent", response=response.hex(), mtu=mtu, chunks=len(parts))

    async def replay_existing(self, snapshot: list[Notification]) -> None:
        await asyncio.sleep(0.05)  # let the Write Response go out first
        for n in snapshot:
            if n.uid in self.notifications:
                await self.send_ns(EV_ADDED, n, FLAG_BITS["preexisting"])
        self.rec.event("replay_done", count=len(snapshot))

    def end_session(self, why: str) -> None:
        if self.session_active:
            self.session_active = False
            self.rec.event("session_end", reason=why)

    # -- event handlers -------------------------------------------------------
    def on_subscription(self, bearer, characteristic, notify: bool, indicate: bool) -> None:
        name = {id(self.ns): "notification_source", id(self.ds): "data_source",
                id(self.rc): "remote_command", id(self.eu): "entity_update",
                id(self.ct): "current_time"}.get(id(characteristic))
        if name is None and characteristic is self.device.gatt_service.service_changed_characteristic:
            name = "service_changed"
            if hasattr(bearer, "peer_address"):
                self.sc_cccd_by_peer[self.peer_key(bearer)] = bytes(
                    [(0x01 if notify else 0) | (0x02 if indicate else 0), 0])
        self.rec.event("subscription", characteristic=name or str(characteristic.uuid),
                       notify=notify, indicate=indicate)
        if characteristic is self.ns:
            if notify and not self.session_active:
                self.session_active = True
                self.rec.event("session_start")
                snapshot = sorted(self.notifications.values(), key=lambda n: n.uid)
                self.replay_task = asyncio.create_task(self.replay_existing(snapshot))
            elif not notify:
                self.end_session("unsubscribed")
        elif characteristic is self.rc and notify:
            # The commands available now, as iOS sends them on subscription.
            asyncio.create_task(self.send_ams_later(self.rc, AMS_COMMANDS, "ams_commands_sent"))

    def on_cp_write(self, connection, value: bytes) -> None:
        self.require_encryption(connection)
        self.cp_file_write(value)
        self.rec.event("cp_write", hex=value.hex())
        if not value:
            self.cp_error(ERR_INVALID_COMMAND, value, "empty")
        cmd = value[0]
        if cmd == 0:
            self.cp_get_notification_attributes(value)
        elif cmd == 1:
            self.cp_get_app_attributes(value)
        elif cmd == 2:
            self.cp_perform_action(value)
        else:
            self.cp_error(ERR_UNKNOWN_COMMAND, value, "unknown command")

    def cp_file_write(self, value: bytes) -> None:
        self.rec.cp_file.write(value.hex() + "\n")

    def cp_error(self, code: int, value: bytes, why: str):
        self.rec.event("cp_error", code=f"0x{code:02X}", hex=value.hex(), reason=why)
        raise att.ATT_Error(error_code=code)

    def cp_get_notification_attributes(self, value: bytes) -> None:
        if len(value) < 6:
            self.cp_error(ERR_INVALID_COMMAND, value, "too short")
        uid = struct.unpack_from("<I", value, 1)[0]
        n = self.notifications.get(uid)
        if n is None:
            self.cp_error(ERR_INVALID_PARAMETER, value, f"unknown uid {uid}")
        out = bytearray(value[:5])
        i = 5
        while i < len(value):
            attr_id = value[i]
            i += 1
            max_len = None
            if attr_id in NOTIF_ATTR_WITH_LEN:
                if i + 2 > len(value):
                    self.cp_error(ERR_INVALID_COMMAND, value, "missing max length")
                max_len = struct.unpack_from("<H", value, i)[0]
                i += 2
            if attr_id > 7:
                self.cp_error(ERR_INVALID_PARAMETER, value, f"bad attribute {attr_id}")
            data = n.attrs.get(attr_id, b"")
            if max_len is not None and not self.overlong:
                data = data[:max_len]
            out += bytes([attr_id]) + struct.pack("<H", len(data)) + data
        asyncio.create_task(self.send_ds_later(bytes(out)))

    def cp_get_app_attributes(self, value: bytes) -> None:
        try:
            nul = value.index(0, 1)
        except ValueError:
            self.cp_error(ERR_INVALID_COMMAND, value, "no NUL after app id")
        app = value[1:nul].decode(errors="replace")
        if app not in self.apps:
            self.cp_error(ERR_INVALID_PARAMETER, value, f"unknown app {app}")
        out = bytearray(value[:nul + 1])
        for attr_id in value[nul + 1:]:
            if attr_id != 0:
                self.cp_error(ERR_INVALID_PARAMETER, value, f"bad app attribute {attr_id}")
            data = self.apps[app].encode()
            out += bytes([attr_id]) + struct.pack("<H", len(data)) + data
        asyncio.create_task(self.send_ds_later(bytes(out)))

    def cp_perform_action(self, value: bytes) -> None:
        if len(value) != 6:
            self.cp_error(ERR_INVALID_COMMAND, value, "bad length")
        uid = struct.unpack_from("<I", value, 1)[0]
        action = value[5]
        n = self.notifications.get(uid)
        if n is None:
            self.cp_error(ERR_INVALID_PARAMETER, value, f"unknown uid {uid}")
        if action > 1:
            self.cp_error(ERR_INVALID_PARAMETER, value, f"bad action {action}")
        self.rec.event("action", uid=uid, action="positive" if action == 0 else "negative")
        del self.notifications[uid]
        asyncio.create_task(self.send_removed_later(n))

    async def send_ds_later(self, response: bytes) -> None:
        await asyncio.sleep(0.05)
        await self.send_ds(response)

    async def send_removed_later(self, n: Notification) -> None:
        await asyncio.sleep(0.05)
        await self.send_ns(EV_REMOVED, n)

    # -- AMS (docs/ams.md) ------------------------------------------------------
    def subscribed(self, characteristic) -> bool:
        """Whether the wearable has notifications of `characteristic` on."""
        if self.connection is None:
            return False
        cccd = self.device.gatt_server.subscribers.get(self.connection, {}).get(characteristic.handle)
        return bool(cccd) and len(cccd) == 2 and bool(cccd[0] & 0x01)

    def playback_info(self) -> bytes:
        return b"1,1.0,12.5" if self.playing else b"0,0.0,12.5"

    def entity_value(self, entity: int, attribute: int) -> bytes | None:
        """An entity's attribute, None when the entity lacks it."""
        if entity == AMS_PLAYER and attribute == AMS_PLAYBACK_INFO:
            return self.playback_info()
        return self.media_values.get(entity, {}).get(attribute)

    def ams_error(self, code: int, what: str, value: bytes, why: str):
        self.rec.event("ams_error", what=what, code=f"0x{code:02X}", hex=value.hex(), reason=why)
        raise att.ATT_Error(error_code=code)

    def on_rc_write(self, connection, value: bytes) -> None:
        """A Remote Command: recorded (`ams_command`), carried out,
        answered with a Write Response; a changed PlaybackInfo is notified
        when the wearable asked for it."""
        self.require_encryption(connection)
        self.rec.event("ams_command", hex=value.hex())
        if len(value) != 1:
            self.ams_error(AMS_INVALID_COMMAND, "remote_command", value, "not one byte")
        command = value[0]
        if command not in AMS_COMMANDS:
            self.ams_error(AMS_INVALID_COMMAND, "remote_command", value, "not available")
        was = self.playing
        if command == 0:
            self.playing = True
        elif command == 1:
            self.playing = False
        elif command == 2:
            self.playing = not self.playing
        if self.playing != was and AMS_PLAYBACK_INFO in self.ams_wanted.get(AMS_PLAYER, b""):
            asyncio.create_task(self.send_entity_later([(AMS_PLAYER, AMS_PLAYBACK_INFO)]))

    def on_eu_write(self, connection, value: bytes) -> None:
        """An Entity Update: EntityID, then the AttributeIDs wanted; answered,
        then each attribute's current value notified."""
        self.require_encryption(connection)
        self.rec.event("ams_entity_update", hex=value.hex())
        if not self.subscribed(self.eu):
            self.ams_error(AMS_INVALID_STATE, "entity_update", value, "notifications off")
        if len(value) < 2:
            self.ams_error(AMS_INVALID_COMMAND, "entity_update", value, "too short")
        entity, attributes = value[0], bytes(value[1:])
        if any(self.entity_value(entity, a) is None for a in attributes):
            self.ams_error(AMS_ABSENT_ATTRIBUTE, "entity_update", value, "no such entity or attribute")
        self.ams_wanted[entity] = attributes
        asyncio.create_task(self.send_entity_later([(entity, a) for a in attributes]))

    def on_ea_write(self, connection, value: bytes) -> None:
        self.require_encryption(connection)
        self.rec.event("ams_entity_attribute", hex=value.hex())
        if not self.subscribed(self.eu):
            self.ams_error(AMS_INVALID_STATE, "entity_attribute", value, "notifications off")
        if len(value) != 2:
            self.ams_error(AMS_INVALID_COMMAND, "entity_attribute", value, "not two bytes")
        if self.entity_value(value[0], value[1]) is None:
            self.ams_error(AMS_ABSENT_ATTRIBUTE, "entity_attribute", value, "no such entity or attribute")
        self.ams_attribute = (value[0], value[1])

    def on_ea_read(self, connection) -> bytes:
        self.require_encryption(connection)
        found = self.entity_value(*self.ams_attribute) if self.ams_attribute else None
        if not found:
            raise att.ATT_Error(error_code=AMS_ABSENT_ATTRIBUTE)
        return found

    async def send_ams_later(self, characteristic, value: bytes, event: str) -> None:
        await asyncio.sleep(0.05)  # the Write Response first
        if self.connection is None:
            return
        try:
            await self.device.notify_subscriber(self.connection, characteristic, value)
        except Exception as e:  # noqa: BLE001
            self.rec.event(event.replace("_sent", "_failed"), error=repr(e))
            return
        self.rec.event(event, hex=value.hex())

    async def send_entity_later(self, wanted: list[tuple[int, int]]) -> None:
        """Entity Update notifications: EntityID, AttributeID, flags, the
        value as text, cut to the MTU and flagged Truncated."""
        for entity, attribute in wanted:
            value = self.entity_value(entity, attribute) or b""
            room = (self.connection.att_mtu - 3 - 3) if self.connection is not None else len(value)
            flags = AMS_TRUNCATED if len(value) > room else 0
            await self.send_ams_later(self.eu, bytes([entity, attribute, flags]) + value[:room],
                                      "ams_entity_sent")

    # -- CTS (docs/cts.md) ------------------------------------------------------
    @staticmethod
    def current_time_value(adjust_reason: int = 0) -> bytes:
        year, month, day, hours, minutes, seconds = PHONE_LOCAL_TIME
        weekday = datetime.date(year, month, day).isoweekday()  # 1 Monday ... 7 Sunday
        return struct.pack("<HBBBBBBBB", year, month, day, hours, minutes, seconds, weekday, 0,
                           adjust_reason)

    def on_ct_read(self, connection) -> bytes:
        self.require_encryption(connection)
        value = self.current_time_value()
        self.rec.event("cts_read", what="current_time", hex=value.hex())
        return value

    def on_lti_read(self, connection) -> bytes:
        self.require_encryption(connection)
        value = struct.pack("<bB", PHONE_TIME_ZONE_QUARTERS, PHONE_DST)
        self.rec.event("cts_read", what="local_time_information", hex=value.hex())
        return value

    def on_connection(self, connection) -> None:
        self.connection = connection
        self.watching_service_changed = False
        self.ams_wanted, self.ams_attribute = {}, None
        self.rec.event("connected", peer=str(connection.peer_address),
                       own_address=str(self.device.random_address),
                       role=connection.role_name, handle=connection.handle)
        connection.on("connection_parameters_update", lambda: self.rec.event(
            "connection_parameters", interval_ms=connection.parameters.connection_interval,
            latency=connection.parameters.peripheral_latency,
            supervision_timeout_ms=connection.parameters.supervision_timeout))
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))
        connection.on("security_request", lambda auth_req: asyncio.create_task(
            self.on_security_request(connection, auth_req)))
        connection.on("pairing", lambda keys: self.rec.event(
            "paired", peer=str(connection.peer_address),
            ltk=bool(keys.ltk or keys.ltk_central or keys.ltk_peripheral),
            irk=bool(keys.irk), authenticated=bool(
                (keys.ltk or keys.ltk_central or keys.ltk_peripheral).authenticated
                if (keys.ltk or keys.ltk_central or keys.ltk_peripheral) else False)))
        connection.on("pairing_failure", lambda reason: self.rec.event(
            "pairing_failed", reason=str(reason)))
        connection.on("connection_encryption_change", lambda *a: self.rec.event(
            "encryption_change", encrypted=connection.is_encrypted,
            authenticated=connection.authenticated))
        connection.on("connection_encryption_change", lambda *a: self.on_encrypted(connection))
        connection.on("connection_encryption_failure", lambda error: self.rec.event(
            "encryption_failed", error=str(error)))
        connection.on("connection_att_mtu_update", lambda *a: self.rec.event(
            "att_mtu", mtu=connection.att_mtu))

    def on_disconnection(self, connection, reason) -> None:
        self.rec.event("disconnected", reason=str(reason))
        self.end_session("disconnected")
        if self.connection is connection:
            self.connection = None

    async def on_security_request(self, connection, auth_req: int) -> None:
        keys = await self.device.keystore.get(str(connection.peer_address))
        answer = self.security_request_answer
        self.rec.event("security_request", auth_req=f"0x{auth_req:02X}", bonded=keys is not None,
                       answer=answer)
        if answer == "ignore" or connection.is_encrypted:
            return
        try:
            if answer == "pair":
                await connection.pair()
            elif keys is not None:
                await connection.encrypt()
            else:
                await connection.pair()
        except Exception as e:  # noqa: BLE001
            self.rec.event("security_error", error=repr(e))

    # -- scenario steps -------------------------------------------------------
    @staticmethod
    def solicits_ancs(data: bytes) -> bool:
        i = 0
        while i + 1 < len(data):
            length = data[i]
            if length == 0 or i + 1 + length > len(data):
                break
            ad_type, payload = data[i + 1], data[i + 2:i + 1 + length]
            if ad_type == AD_SOLICIT_128 and any(
                    payload[j:j + 16] == ANCS_UUID_LE for j in range(0, len(payload) - 15, 16)):
                return True
            i += 1 + length
        return False

    async def step_scan(self, step: dict) -> None:
        """Scan for `seconds` without connecting; one `scan_result` event with
        how many ANCS advertisements arrived and their mean spacing."""
        seconds = step.get("seconds", 3)
        times: list[float] = []

        def on_adv(adv) -> None:
            if self.solicits_ancs(adv.data_bytes):
                times.append(time.monotonic())

        self.device.on("advertisement", on_adv)
        await self.device.start_scanning(filter_duplicates=False)
        try:
            await asyncio.sleep(seconds)
        finally:
            self.device.remove_listener("advertisement", on_adv)
            await self.device.stop_scanning()
        # Bumble's scanner reports each advertising PDU twice here (two
        # reports 2-10 ms apart): count PDUs, not reports. Reports closer
        # than 15 ms are taken as one PDU, so at the fast interval (20 ms)
        # the spacing comes out somewhat long; it is only compared with the
        # slow one (417.5 ms).
        pdus: list[float] = []
        for t in times:
            if not pdus or t - pdus[-1] > 0.015:
                pdus.append(t)
        gaps = sorted(b - a for a, b in zip(pdus, pdus[1:]))
        self.rec.event("scan_result", seconds=seconds, reports=len(times), count=len(pdus),
                       median_gap_ms=round(1000 * gaps[len(gaps) // 2]) if gaps else None,
                       first_report_gaps_ms=[round(1000 * (b - a), 1) for a, b in zip(times[:12], times[1:12])])

    async def step_connect(self, step: dict) -> None:
        timeout = step.get("timeout", 30)
        found = asyncio.get_running_loop().create_future()

        def on_adv(adv) -> None:
            data = adv.data_bytes
            names, solicit = [], False
            i = 0
            while i + 1 < len(data):
                length = data[i]
                if length == 0 or i + 1 + length > len(data):
                    break
                ad_type, payload = data[i + 1], data[i + 2:i + 1 + length]
                if ad_type == AD_SOLICIT_128:
                    solicit |= any(payload[j:j + 16] == ANCS_UUID_LE
                                   for j in range(0, len(payload) - 15, 16))
                if ad_type == AD_COMPLETE_NAME:
                    names.append(payload.decode(errors="replace"))
                i += 1 + length
            if solicit and not found.done():
                self.rec.event("advertisement", address=str(adv.address),
                               connectable=adv.is_connectable, data=data.hex(),
                               local_name=names[0] if names else None)
                found.set_result(adv)
            elif names:
                self.rec.event("scan_response", address=str(adv.address), name=names[0])

        self.device.on("advertisement", on_adv)
        await self.device.start_scanning(filter_duplicates=False)
        try:
            adv = await asyncio.wait_for(found, timeout)
        finally:
            self.device.remove_listener("advertisement", on_adv)
            await self.device.stop_scanning()
        preferences = None
        if "interval_ms" in step:
            # [min, max] in ms; the CONNECT_IND carries the minimum.
            low, high = step["interval_ms"]
            preferences = {hci.Phy.LE_1M: ConnectionParametersPreferences(
                connection_interval_min=low, connection_interval_max=high,
                supervision_timeout=step.get("supervision_timeout_ms", 720))}
        connection = await self.device.connect(
            adv.address, own_address_type=hci.OwnAddressType.RANDOM, timeout=timeout,
            connection_parameters_preferences=preferences)
        keys = await self.device.keystore.get(str(connection.peer_address))
        if keys is not None and step.get("encrypt_if_bonded", True):
            # What iOS does: re-encrypt a bonded link right away.
            self.rec.event("encrypting_with_bond", peer=str(connection.peer_address))
            await connection.encrypt()

    async def forget(self, peer: str | None, timeout: float) -> None:
        """iOS "Forget This Device": hang up if connected, then delete every
        key held for the wearable (`peer`: its address, default the kernel
        controller's), so the next security request or encryption need is
        met by pairing afresh. Bumble keeps no other pairing state across
        connections (its SMP sessions belong to a connection; LTK requests
        and `encrypt()` look the keystore up each time)."""
        peer = (peer or KERNEL_CTRL_ADDR).upper()
        if self.connection is not None:
            await self.connection.disconnect()
            if self.connection is not None:
                await self.rec.wait_for(lambda r: r["event"] == "disconnected", timeout)
        deleted = []
        for name, _ in await self.device.keystore.get_all():
            if name.upper().split("/")[0] == peer:
                await self.device.keystore.delete(name)
                deleted.append(name)
        left = [name for name, _ in await self.device.keystore.get_all()
                if name.upper().split("/")[0] == peer]
        self.sc_cccd_by_peer.pop(peer, None)  # no bond, nothing kept for it
        self.sc_pending.pop(peer, None)
        self.rec.event("forgot", peer=peer, deleted=deleted, left=left)

    async def rotate_rpa(self) -> None:
        """A new resolvable private address from the phone's IRK, as an
        iPhone makes one every so often. Bumble 0.0.236's Device.update_rpa()
        sends LE Set Random Address with the *old* address, so the command
        is sent here with the new one. Only while idle (not connected,
        scanning or connecting)."""
        if self.connection is not None:
            raise RuntimeError("rotate_rpa while connected")
        old = self.device.random_address
        new = hci.Address.generate_private_address(self.device.irk)
        await self.device.send_command(hci.HCI_LE_Set_Random_Address_Command(random_address=new),
                                       check_result=True)
        self.device.random_address = new
        self.rec.event("rpa_rotated", old=str(old), new=str(new), resolvable=new.is_resolvable)

    async def browse_wearable(self, timeout: float) -> None:
        """What an iPhone does on its own: discover the wearable's GATT
        database and read the Device Name and Appearance."""
        if self.connection is None:
            raise RuntimeError("not connected")
        peer = Peer(self.connection)

        async def browse():
            await peer.discover_all()
            services = [str(s.uuid) for s in peer.services]
            characteristics = [str(c.uuid) for s in peer.services for c in s.characteristics]
            values = {}
            for uuid, key in ((gatt.GATT_DEVICE_NAME_CHARACTERISTIC, "name"),
                              (gatt.GATT_APPEARANCE_CHARACTERISTIC, "appearance")):
                found = peer.get_characteristics_by_uuid(uuid)
                if found:
                    values[key] = (await peer.read_value(found[0])).hex()
            return services, characteristics, values

        services, characteristics, values = await asyncio.wait_for(browse(), timeout)
        self.rec.event("wearable_gatt", services=services, characteristics=characteristics,
                       device_name=bytes.fromhex(values.get("name", "")).decode(errors="replace"),
                       appearance=values.get("appearance"))

    async def watch_service_changed(self, peer: Peer) -> None:
        """Indications on the wearable's Service Changed (0x2A05), as iOS
        enables them on a bonded accessory: each one is recorded
        (`wearable_service_changed` with the handle range) and confirmed by
        Bumble's GATT client. Once per link."""
        if self.watching_service_changed:
            return
        services = await peer.discover_service(core.UUID.from_16_bits(GATT_SERVICE))
        found = (await peer.discover_characteristics([core.UUID.from_16_bits(SERVICE_CHANGED)], services[0])
                 if services else [])
        if not found:
            self.rec.event("wearable_service_changed_absent")
            return

        def on_indication(value: bytes) -> None:
            start, end = struct.unpack("<HH", value) if len(value) == 4 else (None, None)
            self.rec.event("wearable_service_changed", hex=value.hex(), start=start, end=end)

        await peer.subscribe(found[0], on_indication, prefer_notify=False)
        self.watching_service_changed = True
        self.rec.event("wearable_service_changed_subscribed", handle=found[0].handle)

    async def battery(self, step: dict, timeout: float) -> None:
        """The wearable's Battery Service as an iPhone uses it: enable
        Service Changed indications, find the service by its UUID (0x180F;
        when it is not there, wait for a Service Changed indication and look
        again), read Battery Level (0x2A19): `battery_read`; then, unless
        "subscribe" is false, write 0x0001 to its CCCD: `battery_subscribed`,
        and every notification after it is a `battery_notified` (level: the
        byte, hex: the whole value)."""
        if self.connection is None:
            raise RuntimeError("not connected")
        connection = self.connection
        peer = Peer(connection)

        def on_level(value: bytes) -> None:
            self.rec.event("battery_notified", level=value[0] if len(value) == 1 else None, hex=value.hex())

        async def run():
            await self.watch_service_changed(peer)
            services = []
            for _ in range(3):  # bounded: the service may come with a Service Changed
                mark = self.rec.mark()
                services = await peer.discover_service(core.UUID.from_16_bits(BATTERY_SERVICE))
                if services:
                    break
                self.rec.event("battery_absent")
                await self.rec.wait_for(lambda r: r["event"] == "wearable_service_changed", timeout, since=mark)
            if not services:
                raise RuntimeError("no Battery Service after 3 Service Changed indications")
            service = services[0]
            found = await peer.discover_characteristics([core.UUID.from_16_bits(BATTERY_LEVEL)], service)
            if not found:
                raise RuntimeError("Battery Service without Battery Level")
            level = found[0]
            await peer.discover_descriptors(level)
            cccd = level.get_descriptor(gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR)
            value = await peer.read_value(level)
            self.rec.event("battery_read", level=value[0] if len(value) == 1 else None, hex=value.hex(),
                           service=[service.handle, service.end_group_handle],
                           value_handle=level.handle,
                           properties=int(level.properties), cccd=cccd.handle if cccd else None)
            if step.get("subscribe", True):
                await peer.subscribe(level, on_level)
                self.rec.event("battery_subscribed", cccd=cccd.handle if cccd else None)

        await asyncio.wait_for(run(), timeout)

    async def run_step(self, step: dict) -> None:
        do = step["do"]
        timeout = step.get("timeout", 30)
        if do == "connect":
            await self.step_connect(step)
        elif do == "wait_subscribed":
            if not self.session_active:
                await self.rec.wait_for(lambda r: r["event"] == "session_start", timeout)
            if self.replay_task is not None:
                # new notifications only after the PreExisting replay
                await asyncio.wait_for(self.replay_task, timeout)
        elif do == "notify":
            n = self.make_notification(step)
            event = EV_MODIFIED if n.uid in self.notifications else EV_ADDED
            self.notifications[n.uid] = n
            await self.send_ns(event, n)
        elif do == "remove":
            n = self.notifications.pop(step["uid"])
            await self.send_ns(EV_REMOVED, n)
        elif do == "wait_cp":
            want = step.get("count", 1)
            if self.rec.counts.get("cp_write", 0) < want:
                await self.rec.wait_for(
                    lambda r: self.rec.counts.get("cp_write", 0) >= want, timeout)
        elif do == "wait_event":
            match = {k: v for k, v in step.items() if k not in ("do", "timeout")}
            await self.rec.wait_for(
                lambda r: all(r.get(k) == v for k, v in match.items()), timeout)
        elif do == "sleep":
            await asyncio.sleep(step.get("seconds", 1))
        elif do == "disconnect":
            if self.connection is not None:
                await self.connection.disconnect()
                if self.connection is not None:
                    await self.rec.wait_for(lambda r: r["event"] == "disconnected", timeout)
        elif do == "wait_disconnect":
            if self.connection is not None:
                await self.rec.wait_for(lambda r: r["event"] == "disconnected", timeout)
        elif do == "scan":
            await self.step_scan(step)
        elif do == "browse_wearable":
            await self.browse_wearable(timeout)
        elif do == "battery":
            await self.battery(step, timeout)
        elif do == "forget":
            await self.forget(step.get("peer"), timeout)
        elif do == "rotate_rpa":
            await self.rotate_rpa()
        elif do == "remove_ancs":
            start, end = self.remove_ancs()
            await self.database_changed(start, end)
        elif do == "add_ancs":
            start, end = self.add_ancs()
            await self.database_changed(start, end)
        elif do == "move_ancs":
            start, end = self.remove_ancs()
            self.add_filler()
            _, new_end = self.add_ancs()
            await self.database_changed(start, max(end, new_end))
        else:
            raise ValueError(f"unknown step {do!r}")

    async def run(self) -> bool:
        ok = True
        for index, step in enumerate(self.scenario.get("steps", [])):
            self.rec.event("step", index=index, **step)
            try:
                await self.run_step(step)
            except asyncio.TimeoutError:
                self.rec.event("step_timeout", index=index, do=step["do"])
                ok = False
                break
            except Exception as e:  # noqa: BLE001
                log.exception("step failed")
                self.rec.event("step_failed", index=index, do=step["do"], error=repr(e))
                ok = False
                break
        return ok


# ----------------------------------------------------------------------------
async def build_phone(link, recorder: Recorder, scenario: dict, address: str = PHONE_ADDR,
                      keystore: str | None = None, name: str = "iPhone",
                      privacy_irk: bytes | None = None) -> tuple[Device, Phone]:
    """The phone's own controller + host + device, powered on.

    `privacy_irk`: the phone uses LE privacy as an iPhone does: it scans and
    connects from a resolvable private address made from this IRK, and
    hands out `address` (a static random address) as its identity with the
    IRK when it pairs. No automatic rotation (`rotate_rpa` step)."""
    phone_ctrl = Controller(f"phone-ctrl-{address}", link=link)
    config = DeviceConfiguration()
    config.name = name
    config.address = hci.Address(address)
    config.irk = privacy_irk or bytes.fromhex("00112233445566778899aabbccddeeff")
    if privacy_irk is not None:
        config.le_privacy_enabled = True
        config.le_rpa_timeout = 0
    config.io_capability = pairing.PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_YES_NO_INPUT
    device = Device(config=config, host=Host(phone_ctrl, AsyncPipeSink(phone_ctrl)))
    identity_type = pairing.PairingConfig.AddressType.RANDOM if privacy_irk is not None else None
    device.pairing_config_factory = lambda connection: pairing.PairingConfig(
        sc=True, mitm=True, bonding=True, delegate=PhoneDelegate(recorder),
        identity_address_type=identity_type)

    phone = Phone(device, recorder, scenario)
    phone.controller = phone_ctrl  # the suite takes it off the link and back
    if phone.has_ams:
        device.add_service(phone.ams)
    if phone.has_cts:
        device.add_service(phone.cts)
    device.add_service(phone.ancs)  # last service: see add_ancs()
    phone.ancs_present = True
    await device.power_on()
    if keystore:
        device.keystore = JsonKeyStore(namespace=None, filename=keystore)
    return device, phone


async def main_async(args) -> int:
    recorder = Recorder(args.results)
    scenario = DEFAULT_SCENARIO
    if args.scenario:
        with open(args.scenario) as f:
            scenario = json.load(f)
    elif args.scenario_json:
        scenario = json.loads(args.scenario_json)

    link = bumble_link.LocalLink()

    # Controller behind the kernel's hci0
    transport = await open_transport(f"vhci:{args.vhci}" if args.vhci else "vhci")
    kernel_ctrl = Controller("wl-ctrl", host_source=transport.source,
                             host_sink=transport.sink, link=link,
                             public_address=args.kernel_addr)
    recorder.event("vhci_open", address=args.kernel_addr)

    device, phone = await build_phone(link, recorder, scenario, args.phone_addr, args.keystore)
    recorder.event("phone_ready", address=args.phone_addr,
                   ancs=[phone.ancs.handle, phone.ancs.end_group_handle],
                   ns=phone.ns.handle, cp=phone.cp.handle, ds=phone.ds.handle,
                   ams=[phone.ams.handle, phone.ams.end_group_handle] if phone.has_ams else None,
                   cts=[phone.cts.handle, phone.cts.end_group_handle] if phone.has_cts else None,
                   service_changed=device.gatt_service.service_changed_characteristic.handle)

    try:
        ok = await asyncio.wait_for(phone.run(), args.timeout)
    except asyncio.TimeoutError:
        recorder.event("scenario_timeout", seconds=args.timeout)
        ok = False

    summary = {"ok": ok, "counts": recorder.counts,
               "remaining_notifications": sorted(phone.notifications)}
    with open(os.path.join(args.results, "phone-summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    recorder.event("done", ok=ok)
    if phone.connection is not None and args.disconnect_at_end:
        try:
            await asyncio.wait_for(phone.connection.disconnect(), 5)
        except Exception:  # noqa: BLE001
            pass
    await transport.close()
    del kernel_ctrl
    return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--vhci", default="", help="vhci device (default /dev/vhci)")
    p.add_argument("--results", default="results")
    p.add_argument("--scenario", help="JSON scenario file")
    p.add_argument("--scenario-json", help="JSON scenario as a string")
    p.add_argument("--kernel-addr", default=KERNEL_CTRL_ADDR)
    p.add_argument("--phone-addr", default=PHONE_ADDR)
    p.add_argument("--keystore", help="JSON key store file (default: in memory)")
    p.add_argument("--timeout", type=float, default=150)
    p.add_argument("--disconnect-at-end", action="store_true")
    p.add_argument("--log-level", default=os.environ.get("PHONE_LOG", "INFO"))
    args = p.parse_args()
    os.makedirs(args.results, exist_ok=True)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s.%(msecs)03d %(name)s %(levelname)s %(message)s",
        datefmt="%H:%M:%S",
        handlers=[logging.FileHandler(os.path.join(args.results, "phone.log")),
                  logging.StreamHandler(sys.stderr)])
    if args.log_level.upper() != "DEBUG":
        logging.getLogger("bumble").setLevel(logging.WARNING)
    patch_bumble()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
