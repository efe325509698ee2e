// SPDX-License-Identifier: Apache-2.0
// The Apple Media Service client (docs/ams.md): the media buttons' one
// service on the phone. Sans-IO: it writes its next request into the
// link's buffer when the arbiter gives it the bearer (ATTArbiter.swift:
// after the Control Point, before CTS) and is handed that request's
// response; notifications on its handles come to it too.
//
// Once per link, after ANCS is subscribed:
//   discover AMS -> subscribe Remote Command -> subscribe Entity Update ->
//   write Entity Update `00 01` (Player, PlaybackInfo) -> done.
// An absent AMS (older iOS, or not offered) is normal, reported once
// (`media absent`), never an error. A refused write is reported and the
// next step goes on. Nothing else of AMS is fetched: the wearable has no
// display, so no track titles.
//
// A media press is one Remote Command byte, written only when the phone
// lists the command as available now; it goes before the remaining
// bring-up steps (of AMS and of CTS). Handles restored from a bonded
// phone's cache are used until one is refused as stale, which sends the
// service back to discovery.

import AMS
import ATT
import Bounded
import GATT

struct AMSClient {
    enum Step: Equatable {
        /// Not run on this link yet (waits for ANCS to be live).
        case notStarted
        case discovering
        case subscribingRemoteCommand
        case subscribingEntityUpdate
        case writingEntityUpdate
        /// Bring-up over (found or absent); media presses may still go.
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

    private(set) var step = Step.notStarted
    private(set) var outstanding: Outstanding? = nil
    private var pendingMedia: RemoteCommandID? = nil
    private var discovery = ServiceDiscovery(service: .uuid128(AMSUUID.service), wanted: PhoneHandles.wanted(service: 2))
    /// The handles on this link came from the bonded phone's cache.
    private var fromCache = false
    private var cccd = CCCDWrite(handle: 0, value: 0)
    private var remoteCommandHandle: UInt16 = 0
    private var entityUpdateHandle: UInt16 = 0
    /// The commands the phone lists as available now.
    private var available = RemoteCommandSet()
    /// The last PlaybackInfo reported (nil: none yet on this link; `.other`
    /// never stands for "no player": that is `noPlayer`).
    private var lastPlayback: MediaEvent? = nil

    /// A request waits to be written (and none is out).
    var wantsToSend: Bool {
        guard outstanding == nil else { return false }
        if pendingMedia != nil { return true }
        return step != .notStarted && step != .done
    }

    /// A new link (or a changed database): nothing of the service is known.
    mutating func reset() {
        step = .notStarted
        discovery.restart()
        outstanding = nil
        pendingMedia = nil
        remoteCommandHandle = 0
        entityUpdateHandle = 0
        available = RemoteCommandSet()
        lastPlayback = nil
        fromCache = false
    }

    /// Begins the bring-up; a service given (present, as an earlier link of
    /// this bonded phone found it) is not discovered again.
    mutating func start(cached: DiscoveredService? = nil) {
        let media = pendingMedia
        reset()
        pendingMedia = media
        if let cached, cached.isPresent {
            discovery.restore(cached)
            fromCache = true
            if !found() { step = .done }
        } else {
            step = .discovering
        }
    }

    /// What discovery found on this link, when present.
    var discovered: DiscoveredService? { discovery.snapshot.flatMap { $0.isPresent ? $0 : nil } }

    /// Whether a Service Changed range touches the service (one not found
    /// yet counts as touched: it may have appeared).
    func isAffected(by range: ServiceChangedRange) -> Bool {
        discovery.serviceStart == 0 || range.overlaps(start: discovery.serviceStart, end: discovery.serviceEnd)
    }

