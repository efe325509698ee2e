// SPDX-License-Identifier: Apache-2.0
// The Current Time Service client (docs/cts.md), which makes the phone the
// wearable's clock. Sans-IO, like AMSClient: it writes its next request
// when the arbiter gives it the bearer (ATTArbiter.swift: last of the
// services, before the keep-alive) and is handed the response.
//
// Once per link, after AMS's bring-up is over (one service at a time, so
// a media press never waits behind the clock):
//   discover CTS -> read Current Time -> read Local Time Information ->
//   subscribe Current Time -> done.
// `prepare` (at ANCS live) says the service will run on this link and
// with which cached handles; `begin` (when AMS is done) starts it. An
// absent CTS is normal, reported once (`time unknown`). The phone's clock
// is kept across links (the monotonic clock keeps running while the
// phone is away); a Current Time notification that says the zone or DST
// changed reads Local Time Information again.

import ATT
import Bounded
import CTS
import GATT

struct CTSClient {
    enum Step: Equatable {
        /// Not run on this link yet.
        case notStarted
        /// Prepared for this link; waits for `begin`.
        case waiting
        case discovering
        case readingCurrentTime
        case readingLocalTime
        case subscribingCurrentTime
        /// Bring-up over (found or absent).
        case done
    }

    private(set) var step = Step.notStarted
    /// A request is out (its response is this client's).
    private(set) var isOutstanding = false
    private var discovery = ServiceDiscovery(service: .uuid16(CTSUUID.service), wanted: PhoneHandles.wanted(service: 3))
    /// The handles on this link came from the bonded phone's cache.
    private var fromCache = false
    private var cccd = CCCDWrite(handle: 0, value: 0)
    private var currentTimeHandle: UInt16 = 0
    /// The phone's local time, kept across links.
    private(set) var clock = PhoneClock()
    /// A Current Time read (or notified), waiting for Local Time
    /// Information, and when it was taken.
    private var timeRead: (time: CurrentTime, at: Instant)? = nil
    /// Current Time notifications were asked for on this link.
    private var timeSubscribed = false

    /// A request waits to be written (and none is out).
    var wantsToSend: Bool {
        guard !isOutstanding else { return false }
        switch step {
        case .notStarted, .waiting, .done: return false
        default: return true
        }
    }

    /// A new link (or a changed database): nothing of the service is known
    /// but the clock.
    mutating func reset() {
        step = .notStarted
        discovery.restart()
        isOutstanding = false
        currentTimeHandle = 0
        timeRead = nil
        timeSubscribed = false
        fromCache = false
    }

    /// The service will run on this link, from these handles when given
    /// (present, as an earlier link of this bonded phone found them).
    mutating func prepare(cached: DiscoveredService? = nil) {
        reset()
        step = .waiting
        if let cached, cached.isPresent {
            discovery.restore(cached)
            fromCache = true
        }
    }

    /// Starts the prepared bring-up: reads at once from cached handles,
    /// else discovers.
    mutating func begin() {
        guard step == .waiting else { return }
        startFinding()
    }

    /// What discovery found on this link, when present.
    var discovered: DiscoveredService? { discovery.snapshot.flatMap { $0.isPresent ? $0 : nil } }

    /// Whether a Service Changed range touches the service (one not found
    /// yet counts as touched: it may have appeared).
    func isAffected(by range: ServiceChangedRange) -> Bool {
        discovery.serviceStart == 0 || range.overlaps(start: discovery.serviceStart, end: discovery.serviceEnd)
    }

    /// The request out will get no answer this client sees: its step is
    /// written again later.
    mutating func abandonOutstanding() {
        isOutstanding = false
        switch step {
        case .discovering: discovery.restart()
        case .subscribingCurrentTime: cccd = CCCDWrite(handle: cccd.cccdHandle, value: cccd.value)
        default: break
        }
    }

    // MARK: Requests

    mutating func nextRequest(into out: inout ByteBuffer, mtu: Int) -> Bool {
        guard !isOutstanding else { return false }
        let wrote: Bool
        switch step {
        case .notStarted, .waiting, .done:
            return false
        case .discovering:
            wrote = discovery.nextRequest(into: &out, mtu: mtu)
        case .subscribingCurrentTime:
            wrote = cccd.nextRequest(into: &out, mtu: mtu)
        case .readingCurrentTime:
            PDUWriter.readRequest(&out, handle: currentTimeHandle)
            wrote = true
        case .readingLocalTime:
            PDUWriter.readRequest(&out, handle: discovery.characteristic(.uuid16(CTSUUID.localTimeInformation))?.valueHandle ?? 0)
            wrote = true
        }
        if wrote { isOutstanding = true }
        return wrote
    }

    // MARK: Responses

    /// The response to the request out; the event it means, if any.
    mutating func handle(_ response: ATTPDU, in pdu: Span<UInt8>, now: Instant) -> LinkEvent? {
        guard isOutstanding else { return nil }
        isOutstanding = false
        switch step {
        case .notStarted, .waiting, .done:
            return nil
        case .discovering:
            switch discovery.handle(response, in: pdu) {
            case .continuing:
                return nil
            case .done:
                return found()
            case .serviceNotFound, .failed:
                step = .done
                return .time(.unknown(.noCTS))
            }
        case .readingCurrentTime, .readingLocalTime, .subscribingCurrentTime:
            if fromCache, CompanionRequests.isStale(response) {
                // A cached handle refused as not there: found again.
                fromCache = false
                currentTimeHandle = 0
                startFinding()
                return nil
            }
            return stepAnswered(response, in: pdu, now: now)
        }
    }

