// SPDX-License-Identifier: Apache-2.0
// The battery as the running firmware reads it: the supply the board's
// `battery` picks, its files under /sys/class/power_supply read at each
// poll without allocating (Platform/PowerSupply.swift has the format;
// PowerSupplyReader is `doctor`'s, which may allocate).
//
// - The root directory is opened once and kept (O_DIRECTORY; tried again
//   at a poll if it was missing); each attribute is one openat(2), one
//   read(2) of at most `maxFileBytes` into a stack buffer, one close.
// - `battery auto` lists the root with getdents64(2) into a stack buffer
//   (no opendir: it allocates) and takes the first supply by name whose
//   `type` is Battery; it looks again at each poll while none is found, or
//   when the one it had stops being a battery (a gauge unbound and
//   another bound). At most `PowerSupplyReader.maxSupplies` entries and
//   `maxListingReads` reads per look.
// - `battery NAME` reads that supply only; a name longer than
//   `maxNameBytes` cannot be a supply and reads as none.
// A supply that disappears between two reads reads as nil: never a
// made-up level.

import Bounded
import CLinux
import Platform

public struct BatteryFiles: ~Copyable {
    public static let maxNameBytes = 48
    static let maxFileBytes = 64
    /// At most 1 kB: withUnsafeTemporaryAllocation puts larger buffers on
    /// the heap (measured: a 2 kB listing allocated once per look).
    static let listingBytes = 1_024
    static let maxListingReads = 4

    public let choice: BatteryChoice
    /// The root's path, NUL-terminated, made once.
    private let rootPath: [CChar]
    private var rootFD: Int32 = -1
    /// The supply read now (empty: none found yet).
    private var name = InlineBytes<48>()
    /// Directory looks for `auto` (for tests and figures).
    public private(set) var scans: UInt64 = 0

    public init(choice: BatteryChoice, root: String = PowerSupplyReader.defaultRoot) {
        self.choice = choice
        rootPath = Array(root.utf8CString)
        if case .named(let supply) = choice, supply.utf8.count <= Self.maxNameBytes { name = InlineBytes(supply) }
    }

    deinit { if rootFD >= 0 { close(rootFD) } }

    /// The name of the supply read now (nil: none).
    public var supplyName: String? { name.isEmpty ? nil : name.text }

    /// The battery now; nil: none picked, none found, gone, or no level.
    public mutating func read() -> BatteryReading? {
        if case .none = choice { return nil }
        if rootFD < 0 {
            rootFD = rootPath.withUnsafeBufferPointer { wl_open($0.baseAddress!, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
            guard rootFD >= 0 else { return nil }
        }
        // One read of `type` per poll: the supply kept if it is still a
        // battery, else (auto) a look for one, which checks each `type`.
        if name.isEmpty || !isBattery(name) {
            guard case .auto = choice else { return nil }
            scan()
            guard !name.isEmpty else { return nil }
        }
        let capacity = attribute("capacity") { PowerSupplyText.integer($0) } ?? nil
        let status = attribute("status") { PowerSupplyText.status($0) }
        let voltage = attribute("voltage_now") { PowerSupplyText.integer($0) } ?? nil
        return PowerSupplyText.reading(capacity: capacity, status: status, microvolts: voltage)
    }

    private func isBattery(_ supply: InlineBytes<48>) -> Bool {
        file(supply, "type") { PowerSupplyText.isBattery(type: $0) } ?? false
    }

    private func attribute<R>(_ attribute: StaticString, _ parse: (Span<UInt8>) -> R) -> R? { file(name, attribute, parse) }

    /// `supply/attribute`'s bytes (at most `maxFileBytes`) to `parse`; nil
    /// when it cannot be opened or read.
    private func file<R>(_ supply: InlineBytes<48>, _ attribute: StaticString, _ parse: (Span<UInt8>) -> R) -> R? {
        let pathBytes = supply.count + 1 + attribute.utf8CodeUnitCount + 1
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maxNameBytes + 32) { path -> R? in
            guard pathBytes <= path.count else { return nil }
            var at = 0
            for k in 0..<supply.count {
                path[at] = supply[k]
                at += 1
            }
            path[at] = 0x2F
            at += 1
            attribute.withUTF8Buffer { word in
                for byte in word {
                    path[at] = byte
                    at += 1
                }
            }
            path[at] = 0
            let fd = path.withMemoryRebound(to: CChar.self) { wl_openat_read(rootFD, $0.baseAddress!) }
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maxFileBytes) { buffer -> R? in
                let got = CLinux.read(fd, buffer.baseAddress!, buffer.count)
                guard got >= 0 else { return nil }
                return parse(Span(_unsafeElements: UnsafeBufferPointer(rebasing: buffer[0..<got])))
            }
        }
    }

    /// `auto`: the first supply by name whose type is Battery, into `name`
    /// (empty when there is none).
    private mutating func scan() {
        scans &+= 1
        name = InlineBytes()
        guard lseek(rootFD, 0, SEEK_SET) == 0 else { return }
        var best = InlineBytes<48>()
        var seen = 0
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.listingBytes) { listing in
            reads: for _ in 0..<Self.maxListingReads {
                let got = wl_getdents64(rootFD, listing.baseAddress!, listing.count)
                guard got > 0 else { break }
                // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2),
                // d_type (1), d_name (NUL-terminated).
                var offset = 0
                while offset + 19 < got {
                    let recordBytes = Int(listing[offset + 16]) | Int(listing[offset + 17]) << 8
                    guard recordBytes > 19, offset + recordBytes <= got else { break reads }
                    var candidate = InlineBytes<48>()
                    var k = offset + 19
                    var fits = true
                    while k < offset + recordBytes, listing[k] != 0 {
                        if candidate.count == Self.maxNameBytes { fits = false }
                        candidate.append(listing[k])
                        k += 1
                    }
                    offset += recordBytes
                    guard fits, !candidate.isEmpty, candidate[0] != 0x2E else { continue }
                    seen += 1
                    if seen > PowerSupplyReader.maxSupplies { break reads }
                    if (best.isEmpty || Self.precedes(candidate, best)), isBattery(candidate) { best = candidate }
                }
            }
        }
        name = best
    }

    static func precedes(_ a: InlineBytes<48>, _ b: InlineBytes<48>) -> Bool {
        for k in 0..<min(a.count, b.count) where a[k] != b[k] { return a[k] < b[k] }
        return a.count < b.count
    }
}
