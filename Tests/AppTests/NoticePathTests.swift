// SPDX-License-Identifier: Apache-2.0
import App
import Testing

/// Which notice file `wristlink run` looks at (docs/updates.md, "The
/// outcome on the wrist").
@Suite("run: the system's notice file")
struct NoticePathTests {
    @Test("the notice file run looks at: the state directory's, on the UNIX link only with --state-dir (a simulated run must not take the wearable's)")
    func noticePath() throws {
        #expect(try RunCommand.noticePath(["--link", "bluez:hci0"]) == "/var/lib/wristlink/notice")
        #expect(try RunCommand.noticePath([]) == "/var/lib/wristlink/notice")
        #expect(try RunCommand.noticePath(["--state-dir", "/tmp/x"]) == "/tmp/x/notice")
        #expect(try RunCommand.noticePath(["--link", "unix:/tmp/s"]) == nil)
        #expect(try RunCommand.noticePath(["--link", "unix:/tmp/s", "--state-dir", "/tmp/x"]) == "/tmp/x/notice")
    }
}
