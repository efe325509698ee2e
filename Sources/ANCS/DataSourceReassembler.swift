// SPDX-License-Identifier: Apache-2.0
// Data Source response reassembly: a resumable, byte-at-a-time state machine
// (after Nordic's ancs_attr_parser, with the checks it lacks).
//
// A response has no total length and no end marker, and the NP splits it at
// arbitrary byte positions, including inside a 2-byte length and inside the
// NUL-terminated app identifier. So the parser is told what it awaits
// (`expect`), keeps its position between fragments, and completes exactly
// when the last requested tuple is complete.
//
// Storage: one arena, allocated in `init`, with a fixed slot per attribute
// sized by `AttributeLimits`. A value longer than its slot is cut (flagged,
// counted) and the excess skipped, never buffered. Values stay readable
// after completion until the next `expect` or `abort`.
//
// Checks: the CommandID and the UID or app identifier must match the
// request, else the fragment is dropped and the parser waits for a response
// to start again in a later fragment (a response always starts a
// notification, so a late answer to an older command cannot poison the one
// we await). A header that began in an earlier fragment and turns out not to
// match was not the awaited response (the tail of a stale one can be shorter
// than a header: `00`, `00 00` after a zero-length last tuple), so the
// fragment that ended it is read once more from its first byte as a response
// start; the earlier header bytes are counted as dropped. Tuples we did not
// ask for, or a repeat of one already received, are skipped and counted.
// Bytes after completion are counted drops.

import Bounded

public struct DataSourceReassembler: ~Copyable {
    /// What the reassembler is waiting for.
    public enum Expectation: Equatable, Sendable {
        case none
        case notificationAttributes(uid: UInt32, attributes: NotificationAttributeSet)
        case appAttributes(appIdentifier: AppIdentifier, attributes: AppAttributeSet)
    }

    /// The result of feeding one fragment.
    public enum Outcome: Equatable, Sendable {
        /// Consumed; the response is not complete yet.
        case needMore
        /// The last requested tuple completed in this fragment. Bytes after
        /// it in the same fragment were dropped (and counted).
        case complete(trailingBytesDropped: Int)
        /// The whole fragment was dropped.
        case dropped(byteCount: Int, reason: DropReason)
    }

    public enum DropReason: Equatable, Sendable {
        case noResponseExpected
        case unexpectedCommandID(UInt8)
        case uidMismatch
        case appIdentifierMismatch

        public var name: StaticString {
            switch self {
            case .noResponseExpected: "data-source-unsolicited"
            case .unexpectedCommandID: "data-source-command-mismatch"
            case .uidMismatch: "data-source-uid-mismatch"
            case .appIdentifierMismatch: "data-source-app-mismatch"
            }
        }
    }

    enum Phase {
        case idle
        case commandID
        case uid(bytesRead: Int)
        case appIdentifier(bytesRead: Int)
        case attributeID
        case lengthLow
        case lengthHigh
        case value(remaining: Int)
        case complete
    }

    struct Slot {
        var offset = 0
        var capacity = 0
        var storedCount = 0
        var declaredCount = 0
    }

    /// Slot index of the app display name; notification attributes use their ID.
    private static let displayNameSlot = 8
    private static let noSlot = -1

    public let limits: AttributeLimits
    private let arena: UnsafeMutablePointer<UInt8>
    private var slots: InlineArray<9, Slot>
    /// The `Expectation` taken apart once in `expect`: the per-byte path
    /// reads these instead of matching on an `Expectation`, which copied its
    /// inline 128-byte app identifier at every header byte and tuple.
    private enum Awaiting { case none, notification, app }
    private var awaiting = Awaiting.none
    private var expectedUID: UInt32 = 0
    private var expectedApp = AppIdentifier()
    private var phase: Phase = .idle
    private var uidSoFar: UInt32 = 0
    private var currentSlot = DataSourceReassembler.noSlot
    private var lengthLowByte: UInt8 = 0
    private var requestedSlots: UInt16 = 0
    private var receivedSlots: UInt16 = 0

