// SPDX-License-Identifier: Apache-2.0
// The system's notice for the wrist (Platform/SystemNotice.swift has the
// format): the file `notice` in the firmware's state directory, written by
// another program (the image's trial-end, as root: a new file renamed
// over) and taken once by the firmware: looked for at start and whenever
// the firmware is told to look (SIGUSR1).
//
// Taking is a rename first (`notice` to `notice.taken`), so a notice that
// arrives while the firmware reads the one before is never removed unread;
// then the taken file is read and removed, and the directory synced, so a
// power cut after the wrist showed it cannot bring it back. A `notice.taken`
// left by a firmware stopped between the rename and the removal is taken
// at the next look.
//
// Bounded and allocation-free: the paths are kept as C strings from the
// start, the file read into a stack buffer of `maxFileBytes` + 1 (one
// more byte tells a longer file). Opened with O_NOFOLLOW and O_NONBLOCK: a
// symbolic link or a FIFO put there is not followed nor waited on, but
// refused (`not-a-file`) and removed like any file that is not a notice.

import Bounded
import CBlueZ  // rename(2) comes with its <stdio.h> in whole-module builds
import CLinux
import Platform

public struct NoticeFile: Sendable {
    public static let name = "notice"
    static let takenSuffix = ".taken"

    /// What a look at the file found.
    public enum Outcome: Equatable {
        /// No notice waiting.
        case none
        case notice(SystemNotice)
        /// A file that is not a notice (removed).
        case refused(Name)
        /// It could not be read (errno); left where it is.
        case failed(Int32)
    }

    /// The paths as NUL-terminated C strings, made once.
    private let path: [CChar]
    private let takenPath: [CChar]
    private let directory: [CChar]
    public let pathText: String

    public init(path: String) {
        pathText = path
        self.path = Array(path.utf8CString)
        takenPath = Array((path + Self.takenSuffix).utf8CString)
        let bytes = path.utf8
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let dir = slash.map { String(decoding: bytes[..<$0], as: UTF8.self) } ?? "."
        directory = Array((dir.isEmpty ? "/" : dir).utf8CString)
    }

    /// Takes the notice waiting, if any: renamed aside, read, removed.
    public func take() -> Outcome {
        path.withUnsafeBufferPointer { p in
            takenPath.withUnsafeBufferPointer { t in
                // A rename that finds no notice leaves an earlier taken one
                // (if any) to read.
                if rename(p.baseAddress!, t.baseAddress!) != 0 {
                    let e = wl_errno()
                    if e != ENOENT { return .failed(e) }
                }
                let outcome = read(t.baseAddress!)
                if case .failed(let e) = outcome, e == ENOENT { return .none }
                if case .failed = outcome { return outcome }
                if unlink(t.baseAddress!) != 0, wl_errno() != ENOENT {
                    Log.warning("notice \(pathText)\(Self.takenSuffix) could not be removed (errno \(wl_errno())): it is shown again at the next look")
                }
                syncDirectory()
                return outcome
            }
        }
    }

    /// The taken file's notice, or why it is none.
    private func read(_ cPath: UnsafePointer<CChar>) -> Outcome {
        let fd = wl_open(cPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0)
        guard fd >= 0 else {
            let e = wl_errno()
            return e == ELOOP ? .refused("not-a-file") : .failed(e)
        }
        defer { _ = CLinux.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failed(wl_errno()) }
        guard (st.st_mode & UInt32(S_IFMT)) == UInt32(S_IFREG) else { return .refused("not-a-file") }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SystemNotice.maxFileBytes + 1) { buffer -> Outcome in
            var filled = 0
            // Bounded: at most maxFileBytes + 1 bytes; a read of 0 (the
            // end) or an error ends it.
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
    }

    /// The removal on disk before the wrist shows anything more.
    private func syncDirectory() {
        directory.withUnsafeBufferPointer { d in
            let fd = wl_open(d.baseAddress!, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
            guard fd >= 0 else { return }
            _ = fsync(fd)
            _ = CLinux.close(fd)
        }
    }
}
