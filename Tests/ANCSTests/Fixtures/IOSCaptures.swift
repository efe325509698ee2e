// SPDX-License-Identifier: Apache-2.0
// Data Source responses captured from real iPhones, copied byte for byte
// from the public sources named in each entry (facts, kept as published:
// where a source had edited a byte, the edit is kept and said so).
//
// What each entry holds:
// - `events`: the Data Source events exactly as the source shows them, in
//   order. Most are one ATT Handle Value Notification each; a few are a
//   reassembly buffer whose on-air split was not published (`about` says
//   which).
// - `exchanges`: one per response in those bytes: the request it answers,
//   where its bytes are (`pieces`: one piece per notification as captured;
//   the responses of a buffer are cut at their boundaries), and the values
//   the source shows, in arrival order. The requests themselves were never
//   published: a request here asks for exactly the attributes its response
//   carries (a response answers what was asked, in the order asked), with
//   the maxima of Pebble's firmware of the same commit (Title 40, Subtitle
//   40, Message 200) for Pebble's captures, and the firmware defaults for
//   the others and for the Overcast capture (whose request was not
//   Pebble's published one).
//
// No iOS version is stated by any source; the dates inside run from 2013 to
// 2018 (roughly iOS 7 to 11). No capture from iOS 12 or later, no
// Notification Source bytes, no Control Point writes and no 0xA0-0xA3
// error were found in public sources: tests make those up and say so.
//
// The bytes were taken by script from the sources (their hexdumps; a C
// array or the logged text where there was none) and checked against them;
// this file was generated from that collection by script and compared with
// it byte for byte. Nothing was typed in or "fixed" by hand.
// Tests: CaptureReplayTests.swift.

import ANCS
import Testing
import TestSupport

struct IOSCapture: Sendable, CustomTestStringConvertible {
    /// A short name: source, kind and UID.
    var name: String
    /// Where the bytes were published (repository, path and commit, or URL).
    var source: String
    /// What the capture shows, in our words.
    var about: String
    var events: [[UInt8]]
    var exchanges: [CapturedExchange]

    var testDescription: String { name }
}

/// Where one fragment of a response lies in a capture's events.
struct Piece: Sendable {
    var event: Int
    var bytes: Range<Int>
}

/// The most bytes of Title, Subtitle and Message a request asks for.
struct RequestMaxima: Sendable {
    var title: Int
    var subtitle: Int
    var message: Int
}

/// Pebble's request (src/fw/comm/ble/kernel_le_client/ancs/ancs.c,
/// prv_add_attributes_to_request, same commit): 06, 07, 00, 01 max 40,
/// 02 max 40, 03 max 200, 05.
let pebbleRequestMaxima = RequestMaxima(title: 40, subtitle: 40, message: 200)

enum CapturedRequest: Sendable {
    /// Get Notification Attributes: the attributes in the order the
    /// response carries them; `maxima` nil: the firmware's defaults.
    case notification(uid: UInt32, [NotificationAttributeID], maxima: RequestMaxima?)
    /// Get App Attributes for DisplayName.
    case app(String)
}

struct CapturedExchange: Sendable {
    var request: CapturedRequest
    var pieces: [Piece]
    /// Get Notification Attributes: the values the source shows, in arrival order.
    var values: [(NotificationAttributeID, String)] = []
    /// Get App Attributes: the display name.
    var displayName: String? = nil
    /// False when the source shows only the start of the response.
    var isComplete = true

    init(request: CapturedRequest, pieces: [Piece], values: [(NotificationAttributeID, String)], isComplete: Bool = true) {
        self.request = request
        self.pieces = pieces
        self.values = values
        self.isComplete = isComplete
    }

    init(request: CapturedRequest, pieces: [Piece], displayName: String) {
        self.request = request
        self.pieces = pieces
        self.displayName = displayName
    }
}

