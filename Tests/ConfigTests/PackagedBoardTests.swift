// SPDX-License-Identifier: Apache-2.0
// The Debian package's /etc/wristlink/board.conf is board/deb/board-conf-header
// followed by board/pi-zero-2w/board.conf (scripts/build-deb): the header
// must stay comments only, so the packaged file parses as the Zero 2 W's.
import Config
import Testing
import TestSupport

@Suite("The Debian package's default board file")
struct PackagedBoardTests {
    @Test("the packaged board.conf (header + pi-zero-2w) parses as the Pi Zero 2 W board")
    func packagedDefaultBoardIsTheZero2W() throws {
        let header = readRepositoryFile("board/deb/board-conf-header")
        let zero = readRepositoryFile("board/pi-zero-2w/board.conf")
        let packaged = try board(header + zero)
        let plain = try board(zero)
        #expect(packaged.name == "pi-zero-2w")
        #expect(packaged.outputs.map(\.name) == plain.outputs.map(\.name))
        #expect(packaged.buttons.map(\.name) == plain.buttons.map(\.name))
    }

    @Test("the header is comments and blank lines only")
    func headerHasNoSettings() {
        let header = readRepositoryFile("board/deb/board-conf-header")
        for line in header.split(separator: "\n", omittingEmptySubsequences: true) {
            #expect(line.hasPrefix("#"), "not a comment: \(line)")
        }
    }
}
