// SPDX-License-Identifier: Apache-2.0
// Mgmt: the Linux kernel's Bluetooth management interface (BlueZ
// doc/mgmt-api.txt), the part of it Wristlink needs to own an LE controller
// with bluetoothd not running, as sans-IO bytes and state.
//
// Design: nothing here opens a socket or reads a clock. The platform layer
// binds an HCI_CHANNEL_CONTROL socket, writes the bytes these encoders put in
// its `ByteBuffer` (one write is one command), reads one datagram per event
// and hands its bytes to `MgmtEvent.decode`. Framing errors are typed throws;
// everything the kernel may legitimately say (failure statuses, events we do
// not know) is a value. Every buffer has a fixed capacity: the bond store is
// inline storage for `BondStore.capacity` peers, names and advertising data
// are `InlineBytes`, so decoding, bond updates and the bond file parser
// allocate nothing.
//
//   Constants.swift        opcodes, event codes, statuses, settings bits
//   Address.swift          device addresses, 128-bit keys
//   Wire.swift             little-endian and hex helpers
//   Command.swift          command encoders (header + parameters)
//   Event.swift            event decoders, Command Complete return parameters
//   AdvertisingData.swift  AD structures, the 31-byte limits, ANCS payload
//   Bond.swift             bonds from New LTK / New IRK events, Load commands
//   BondFile.swift         the text state file: serialize and parse
//   ControllerSetup.swift  start-up sequencer and advertising cadence
//
// Choices where the document leaves room are in docs/decisions/ (mgmt-decoding,
// controller-setup, advertising-*, connection-parameters, address-privacy, bonds).

/// Packet framing shared by commands and events: code (2), controller index
/// (2), parameter length (2), all little-endian.
public enum MgmtPacket {
    public static let headerByteCount = 6
    /// The largest parameter block the 16-bit length field can describe.
    public static let maxParameterByteCount = 0xFFFF
}

/// A controller index; 0xFFFF means "not about a controller".
public struct ControllerIndex: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ value: UInt16) { rawValue = value }

    public static let none = ControllerIndex(0xFFFF)
}
