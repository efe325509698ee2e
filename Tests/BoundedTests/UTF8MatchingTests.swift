// SPDX-License-Identifier: Apache-2.0
import Bounded
import Testing
import TestSupport

/// Strings compared by their UTF-8 bytes: what the configuration and the
/// command line use instead of `==` and `hasPrefix`.
@Suite("String UTF-8 matching")
struct UTF8MatchingTests {
    @Test("equal bytes, not canonical equivalence")
    func equality() {
        #expect("gpiochip0".utf8Equals("gpiochip0"))
        #expect(!"gpiochip0".utf8Equals("gpiochip"))
        #expect("".utf8Equals(""))
        // é as one scalar and as e + U+0301: `==` holds them equal, bytes do not.
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(!"caf\u{E9}".utf8Equals("cafe\u{301}"))
    }

    @Test("prefixes and the text after a byte count")
    func prefixes() {
        #expect("unix:/tmp/s".utf8HasPrefix("unix:"))
        #expect(!"unix".utf8HasPrefix("unix:"))
        #expect("x".utf8HasPrefix(""))
        #expect("unix:/tmp/s".utf8Dropping(first: 5) == "/tmp/s")
        #expect("unix:".utf8Dropping(first: 5).isEmpty)
        #expect("ab".utf8Dropping(first: 9).isEmpty)
    }
}