    /// The request out will get no answer this client sees (the link's
    /// generation moved on): its step is written again later. A media
    /// command in flight is returned, to be reported interrupted, as is one
    /// still waiting when `dropMedia`.
    mutating func abandonOutstanding(dropMedia: Bool) -> RemoteCommandID? {
        var lost: RemoteCommandID? = nil
        if case .media(let id) = outstanding { lost = id }
        outstanding = nil
        if dropMedia, lost == nil, let id = pendingMedia { lost = id }
        if dropMedia { pendingMedia = nil }
        switch step {
        case .discovering: discovery.restart()
        case .subscribingRemoteCommand, .subscribingEntityUpdate:
            // The write that went out is spent: a fresh one for the same
            // descriptor, or the step would never be written again.
            cccd = CCCDWrite(handle: cccd.cccdHandle, value: cccd.value)
        default: break
        }
        return lost
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
            CompanionRequests.write(byte.span, to: remoteCommandHandle, into: &out, mtu: mtu)
            outstanding = .media(command)
            return true
        }
        let wrote: Bool
        switch step {
        case .notStarted, .done:
            return false
        case .discovering:
            wrote = discovery.nextRequest(into: &out, mtu: mtu)
        case .subscribingRemoteCommand, .subscribingEntityUpdate:
            wrote = cccd.nextRequest(into: &out, mtu: mtu)
        case .writingEntityUpdate:
            var request = InlineBytes<2>()
            request.append(EntityID.player.rawValue)
            request.append(PlayerAttributeID.playbackInfo.rawValue)
            CompanionRequests.write(request.span, to: entityUpdateHandle, into: &out, mtu: mtu)
            wrote = true
        }
        if wrote { outstanding = .step }
        return wrote
    }

    // MARK: Responses

    /// The response to the request out; the event it means, if any.
    mutating func handle(_ response: ATTPDU, in pdu: Span<UInt8>) -> LinkEvent? {
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
        case .discovering:
            switch discovery.handle(response, in: pdu) {
            case .continuing:
                return nil
            case .done:
                if found() { return nil }
                step = .done
                return .media(.absent)
            case .serviceNotFound, .failed:
                step = .done
                return .media(.absent)
            }
        case .subscribingRemoteCommand:
            if staleCachedHandle(response) { return nil }
            let progress = cccd.handle(response, in: pdu)
            afterRemoteCommand()
            return CompanionRequests.refused(progress, .remoteCommand)
        case .subscribingEntityUpdate:
            if staleCachedHandle(response) { return nil }
            let progress = cccd.handle(response, in: pdu)
            step = progress == .written ? .writingEntityUpdate : .done
            return CompanionRequests.refused(progress, .entityUpdate)
        case .writingEntityUpdate:
            if staleCachedHandle(response) { return nil }
            step = .done
            if case .errorResponse(_, _, let code) = response { return .error(.companionWriteFailed(.entityUpdate, code: code)) }
            return nil
        }
    }

    /// A cached handle refused as not there: the service is found again.
    private mutating func staleCachedHandle(_ response: ATTPDU) -> Bool {
        guard fromCache, CompanionRequests.isStale(response) else { return false }
        fromCache = false
        remoteCommandHandle = 0
        entityUpdateHandle = 0
        step = .discovering
        discovery.restart()
        return true
    }

    /// The service is known: subscribes Remote Command (or goes on to
    /// Entity Update); false when it has no Remote Command.
    private mutating func found() -> Bool {
        guard let rc = discovery.characteristic(.uuid128(AMSUUID.remoteCommand)), rc.valueHandle != 0 else { return false }
        remoteCommandHandle = rc.valueHandle
        if rc.cccdHandle != 0 {
            subscribe(.subscribingRemoteCommand, rc.cccdHandle)
        } else {
            afterRemoteCommand()
        }
        return true
    }

    private mutating func afterRemoteCommand() {
        if let eu = discovery.characteristic(.uuid128(AMSUUID.entityUpdate)), eu.valueHandle != 0, eu.cccdHandle != 0 {
            entityUpdateHandle = eu.valueHandle
            subscribe(.subscribingEntityUpdate, eu.cccdHandle)
        } else {
            step = .done
        }
    }

    private mutating func subscribe(_ next: Step, _ cccdHandle: UInt16) {
        step = next
        cccd = CCCDWrite(handle: cccdHandle, value: CCCDValue.notifications)
    }

    // MARK: Notifications

    mutating func notification(handle: UInt16, value: Span<UInt8>) -> CompanionRequests.Notified {
        guard handle != 0 else { return .notMine }
        if handle == remoteCommandHandle {
            available = RemoteCommandList(value).available
            return .handled(nil)
        }
        guard handle == entityUpdateHandle else { return .notMine }
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
}
