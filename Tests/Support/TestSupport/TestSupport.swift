// What every test target needs: bytes from and to hex, a seeded generator
// so randomised tests replay, allocation counting, and the repository root
// (tests read the shipped board and policy files).

import AllocCounter
import Bounded

/// Bytes from a hex string with optional spaces: "00 01 ff".
public func hex(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var pending: UInt8? = nil
    for c in text.unicodeScalars {
        guard let v = UInt8(String(c), radix: 16) else { continue }
        if let high = pending {
            out.append(high << 4 | v)
            pending = nil
        } else {
            pending = v
        }
    }
    precondition(pending == nil, "odd number of hex digits")
    return out
}

/// "0A FF 01": upper-case hex, one space between bytes.
public func toHex(_ bytes: [UInt8]) -> String {
    bytes.map { b in let s = String(b, radix: 16, uppercase: true); return s.count == 1 ? "0" + s : s }.joined(separator: " ")
}

extension ByteBuffer {
    public var hexString: String { toHex(toArray()) }
}

/// A small deterministic generator so failures replay from their seed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Runs `body` once to warm up (first use of generic types allocates runtime
/// metadata), then `rounds` more times, and returns heap allocations per
/// round on this thread.
public func allocationsPerRound(rounds: Int = 500, _ body: () -> Void) -> Double {
    body()
    let before = wl_alloc_count()
    for _ in 0..<rounds { body() }
    return Double(wl_alloc_count() - before) / Double(rounds)
}

/// Unspecialised generic code in a debug build allocates where the shipped
/// (optimised) build does not, so allocation tests run on the optimised
/// build: `make test` runs the suite with `-c release`.
#if DEBUG
public let isOptimizedBuild = false
#else
public let isOptimizedBuild = true
#endif

/// The repository's root directory.
public let repositoryRoot: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(4)
    return parts.joined(separator: "/")
}()
