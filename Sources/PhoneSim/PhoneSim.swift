// SPDX-License-Identifier: Apache-2.0
// PhoneSim: a simulated iPhone, the ANCS Notification Provider, as sans-IO
// state (Apple's ANCS specification; docs/ancs.md). It stands where an
// iPhone stands: the ATT server of a database with GAP, GATT (Service
// Changed), ANCS, AMS (docs/ams.md) and CTS (docs/cts.md), and the GATT
// client that browses the wearable after connecting, as iOS does. Tests
// pair it with the firmware's `PhoneLink` in memory; `wristlink phone`
// will run it on a UNIX socket.
//
// Design: like the firmware's core it performs no I/O and reads no clock.
// PDUs from the wearable, time and scenario lines go in; PDUs, actions and
// events come out. Every buffer is allocated in `init` (the scenario program
// is a fixed text buffer, so typed commands allocate nothing either).
// Protocol failures are answered as the spec says and counted; the phone
// never traps on what the wearable sends.
//
//   PhoneCore.swift           the phone: link, security, subscriptions, pump, scenario commands
//   PhoneDatabase.swift       its GATT database and the answer to every request
//   ControlPointServer.swift  Control Point writes → Data Source responses / errors
//   MediaPlayer.swift         AMS: the media app, Remote Command, Entity Update/Attribute
//   PhoneClockServer.swift    CTS: the phone's local time, Current Time notifications
//   PrepareWriteQueue.swift   long writes: prepared parts until Execute Write
//   NotificationStore.swift   notifications, category counts, replay marks; app names
//   PeerBrowser.swift         browsing the wearable's GAP/GATT
//   Scenario.swift            the scenario's values and errors
//   ScenarioParser.swift      one line → one command, no allocation
//   ScenarioRunner.swift      the scenario's order: lines, waits, steps per call
//   ScenarioProgram.swift     the queue of lines still to run
//   PhoneEvent.swift          config, events, actions, counters
//   EventText.swift           events and errors as text lines, for a runner's log
//
// Security. On a UNIX-socket link there is no SMP, so pairing is modelled:
// until the link is secured, reads and writes of the ANCS CCCDs and writes
// of the Control Point get ATT error 0x05. The wearable then raises security
// (on a real link that starts pairing) and retries. After answering its
// first 0x05 the phone pairs for `pairingDelayMs`; PDUs arriving meanwhile
// are held (on a real link the wearable's socket is not writable until
// encryption is on) and answered when pairing completes. From then on the
// phone is bonded: each later connection of the same `PhoneCore` is secured
// at once, as iOS encrypts a bonded link right after connecting, so the
// wearable sees no 0x05 (with `encrypt-delay`, it encrypts itself after
// that delay; `securityRequested` is the wearable's SMP Security Request,
// which only the in-memory test rig delivers: see docs/scenarios.md).
// `requiresSecurity: false` turns all of it off.
//
// Subscriptions and sessions. CCCDs start off at every connection. When
// Notification Source is subscribed, every stored notification is replayed
// as Added with PreExisting, in UID order, CategoryCount as it is when sent.
// Notification Source events are only generated while it is subscribed;
// notifications posted meanwhile are kept and replayed at the next
// subscription. Service Changed is indicated only when its CCCD asks for
// indications, one at a time, each waiting for its confirmation (30 s, then
// the link is dropped as ATT requires).
//
// Long writes. A Control Point command longer than MTU − 3 comes as Prepare
// Writes and an Execute Write. The parts wait in a bounded queue (32 parts,
// 512 bytes: Prepare Queue Full 0x09 beyond); Execute Write 0x01 joins them
// (a gap is Invalid Offset 0x07) and answers the joined command exactly as
// a Write Request, with the Execute Write Response or an error to 0x18;
// 0x00 drops them. The queue is per link.
//
// Scenario language (one command per line; `#` starts a comment; values
// are bare words or "quoted strings" with \" \\ \n \t; words are
// case-insensitive; numbers are decimal or 0x hex; durations are ms):
//
//   existing <category> [key=value...]      stored silently; sent in the PreExisting replay
//   notify   <category> [key=value...]      Added (Modified when the uid exists)
//       keys: uid=N app=ID title=T subtitle=T message=T date=yyyyMMddTHHmmSS
//             flags=important,silent,positive,negative (or none)
//             positive-label=T negative-label=T count=N (N copies, consecutive UIDs)
//       <category>: IncomingCall MissedCall Voicemail Social Schedule Email
//             News HealthAndFitness BusinessAndFinance Location
//             Entertainment Other, or a number 0-255
//       Without uid= the next free UID is used (one above the highest posted);
//       without date= the date is 20260101T120000.
//   call    <name> [key=value...]            IncomingCall, com.apple.mobilephone, message
//                                            "Incoming Call", positive+negative actions
//                                            labelled Answer/Decline
//   message <name> <text> [key=value...]     Social, com.apple.MobileSMS, negative action "Clear"
//   email   <name> <subject> [key=value...]  Email, com.apple.mobilemail, subject as subtitle,
//                                            negative action "Clear"
//   remove  <uid>                            Removed (fails for an unknown uid)
//   app     <app-id> <display-name>          the name Get App Attributes answers
//   sleep   <ms>
//   wait-subscribed [timeout-ms]             until Notification Source is subscribed and the
//                                            PreExisting replay is sent
//   wait-action <uid> [timeout-ms]           until a Perform Notification Action on uid was
//                                            answered (one since the uid was last posted counts)
//   service-changed                          ANCS removed and added back; one indication
//   remove-ancs | add-ancs                   ANCS gone (or back), with an indication
//   error   <code> [count]                   answer the next count (1) Control Point writes
//                                            with ATT error code (e.g. 0xA3)
//   replay-flag on|off                       whether the replay carries PreExisting (on)
//   mtu     <n>                              the largest ATT MTU (23-517, at most the
//                                            config's) agreed from the next exchange on
//   share off [code] | share on              sharing not allowed: ANCS CCCD and Control Point
//                                            writes get ATT error code (0x08) until `share on`
//   hide-ancs encrypted|bonded|off           ANCS absent until the link is encrypted, or on
//                                            connections not bonded at their start (no indication)
//   encrypt-delay <ms>                       a bonded reconnection encrypts itself after ms
//   drop-subscription                        forget the NS/DS subscriptions silently; Control
//                                            Point writes then get a bare Write Response
//   lose-response [count]                    acknowledge the next count (1) attribute fetches
//                                            and never send their Data Source responses
//   ns-dead                                  Notification Source silent while subscribed, the
//                                            Control Point answering; its CCCD off/on wakes it
//   media play|pause|unavailable             the media app plays, pauses or closes (AMS)
//   wait-media <command> [timeout-ms]        until the wearable wrote that Remote Command
//                                            (play, pause, toggle-play-pause, next-track, ...)
//   time YYYY-MM-DDTHH:MM:SS[+HH:MM|-HH:MM]  set the local time (and UTC offset); notified (CTS)
//   no-ams | no-cts                          the phone has no AMS, or no CTS
//   connect | disconnect                     ask the platform to (re)connect or hang up
//   forget                                   drop the bond and hang up (Forget This Device)
//   quit                                     stop: the `quit` action, the queue is dropped
//
// Waits default to `PhoneConfig.defaultWaitTimeoutMs` (30 s); a timeout
// fails the step. A failed step drops the lines queued after it and, for a
// loaded script, ends it with `scenarioFinished(ok: false)`.
//
// Running a PhoneCore (what `wristlink phone --connect unix:PATH
// [--scenario FILE]` needs):
//
//   var phone = PhoneCore(config: PhoneConfig())
//   try phone.load(script: fileBytes.span, now: t)   // ScenarioError names line and column
//   phone.linkUp(now: t)                             // connected
//   loop:
//     phone.receive(pdu, now: t)                     // each PDU from the socket
//     try phone.command(typedLine, now: t)           // each line typed on stdin
//     while phone.popOutgoing(into: &out) { send(out) }   // stop pulling when congested
//     while let a = phone.nextAction() { ... }       // .connect → connect + linkUp,
//                                                    // .disconnect → close, .quit → exit
//     while let e = phone.nextEvent() { e.write(into: &line); print(line) }
//     wait until phone.deadline (nil: until input), then phone.advance(now: t)
//   phone.linkDown(reason: "peer-closed", now: t)    // the socket closed
//
// A deadline at or before now means "call advance now" (a wait became true
// while PDUs were pulled). Time must not go backwards.