    /// Tuples skipped because they were not requested or repeated.
    public private(set) var skippedTupleCount: UInt64 = 0
    /// Values longer than their slot (cut, excess skipped).
    public private(set) var truncatedValueCount: UInt64 = 0
    /// Bytes dropped: unsolicited, mismatched or after completion.
    public private(set) var droppedByteCount: UInt64 = 0

    public init(limits: AttributeLimits) {
        self.limits = limits
        arena = .allocate(capacity: limits.totalBytes)
        arena.initialize(repeating: 0, count: limits.totalBytes)
        slots = InlineArray(repeating: Slot())
        var offset = 0
        for id in NotificationAttributeID.allCases {
            slots[Int(id.rawValue)] = Slot(offset: offset, capacity: limits[id])
            offset += limits[id]
        }
        slots[Self.displayNameSlot] = Slot(offset: offset, capacity: limits.displayNameBytes)
    }

    deinit { arena.deallocate() }

    public var isComplete: Bool {
        if case .complete = phase { return true }
        return false
    }

    /// Whether a response is awaited (expected and not yet complete).
    public var isAwaiting: Bool {
        switch phase {
        case .idle, .complete: false
        default: true
        }
    }

    /// Starts waiting for the response to `expectation`, forgetting any
    /// previous values. No allocation.
    public mutating func expect(_ expectation: Expectation) {
        switch expectation {
        case .none:
            awaiting = .none
            requestedSlots = 0
            phase = .idle
        case .notificationAttributes(let uid, let attributes):
            precondition(!attributes.isEmpty, "a request asks for at least one attribute")
            awaiting = .notification
            expectedUID = uid
            requestedSlots = UInt16(attributes.rawValue)
            phase = .commandID
        case .appAttributes(let appIdentifier, let attributes):
            precondition(!attributes.isEmpty, "a request asks for at least one attribute")
            awaiting = .app
            expectedApp = appIdentifier
            requestedSlots = attributes.contains(.displayName) ? 1 << Self.displayNameSlot : 0
            phase = .commandID
        }
        restartResponse()
    }

    /// Stops waiting (error response, timeout, disconnect). Later fragments
    /// are dropped as unsolicited until the next `expect`.
    public mutating func abort() {
        expect(.none)
    }

    private mutating func restartResponse() {
        receivedSlots = 0
        uidSoFar = 0
        currentSlot = Self.noSlot
        for i in 0..<slots.count {
            slots[i].storedCount = 0
            slots[i].declaredCount = 0
        }
    }

    private mutating func drop(_ count: Int, _ reason: DropReason) -> Outcome {
        droppedByteCount &+= UInt64(count)
        if case .complete = phase {} else if case .idle = phase {} else {
            // A mismatch: wait for the awaited response to start afresh.
            phase = .commandID
            restartResponse()
        }
        return .dropped(byteCount: count, reason: reason)
    }

    /// Feeds one Data Source notification value.
    public mutating func feed(_ fragment: Span<UInt8>) -> Outcome {
        switch phase {
        case .idle, .complete: return drop(fragment.count, .noResponseExpected)
        default: break
        }
        return fragment.withUnsafeBufferPointer { bytes in consume(bytes) }
    }

