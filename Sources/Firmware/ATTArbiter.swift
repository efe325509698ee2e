// SPDX-License-Identifier: Apache-2.0
// The one owner of "one ATT request outstanding" (Core Vol 3 Part F 3.3.2:
// a client sends no request before the last one's response). Every client
// of the phone's services asks here whether it may send, and a response
// goes to the client that holds the bearer; no other code decides it.
//
// The turn-taking rules, written once:
// 1. Until the link is live, the link's own procedure holds the bearer:
//    the MTU exchange, GATT discovery, the Service Changed subscription,
//    ANCS discovery and subscription (and a resubscription, which leaves
//    the live phase first). Nobody else sends.
// 2. On the live link the bearer is handed in this order, each time it is
//    free: the ANCS Control Point first (a queued command), then AMS (a
//    media press, or the next step of its bring-up), then CTS (the next
//    step of its bring-up, which starts once AMS's is over), then the
//    keep-alive (its clocks run only while the bearer is free; the probe
//    it sends is a Control Point command). Notifications matter more than
//    music, music more than the clock, and a probe is only meaningful when
//    nothing else is asked of the phone.
// 3. A holder keeps the bearer until its exchange is over. For the Control
//    Point that is the whole command: the write (or every step of a long
//    write) and, for a fetch, the Data Source response; meanwhile only a
//    further Control Point command may go (the session lets an action past
//    a fetch awaiting its response: the write itself is answered). AMS
//    and CTS hold it for one request and its response.
// 4. A restart (Service Changed, a resubscription, a new link) moves the
//    link's generation on, so a response to a request made before it is
//    stale and reaches nobody.
//
// The holder is not stored: it is read off the clients' own state each
// time (the session's command in flight, the long write, AMS's or CTS's
// request out), so it cannot disagree with them.

struct ATTArbiter: Equatable {
    /// The clients that take turns on the bearer.
    enum Client: Equatable {
        /// The link's bring-up (rule 1).
        case link
        case controlPoint
        /// The Apple Media Service client (AMSClient.swift).
        case ams
        /// The Current Time Service client (CTSClient.swift).
        case cts
        case keepAlive
    }

    /// Who holds the bearer now; nil: it is free on the live link.
    let holder: Client?

    init(live: Bool, controlPointBusy: Bool, amsBusy: Bool, ctsBusy: Bool) {
        if !live {
            holder = .link
        } else if amsBusy {
            holder = .ams
        } else if ctsBusy {
            holder = .cts
        } else if controlPointBusy {
            holder = .controlPoint
        } else {
            holder = nil
        }
    }

    /// Whether `client` may take its turn now (rules 1 to 3). The Control
    /// Point may go while it holds the bearer (the session decides whether
    /// a second command may pass); the others only when it is free. The
    /// caller offers the turns in the order of rule 2.
    func mayTakeTurn(_ client: Client) -> Bool {
        switch client {
        case .link: holder == .link
        case .controlPoint: holder == nil || holder == .controlPoint
        case .ams, .cts, .keepAlive: holder == nil
        }
    }
}