let iosCaptures: [IOSCapture] = [
    IOSCapture(
        name: "pebble-sms-0x97-two-fragments",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 23-32, 48-54)",
        about: "An SMS answer in two Data Source notifications (155 + 97 bytes), split inside the 200-byte Message, which iOS cut at exactly 200 bytes with no ellipsis. No Date tuple.",
        events: [
            hex("""
                00 97 00 00 00 00 13 00 63 6F 6D 2E 61 70 70 6C
                65 2E 4D 6F 62 69 6C 65 53 4D 53 01 10 00 72 6A
                63 61 73 65 40 67 6D 61 69 6C 2E 63 6F 6D 02 00
                00 03 C8 00 54 68 69 73 20 69 73 20 61 20 76 65
                72 79 20 63 6F 6D 70 6C 69 63 61 74 65 64 20 63
                61 73 65 2C 20 4D 61 75 64 65 2E 20 59 6F 75 20
                6B 6E 6F 77 2C 20 61 20 6C 6F 74 74 61 20 69 6E
                73 2C 20 6C 6F 74 74 61 20 6F 75 74 73 2C 20 6C
                6F 74 74 61 20 77 68 61 74 2D 68 61 76 65 2D 79
                6F 75 27 73 2E 20 41 6E 64 2C 20
                """),
            hex("""
                75 68 2C 20 6C 6F 74 74 61 20 73 74 72 61 6E 64
                73 20 74 6F 20 6B 65 65 70 20 69 6E 20 6D 79 20
                68 65 61 64 2C 20 6D 61 6E 2E 20 4C 6F 74 74 61
                20 73 74 72 61 6E 64 73 20 69 6E 20 6F 6C 64 20
                44 75 64 65 72 27 73 20 68 65 61 64 2E 20 4C 75
                63 6B 69 6C 79 20 49 27 6D 20 61 64 68 65 72 69
                6E
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x97, [.appIdentifier, .title, .subtitle, .message], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<155), Piece(event: 1, bytes: 0..<97)],
                values: [
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "rjcase@gmail.com"),
                    (.subtitle, ""),
                    (.message, "This is a very complicated case, Maude. You know, a lotta ins, lotta outs, lotta what-have-you's. And, uh, lotta strands to keep in my head, man. Lotta strands in old Duder's head. Luckily I'm adherin"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-sms-0x98-single",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 67-72)",
        about: "An SMS answer in one notification (90 bytes); the Subtitle is a zero-length tuple.",
        events: [
            hex("""
                00 98 00 00 00 00 13 00 63 6F 6D 2E 61 70 70 6C
                65 2E 4D 6F 62 69 6C 65 53 4D 53 01 10 00 72 6A
                63 61 73 65 40 67 6D 61 69 6C 2E 63 6F 6D 02 00
                00 03 26 00 43 61 72 65 66 75 6C 2C 20 6D 61 6E
                2C 20 74 68 65 72 65 27 73 20 61 20 62 65 76 65
                72 61 67 65 20 68 65 72 65 21
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x98, [.appIdentifier, .title, .subtitle, .message], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<90)],
                values: [
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "rjcase@gmail.com"),
                    (.subtitle, ""),
                    (.message, "Careful, man, there's a beverage here!"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-overcast-0x3c-date-first-messagesize",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 86-91)",
        about: "Overcast (2016): Date first, no AppIdentifier tuple, and a Message cut to 40 characters plus a 3-byte ellipsis (U+2026) although MessageSize says 113. The request was not published.",
        events: [
            hex("""
                00 3C 00 00 00 05 0F 00 32 30 31 36 30 33 30 31
                54 31 34 31 35 32 33 01 08 00 4F 76 65 72 63 61
                73 74 02 00 00 03 2B 00 54 68 65 20 4D 6F 74 68
                20 50 6F 64 63 61 73 74 3A 20 4D 6F 6E 69 63 61
                20 43 68 65 72 75 2D 4D 70 61 6D 62 61 77 61 73
                E2 80 A6 04 03 00 31 31 33
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x3C, [.date, .title, .subtitle, .message, .messageSize], maxima: nil),
                pieces: [Piece(event: 0, bytes: 0..<89)],
                values: [
                    (.date, "20160301T141523"),
                    (.title, "Overcast"),
                    (.subtitle, ""),
                    (.message, "The Moth Podcast: Monica Cheru-Mpambawas…"),
                    (.messageSize, "113"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-sms-0x1a-2015",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 104-110)",
        about: "An SMS answer (2015) in the request order of Pebble's firmware: the PositiveActionLabel is a zero-length tuple (SMS has no positive action).",
        events: [
            hex("""
                00 1A 00 00 00 06 00 00 07 05 00 43 6C 65 61 72
                00 13 00 63 6F 6D 2E 61 70 70 6C 65 2E 4D 6F 62
                69 6C 65 53 4D 53 01 13 00 46 72 61 6E 63 6F 69
                73 20 42 61 6C 64 61 73 73 61 72 69 02 00 00 03
                1B 00 74 68 69 73 20 69 73 20 61 20 74 65 73 74
                20 6E 6F 74 69 66 69 63 61 74 69 6F 6E 05 0F 00
                32 30 31 35 30 36 31 35 54 31 36 31 38 33 37
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x1A, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<111)],
                values: [
                    (.positiveActionLabel, ""),
                    (.negativeActionLabel, "Clear"),
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "Francois Baldassari"),
                    (.subtitle, ""),
                    (.message, "this is a test notification"),
                    (.date, "20150615T161837"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-app-attrs-messages",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 161-162)",
        about: "Get App Attributes: Messages.",
        events: [
            hex("""
                01 63 6F 6D 2E 61 70 70 6C 65 2E 4D 6F 62 69 6C
                65 53 4D 53 00 00 08 00 4D 65 73 73 61 67 65 73
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .app("com.apple.MobileSMS"),
                pieces: [Piece(event: 0, bytes: 0..<32)],
                displayName: "Messages"),
        ]),
    IOSCapture(
        name: "pebble-app-attrs-utf8-beta",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 179-182)",
        about: "Get App Attributes with a multi-byte display name: the length (14) counts UTF-8 bytes of 13 characters (U+03B2 is CE B2).",
        events: [
            hex("""
                01 63 6F 6D 2E 67 65 74 70 65 62 62 6C 65 2E 70
                65 62 62 6C 65 74 69 6D 65 2E 65 6E 74 65 72 70
                72 69 73 65 00 00 0E 00 50 65 62 62 6C 65 20 54
                69 6D 65 20 CE B2
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .app("com.getpebble.pebbletime.enterprise"),
                pieces: [Piece(event: 0, bytes: 0..<54)],
                displayName: "Pebble Time β"),
        ]),
    IOSCapture(
        name: "pebble-kickstarter-0x0d-split-in-date",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 214-223, 238-238)",
        about: "A Kickstarter answer in two notifications (155 + 4 bytes), split inside the 15-byte Date value.",
        events: [
            hex("""
                00 0D 00 00 00 00 1B 00 63 6F 6D 2E 6B 69 63 6B
                73 74 61 72 74 65 72 2E 6B 69 63 6B 73 74 61 72
                74 65 72 01 0B 00 4B 69 63 6B 73 74 61 72 74 65
                72 02 00 00 03 56 00 52 65 73 70 6F 6E 73 65 20
                6E 65 65 64 65 64 21 20 47 65 74 20 79 6F 75 72
                20 72 65 77 61 72 64 20 66 6F 72 20 62 61 63 6B
                69 6E 67 20 50 65 62 62 6C 65 3A 20 45 2D 50 61
                70 65 72 79 20 57 61 74 63 68 20 66 6F 72 20 69
                4F 53 20 61 6E 64 20 44 72 6F 69 64 2E 05 0F 00
                32 30 31 34 30 36 31 30 54 32 32
                """),
            hex("""
                32 30 34 38
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x0D, [.appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<155), Piece(event: 1, bytes: 0..<4)],
                values: [
                    (.appIdentifier, "com.kickstarter.kickstarter"),
                    (.title, "Kickstarter"),
                    (.subtitle, ""),
                    (.message, "Response needed! Get your reward for backing Pebble: E-Papery Watch for iOS and Droid."),
                    (.date, "20140610T222048"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-mail-0x22-no-content-placeholder",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 254-263)",
        about: "A Mail answer (2014): Subtitle cut at exactly 40 bytes, no ellipsis; the Message is Mail's placeholder; no PositiveActionLabel tuple.",
        events: [
            hex("""
                00 22 00 00 00 07 07 00 44 69 73 6D 69 73 73 00
                14 00 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69
                6C 65 6D 61 69 6C 01 15 00 41 61 72 6F 6E 20 48
                65 63 6B 6D 61 6E 6E 20 28 4A 49 52 41 29 02 28
                00 5B 4A 49 52 41 5D 20 28 50 42 4C 2D 38 37 37
                36 29 20 45 72 72 6F 72 20 73 63 72 65 65 6E 20
                61 66 74 65 72 20 6C 6F 67 03 1C 00 54 68 69 73
                20 6D 65 73 73 61 67 65 20 68 61 73 20 6E 6F 20
                63 6F 6E 74 65 6E 74 2E 05 0F 00 32 30 31 34 30
                39 32 36 54 31 30 34 33 30 30
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x22, [.negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<154)],
                values: [
                    (.negativeActionLabel, "Dismiss"),
                    (.appIdentifier, "com.apple.mobilemail"),
                    (.title, "Aaron Heckmann (JIRA)"),
                    (.subtitle, "[JIRA] (PBL-8776) Error screen after log"),
                    (.message, "This message has no content."),
                    (.date, "20140926T104300"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-mail-0x19-loading-placeholder",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 277-282)",
        about: "A Mail answer (2014) whose Message is the placeholder \"Loading\" + U+2026.",
        events: [
            hex("""
                00 19 00 00 00 07 07 00 44 69 73 6D 69 73 73 00
                14 00 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69
                6C 65 6D 61 69 6C 01 05 00 4D 61 72 74 79 02 04
                00 74 65 73 74 03 0A 00 4C 6F 61 64 69 6E 67 E2
                80 A6 05 0F 00 32 30 31 34 30 39 32 39 54 31 35
                31 35 31 30
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x19, [.negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<84)],
                values: [
                    (.negativeActionLabel, "Dismiss"),
                    (.appIdentifier, "com.apple.mobilemail"),
                    (.title, "Marty"),
                    (.subtitle, "test"),
                    (.message, "Loading…"),
                    (.date, "20140929T151510"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-mail-0xaa-buffer-ends-on-attribute-id",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 292-311)",
        about: "A Mail buffer of 310 bytes (most likely two 155-byte notifications; the split is not shown) that ends on a lone attribute ID (05, Date) before its length. Subtitle cut at exactly 40 bytes, Message at exactly 200, no ellipsis. Only a prefix of the response: the rest was not published.",
        events: [
            hex("""
                00 AA 00 00 00 07 07 00 44 69 73 6D 69 73 73 00
                14 00 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69
                6C 65 6D 61 69 6C 01 16 00 63 61 6C 65 6E 64 61
                72 40 63 73 61 69 6C 2E 6D 69 74 2E 65 64 75 02
                28 00 54 41 4C 4B 3A 20 54 75 65 73 64 61 79 20
                31 30 2D 32 38 2D 32 30 31 34 20 53 63 69 65 6E
                74 69 66 69 63 20 55 74 6F 70 03 C8 00 53 63 69
                65 6E 74 69 66 69 63 20 55 74 6F 70 69 61 3A 20
                49 6D 70 72 6F 76 69 6E 67 20 4F 70 65 6E 6E 65
                73 73 20 61 6E 64 20 52 65 70 72 6F 64 75 63 69
                62 69 6C 69 74 79 20 69 6E 20 53 63 69 65 6E 74
                69 66 69 63 20 52 65 73 65 61 72 63 68 20 53 70
                65 61 6B 65 72 3A 20 42 72 69 61 6E 20 4E 6F 73
                65 6B 2C 20 55 6E 69 76 65 72 73 69 74 79 20 6F
                66 20 56 69 72 67 69 6E 69 61 20 61 6E 64 20 43
                65 6E 74 65 72 20 66 6F 72 20 4F 70 65 6E 20 53
                63 69 65 6E 63 65 20 53 70 65 61 6B 65 72 20 41
                66 66 69 6C 69 61 74 69 6F 6E 3A 20 55 6E 69 76
                65 72 73 69 74 79 20 6F 66 20 56 69 72 67 69 6E
                69 61 20 48 6F 05
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0xAA, [.negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<310)],
                values: [
                    (.negativeActionLabel, "Dismiss"),
                    (.appIdentifier, "com.apple.mobilemail"),
                    (.title, "calendar@csail.mit.edu"),
                    (.subtitle, "TALK: Tuesday 10-28-2014 Scientific Utop"),
                    (.message, "Scientific Utopia: Improving Openness and Reproducibility in Scientific Research Speaker: Brian Nosek, University of Virginia and Center for Open Science Speaker Affiliation: University of Virginia Ho"),
                ],
                isComplete: false),
        ]),
    IOSCapture(
        name: "pebble-three-responses-back-to-back",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 350-365)",
        about: "One 255-byte buffer holding three complete answers back to back (two incoming calls, one calendar alert); how they were split on air is not shown. The calls' Date is a zero-length tuple. One byte was edited by the source (the third app identifier ends in X: phone -> phonX), kept as published.",
        events: [
            hex("""
                00 74 00 00 00 06 06 00 41 6E 73 77 65 72 07 07
                00 44 65 63 6C 69 6E 65 00 15 00 63 6F 6D 2E 61
                70 70 6C 65 2E 6D 6F 62 69 6C 65 70 68 6F 6E 65
                01 03 00 49 6D 6D 02 06 00 6D 6F 62 69 6C 65 03
                0D 00 49 6E 63 6F 6D 69 6E 67 20 43 61 6C 6C 05
                00 00 00 75 00 00 00 07 07 00 44 69 73 6D 69 73
                73 00 13 00 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F
                62 69 6C 65 63 61 6C 01 11 00 48 61 69 6C 65 79
                27 73 20 70 72 61 63 74 69 63 65 02 00 00 03 0A
                00 52 65 64 20 4D 6F 72 74 6F 6E 05 0F 00 32 30
                31 34 31 30 32 38 54 31 36 30 30 30 30 00 76 00
                00 00 06 06 00 41 6E 73 77 65 72 07 07 00 44 65
                63 6C 69 6E 65 00 15 00 63 6F 6D 2E 61 70 70 6C
                65 2E 6D 6F 62 69 6C 65 70 68 6F 6E 58 01 03 00
                49 6D 6D 02 06 00 6D 6F 62 69 6C 65 03 0D 00 49
                6E 63 6F 6D 69 6E 67 20 43 61 6C 6C 05 00 00
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x74, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<82)],
                values: [
                    (.positiveActionLabel, "Answer"),
                    (.negativeActionLabel, "Decline"),
                    (.appIdentifier, "com.apple.mobilephone"),
                    (.title, "Imm"),
                    (.subtitle, "mobile"),
                    (.message, "Incoming Call"),
                    (.date, ""),
                ]),
            CapturedExchange(
                request: .notification(uid: 0x75, [.negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 82..<173)],
                values: [
                    (.negativeActionLabel, "Dismiss"),
                    (.appIdentifier, "com.apple.mobilecal"),
                    (.title, "Hailey's practice"),
                    (.subtitle, ""),
                    (.message, "Red Morton"),
                    (.date, "20141028T160000"),
                ]),
            CapturedExchange(
                request: .notification(uid: 0x76, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 173..<255)],
                values: [
                    (.positiveActionLabel, "Answer"),
                    (.negativeActionLabel, "Decline"),
                    (.appIdentifier, "com.apple.mobilephonX"),
                    (.title, "Imm"),
                    (.subtitle, "mobile"),
                    (.message, "Incoming Call"),
                    (.date, ""),
                ]),
        ]),
    IOSCapture(
        name: "pebble-mms-0x1f-empty-message",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 573-577)",
        about: "An MMS with only an image: the Message is a zero-length tuple.",
        events: [
            hex("""
                00 1F 00 00 00 06 00 00 07 05 00 43 6C 65 61 72
                00 13 00 63 6F 6D 2E 61 70 70 6C 65 2E 4D 6F 62
                69 6C 65 53 4D 53 01 08 00 48 75 79 20 54 72 61
                6E 02 00 00 03 00 00 05 0F 00 32 30 31 36 30 31
                31 31 54 31 38 34 38 35 32
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x1F, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<73)],
                values: [
                    (.positiveActionLabel, ""),
                    (.negativeActionLabel, "Clear"),
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "Huy Tran"),
                    (.subtitle, ""),
                    (.message, ""),
                    (.date, "20160111T184852"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-mms-0x20-caption-leading-space",
        source: "google/pebble tests/fw/comm/ancs_test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 627-632)",
        about: "An MMS with a caption: the Message starts with a space.",
        events: [
            hex("""
                00 20 00 00 00 06 00 00 07 05 00 43 6C 65 61 72
                00 13 00 63 6F 6D 2E 61 70 70 6C 65 2E 4D 6F 62
                69 6C 65 53 4D 53 01 08 00 48 75 79 20 54 72 61
                6E 02 00 00 03 10 00 20 43 68 65 63 6B 20 74 68
                69 73 20 6F 75 74 21 05 0F 00 32 30 31 36 30 31
                31 31 54 32 31 30 34 31 35
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x20, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<89)],
                values: [
                    (.positiveActionLabel, ""),
                    (.negativeActionLabel, "Clear"),
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "Huy Tran"),
                    (.subtitle, ""),
                    (.message, " Check this out!"),
                    (.date, "20160111T210415"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-sms-0x0c-2015-08",
        source: "google/pebble tests/fw/pebble_actions/test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 20-25)",
        about: "An SMS answer (2015).",
        events: [
            hex("""
                00 0C 00 00 00 06 00 00 07 05 00 43 6C 65 61 72
                00 13 00 63 6F 6D 2E 61 70 70 6C 65 2E 4D 6F 62
                69 6C 65 53 4D 53 01 08 00 50 68 69 6C 69 70 20
                47 02 00 00 03 12 00 43 61 6E 61 64 61 20 69 73
                20 74 68 65 20 62 65 73 74 05 0F 00 32 30 31 35
                30 38 33 31 54 31 30 32 34 34 33
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x0C, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<91)],
                values: [
                    (.positiveActionLabel, ""),
                    (.negativeActionLabel, "Clear"),
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "Philip G"),
                    (.subtitle, ""),
                    (.message, "Canada is the best"),
                    (.date, "20150831T102443"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-group-sms-0x0d-subtitle-recipients",
        source: "google/pebble tests/fw/pebble_actions/test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (comment hexdump, lines 54-60)",
        about: "A group iMessage: the Subtitle lists the other recipients; the Message ends with a space.",
        events: [
            hex("""
                00 0D 00 00 00 06 00 00 07 05 00 43 6C 65 61 72
                00 13 00 63 6F 6D 2E 61 70 70 6C 65 2E 4D 6F 62
                69 6C 65 53 4D 53 01 10 00 62 6A 65 74 74 40 70
                65 62 62 6C 65 2E 63 6F 6D 02 17 00 54 6F 20 79
                6F 75 20 26 20 28 33 31 37 29 20 33 37 30 2D 32
                38 32 39 03 08 00 54 65 73 74 69 6E 67 20 05 0F
                00 32 30 31 35 30 39 30 32 54 31 36 31 39 32 32
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x0D, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<112)],
                values: [
                    (.positiveActionLabel, ""),
                    (.negativeActionLabel, "Clear"),
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "bjett@pebble.com"),
                    (.subtitle, "To you & (317) 370-2829"),
                    (.message, "Testing "),
                    (.date, "20150902T161922"),
                ]),
        ]),
    IOSCapture(
        name: "pebble-mail-0x0d-array-only",
        source: "google/pebble tests/fw/pebble_actions/test_data.h@4051c5bb97377f1215bbd26094c1a157532c55fe (C array s_email_ancs_data, line 91; no hexdump comment)",
        about: "A Mail answer (2015) published only as a C array (no hexdump), the same shape as the SMS of that session.",
        events: [
            hex("""
                00 0D 00 00 00 06 00 00 07 05 00 43 6C 65 61 72
                00 14 00 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62
                69 6C 65 6D 61 69 6C 01 0E 00 50 68 69 6C 20 47
                75 6E 6E 65 77 69 65 6B 02 0B 00 54 68 65 20 53
                75 62 6A 65 63 74 03 08 00 54 68 65 20 42 6F 64
                79 05 0F 00 32 30 31 35 30 38 33 31 54 31 31 30
                33 35 39
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x0D, [.positiveActionLabel, .negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date], maxima: pebbleRequestMaxima),
                pieces: [Piece(event: 0, bytes: 0..<99)],
                values: [
                    (.positiveActionLabel, ""),
                    (.negativeActionLabel, "Clear"),
                    (.appIdentifier, "com.apple.mobilemail"),
                    (.title, "Phil Gunnewiek"),
                    (.subtitle, "The Subject"),
                    (.message, "The Body"),
                    (.date, "20150831T110359"),
                ]),
        ]),
    IOSCapture(
        name: "ringly-sms-0x14-gna-plus-gaa",
        source: "ringly/ios RinglyKit/RinglyKitTests/RLYANCSV2ParserTests.m@47630d33145cb24ab665ec5b697ed18701d78553 (base64 in testSuccessfulParse)",
        about: "Ringly relayed a Get Notification Attributes answer (all eight attributes, in ID order, MessageSize \"14\") followed by the Get App Attributes answer; the source's zero padding after them is left out, and the on-air split is not shown.",
        events: [
            hex("""
                00 14 00 00 00 00 13 00 63 6F 6D 2E 61 70 70 6C
                65 2E 4D 6F 62 69 6C 65 53 4D 53 01 0C 00 4E 61
                74 65 20 53 74 65 64 6D 61 6E 02 00 00 03 0E 00
                68 61 73 6C 68 6B 66 6A 64 61 73 68 66 61 04 02
                00 31 34 05 0F 00 32 30 31 35 31 30 32 38 54 31
                32 30 30 32 31 06 00 00 07 05 00 43 6C 65 61 72
                """),
            hex("""
                01 63 6F 6D 2E 61 70 70 6C 65 2E 4D 6F 62 69 6C
                65 53 4D 53 00 00 08 00 4D 65 73 73 61 67 65 73
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x14, [.appIdentifier, .title, .subtitle, .message, .messageSize, .date, .positiveActionLabel, .negativeActionLabel], maxima: nil),
                pieces: [Piece(event: 0, bytes: 0..<96)],
                values: [
                    (.appIdentifier, "com.apple.MobileSMS"),
                    (.title, "Nate Stedman"),
                    (.subtitle, ""),
                    (.message, "haslhkfjdashfa"),
                    (.messageSize, "14"),
                    (.date, "20151028T120021"),
                    (.positiveActionLabel, ""),
                    (.negativeActionLabel, "Clear"),
                ]),
            CapturedExchange(
                request: .app("com.apple.MobileSMS"),
                pieces: [Piece(event: 1, bytes: 0..<32)],
                displayName: "Messages"),
        ]),
    IOSCapture(
        name: "esp32-podcasts-0x17-one-attribute-per-request",
        source: "https://github.com/nkolban/esp32-snippets/issues/430 (comment by CoretechR, 2018-05-23)",
        about: "An ESP32 log (2018) of four requests for one attribute each, each answered by one complete notification: the Title of a Podcasts notification is a zero-length tuple; the Message has typographic quotes U+201E/U+201C (102 characters, 106 bytes). Transcribed by the collector from the logged text; every length matches the logged length.",
        events: [
            hex("""
                00 17 00 00 00 00 12 00 63 6F 6D 2E 61 70 70 6C
                65 2E 70 6F 64 63 61 73 74 73
                """),
            hex("""
                00 17 00 00 00 01 00 00
                """),
            hex("""
                00 17 00 00 00 03 6A 00 45 73 20 67 69 62 74 20
                65 69 6E 65 20 6E 65 75 65 20 46 6F 6C 67 65 20
                E2 80 9E 53 74 75 66 66 20 59 6F 75 20 53 68 6F
                75 6C 64 20 4B 6E 6F 77 E2 80 9C 2C 20 53 59 53
                4B 20 53 65 6C 65 63 74 73 3A 20 49 73 20 62 72
                61 69 6E 20 73 69 7A 65 20 72 65 6C 61 74 65 64
                20 74 6F 20 69 6E 74 65 6C 6C 69 67 65 6E 63 65
                3F 2E
                """),
            hex("""
                00 17 00 00 00 05 0F 00 32 30 31 38 30 35 31 39
                54 31 39 30 39 33 30
                """),
        ],
        exchanges: [
            CapturedExchange(
                request: .notification(uid: 0x17, [.appIdentifier], maxima: nil),
                pieces: [Piece(event: 0, bytes: 0..<26)],
                values: [
                    (.appIdentifier, "com.apple.podcasts"),
                ]),
            CapturedExchange(
                request: .notification(uid: 0x17, [.title], maxima: nil),
                pieces: [Piece(event: 1, bytes: 0..<8)],
                values: [
                    (.title, ""),
                ]),
            CapturedExchange(
                request: .notification(uid: 0x17, [.message], maxima: nil),
                pieces: [Piece(event: 2, bytes: 0..<114)],
                values: [
                    (.message, "Es gibt eine neue Folge „Stuff You Should Know“, SYSK Selects: Is brain size related to intelligence?."),
                ]),
            CapturedExchange(
                request: .notification(uid: 0x17, [.date], maxima: nil),
                pieces: [Piece(event: 3, bytes: 0..<23)],
                values: [
                    (.date, "20180519T190930"),
                ]),
        ]),
]
