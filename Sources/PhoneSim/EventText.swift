// SPDX-License-Identifier: Apache-2.0
// Events and scenario errors as one line of text each, written into a
// caller's buffer without allocating, so a runner can log them with a single
// write. The format is `kind key=value ...`, stable enough to grep:
//
//   ns-sent added flags=Important,PositiveAction category=IncomingCall count=1 uid=7
//   cp-write 02 07 00 00 00 00
//   cp-prepare offset=18 bytes=6
//   cp-execute write bytes=24
//   error-answered handle=0x0015 code=0xA2 reason=unknown-uid
//   ams-command 02 toggle-play-pause ok state=paused
//   ams-command 00 play refused code=0xA0 reason=no-player
//   ams-write entity-update 00 01
//   ams-commands-sent play,pause,toggle-play-pause,next-track,previous-track,volume-up,volume-down
//   ams-entity-sent 00 01 flags=00 "0,0.0,12.5"
//   cts-sent 2026-12-01T22:15:03 day=2 adjust=0x05
//   cts-read 2026-12-01T12:00:04 day=2
//   line 3, column 9: unknown category
//
// A line that does not fit the buffer is cut (ByteBuffer refuses the rest).

import AMS
import ANCS
import Bounded
import CTS

extension PhoneEvent {
    /// Replaces the contents of `out` with the event as text (no newline).
    public func write(into out: inout ByteBuffer) {
        out.removeAll()
        switch self {
        case .connected(let bonded):
            out.put("connected bonded=")
            out.put(bonded ? "yes" : "no")
        case .disconnected(let reason):
            out.put("disconnected reason=")
            out.put(reason.text)
        case .mtu(let mtu):
            out.put("mtu ")
            out.put(decimal: mtu)
        case .pairingStarted:
            out.put("pairing-started")
        case .secured(let newlyPaired):
            out.put(newlyPaired ? "secured paired" : "secured bonded")
        case .subscribed(let c):
            out.put("subscribed ")
            out.put(c.name)
        case .unsubscribed(let c):
            out.put("unsubscribed ")
            out.put(c.name)
        case .notificationSent(let e):
            out.put("ns-sent ")
            out.put(e.eventID.name)
            out.put(" flags=")
            var first = true
            for bit in 0..<UInt8(5) where e.flags.rawValue & (1 << bit) != 0 {
                if !first { out.put(",") }
                out.put(flagName(bit))
                first = false
            }
            if first { out.put("none") }
            out.put(" category=")
            out.put(e.category.name)
            out.put(" count=")
            out.put(decimal: Int(e.categoryCount))
            out.put(" uid=")
            out.put(decimal: Int(e.uid))
        case .replayFinished(let count):
            out.put("replay-finished count=")
            out.put(decimal: count)
        case .dataSourceSent(let bytes, let fragments):
            out.put("ds-sent bytes=")
            out.put(decimal: bytes)
            out.put(" fragments=")
            out.put(decimal: fragments)
        case .controlPointWrite(let bytes):
            out.put("cp-write")
            out.put(hex: bytes)
        case .writePrepared(let offset, let byteCount):
            out.put("cp-prepare offset=")
            out.put(decimal: offset)
            out.put(" bytes=")
            out.put(decimal: byteCount)
        case .writeExecuted(let write, let byteCount):
            out.put(write ? "cp-execute write bytes=" : "cp-execute cancel bytes=")
            out.put(decimal: byteCount)
        case .actionPerformed(let uid, let action):
            out.put("action uid=")
            out.put(decimal: Int(uid))
            out.put(" ")
            out.put(action.name)
        case .errorAnswered(let handle, let code, let reason):
            out.put("error-answered handle=0x")
            out.put(hexByte: UInt8(truncatingIfNeeded: handle >> 8))
            out.put(hexByte: UInt8(truncatingIfNeeded: handle))
            out.put(" code=0x")
            out.put(hexByte: code)
            out.put(" reason=")
            out.put(reason.text)
        case .serviceChangedIndicated(let start, let end):
            out.put("service-changed-indicated start=")
            out.put(decimal: Int(start))
            out.put(" end=")
            out.put(decimal: Int(end))
        case .indicationConfirmed:
            out.put("indication-confirmed")
        case .ancsRemoved:
            out.put("ancs-removed")
        case .ancsAdded:
            out.put("ancs-added")
        case .serviceRemoved(let service):
            out.put(service.text)
            out.put("-removed")
        case .mediaCommand(let bytes, let result):
            out.put("ams-command")
            out.put(hex: bytes)
            if bytes.count == 1, let command = RemoteCommandID(rawValue: bytes[0]) {
                out.put(" ")
                out.put(command.name)
            }
            switch result {
            case .done(let state):
                out.put(" ok state=")
                out.put(state.name)
            case .refused(let code, let reason):
                out.put(" refused code=0x")
                out.put(hexByte: code)
                out.put(" reason=")
                out.put(reason.text)
            }
        case .amsWrite(let c, let bytes):
            out.put("ams-write ")
            out.put(c.name)
            out.put(hex: bytes)
        case .remoteCommandsSent(let list):
            out.put("ams-commands-sent ")
            var first = true
            for raw in 0..<UInt8(14) {
                guard let command = RemoteCommandID(rawValue: raw), list.contains(command) else { continue }
                if !first { out.put(",") }
                out.put(command.name)
                first = false
            }
            if first { out.put("none") }
        case .entityUpdateSent(let entity, let attribute, let flags, let value):
            out.put("ams-entity-sent ")
            out.put(hexByte: entity)
            out.put(" ")
            out.put(hexByte: attribute)
            out.put(" flags=")
            out.put(hexByte: flags)
            out.put(" \"")
            out.append(contentsOf: value.span)
            out.put("\"")
        case .currentTimeSent(let time):
            out.put("cts-sent ")
            out.put(time: time)
            out.put(" adjust=0x")
            out.put(hexByte: time.adjustReason.rawValue)
        case .currentTimeRead(let time):
            out.put("cts-read ")
            out.put(time: time)
        case .peerDiscovered(let name, let serviceCount):
            out.put("peer-discovered name=\"")
            out.append(contentsOf: name.span)
            out.put("\" services=")
            out.put(decimal: serviceCount)
        case .valueTruncated(let line, let field):
            out.put("value-truncated line=")
            out.put(decimal: line)
            out.put(" field=")
            out.put(field.text)
        case .stepDone(let line, let command):
            out.put("step-done line=")
            out.put(decimal: line)
            out.put(" ")
            out.put(command.text)
        case .stepFailed(let line, let command, let reason):
            out.put("step-failed line=")
            out.put(decimal: line)
            out.put(" ")
            out.put(command.text)
            out.put(" reason=")
            out.put(reason.text)
        case .scenarioFinished(let ok):
            out.put(ok ? "scenario-finished ok" : "scenario-finished failed")
        case .dropped(let what, let reason):
            out.put("dropped ")
            out.put(what.text)
            out.put(" reason=")
            out.put(reason.text)
        }
    }
}