    private mutating func startFinding() {
        if fromCache {
            // Found on an earlier link: read at once (no event: the read's
            // own answer reports, and an earlier link reported the rest).
            _ = found()
            if step == .done { fromCache = false }
            return
        }
        step = .discovering
        discovery.restart()
    }

    /// The service is known (discovered, or restored from the cache).
    private mutating func found() -> LinkEvent? {
        guard let ct = discovery.characteristic(.uuid16(CTSUUID.currentTime)), ct.valueHandle != 0 else {
            step = .done
            return .time(.unknown(.noCTS))
        }
        currentTimeHandle = ct.valueHandle
        step = .readingCurrentTime
        return nil
    }

    private mutating func stepAnswered(_ response: ATTPDU, in pdu: Span<UInt8>, now: Instant) -> LinkEvent? {
        switch step {
        case .readingCurrentTime:
            guard case .readResponse(let range) = response else {
                subscribeCurrentTime()
                return .time(.unknown(.readFailed))
            }
            return currentTime(pdu.extracting(range), now: now, afterRead: true)
        case .readingLocalTime:
            if case .readResponse(let range) = response {
                do throws(CTSError) {
                    clock.learn(try LocalTimeInformation.decode(pdu.extracting(range)))
                } catch {
                    // The zone stays as it was (unknown the first time).
                }
            }
            subscribeCurrentTime()
            guard let read = timeRead else { return nil }
            timeRead = nil
            let jump = clock.learn(read.time, at: read.at)
            return .time(.learned(clock, jumpS: jump))
        case .subscribingCurrentTime:
            let progress = cccd.handle(response, in: pdu)
            step = .done
            timeSubscribed = true
            return CompanionRequests.refused(progress, .currentTime)
        default:
            return nil
        }
    }

    private mutating func subscribeCurrentTime() {
        if !timeSubscribed, let ct = discovery.characteristic(.uuid16(CTSUUID.currentTime)), ct.cccdHandle != 0 {
            step = .subscribingCurrentTime
            cccd = CCCDWrite(handle: ct.cccdHandle, value: CCCDValue.notifications)
        } else {
            step = .done
        }
    }

    /// A Current Time value, read or notified. With its zone unknown, or
    /// changed (the adjust reason says so), Local Time Information is read
    /// first and the time is learned with it.
    private mutating func currentTime(_ value: Span<UInt8>, now: Instant, afterRead: Bool) -> LinkEvent? {
        let time: CurrentTime
        do throws(CTSError) {
            time = try CurrentTime.decode(value)
        } catch {
            if afterRead {
                subscribeCurrentTime()
                return .time(.unknown(.badValue))
            }
            return .drop(.currentTime(error))
        }
        if !afterRead, timeRead != nil {
            // A newer sample while Local Time Information is read for an
            // older one: the newer is learned with the zone, the older
            // never overwrites it.
            timeRead = (time, now)
            return nil
        }
        let zoneChanged = !time.adjustReason.intersection([.timeZoneChange, .dstChange]).isEmpty
        let hasLocalTime = discovery.characteristic(.uuid16(CTSUUID.localTimeInformation)).map { $0.valueHandle != 0 } ?? false
        if hasLocalTime, afterRead || (zoneChanged && step == .done) {
            timeRead = (time, now)
            step = .readingLocalTime
            return nil
        }
        if afterRead { subscribeCurrentTime() }
        let jump = clock.learn(time, at: now)
        return .time(.learned(clock, jumpS: jump))
    }

    // MARK: Notifications

    mutating func notification(handle: UInt16, value: Span<UInt8>, now: Instant) -> CompanionRequests.Notified {
        guard handle != 0, handle == currentTimeHandle else { return .notMine }
        return .handled(currentTime(value, now: now, afterRead: false))
    }
}

/// What the AMS and CTS clients share: how a write of theirs is encoded,
/// what a refused CCCD write reports, and what a stale cached handle looks
/// like.
enum CompanionRequests {
    /// What a notification was.
    enum Notified: Equatable {
        /// Not this client's handles.
        case notMine
        case handled(LinkEvent?)
    }

    static func write(_ value: Span<UInt8>, to handle: UInt16, into out: inout ByteBuffer, mtu: Int) {
        do {
            try PDUWriter.writeRequest(&out, handle: handle, value: value, mtu: mtu)
        } catch {
            preconditionFailure("a write of two bytes fits the minimum MTU")
        }
    }

    static func refused(_ progress: CCCDWrite.Progress, _ what: CompanionCharacteristic) -> LinkEvent? {
        switch progress {
        case .written: nil
        case .refused(let code): .error(.companionWriteFailed(what, code: code))
        case .failed: .error(.companionWriteFailed(what, code: 0))
        }
    }

    /// A cached handle refused as not there (attribute not found, invalid
    /// handle).
    static func isStale(_ response: ATTPDU) -> Bool {
        guard case .errorResponse(_, _, let code) = response else { return false }
        return ATTErrorCode.isStaleHandle(code)
    }
}
