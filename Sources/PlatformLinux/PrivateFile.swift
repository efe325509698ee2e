// SPDX-License-Identifier: Apache-2.0
// Output files that hold what the phone sent (the `--trace` btsnoop file
// has every title and message; the `--events` stream what the wearable did
// with them): readable by the wearable's user alone, whatever was at the
// path before.
// - Created 0600. An existing regular file is made 0600 before it is
//   emptied and written: O_CREAT's mode applies only to a new file, so an
//   old 0644 trace would otherwise keep its mode.
// - O_NOFOLLOW: a symbolic link at the path is refused, not followed (it
//   could point at any file the service may write), with an error that
//   says so rather than ELOOP's "too many levels of symbolic links".
// - A FIFO or a device is written as it is, its mode untouched (a live
//   capture through a FIFO; /dev/null): only a regular file is emptied.

import CLinux

enum PrivateFile {
    static func openForWriting(_ path: String) throws(SystemError) -> Int32 {
        let fd: Int32
        do throws(SystemError) {
            fd = try Sys.call32("open(\(path))") { wl_open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        } catch {
            var st = stat()
            if error.errno == ELOOP, lstat(path, &st) == 0, UInt32(st.st_mode) & UInt32(S_IFMT) == UInt32(S_IFLNK) {
                throw SystemError("\(path) is a symbolic link, which is not followed: give the file itself", errno: ELOOP)
            }
            throw error
        }
        do throws(SystemError) {
            var st = stat()
            _ = try Sys.call32("fstat(\(path))") { fstat(fd, &st) }
            if UInt32(st.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) {
                _ = try Sys.call32("fchmod(\(path), 0600)") { fchmod(fd, 0o600) }
                _ = try Sys.call32("ftruncate(\(path))") { ftruncate(fd, 0) }
            }
        } catch {
            _ = CLinux.close(fd)
            throw error
        }
        return fd
    }
}
