// SPDX-License-Identifier: Apache-2.0
// The system's notice for the wrist (Platform/SystemNotice.swift has the
// format): the file `notice` in the firmware's state directory, written by
// another program (the image's trial-end, as root) and taken once by the
// firmware: read at start and whenever the firmware is told to look
// (SIGUSR1), then removed, so one notice plays once whatever it said.
//
// Bounded and allocation-free: the path is kept as a C string from the
// start, the file read into a stack buffer of `maxFileBytes` + 1 (one
// more byte tells a longer file). Opened with O_NOFOLLOW and O_NONBLOCK
// (a symbolic link or a FIFO put there is not waited on); a file that is
// not a regular file is refused and left. A file that cannot be removed
// is said in the log: it plays again at the next start.

import Bounded
import CLinux
import Platform

public struct NoticeFile: Sendable {
    public static let name = "notice"

    /// What a look at the file found.
    public enum Outcome: Equatable {
        /// No notice waiting.
        case none
        case notice(SystemNotice)
        /// A file that is not a notice (removed; `notAFile`: left).
        case refused(Name)
        /// It could not be read (errno).
        case failed(Int32)
    }

    /// The path as a NUL-terminated C string, made once.
    private let path: [CChar]
    public let pathText: String

    public init(path: String) {
        pathText = path
        self.path = Array(path.utf8CString)
    }

    /// Takes the notice waiting, if any: read, then removed.
    public func take() -> Outcome {
        path.withUnsafeBufferPointer { p -> Outcome in
            let cPath = p.baseAddress!
            let fd = wl_open(cPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0)
            guard fd >= 0 else {
                let e = wl_errno()
                return e == ENOENT ? .none : .failed(e)
            }
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & UInt32(S_IFMT)) == UInt32(S_IFREG) else {
                _ = CLinux.close(fd)
                return .refused("not-a-file")
            }
            let outcome = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SystemNotice.maxFileBytes + 1) { buffer -> Outcome in
                var filled = 0
                // Bounded: at most maxFileBytes + 1 bytes, and a read of 0
                // (the end) or an error ends it.
                while filled < buffer.count {
                    let n = CLinux.read(fd, buffer.baseAddress! + filled, buffer.count - filled)
                    if n < 0 {
                        let e = wl_errno()
                        if e == EINTR { continue }
                        return .failed(e)
                    }
                    if n == 0 { break }
                    filled += n
                }
                let bytes = UnsafeBufferPointer(rebasing: buffer[0..<min(filled, SystemNotice.maxFileBytes)])
                switch SystemNotice.parse(bytes.span, truncated: filled > SystemNotice.maxFileBytes) {
                case .notice(let notice): return .notice(notice)
                case .refused(let refusal): return .refused(Name(refusal.name))
                }
            }
            _ = CLinux.close(fd)
            if case .failed = outcome { return outcome }
            if unlink(cPath) != 0, wl_errno() != ENOENT {
                Log.warning("notice \(pathText) could not be removed (errno \(wl_errno())): it is shown again at the next start")
            }
            return outcome
        }
    }
}
