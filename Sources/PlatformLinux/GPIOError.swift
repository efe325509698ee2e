// SPDX-License-Identifier: Apache-2.0
// What both libgpiod backends share (GPIODLines.swift for libgpiod 1.6,
// GPIODLines2.swift for libgpiod 2.x; the build compiles one of them, see
// docs/pi-build.md "Which libgpiod"): the start-up error and its messages,
// the mapping from errno to a reason, the scan of /dev/gpiochip*, the edge
// timestamp rule and the sequence-number bookkeeping that counts lost edges.
// Nothing here calls libgpiod, so it is the same code, and the same tests,
// whichever backend is built.

import Bounded
import CLinux
import Platform

/// Why a board line could not be requested.
public struct GPIOError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        case noSuchChip
        case noSuchLine
        case busy
        case permission
        case failed
    }

    /// "output" or "button".
    public var role: String
    /// Our name for it (`led-notify`).
    public var name: String
    public var line: LineRef
    /// The chip as configured, or the name of the one it was found on
    /// (`gpiochip0`, what the gpio tools take); nil: looked for on every chip.
    public var chip: String?
    /// The found chip's label when it differs from its name, for messages.
    public var chipLabel: String?
    public var reason: Reason
    public var underlying: SystemError
    /// No /dev/gpiochip* exists at all (a machine without GPIO, or the
    /// gpio-sim chip not created yet).
    public var noChips: Bool

    public init(
        role: String, name: String, line: LineRef, chip: String?, chipLabel: String? = nil, reason: Reason,
        underlying: SystemError, noChips: Bool
    ) {
        self.role = role
        self.name = name
        self.line = line
        self.chip = chip
        self.chipLabel = chipLabel
        self.reason = reason
        self.underlying = underlying
        self.noChips = noChips
    }

    public var description: String {
        let what = "\(role) \(name)"
        let lineText: String
        switch line {
        case .named(let n): lineText = "line \(n)"
        case .offset(let o): lineText = "offset \(o)"
        }
        let on = chip.map { " on \($0)" + (chipLabel.map { " [\($0)]" } ?? "") } ?? ""
        let gpioinfo = chip.map { "`gpioinfo \($0)`" } ?? "`gpioinfo`"
        switch reason {
        case .noSuchChip:
            return "\(what): no GPIO chip \(chip ?? "?"): check `chip` in the board file against `gpiodetect`"
                + (noChips ? " (this machine has no /dev/gpiochip*)" : "")
        case .noSuchLine:
            let place = chip.map { "on \($0)" } ?? "on any GPIO chip"
            let missing: String
            switch line {
            case .named(let n): missing = "no line named \(n) \(place)"
            case .offset(let o): missing = "no line at offset \(o) \(place)"
            }
            return "\(what): \(missing): check line= in the board file against \(gpioinfo)"
                + (noChips ? " (this machine has no /dev/gpiochip*)" : "")
        case .busy:
            return "\(what): \(lineText)\(on) is busy: another process holds it; see \(gpioinfo) (look for [used]) and stop that process"
        case .permission:
            return "\(what): permission denied for \(lineText)\(on): add the user to group gpio (or run as root)"
        case .failed:
            return "\(what): requesting \(lineText)\(on) failed: \(underlying)"
        }
    }
}


/// The start-up logic both backends share.
enum GPIODCommon {
    /// More /dev/gpiochip* than this are not looked at (a Pi 5 has 5).
    static let maxChips = 64

    /// The reason for `error`, given what "not found" means at this step.
    static func error(
        _ spec: LineSpec, role: String, chip: String?, label: String? = nil, _ error: SystemError,
        notFound: GPIOError.Reason, offsetPastEnd: Bool = false
    ) -> GPIOError {
        let scan = scanChips()
        var reason: GPIOError.Reason
        switch error.errno {
        case EBUSY: reason = .busy
        case EACCES, EPERM: reason = .permission
        case EINVAL where offsetPastEnd: reason = .noSuchLine
        case ENOENT, ENODEV, ENOTTY: reason = notFound
        default: reason = .failed
        }
        // A chip or line that was not found may be on a chip this user
        // cannot open: that is the problem to report.
        if reason == notFound && scan.inaccessible { reason = .permission }
        return GPIOError(
            role: role, name: spec.name, line: spec.line, chip: chip, chipLabel: label, reason: reason, underlying: error,
            noChips: scan.names.isEmpty)
    }

    /// The /dev/gpiochip* names in order (gpiochip0, gpiochip1, ...,
    /// gpiochip10: by number, as libgpiod's own iteration sorts them), and
    /// whether one of them cannot be opened for lack of permission.
    static func scanChips() -> (names: [String], inaccessible: Bool) {
        guard let dir = opendir("/dev") else { return ([], false) }
        defer { closedir(dir) }
        var names: [String] = []
        var inaccessible = false
        while let entry = CLinux.readdir(dir), names.count < maxChips {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            guard name.utf8HasPrefix("gpiochip") else { continue }
            names.append(name)
            do throws(SystemError) {
                _ = try Sys.call32("access") { access("/dev/" + name, R_OK | W_OK) }
            } catch {
                if error.errno == EACCES || error.errno == EPERM { inaccessible = true }
            }
        }
        names.sort { a, b in
            a.utf8.count != b.utf8.count ? a.utf8.count < b.utf8.count : a.utf8.lexicographicallyPrecedes(b.utf8)
        }
        return (names, inaccessible)
    }

    /// An edge's kernel time in monotonic milliseconds as an `Instant`, or
    /// `now` when it cannot be one: stamped in the future, or more than
    /// `maxAgeMs` back (a CLOCK_REALTIME stamp of a kernel before 5.7).
    static func instant(ms: Int64, now: Instant, maxAgeMs: Int64) -> Instant {
        guard ms <= now.ms, now.ms - ms <= maxAgeMs else { return now }
        return Instant(ms: ms)
    }
}

/// Counts the edges the kernel dropped, from the sequence numbers libgpiod 2
/// hands out (uAPI v2: a request-wide one and one per line, both starting at
/// 1 and incremented for every edge the kernel saw). When the request's
/// queue is full the kernel drops the oldest event but keeps counting, so a
/// gap is the number lost.
public struct EdgeSequence: Equatable, Sendable {
    /// The last sequence number seen; 0 before the first event.
    public private(set) var last: UInt64 = 0
    /// Every edge lost so far.
    public private(set) var lost: UInt64 = 0

    public init() {}

    /// Takes the next event's number; returns how many were lost before it.
    /// A number that does not move forward (the kernel would not do that)
    /// restarts the count from it rather than being taken as a huge loss.
    public mutating func observe(_ seqno: UInt64) -> UInt64 {
        defer { last = seqno }
        guard seqno > last else { return 0 }
        let gap = seqno - last - 1
        lost &+= gap
        return gap
    }
}
