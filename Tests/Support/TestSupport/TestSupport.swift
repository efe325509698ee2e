// SPDX-License-Identifier: Apache-2.0
// What every test target needs: bytes from and to hex, a seeded generator
// so randomised tests replay, allocation counting, the repository root
// (tests read the shipped board and policy files), scratch directories that
// are removed again, and a shell command's output.

import AllocCounter
import Bounded
import Glibc

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

    /// A number in 0..<bound (modulo, slightly biased; fine for tests, and
    /// the sequence for a seed stays the same).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
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

/// A new, empty directory for one test: /tmp/wristlink-<name>-XXXXXX, mode
/// 0700. Remove it when the test ends (`defer { removeTree(dir) }`), or
/// every run leaves it in /tmp.
public func makeScratchDirectory(_ name: String) -> String {
    var template = Array("/tmp/wristlink-\(name)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
    precondition(made, "mkdtemp failed: errno \(errno)")
    return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

/// Removes a scratch directory and everything in it (symbolic links are
/// removed, not followed). Refuses any path not made by
/// `makeScratchDirectory`.
public func removeTree(_ path: String) {
    precondition(path.hasPrefix("/tmp/wristlink-") && !path.contains("/../"), "not a scratch directory: \(path)")
    removeEntry(path)
}

private func removeEntry(_ path: String) {
    var st = stat()
    guard lstat(path, &st) == 0 else { return }
    guard st.st_mode & S_IFMT == S_IFDIR else {
        _ = unlink(path)
        return
    }
    var names: [String] = []
    if let dir = opendir(path) {
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
    }
    for name in names { removeEntry(path + "/" + name) }
    _ = rmdir(path)
}

/// Runs a shell command; its exit status and standard output (standard
/// error is discarded).
public func capture(_ command: String) -> (status: Int32, output: String) {
    guard let pipe = popen(command + " 2>/dev/null", "r") else { return (-1, "") }
    let output = readAll(pipe)
    return (pclose(pipe), output)
}

/// Everything left to read from `file`, as text.
private func readAll(_ file: UnsafeMutablePointer<FILE>) -> String {
    var bytes = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Whether tshark is installed, for the tests that decode a btsnoop trace
/// with it (`make test` installs it).
public let tsharkPresent = access("/usr/bin/tshark", X_OK) == 0

/// The text of a file in the repository (`board/...`), for tests that use
/// the shipped board, policy and scenario files. Traps if it is missing: a
/// test must not pass by reading nothing.
public func readRepositoryFile(_ relativePath: String) -> String {
    let path = repositoryRoot + "/" + relativePath
    guard let file = fopen(path, "r") else { preconditionFailure("cannot open \(path): errno \(errno)") }
    defer { fclose(file) }
    return readAll(file)
}
