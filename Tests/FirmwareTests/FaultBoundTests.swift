// SPDX-License-Identifier: Apache-2.0
// Faults found by reading the code, each bounded now:
// unsaved bonds are never reported saved and are written again; a broken
// management socket cannot spin the loop; a request the bearer refuses
// during bring-up cannot stall the link.

import ANCS
import ATT
import Bounded
import Firmware
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

@Suite("Bounded reactions to faults found by reading the code")
struct FaultBoundTests {
    @Test("bonds that cannot be written stay unsaved, are reported, and are written again after the back-off once the state directory is there")
    func unsavedBondsAreRetried() throws {
        let dir = makeScratchDirectory("bond-retry")
        defer { removeTree(dir) }
        let stateDir = dir + "/state"
        var mgmtFDs: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &mgmtFDs) == 0)
        var linkFDs: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &linkFDs) == 0)
        defer { close(mgmtFDs[1]); close(linkFDs[1]) }
        var config = testConfig()
        config.controller.enabled = true
        // No bond yet: pairing mode, where automatic acceptance allows the key.
        config.controller.autoAcceptPairing = true
        let platform = try LinuxPlatform(
            link: UnixLink(connected: linkFDs[0]),
            lines: SimLines(outputs: config.board.outputs.map(\.name), buttons: config.board.buttons.map(\.name), consoleFD: -1),
            handleSignals: false, mgmt: MgmtSocket(connected: mgmtFDs[0]), bondsPath: stateDir + "/bonds")
        var runner = Runner(platform: platform, sink: RecordingSink(), core: WearableCore(config: config))
        runner.start()
        let event = newLongTermKey
        _ = event.withUnsafeBufferPointer { send(mgmtFDs[1], $0.baseAddress, $0.count, 0) }
        for _ in 0..<5 { runner.step(waitingAtMostMs: 20) }
        #expect(runner.effects.sink.events.contains(.controller(.bondStored)) == true)
        #expect(runner.effects.sink.events.filter { $0 == .bondsNotSaved(retryInMs: 1_000) }.count == 1)
        #expect(runner.core.bondsNeedSaving == true, "never marked saved")
        #expect(access(stateDir + "/bonds", F_OK) != 0)
        // Not before the back-off: the steps above and these are well inside 1 s.
        runner.step(waitingAtMostMs: 10)
        #expect(runner.effects.sink.events.filter { if case .bondsNotSaved = $0 { true } else { false } }.count == 1)
        #expect(mkdir(stateDir, 0o700) == 0)
        let start = Sys.monotonicMs()
        while runner.core.bondsNeedSaving, Sys.monotonicMs() - start < 3_000 { runner.step(waitingAtMostMs: 100) }
        #expect(runner.core.bondsNeedSaving == false)
        #expect(readFile(stateDir + "/bonds") == bondFile)
        #expect(runner.effects.sink.events.filter { if case .bondsNotSaved = $0 { true } else { false } }.count == 1)
    }

    @Test("a failing save backs off 1, 2, 4 s and is reported each time")
    func saveBackoffDoubles() throws {
        let dir = makeScratchDirectory("bond-backoff")
        defer { removeTree(dir) }
        var mgmtFDs: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &mgmtFDs) == 0)
        var linkFDs: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &linkFDs) == 0)
        defer { close(mgmtFDs[1]); close(linkFDs[1]) }
        var config = testConfig()
        config.controller.enabled = true
        // No bond yet: pairing mode, where automatic acceptance allows the key.
        config.controller.autoAcceptPairing = true
        let platform = try LinuxPlatform(
            link: UnixLink(connected: linkFDs[0]),
            lines: SimLines(outputs: config.board.outputs.map(\.name), buttons: config.board.buttons.map(\.name), consoleFD: -1),
            handleSignals: false, mgmt: MgmtSocket(connected: mgmtFDs[0]), bondsPath: dir + "/missing/bonds")
        var runner = Runner(platform: platform, sink: RecordingSink(), core: WearableCore(config: config))
        runner.start()
        let event = newLongTermKey
        _ = event.withUnsafeBufferPointer { send(mgmtFDs[1], $0.baseAddress, $0.count, 0) }
        let start = Sys.monotonicMs()
        while Sys.monotonicMs() - start < 3_300 { runner.step(waitingAtMostMs: 100) }
        let retries = runner.effects.sink.events.compactMap { if case .bondsNotSaved(let ms) = $0 { ms } else { nil } }
        #expect(retries == [1_000, 2_000, 4_000], "failures at 0, 1 s and 3 s; the next is due at 7 s")
        #expect(runner.core.bondsNeedSaving == true)
    }

    @Test("a management socket whose peer is gone reads end of file: it leaves the poll set for 100 ms, then 200 ms, and writes to it are dropped, not queued")
    func brokenManagementSocketBacksOff() {
        var fds: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        var socket = MgmtSocket(connected: fds[0])
        close(fds[1])
        var packet = ByteBuffer(capacity: MgmtSocket.maxPacketBytes)
        let t0 = Instant(ms: 5_000)
        #expect(socket.receive(into: &packet, now: t0) == false)
        #expect(socket.failedReads == 1)
        #expect(socket.pausedUntil == Instant(ms: 5_100))
        var poll = PollSet()
        socket.addDescriptor(to: &poll, now: Instant(ms: 5_050))
        #expect(poll.count == 0, "not polled during the back-off: POLLHUP cannot wake the loop")
        #expect(socket.receive(into: &packet, now: Instant(ms: 5_050)) == false)
        #expect(socket.failedReads == 1, "not read during the back-off")
        socket.addDescriptor(to: &poll, now: Instant(ms: 5_100))
        #expect(poll.count == 1)
        #expect(socket.receive(into: &packet, now: Instant(ms: 5_100)) == false)
        #expect(socket.failedReads == 2)
        #expect(socket.pausedUntil == Instant(ms: 5_300))
        var command = ByteBuffer(capacity: 16)
        _ = command.append(contentsOf: hex("04 00 00 00 00 00").span)
        socket.send(command)
        #expect(socket.failedWrites == 1)
        #expect(socket.droppedCommands == 1)
        socket.send(command)
        #expect(socket.failedWrites == 2, "not queued behind the first: each write is tried and dropped")
    }

    @Test("a request the bearer refuses (queue full) during a restart ends the link instead of stalling it")
    func refusedRequestEndsTheLink() {
        var config = scriptedLinkConfig()
        config.bearer.requestQueueCapacity = 2
        var rig = LinkRig(link: LinkDriver(config: config))
        rig.link.linkUp(now: rig.now)
        rig.settle()
        rig.run(Script.bringUp)
        #expect(rig.link.state == .live)
        rig.link.receive(hex("1B 0D 00 00 08 01 01 01 00 00 00").span, now: rig.now)
        rig.settle()
        #expect(rig.link.performAction(uid: 1, .positive) == .queued)
        rig.settle()
        #expect(rig.sent() == ["12 10 00 02 01 00 00 00 00"], "the action's write, left unanswered")
        // Service Changed over ANCS, again and again: each restart asks for
        // discovery behind the unanswered write until the queue is full.
        for _ in 0..<3 {
            rig.link.receive(hex("1D 03 00 0B 00 14 00").span, now: rig.now)
            rig.settle()
        }
        #expect(rig.events.contains(.error(.requestRefused)))
        #expect(rig.actions.contains(.disconnect(reason: .attRefused)))
    }
}

private func readFile(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n == 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
