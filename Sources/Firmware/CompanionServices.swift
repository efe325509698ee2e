// SPDX-License-Identifier: Apache-2.0
// The phone's other services beside ANCS, as one client procedure run on
// the live link: the Apple Media Service (docs/ams.md) for the media
// buttons, and the Current Time Service (docs/cts.md), which makes the
// phone the wearable's clock. Sans-IO: it writes its next request into the
// link's buffer and is handed the response; PhoneLink decides when it may
// send (ANCS's Control Point goes first: notifications matter more than
// music, and ATT allows one request outstanding).
//
// Order, once per link after ANCS is subscribed:
//   discover AMS -> subscribe Remote Command -> subscribe Entity Update ->
//   write Entity Update `00 01` (Player, PlaybackInfo) ->
//   discover CTS -> read Current Time -> read Local Time Information ->
//   subscribe Current Time.
// Either service may be absent (older iOS, or not offered): that is normal,
// reported once (`media absent`, `time unknown`), never an error. A refused
// write is reported and the next step goes on. Nothing else of AMS is
// fetched: the wearable has no display, so no track titles.
//
// A media press is one Remote Command byte, written only when the phone
// lists the command as available now; it goes before the remaining
// bring-up steps. The phone's clock is kept across links (the monotonic
// clock keeps running while the phone is away); a Current Time
// notification that says the zone or DST changed reads Local Time
// Information again.

import AMS
import ATT
import Bounded
import CTS
import GATT

struct CompanionServices {
    enum Step: Equatable {
        /// Not run on this link yet (waits for ANCS to be live).
        case notStarted
        case discoveringAMS
        case subscribingRemoteCommand
        case subscribingEntityUpdate
        case writingEntityUpdate
        case discoveringCTS
        case readingCurrentTime
        case readingLocalTime
        case subscribingCurrentTime
        case done
    }

    /// The request out now.
    enum Outstanding: Equatable {
        case step
        case media(RemoteCommandID)
    }

    enum MediaRequest: Equatable {
        case queued
        case notAvailable
        case busy
    }

    /// What a notification was.
    enum Notified: Equatable {
        /// Not one of these services' handles.
        case notMine
        case handled(LinkEvent?)
    }

    private(set) var step = Step.notStarted
    private(set) var outstanding: Outstanding? = nil
    private var pendingMedia: RemoteCommandID? = nil
    private var ams = ServiceDiscovery(service: .uuid128(AMSUUID.service), wanted: PhoneHandles.wanted(service: 2))
    private var cts = ServiceDiscovery(service: .uuid16(CTSUUID.service), wanted: PhoneHandles.wanted(service: 3))
    /// AMS's and CTS's handles on this link came from the bonded phone's
    /// cache: one refused as stale sends that service back to discovery.
    private var amsFromCache = false
    private var ctsFromCache = false
    private var cccd = CCCDWrite(handle: 0, value: 0)
    private var remoteCommandHandle: UInt16 = 0
    private var entityUpdateHandle: UInt16 = 0
    private var currentTimeHandle: UInt16 = 0
    /// The commands the phone lists as available now.
    private var available = RemoteCommandSet()
    /// The last PlaybackInfo reported (nil: none yet on this link; `.other`
    /// never stands for "no player": that is `noPlayer`).
    private var lastPlayback: MediaEvent? = nil
    /// The phone's local time, kept across links.
    private(set) var clock = PhoneClock()
    /// A Current Time read (or notified), waiting for Local Time
    /// Information, and when it was taken.
    private var timeRead: (time: CurrentTime, at: Instant)? = nil
    /// Current Time notifications were asked for on this link.
    private var timeSubscribed = false

    /// A request waits to be written (and none is out).
    var wantsToSend: Bool {
        guard outstanding == nil else { return false }
        if pendingMedia != nil { return true }
        switch step {
        case .notStarted, .done: return false
        default: return true
        }
    }

