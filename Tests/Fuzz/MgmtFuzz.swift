// SPDX-License-Identifier: Apache-2.0
// libFuzzer targets for the management interface: the event decoder, the
// bond file parser and the start-up sequencer fed arbitrary events.

import Bounded
import Mgmt

/// Any bytes: either a typed error or an event whose header matched the
/// bytes exactly.
func fuzzMgmtEvent(_ input: Span<UInt8>) {
    do throws(MgmtDecodeError) {
        let packet = try MgmtEvent.decode(input)
        precondition(input.count >= 6 && Int(input.le16(at: 4)) == input.count - 6, "decoded despite a length mismatch")
        if case .deviceConnected(let connected) = packet.event { precondition(connected.eirByteCount == input.count - 6 - 13) }
        if case .unknown(_, let n) = packet.event { precondition(n == input.count - 6) }
    } catch {
        switch error {
        case .truncatedHeader(let n): precondition(n == input.count && n < 6)
        case .truncated(let declared, let received): precondition(declared > received)
        case .oversize(let declared, let received): precondition(declared < received)
        case .parametersTooShort(_, let n, let minimum): precondition(n < minimum)
        case .parametersTooLong(_, let n, let expected): precondition(n > expected)
        }
    }
}

/// Any bytes as a bond file: a parsed store writes a file that parses back
/// to the same bytes.
func fuzzBondFile(_ input: Span<UInt8>) {
    guard let store = try? BondStore.parse(input) else { return }
    precondition(store.count <= BondStore.capacity)
    var first = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
    precondition(store.serialize(into: &first), "a parsed store always fits the maximum file")
    guard let again = try? BondStore.parse(first.span) else { preconditionFailure("our own file must parse") }
    var second = ByteBuffer(capacity: BondStore.maxSerializedByteCount)
    again.serialize(into: &second)
    precondition(first.count == second.count)
    for i in 0..<first.count { precondition(first[i] == second[i], "serialize/parse must round-trip") }
}

/// Input: events, each prefixed by a 2-byte little-endian length (Read
/// Controller Information's reply is 289 bytes), and time steps (length 0,
/// then a byte of 250 ms units).
/// The sequencer must never have two commands in flight or fail to encode.
func fuzzControllerSetup(_ input: Span<UInt8>) {
    guard let config = try? SetupConfig(index: ControllerIndex(0), name: LocalName("Wristlink"),
                                        solicitedService: UUID128("7905F431-B5CE-4E99-A40F-4B1E122D00D0")) else { return }
    var setup = ControllerSetup(config: config)
    let bonds = BondStore()
    var out = ByteBuffer(capacity: ControllerSetup.commandBufferCapacity)
    var r = Reader(input)
    var now = Instant.zero
    while r.remaining > 0 {
        let length = Int(r.byte()) | Int(r.byte()) << 8
        if length == 0 {
            now = now.advanced(byMs: Int64(r.byte()) * 250)
            setup.poll(now: now)
            continue
        }
        do throws(MgmtEncodeError) {
            if try setup.nextCommand(bonds: bonds, into: &out, now: now) != nil {
                let second = try setup.nextCommand(bonds: bonds, into: &out, now: now)
                precondition(second == nil, "one command in flight")
                // A command sent waits for its reply at most replyTimeoutMs.
                guard let due = setup.nextDeadline else { preconditionFailure("a command in flight without a reply deadline") }
                precondition(due.ms(since: now) <= setup.config.replyTimeoutMs, "reply deadline beyond replyTimeoutMs")
            }
        } catch {
            preconditionFailure("the sequencer's commands always fit its buffer")
        }
        if let packet = try? MgmtEvent.decode(r.take(length)) { setup.handle(packet, now: now) }
        // A deadline belongs to a state that has one: a step's reply (at
        // most replyTimeoutMs away), the end of fast advertising (ready), the
        // next probe for a controller that went (at most probeMaxMs away),
        // the retry of a failed sequence (retryDelayMs).
        if let deadline = setup.nextDeadline {
            let boundMs = max(ControllerSetup.probeMaxMs, setup.config.replyTimeoutMs, setup.config.retryDelayMs)
            precondition(deadline.ms(since: now) <= boundMs, "a deadline further away than any state allows")
            if case .inProgress = setup.status {
                precondition(deadline.ms(since: now) <= setup.config.replyTimeoutMs, "a step waits longer than replyTimeoutMs")
            }
        } else if case .failed = setup.status {
            preconditionFailure("a failed set-up without a retry deadline")
        }
    }
}
