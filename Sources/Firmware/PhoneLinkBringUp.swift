// SPDX-License-Identifier: Apache-2.0
// The phone link's bring-up (PhoneLink.swift has the design): responses
// while the link is not live, GATT and ANCS discovery, the Data Source
// then Notification Source subscriptions, and the retries of a failed
// step; ANCS itself answers through ANCSClient.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import GATT

extension PhoneLink {
    // MARK: Bring-up

    /// A response of this generation goes to the client holding the bearer.
    mutating func response<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ response: ATTPDU, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch arbiter.holder {
        case .link:
            bringUpResponse(response, pdu: pdu, now: now, handler: &handler, effects: &effects)
        case .ams, .cts:
            companionResponse(response, pdu: pdu, now: now, handler: &handler, effects: &effects)
        case .controlPoint, .keepAlive, nil:
            // The Control Point write (or a step of its long write): the
            // only other request made while live (the keep-alive's probe is
            // a Control Point command).
            controlPointResponse(response, pdu: pdu, now: now, handler: &handler, effects: &effects)
        }
    }

    mutating func bringUpResponse<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ response: ATTPDU, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch phase {
        case .disconnected, .ancsAbsent, .waitingForPermission, .retrying, .bringUp(.awaitingEncryption):
            // Nothing of this generation is outstanding in these phases.
            counters.staleResponses &+= 1
        case .bringUp(.exchangingMTU):
            if case .exchangeMTUResponse = response { emit(.mtu(bearer.mtu), now: now, handler: &handler, effects: &effects) }
            if let cached = offeredHandles {
                return useCachedHandles(cached, now: now, handler: &handler, effects: &effects)
            }
            phase = .bringUp(.discoveringGATT)
            gattDiscovery.restart()
            continueGATTDiscovery(now: now, handler: &handler, effects: &effects)
        case .bringUp(.discoveringGATT):
            switch gattDiscovery.handle(response, in: pdu) {
            case .continuing:
                continueGATTDiscovery(now: now, handler: &handler, effects: &effects)
            case .done:
                if let sc = gattDiscovery.characteristic(.uuid16(GATTUUID.serviceChanged)), sc.cccdHandle != 0 {
                    serviceChangedHandle = sc.valueHandle
                    phase = .bringUp(.subscribingServiceChanged)
                    serviceChangedWrite = CCCDWrite(handle: sc.cccdHandle, value: CCCDValue.indications)
                    if serviceChangedWrite.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
                } else {
                    emit(.error(.serviceChangedAbsent), now: now, handler: &handler, effects: &effects)
                    startANCSDiscovery(now: now, handler: &handler, effects: &effects)
                }
            case .serviceNotFound:
                emit(.error(.serviceChangedAbsent), now: now, handler: &handler, effects: &effects)
                startANCSDiscovery(now: now, handler: &handler, effects: &effects)
            case .failed:
                emit(.error(.gattDiscoveryFailed), now: now, handler: &handler, effects: &effects)
                startANCSDiscovery(now: now, handler: &handler, effects: &effects)
            }
        case .bringUp(.subscribingServiceChanged):
            if case .refused = serviceChangedWrite.handle(response, in: pdu) { emit(.error(.serviceChangedSubscribeFailed), now: now, handler: &handler, effects: &effects) }
            if let hash = gattDiscovery.characteristic(.uuid16(GATTUUID.databaseHash)), hash.valueHandle != 0 {
                // Kept with the handles: the next link checks them with one read.
                phase = .bringUp(.readingDatabaseHash)
                PDUWriter.readRequest(&scratch, handle: hash.valueHandle)
                submit(now: now, handler: &handler, effects: &effects)
            } else {
                startANCSDiscovery(now: now, handler: &handler, effects: &effects)
            }
        case .bringUp(.readingDatabaseHash):
            if case .readResponse(let range) = response, range.count == 16 {
                var hash = InlineBytes<16>()
                hash.append(pdu.extracting(range))
                databaseHash = hash
            }
            startANCSDiscovery(now: now, handler: &handler, effects: &effects)
        case .bringUp(.validatingCache):
            guard let kept = databaseHash, Self.hashMatches(kept, response, in: pdu) else {
                return handlesStale(.hashChanged, now: now, handler: &handler, effects: &effects)
            }
            ancsDiscovered(now: now, handler: &handler, effects: &effects)
        case .bringUp(.discoveringANCS):
            switch ancs.discoveryResponse(response, in: pdu) {
            case .continuing:
                continueANCS(now: now, handler: &handler, effects: &effects)
            case .done:
                ancsDiscovered(now: now, handler: &handler, effects: &effects)
            case .serviceNotFound:
                emit(.ancsAbsent, now: now, handler: &handler, effects: &effects)
                ancsUnusable(now: now, handler: &handler, effects: &effects)
            case .failed(let reason):
                if case .attError(_, let code) = reason, ATTErrorCode.isSecurity(code) {
                    phase = .ancsAbsent
                    emit(.error(.ancsDiscoveryNotSecured), now: now, handler: &handler, effects: &effects)
                    act(.disconnect(reason: .notSecured))
                } else {
                    emit(.error(.ancsDiscoveryFailed), now: now, handler: &handler, effects: &effects)
                    bringUpStepFailed(.discovery, now: now, handler: &handler, effects: &effects)
                }
            }
        case .bringUp(.subscribingDataSource):
            let progress = ancs.subscriptionResponse(response, in: pdu)
            guard progress == .written else { return subscribeFailed(.dataSource, progress, now: now, handler: &handler, effects: &effects) }
            subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        case .bringUp(.subscribingNotificationSource):
            let progress = ancs.subscriptionResponse(response, in: pdu)
            guard progress == .written else {
                ancs.endSession(&session)
                return subscribeFailed(.notificationSource, progress, now: now, handler: &handler, effects: &effects)
            }
            phase = .live
            watch.traffic(now: now)
            permissionBackoff.reset()
            bringUpBackoff.reset()
            bringUpFailures = 0
            handlesRevision &+= 1
            if config.companionServices, !companionsStarted {
                if handlesFromCache, let cached = offeredHandles {
                    startCompanions(cachedAMS: cached.ams, cachedCTS: cached.cts)
                } else {
                    startCompanions()
                }
            }
            emit(.subscribed, now: now, handler: &handler, effects: &effects)
        case .resubscribing(.probeFailed):
            // Notification Source is off; Data Source again too: a phone
            // that forgot one subscription may have forgotten both.
            subscribeDataSource(now: now, handler: &handler, effects: &effects)
        case .resubscribing(.silence):
            subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        case .live:
            preconditionFailure("the live link's responses go to its clients")
        }
    }

    /// The answer to the Control Point write, reported in order: the
    /// phone's permission, a removal the phone's 0xA2 means, the command's end.
    mutating func controlPointResponse<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ response: ATTPDU, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        let answer = ancs.controlPointResponse(response, in: pdu, &session, now: now)
        if answer.continuing { return continueANCS(now: now, handler: &handler, effects: &effects) }
        if answer.refusedForPermission { counters.controlPointPermissionRefusals &+= 1 }
        if let inARow = answer.notPermittedInARow { emit(.controlPointNotPermitted(inARow: inARow), now: now, handler: &handler, effects: &effects) }
        if answer.permitted { emit(.controlPointPermitted, now: now, handler: &handler, effects: &effects) }
        if let record = answer.removed {
            counters.removedByInvalidUID &+= 1
            emit(.notification(.removed(record)), now: now, handler: &handler, effects: &effects)
        }
        if let result = answer.result { commandFinished(result, now: now, handler: &handler, effects: &effects) }
    }

    mutating func subscribeFailed<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ what: SubscribedSource, _ progress: CCCDWrite.Progress, now: Instant, handler: inout H, effects: inout Effects<S>) {
        if handlesFromCache, case .refused(let code) = progress, ATTErrorCode.isStaleHandle(code) {
            return handlesStale(.handleRefused, now: now, handler: &handler, effects: &effects)
        }
        if case .refused(let code) = progress,
            code == ATTErrorCode.writeNotPermitted || code == ATTErrorCode.insufficientAuthorization
        {
            // Sharing not allowed (yet): keep the link, try again later.
            counters.permissionRefusals &+= 1
            let retryMs = permissionBackoff.fail()
            phase = .waitingForPermission(retry: what, at: now.advanced(byMs: retryMs))
            emit(.permissionWaiting(retryInMs: retryMs), now: now, handler: &handler, effects: &effects)
            return
        }
        emit(.error(.subscribeFailed(what)), now: now, handler: &handler, effects: &effects)
        bringUpStepFailed(.subscription(what), now: now, handler: &handler, effects: &effects)
    }

    mutating func retrySubscription<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ source: SubscribedSource, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch source {
        case .dataSource: subscribeDataSource(now: now, handler: &handler, effects: &effects)
        case .notificationSource: subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        }
    }

    // MARK: The bonded phone's cached handles

    /// The bonded phone's handles from its last link (its owner keeps them
    /// per bond). Taken while the MTU exchange is out, when they name
    /// Service Changed and ANCS; from then on they stand in for discovery
    /// until one proves stale. Nothing is subscribed before the link is
    /// encrypted, as ever.
    public mutating func offerHandles(_ handles: PhoneHandles) {
        guard phase == .bringUp(.exchangingMTU), isBonded, handles.isUsable else { return }
        offeredHandles = handles
        serviceChangedHandle = handles.genericAttribute?.characteristics[0]?.valueHandle ?? 0
    }

    /// What this link knows of the phone's services, to be kept for its
    /// next link (meaningful at a `handlesRevision`; not usable when
    /// nothing trustworthy is known).
    public var learnedHandles: PhoneHandles {
        var handles = PhoneHandles()
        guard phase == .live, isEncrypted else { return handles }
        handles.genericAttribute = gattDiscovery.snapshot
        handles.ancs = ancs.discoverySnapshot
        handles.ams = ams.discovered
        handles.cts = cts.discovered
        handles.databaseHash = databaseHash
        return handles
    }


    /// Brings the link up from the handles of the phone's last link: its
    /// Database Hash is read first when it has one; otherwise the phone's
    /// Service Changed (a bonded client's subscription persists) is what
    /// says they moved.
    mutating func useCachedHandles<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ cached: PhoneHandles, now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard let gatt = cached.genericAttribute, let ancsService = cached.ancs else { return }
        gattDiscovery.restore(gatt)
        serviceChangedHandle = gattDiscovery.characteristic(.uuid16(GATTUUID.serviceChanged))?.valueHandle ?? 0
        ancs.restoreDiscovery(ancsService)
        handlesFromCache = true
        counters.handleCacheUses &+= 1
        emit(.handles(.cached), now: now, handler: &handler, effects: &effects)
        if let hash = cached.databaseHash {
            databaseHash = hash
            phase = .bringUp(.validatingCache)
            PDUWriter.readByTypeRequest(&scratch, start: 0x0001, end: 0xFFFF, type: .uuid16(GATTUUID.databaseHash))
            submit(now: now, handler: &handler, effects: &effects)
        } else {
            ancsDiscovered(now: now, handler: &handler, effects: &effects)
        }
    }

    /// The Read By Type answer holds one Database Hash, the one kept.
    static func hashMatches(_ kept: InlineBytes<16>, _ response: ATTPDU, in pdu: Span<UInt8>) -> Bool {
        guard case .readByTypeResponse(let entryLength, let entries) = response, entryLength == 18,
            entries.count >= 18
        else { return false }
        for i in 0..<16 where pdu[entries.lowerBound + 2 + i] != kept[i] { return false }
        return true
    }

    /// Cached handles proved wrong: forgotten (the owner drops its record
    /// at the revision), and the phone discovered from the start, as on a
    /// first link. Whatever ANCS session began on them is ended.
    mutating func handlesStale<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ reason: StaleHandlesReason, now: Instant, handler: inout H, effects: inout Effects<S>) {
        handlesFromCache = false
        offeredHandles = nil
        databaseHash = nil
        counters.handleCacheStale &+= 1
        handlesRevision &+= 1
        emit(.handles(.stale(reason)), now: now, handler: &handler, effects: &effects)
        // A Service Changed goes on as it always did (it rediscovers what
        // it covers); a refused handle or another hash starts over here.
        guard reason != .serviceChanged else { return }
        if session.isActive { emit(.ended(reason: .serviceChanged), now: now, handler: &handler, effects: &effects) }
        ancs.endSession(&session)
        generation &+= 1
        abandonCompanion(dropMedia: false, now: now, handler: &handler, effects: &effects)
        resetCompanions()
        phase = .bringUp(.discoveringGATT)
        gattDiscovery.restart()
        continueGATTDiscovery(now: now, handler: &handler, effects: &effects)
    }

    mutating func continueGATTDiscovery<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if gattDiscovery.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
    }

    /// The ANCS client's next request (discovery, a subscription, a step of
    /// a long write).
    mutating func continueANCS<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if ancs.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
    }

    mutating func startANCSDiscovery<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        phase = .bringUp(.discoveringANCS)
        ancs.startDiscovery()
        continueANCS(now: now, handler: &handler, effects: &effects)
    }

    mutating func ancsDiscovered<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard ancs.discovered() else {
            emit(.error(.noNotificationSource), now: now, handler: &handler, effects: &effects)
            emit(.ancsAbsent, now: now, handler: &handler, effects: &effects)
            return ancsUnusable(now: now, handler: &handler, effects: &effects)
        }
        emit(.discovered, now: now, handler: &handler, effects: &effects)
        guard isEncrypted else {
            // Trusted only once encrypted: subscribed from `securityChanged`.
            phase = .bringUp(.awaitingEncryption)
            requestSecurity(attempt: 1, now: now)
            return
        }
        subscribeDataSource(now: now, handler: &handler, effects: &effects)
    }

    /// No usable ANCS. Unencrypted, some iPhones show it only once the link
    /// is encrypted: ask, and `securityChanged` discovers again (the
    /// encryption deadline bounds the wait). Encrypted, discovery is tried
    /// again after a back-off, then the link ends.
    mutating func ancsUnusable<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if isEncrypted {
            bringUpStepFailed(.discovery, now: now, handler: &handler, effects: &effects)
        } else {
            phase = .ancsAbsent
            requestSecurity(attempt: 1, now: now)
        }
    }

    /// Data Source first (when the phone has it), then Notification Source.
    mutating func subscribeDataSource<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if ancs.subscribe(.dataSource, CCCDValue.notifications) {
            phase = .bringUp(.subscribingDataSource)
            continueANCS(now: now, handler: &handler, effects: &effects)
        } else {
            subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        }
    }

    mutating func subscribeNotificationSource<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        // The session begins when the write is sent: the phone may notify
        // the moment it is written, before its Write Response.
        guard ancs.subscribe(.notificationSource, CCCDValue.notifications) else { return }
        phase = .bringUp(.subscribingNotificationSource)
        ancs.endSession(&session)
        session.begin()
        continueANCS(now: now, handler: &handler, effects: &effects)
    }
}
