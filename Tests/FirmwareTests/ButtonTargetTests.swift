// SPDX-License-Identifier: Apache-2.0
// Which notification a button acts on (docs/decisions/button-targets.md):
// the incoming call when one is present, even when a newer
// notification offers the same action; otherwise the most recent
// notification offering it. Checked on the Perform Notification Action
// bytes written to the Control Point (`02 UID ActionID`, in a Write
// Request to handle 0x0010).

import ANCS
import Testing

@Suite("Button target")
struct ButtonTargetTests {
    @Test("a short accept press while a call rings answers the call, not a newer notification that also offers the positive action")
    func acceptActsOnCallNotNewest() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 0x2A)
        rig.notify(.added, [.positiveAction, .negativeAction], .social, uid: 0x2B)
        _ = rig.takeSent()
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 2A 00 00 00 00"], "02 <call UID> 00")
        #expect(rig.events.contains(.action(uid: 0x2A, action: .positive, result: .queued)))
    }

    @Test("a short reject press while a call rings declines the call, not a newer notification that also offers the negative action")
    func rejectActsOnCallNotNewest() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 0x0103_0201)
        rig.notify(.added, [.negativeAction], .email, uid: 0x0103_0202)
        rig.notify(.modified, [.positiveAction, .negativeAction], .social, uid: 0x0103_0203)
        _ = rig.takeSent()
        rig.press(1)
        #expect(rig.takeSent() == ["12 10 00 02 01 02 03 01 01"], "02 <call UID> 01")
    }

    @Test("a call that does not offer the action means nothing to do, even when another notification offers it")
    func callWithoutActionIsNothingToDo() {
        var rig = CoreRig()
        rig.notify(.added, [.positiveAction], .incomingCall, uid: 0x30)
        rig.notify(.added, [.negativeAction], .social, uid: 0x31)
        _ = rig.takeSent()
        rig.press(1)
        #expect(rig.takeSent() == [], "no Perform Notification Action for the social notification")
        #expect(rig.events.contains(.action(uid: 0x30, action: .negative, result: .nothingToDo)))
    }
}