    private mutating func consume(_ bytes: UnsafeBufferPointer<UInt8>) -> Outcome {
        let total = bytes.count
        var i = 0
        while i < total {
            switch phase {
            case .value(let remaining):
                let available = min(remaining, total - i)
                storeValueBytes(bytes, from: i, count: available)
                i += available
                if available == remaining {
                    if finishTuple() { return completed(trailing: total - i) }
                } else {
                    phase = .value(remaining: remaining - available)
                }
                continue
            case .attributeID where total - i >= 3:
                // The whole tuple header is in this fragment (the common
                // case): taken at once rather than a state per byte.
                startTuple(attributeID: bytes[i])
                let declared = Int(bytes[i + 1]) | Int(bytes[i + 2]) << 8
                i += 3
                if tupleLength(declared) { return completed(trailing: total - i) }
                continue
            default:
                break
            }
            let byte = bytes[i]
            i += 1
            // A header that does not match, and its length with this byte.
            var mismatch: (reason: DropReason, headerBytes: Int)? = nil
            switch phase {
            case .commandID:
                switch awaiting {
                case .notification where byte == CommandID.getNotificationAttributes.rawValue:
                    phase = .uid(bytesRead: 0)
                case .app where byte == CommandID.getAppAttributes.rawValue:
                    phase = .appIdentifier(bytesRead: 0)
                default:
                    return drop(total, .unexpectedCommandID(byte))
                }
            case .uid(let read):
                uidSoFar |= UInt32(byte) << (8 * UInt32(read))
                if read < 3 {
                    phase = .uid(bytesRead: read + 1)
                } else if awaiting == .notification, expectedUID == uidSoFar {
                    phase = .attributeID
                } else {
                    mismatch = (.uidMismatch, read + 2)
                }
            case .appIdentifier(let read):
                if awaiting != .app {
                    mismatch = (.appIdentifierMismatch, read + 2)
                } else if byte == 0 {
                    if read == expectedApp.count { phase = .attributeID } else { mismatch = (.appIdentifierMismatch, read + 2) }
                } else if read < expectedApp.count, expectedApp[read] == byte {
                    phase = .appIdentifier(bytesRead: read + 1)
                } else {
                    mismatch = (.appIdentifierMismatch, read + 2)
                }
            case .attributeID:
                startTuple(attributeID: byte)
                phase = .lengthLow
            case .lengthLow:
                lengthLowByte = byte
                phase = .lengthHigh
            case .lengthHigh:
                if tupleLength(Int(lengthLowByte) | Int(byte) << 8) { return completed(trailing: total - i) }
            case .idle, .complete, .value:
                preconditionFailure("handled above")
            }
            if let mismatch {
                // At most once per fragment: the retry's header begins at
                // byte 0, so its own mismatch drops the fragment.
                if let dropped = headerMismatch(total, headerBytes: mismatch.headerBytes, readHere: i, mismatch.reason) { return dropped }
                i = 0
            }
        }
        return .needMore
    }

    /// The header read so far (`headerBytes`: CommandID, UID or app
    /// identifier bytes, this one included; `readHere` of them in this
    /// fragment of `total` bytes) does not match. Begun in this fragment:
    /// the fragment is dropped. Begun earlier: that start was no response of
    /// ours; nil tells the caller to read this fragment again from its first
    /// byte. The retry's header starts in this fragment, so it never retries
    /// again.
    private mutating func headerMismatch(_ total: Int, headerBytes: Int, readHere: Int, _ reason: DropReason) -> Outcome? {
        let earlier = headerBytes - readHere
        guard earlier > 0 else { return drop(total, reason) }
        droppedByteCount &+= UInt64(earlier)
        phase = .commandID
        restartResponse()
        return nil
    }

    private mutating func startTuple(attributeID: UInt8) {
        currentSlot = slotFor(attributeID: attributeID)
        if currentSlot == Self.noSlot { skippedTupleCount &+= 1 }
    }

    /// The current tuple's declared length is known; true when that
    /// completed the response (an empty last value).
    private mutating func tupleLength(_ declared: Int) -> Bool {
        if currentSlot != Self.noSlot {
            slots[currentSlot].declaredCount = declared
            slots[currentSlot].storedCount = 0
        }
        if declared == 0 { return finishTuple() }
        phase = .value(remaining: declared)
        return false
    }

