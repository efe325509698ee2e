// SPDX-License-Identifier: Apache-2.0
// A notice the system leaves for the wearer: something the firmware did
// not do itself but the wrist should show, once (docs/updates.md, "The
// outcome on the wrist"). The only ones today are the outcome of a system
// update's trial: kept (`update-done`) or sent back (`update-failed`),
// decided by the image's trial-end while the firmware owns the lines.
//
// The file format (PlatformLinux/NoticeFile.swift reads it): one keyword,
// optionally followed by a newline (and a carriage return before it, as a
// Windows editor writes), nothing else; at most `maxFileBytes`. Sans-IO:
// bytes in, a notice or the reason they are not one out.

/// What the wrist should show once; `rawValue` is its place in `all`
/// (tables by notice).
public enum SystemNotice: Int, Equatable, Sendable {
    /// A system update passed its trial and is kept.
    case updateDone = 0
    /// A system update failed its trial and the wearable is back on the
    /// system it had.
    case updateFailed

    public static let all: [SystemNotice] = [.updateDone, .updateFailed]

    /// Its keyword in the notice file and the policy's `feedback` line.
    public var keyword: StaticString {
        switch self {
        case .updateDone: "update-done"
        case .updateFailed: "update-failed"
        }
    }

    /// The longest notice file read; a longer one is not a notice.
    public static let maxFileBytes = 64

    /// Why a notice file's bytes are not a notice.
    public enum Refusal: Equatable, Sendable {
        /// Longer than `maxFileBytes`.
        case tooLong
        /// Not one of the keywords (empty included).
        case unknown

        public var name: StaticString {
            switch self {
            case .tooLong: "too-long"
            case .unknown: "unknown"
            }
        }
    }

    /// What a notice file's bytes are.
    public enum Parsed: Equatable, Sendable {
        case notice(SystemNotice)
        case refused(Refusal)
    }

    /// The notice in a file's bytes: a keyword, then at most "\r\n" or
    /// "\n". `truncated`: the file had more than the bytes given.
    public static func parse(_ bytes: Span<UInt8>, truncated: Bool = false) -> Parsed {
        if truncated || bytes.count > maxFileBytes { return .refused(.tooLong) }
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0x0A {
            end -= 1
            // A carriage return only before the newline (CRLF).
            if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        }
        for notice in all {
            let keyword = notice.keyword
            guard keyword.utf8CodeUnitCount == end else { continue }
            var same = true
            for i in 0..<end where keyword.utf8Start[i] != bytes[i] {
                same = false
                break
            }
            if same { return .notice(notice) }
        }
        return .refused(.unknown)
    }
}
