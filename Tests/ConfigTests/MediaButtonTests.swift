// SPDX-License-Identifier: Apache-2.0
import Config
import Testing
import TestSupport

/// Button actions that send an Apple Media Service remote command.
@Suite("Policy: media button actions")
struct MediaButtonTests {
    @Test("each media action word names its action (media-toggle, media-next, media-previous, volume-up, volume-down), in short=, long=, ringing-short= and ringing-long=")
    func actionNames() throws {
        let policy = try PolicyConfig.parse(
            "button accept short=media-toggle long=media-next ringing-short=media-previous ringing-long=volume-up\nbutton reject short=volume-down\n",
            board: simBoard)
        #expect(policy.shortPress == [.media(.togglePlayPause), .media(.volumeDown)])
        #expect(policy.longPress == [.media(.nextTrack), .none])
        #expect(policy.ringingShortPress[0] == .media(.previousTrack))
        #expect(policy.ringingLongPress[0] == .media(.volumeUp))
    }

    @Test("long=media-next without ringing-long= is the same while a call rings: the built-in silence gives way")
    func mediaReplacesRingingDefault() throws {
        let policy = try PolicyConfig.parse("button reject long=media-next\n", board: simBoard)
        let reject = try #require(simBoard.buttonIndex(named: "reject"))
        #expect(policy.longPress[reject] == .media(.nextTrack))
        #expect(policy.ringingLongPress[reject] == nil)
    }

    @Test("a media action with a ringing- option: long plays music, ringing-long answers")
    func mediaWithRingingAction() throws {
        let policy = try PolicyConfig.parse("button accept long=media-toggle ringing-long=positive\n", board: simBoard)
        #expect(policy.longPress[0] == .media(.togglePlayPause) && policy.ringingLongPress[0] == .positive)
    }

    @Test("an action name that does not exist names them all, on its line; names are case-sensitive")
    func badActionNames() {
        let names = "positive, negative, silence, media-toggle, media-next, media-previous, volume-up, volume-down or none"
        #expect(policyError("button accept long=media-play\n") == ConfigError(line: 1, .badLine, "long takes \(names), not 'media-play'"))
        #expect(policyError("\n\nbutton reject ringing-short=volume\n") == ConfigError(line: 3, .badLine, "ringing-short takes \(names), not 'volume'"))
        #expect(policyError("button accept short=Media-Toggle\n") == ConfigError(line: 1, .badLine, "short takes \(names), not 'Media-Toggle'"))
    }
}