    private func slotFor(attributeID: UInt8) -> Int {
        let slot: Int
        switch awaiting {
        case .notification: slot = attributeID < 8 ? Int(attributeID) : Self.noSlot
        case .app: slot = attributeID == AppAttributeID.displayName.rawValue ? Self.displayNameSlot : Self.noSlot
        case .none: slot = Self.noSlot
        }
        guard slot != Self.noSlot else { return slot }
        let bit: UInt16 = 1 << UInt16(slot)
        return requestedSlots & bit != 0 && receivedSlots & bit == 0 ? slot : Self.noSlot
    }

    private mutating func storeValueBytes(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, count: Int) {
        guard currentSlot != Self.noSlot else { return }
        let slot = slots[currentSlot]
        let room = slot.capacity - slot.storedCount
        let kept = min(room, count)
        if kept > 0, let base = bytes.baseAddress {
            (arena + slot.offset + slot.storedCount).update(from: base + start, count: kept)
            slots[currentSlot].storedCount += kept
        }
    }

    /// Marks the current tuple received; true when the response is complete.
    private mutating func finishTuple() -> Bool {
        if currentSlot != Self.noSlot {
            receivedSlots |= 1 << UInt16(currentSlot)
            if slots[currentSlot].declaredCount > slots[currentSlot].capacity { truncatedValueCount &+= 1 }
        }
        currentSlot = Self.noSlot
        if receivedSlots == requestedSlots {
            phase = .complete
            return true
        }
        phase = .attributeID
        return false
    }

    private mutating func completed(trailing: Int) -> Outcome {
        droppedByteCount &+= UInt64(trailing)
        return .complete(trailingBytesDropped: trailing)
    }

    // MARK: Values of the last response

    private func slotIndex(_ id: NotificationAttributeID) -> Int? {
        guard awaiting == .notification else { return nil }
        let slot = Int(id.rawValue)
        return receivedSlots & (1 << UInt16(slot)) != 0 ? slot : nil
    }

    private func displayNameSlotIndex() -> Int? {
        guard awaiting == .app else { return nil }
        return receivedSlots & (1 << UInt16(Self.displayNameSlot)) != 0 ? Self.displayNameSlot : nil
    }

    private func bytes(ofSlot slot: Int?) -> UnsafeBufferPointer<UInt8> {
        guard let slot else { return UnsafeBufferPointer(start: arena, count: 0) }
        return UnsafeBufferPointer(start: arena + slots[slot].offset, count: slots[slot].storedCount)
    }

    /// The stored bytes of `id` as a raw buffer, for owners that re-export
    /// them as a `Span` tied to their own lifetime.
    func valueBuffer(_ id: NotificationAttributeID) -> UnsafeBufferPointer<UInt8> { bytes(ofSlot: slotIndex(id)) }

    /// Whether the last notification-attributes response carried `id`.
    public func received(_ id: NotificationAttributeID) -> Bool { slotIndex(id) != nil }

    /// The stored bytes of `id` (empty when missing or not received).
    @_lifetime(borrow self)
    public borrowing func value(_ id: NotificationAttributeID) -> Span<UInt8> {
        let span = Span(_unsafeElements: bytes(ofSlot: slotIndex(id)))
        return _overrideLifetime(span, borrowing: self)
    }

    /// The length the NP declared for `id`, which may exceed what was kept.
    public func declaredLength(_ id: NotificationAttributeID) -> Int? {
        slotIndex(id).map { slots[$0].declaredCount }
    }

    public func isTruncated(_ id: NotificationAttributeID) -> Bool {
        slotIndex(id).map { slots[$0].declaredCount > slots[$0].storedCount } ?? false
    }

    /// The display name from the last app-attributes response (empty when missing).
    public var displayName: Span<UInt8> {
        @_lifetime(borrow self)
        borrowing get {
            let span = Span(_unsafeElements: bytes(ofSlot: displayNameSlotIndex()))
            return _overrideLifetime(span, borrowing: self)
        }
    }

    public var isDisplayNameTruncated: Bool {
        displayNameSlotIndex().map { slots[$0].declaredCount > slots[$0].storedCount } ?? false
    }
}