    /// A new link: nothing of the last one's services is known (the clock
    /// is), not even where they were: a Service Changed on this link is
    /// weighed against this link's database only.
    mutating func reset() {
        step = .notStarted
        ams.restart()
        cts.restart()
        outstanding = nil
        pendingMedia = nil
        remoteCommandHandle = 0
        entityUpdateHandle = 0
        currentTimeHandle = 0
        available = RemoteCommandSet()
        lastPlayback = nil
        timeRead = nil
        timeSubscribed = false
        amsFromCache = false
        ctsFromCache = false
    }

    /// Begins the bring-up (ANCS is live); a service given (present, as an
    /// earlier link of this bonded phone found it) is not discovered again.
    mutating func start(cachedAMS: DiscoveredService? = nil, cachedCTS: DiscoveredService? = nil) {
        let media = pendingMedia
        reset()
        pendingMedia = media
        if let cachedCTS, cachedCTS.isPresent {
            cts.restore(cachedCTS)
            ctsFromCache = true
        }
        if let cachedAMS, cachedAMS.isPresent {
            ams.restore(cachedAMS)
            amsFromCache = true
            if !amsFound() { startCTS() }
        } else {
            step = .discoveringAMS
            ams.restart()
        }
    }

    /// What discovery found of AMS and CTS on this link, when present.
    var discoveredAMS: DiscoveredService? { ams.snapshot.flatMap { $0.isPresent ? $0 : nil } }
    var discoveredCTS: DiscoveredService? { cts.snapshot.flatMap { $0.isPresent ? $0 : nil } }

    /// AMS is found: subscribes Remote Command (or goes on to Entity
    /// Update); false when it has no Remote Command.
    private mutating func amsFound() -> Bool {
        guard let rc = ams.characteristic(.uuid128(AMSUUID.remoteCommand)), rc.valueHandle != 0 else { return false }
        remoteCommandHandle = rc.valueHandle
        if rc.cccdHandle != 0 {
            subscribe(.subscribingRemoteCommand, rc.cccdHandle)
        } else {
            afterRemoteCommand()
        }
        return true
    }

    /// A cached handle was refused as not there: the service is found again.
    private func staleAnswer(_ response: ATTPDU) -> Bool {
        guard case .errorResponse(_, _, let code) = response, ATTErrorCode.isStaleHandle(code) else { return false }
        return true
    }

    /// The request out will get no answer this procedure sees (the link's
    /// generation moved on): its step is written again later; a media
    /// command in flight is returned, to be reported interrupted, as is one
    /// still waiting when `dropMedia`.
    mutating func abandonOutstanding(dropMedia: Bool) -> RemoteCommandID? {
        var lost: RemoteCommandID? = nil
        if case .media(let id) = outstanding { lost = id }
        outstanding = nil
        if dropMedia, lost == nil, let id = pendingMedia { lost = id }
        if dropMedia { pendingMedia = nil }
        switch step {
        case .discoveringAMS: ams.restart()
        case .discoveringCTS: cts.restart()
        case .subscribingRemoteCommand, .subscribingEntityUpdate, .subscribingCurrentTime:
            // The write that went out is spent: a fresh one for the same
            // descriptor, or the step would never be written again.
            cccd = CCCDWrite(handle: cccd.cccdHandle, value: cccd.value)
        default: break
        }
        return lost
    }

    /// Whether a Service Changed range touches these services' handles
    /// (a service not found yet counts as touched: it may have appeared).
    func isAffected(by range: ServiceChangedRange) -> Bool {
        let amsKnown = ams.serviceStart != 0
        let ctsKnown = cts.serviceStart != 0
        if !amsKnown || !ctsKnown { return true }
        return range.overlaps(start: ams.serviceStart, end: ams.serviceEnd) || range.overlaps(start: cts.serviceStart, end: cts.serviceEnd)
    }

    // MARK: Media presses

    mutating func requestMedia(_ command: RemoteCommandID) -> MediaRequest {
        guard remoteCommandHandle != 0, available.contains(command) else { return .notAvailable }
        if pendingMedia != nil { return .busy }
        if case .media = outstanding { return .busy }
        pendingMedia = command
        return .queued
    }

