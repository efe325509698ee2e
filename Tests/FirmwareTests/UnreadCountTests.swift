// SPDX-License-Identifier: Apache-2.0
// The unread indicator follows the phone's CategoryCount from every
// Notification Source event, whatever the 64-entry table still holds, and
// a notification the phone answered 0xA2 for leaves its category one fewer
// than the latest count, not than the count it arrived with.

import ANCS
import Bounded
import Config
import Firmware
import Testing
import TestSupport

@Suite("Unread indicator: counts from every Notification Source event")
struct UnreadCountTests {
    @Test("a Removed for a notification the full table had evicted still puts the unread LED out: its count comes from the event")
    func removedAfterEvictionClearsUnread() {
        var rig = CoreRig()
        rig.notify(.added, [.preExisting], .social, count: 1, uid: 1)
        #expect(rig.level("led-notify") == true, "unread: one Social notification")
        // 64 more (News: not an unread category) push UID 1 out of the table.
        for uid in UInt32(2)...65 { rig.notify(.added, [.preExisting], .news, count: UInt8(uid - 1), uid: uid) }
        #expect(rig.core.phone.session.table.record(uid: 1) == nil, "UID 1 was evicted")
        #expect(rig.core.phone.session.table.count == 64)
        rig.notify(.removed, [], .social, count: 0, uid: 1)
        #expect(rig.level("led-notify") == false, "the phone says no Social notification is left")
    }

    @Test("0xA2 on one of two unread emails leaves the unread LED on: the removal counts down from the latest Email count")
    func invalidUIDUsesTheLatestCount() {
        var rig = CoreRig()
        rig.notify(.added, [.negativeAction], .email, count: 1, uid: 1)
        rig.notify(.added, [], .email, count: 2, uid: 2)
        rig.advance(ms: 2_000)
        _ = rig.takeSent()
        rig.press(1)
        #expect(rig.takeSent() == ["12 10 00 02 01 00 00 00 01"], "reject acts on UID 1, the latest offering it")
        rig.phone("01 12 10 00 A2")
        let removed = rig.events.compactMap { event -> NotificationRecord? in
            if case .link(.notification(.removed(let r))) = event { r } else { nil }
        }
        #expect(removed.map(\.uid) == [1])
        #expect(removed.map(\.categoryCount) == [1], "Email had 2; one is gone")
        rig.advance(ms: 2_000)
        #expect(rig.level("led-notify") == true, "UID 2 is still unread")
    }

    @Test("a Modified that moves a notification to another category takes it out of the old category's count")
    func categoryChangeLeavesTheOldCategory() {
        var rig = CoreRig()
        rig.notify(.added, [.preExisting], .social, count: 1, uid: 1)
        #expect(rig.level("led-notify") == true)
        rig.notify(.modified, [.preExisting], .news, count: 1, uid: 1)
        #expect(rig.level("led-notify") == false, "no Social notification is left; News is not an unread category")
    }
}