extension ScenarioError {
    /// Replaces the contents of `out` with "line L, column C: problem".
    public func write(into out: inout ByteBuffer) {
        out.removeAll()
        out.put("line ")
        out.put(decimal: line)
        out.put(", column ")
        out.put(decimal: column)
        out.put(": ")
        out.put(kind.name)
        if case .missingArgument(let what) = kind {
            out.put(" <")
            out.put(what.text)
            out.put(">")
        }
    }
}

/// The spec's name of EventFlags bit `bit` (0–4).
private func flagName(_ bit: UInt8) -> StaticString {
    switch bit {
    case 0: "Silent"
    case 1: "Important"
    case 2: "PreExisting"
    case 3: "PositiveAction"
    default: "NegativeAction"
    }
}

/// Text pieces appended to a ByteBuffer (what does not fit is dropped).
extension ByteBuffer {
    mutating func put(_ text: StaticString) {
        text.withUTF8Buffer { for b in $0 { append(b) } }
    }

    mutating func put(decimal value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8((magnitude / divisor) % 10))
            divisor /= 10
        }
    }

    /// " 02 07 00", and " (cut)" when the bytes were cut to fit.
    mutating func put<let N: Int>(hex bytes: InlineBytes<N>) {
        for i in 0..<bytes.count {
            put(" ")
            put(hexByte: bytes[i])
        }
        if bytes.wasTruncated { put(" (cut)") }
    }

    /// "2026-12-01T22:15:03 day=2" (CTS's day of week, 1 Monday).
    mutating func put(time: CurrentTime) {
        let t = time.local
        put(digits: t.year, 4)
        put("-")
        put(digits: t.month, 2)
        put("-")
        put(digits: t.day, 2)
        put("T")
        put(digits: t.hour, 2)
        put(":")
        put(digits: t.minute, 2)
        put(":")
        put(digits: t.second, 2)
        put(" day=")
        put(decimal: time.dayOfWeek)
    }

    private mutating func put(digits value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    mutating func put(hexByte byte: UInt8) {
        append(Self.hexDigit(byte >> 4))
        append(Self.hexDigit(byte & 0x0F))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}