    // MARK: Requests

    /// Writes the next request into `out`: a media press first, then the
    /// next bring-up step. False when there is none (or one is out).
    mutating func nextRequest(into out: inout ByteBuffer, mtu: Int) -> Bool {
        guard outstanding == nil else { return false }
        if let command = pendingMedia {
            pendingMedia = nil
            var byte = InlineBytes<1>()
            byte.append(command.rawValue)
            write(byte.span, to: remoteCommandHandle, into: &out, mtu: mtu)
            outstanding = .media(command)
            return true
        }
        let wrote: Bool
        switch step {
        case .notStarted, .done:
            return false
        case .discoveringAMS:
            wrote = ams.nextRequest(into: &out, mtu: mtu)
        case .discoveringCTS:
            wrote = cts.nextRequest(into: &out, mtu: mtu)
        case .subscribingRemoteCommand, .subscribingEntityUpdate, .subscribingCurrentTime:
            wrote = cccd.nextRequest(into: &out, mtu: mtu)
        case .writingEntityUpdate:
            var request = InlineBytes<2>()
            request.append(EntityID.player.rawValue)
            request.append(PlayerAttributeID.playbackInfo.rawValue)
            write(request.span, to: entityUpdateHandle, into: &out, mtu: mtu)
            wrote = true
        case .readingCurrentTime:
            PDUWriter.readRequest(&out, handle: currentTimeHandle)
            wrote = true
        case .readingLocalTime:
            PDUWriter.readRequest(&out, handle: cts.characteristic(.uuid16(CTSUUID.localTimeInformation))?.valueHandle ?? 0)
            wrote = true
        }
        if wrote { outstanding = .step }
        return wrote
    }

    private func write(_ value: Span<UInt8>, to handle: UInt16, into out: inout ByteBuffer, mtu: Int) {
        do {
            try PDUWriter.writeRequest(&out, handle: handle, value: value, mtu: mtu)
        } catch {
            preconditionFailure("a write of two bytes fits the minimum MTU")
        }
    }

    // MARK: Responses

    /// The response to the request out; the event it means, if any.
    mutating func handle(_ response: ATTPDU, in pdu: Span<UInt8>, now: Instant) -> LinkEvent? {
        guard let out = outstanding else { return nil }
        outstanding = nil
        if case .media(let command) = out {
            switch response {
            case .writeResponse: return .media(.commandEnded(command, .sent))
            case .errorResponse(_, _, let code): return .media(.commandEnded(command, .phoneError(code)))
            default: return .media(.commandEnded(command, .phoneError(0)))
            }
        }
        switch step {
        case .notStarted, .done:
            return nil
        case .discoveringAMS:
            switch ams.handle(response, in: pdu) {
            case .continuing:
                return nil
            case .done:
                if amsFound() { return nil }
                startCTS()
                return .media(.absent)
            case .serviceNotFound, .failed:
                startCTS()
                return .media(.absent)
            }
        case .subscribingRemoteCommand, .subscribingEntityUpdate, .writingEntityUpdate:
            if amsFromCache, staleAnswer(response) {
                amsFromCache = false
                remoteCommandHandle = 0
                entityUpdateHandle = 0
                step = .discoveringAMS
                ams.restart()
                return nil
            }
            return amsStepAnswered(response, in: pdu)
        case .readingCurrentTime, .readingLocalTime, .subscribingCurrentTime:
            if ctsFromCache, staleAnswer(response) {
                ctsFromCache = false
                currentTimeHandle = 0
                startCTS()
                return nil
            }
            return ctsStepAnswered(response, in: pdu, now: now)
        case .discoveringCTS:
            switch cts.handle(response, in: pdu) {
            case .continuing:
                return nil
            case .done:
                return ctsFound()
            case .serviceNotFound, .failed:
                step = .done
                return .time(.unknown(.noCTS))
            }
        }
    }

