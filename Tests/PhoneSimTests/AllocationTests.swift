import ANCS
import Bounded
import PhoneSim
import Testing
import TestSupport

@Suite("The phone's steady state allocates nothing", .enabled(if: isOptimizedBuild, "allocation counts are measured on the optimized build (swift test -c release)"))
struct PhoneAllocationTests {
    @Test("a typed notification, its attributes fetched at MTU 23, the action performed and the events formatted: no allocation")
    func notifyFetchAct() throws {
        var phone = PhoneCore(config: .serverOnly())
        phone.linkUp(now: Instant(ms: 0))
        _ = phone.subscribeANCS()
        _ = phone.takeEvents()
        let notify = Array("call \"Bob\" uid=7 message=\"A long enough message to need several Data Source fragments\"".utf8)
        let fetch = hex("12 15 00 00 07 00 00 00 00 01 40 00 03 00 01 06 07")
        let act = hex("12 15 00 02 07 00 00 00 00")
        var out = ByteBuffer(capacity: 600)
        var line = ByteBuffer(capacity: 300)
        var sent = 0
        var failures = 0
        var lines = 0
        let perRound = allocationsPerRound(rounds: 200) {
            do {
                try phone.command(notify.span, now: Instant(ms: 1))
            } catch {
                failures += 1
            }
            phone.receive(fetch.span, now: Instant(ms: 2))
            while phone.popOutgoing(into: &out) { sent += 1 }
            phone.receive(act.span, now: Instant(ms: 3))
            while phone.popOutgoing(into: &out) { sent += 1 }
            while let event = phone.nextEvent() {
                event.write(into: &line)
                lines += 1
            }
        }
        #expect(perRound == 0)
        #expect(failures == 0)
        // The warm-up and 200 counted rounds, each: the notification's
        // attributes in 9 fragments at MTU 23 and the Write Response to the action;
        // 7 event lines.
        #expect(sent == 201 * 10)
        #expect(lines == 201 * 7)
        #expect(phone.notificationCount == 0)
    }
}
