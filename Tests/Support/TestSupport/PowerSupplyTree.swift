// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A power-supply class tree in a temporary directory: each supply a
/// directory of attribute files, written as given (newline or not).
public struct SupplyTree: ~Copyable {
    public let root: String

    public init() {
        var template = Array("/tmp/wristlink-power-XXXXXX".utf8CString)
        root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    public func supply(_ name: String, _ files: [String: String]) {
        mkdir(root + "/" + name, 0o755)
        for (file, text) in files {
            let fd = open(root + "/" + name + "/" + file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    public func remove(_ name: String) {
        let dir = root + "/" + name
        for file in ["type", "capacity", "status", "voltage_now"] { unlink(dir + "/" + file) }
        rmdir(dir)
    }

    deinit {
        for name in ["BAT0", "ac", "gauge", "bad", "bare"] { remove(name) }
        rmdir(root)
    }
}