    private mutating func amsStepAnswered(_ response: ATTPDU, in pdu: Span<UInt8>) -> LinkEvent? {
        switch step {
        case .subscribingRemoteCommand:
            let progress = cccd.handle(response, in: pdu)
            afterRemoteCommand()
            return refused(progress, .remoteCommand)
        case .subscribingEntityUpdate:
            let progress = cccd.handle(response, in: pdu)
            if progress == .written {
                step = .writingEntityUpdate
            } else {
                startCTS()
            }
            return refused(progress, .entityUpdate)
        case .writingEntityUpdate:
            startCTS()
            if case .errorResponse(_, _, let code) = response { return .error(.companionWriteFailed(.entityUpdate, code: code)) }
            return nil
        default:
            return nil
        }
    }

    /// CTS is found (discovered, or restored from the cache).
    private mutating func ctsFound() -> LinkEvent? {
        guard let ct = cts.characteristic(.uuid16(CTSUUID.currentTime)), ct.valueHandle != 0 else {
            step = .done
            return .time(.unknown(.noCTS))
        }
        currentTimeHandle = ct.valueHandle
        step = .readingCurrentTime
        return nil
    }

    private mutating func ctsStepAnswered(_ response: ATTPDU, in pdu: Span<UInt8>, now: Instant) -> LinkEvent? {
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
            return refused(progress, .currentTime)
        default:
            return nil
        }
    }

    private func refused(_ progress: CCCDWrite.Progress, _ what: CompanionCharacteristic) -> LinkEvent? {
        switch progress {
        case .written: nil
        case .refused(let code): .error(.companionWriteFailed(what, code: code))
        case .failed: .error(.companionWriteFailed(what, code: 0))
        }
    }

    private mutating func subscribe(_ next: Step, _ cccdHandle: UInt16) {
        step = next
        cccd = CCCDWrite(handle: cccdHandle, value: CCCDValue.notifications)
    }

    private mutating func afterRemoteCommand() {
        if let eu = ams.characteristic(.uuid128(AMSUUID.entityUpdate)), eu.valueHandle != 0, eu.cccdHandle != 0 {
            entityUpdateHandle = eu.valueHandle
            subscribe(.subscribingEntityUpdate, eu.cccdHandle)
        } else {
            startCTS()
        }
    }

    private mutating func startCTS() {
        if ctsFromCache {
            // Found on an earlier link: read at once (no event: the time's
            // own answer reports).
            _ = ctsFound()
            if step == .done { ctsFromCache = false }
            return
        }
        step = .discoveringCTS
        cts.restart()
    }

    private mutating func subscribeCurrentTime() {
        if !timeSubscribed, let ct = cts.characteristic(.uuid16(CTSUUID.currentTime)), ct.cccdHandle != 0 {
            subscribe(.subscribingCurrentTime, ct.cccdHandle)
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
        let hasLocalTime = cts.characteristic(.uuid16(CTSUUID.localTimeInformation)).map { $0.valueHandle != 0 } ?? false
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

    mutating func notification(handle: UInt16, value: Span<UInt8>, now: Instant) -> Notified {
        guard handle != 0 else { return .notMine }
        if handle == remoteCommandHandle {
            available = RemoteCommandList(value).available
            return .handled(nil)
        }
        if handle == entityUpdateHandle {
            let update: EntityUpdate
            do throws(EntityUpdateError) { update = try EntityUpdate.decode(value) } catch { return .handled(.drop(.entityUpdate(error))) }
            guard update.entity == .player, update.attribute == PlayerAttributeID.playbackInfo.rawValue else { return .handled(nil) }
            let text = value.extracting(update.valueRange)
            let event: MediaEvent
            if text.count == 0 {
                event = .noPlayer
            } else {
                do throws(PlaybackInfoError) { event = .playback(try PlaybackInfo.state(text)) } catch {
                    return .handled(.drop(.playbackInfo(error)))
                }
            }
            guard event != lastPlayback else { return .handled(nil) }
            lastPlayback = event
            return .handled(.media(event))
        }
        if handle == currentTimeHandle {
            return .handled(currentTime(value, now: now, afterRead: false))
        }
        return .notMine
    }
}
