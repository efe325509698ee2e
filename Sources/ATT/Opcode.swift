// SPDX-License-Identifier: Apache-2.0
// ATT opcodes and error codes (Core Vol 3 Part F 3.4.1, 3.4.8).

public enum ATTOpcode {
    public static let errorResponse: UInt8 = 0x01
    public static let exchangeMTURequest: UInt8 = 0x02
    public static let exchangeMTUResponse: UInt8 = 0x03
    public static let findInformationRequest: UInt8 = 0x04
    public static let findInformationResponse: UInt8 = 0x05
    public static let findByTypeValueRequest: UInt8 = 0x06
    public static let findByTypeValueResponse: UInt8 = 0x07
    public static let readByTypeRequest: UInt8 = 0x08
    public static let readByTypeResponse: UInt8 = 0x09
    public static let readRequest: UInt8 = 0x0A
    public static let readResponse: UInt8 = 0x0B
    public static let readBlobRequest: UInt8 = 0x0C
    public static let readBlobResponse: UInt8 = 0x0D
    public static let readMultipleRequest: UInt8 = 0x0E
    public static let readByGroupTypeRequest: UInt8 = 0x10
    public static let readByGroupTypeResponse: UInt8 = 0x11
    public static let writeRequest: UInt8 = 0x12
    public static let writeResponse: UInt8 = 0x13
    public static let prepareWriteRequest: UInt8 = 0x16
    public static let prepareWriteResponse: UInt8 = 0x17
    public static let executeWriteRequest: UInt8 = 0x18
    public static let executeWriteResponse: UInt8 = 0x19
    public static let handleValueNotification: UInt8 = 0x1B
    public static let handleValueIndication: UInt8 = 0x1D
    public static let handleValueConfirmation: UInt8 = 0x1E
    public static let readMultipleVariableRequest: UInt8 = 0x20
    public static let writeCommand: UInt8 = 0x52
    public static let signedWriteCommand: UInt8 = 0xD2

    /// Bit 6: the PDU is a command (never answered, ignored when unknown).
    public static let commandFlag: UInt8 = 0x40

    /// The response opcode that answers `request` (request + 1).
    public static func response(to request: UInt8) -> UInt8 { request &+ 1 }
}

/// ATT Error Response codes.
public enum ATTErrorCode {
    public static let invalidHandle: UInt8 = 0x01
    public static let readNotPermitted: UInt8 = 0x02
    public static let writeNotPermitted: UInt8 = 0x03
    public static let invalidPDU: UInt8 = 0x04
    public static let insufficientAuthentication: UInt8 = 0x05
    public static let requestNotSupported: UInt8 = 0x06
    public static let invalidOffset: UInt8 = 0x07
    public static let insufficientAuthorization: UInt8 = 0x08
    public static let prepareQueueFull: UInt8 = 0x09
    public static let attributeNotFound: UInt8 = 0x0A
    public static let attributeNotLong: UInt8 = 0x0B
    public static let insufficientEncryptionKeySize: UInt8 = 0x0C
    public static let invalidAttributeValueLength: UInt8 = 0x0D
    public static let unlikelyError: UInt8 = 0x0E
    public static let insufficientEncryption: UInt8 = 0x0F
    public static let unsupportedGroupType: UInt8 = 0x10
    /// The server's database changed and this client has not caught up
    /// (robust caching, Core Vol 3 Part G 2.5.2.1).
    public static let databaseOutOfSync: UInt8 = 0x12

    /// Codes that say a handle the client used is not (or no longer) there:
    /// a cached handle answered so is stale.
    public static func isStaleHandle(_ code: UInt8) -> Bool {
        code == invalidHandle || code == attributeNotFound || code == databaseOutOfSync
    }

    /// Codes that the link can cure by raising its security level.
    public static func isSecurity(_ code: UInt8) -> Bool {
        code == insufficientAuthentication || code == insufficientEncryption || code == insufficientEncryptionKeySize
    }
}

/// Execute Write Request flags (Core Vol 3 Part F 3.4.6.3).
public enum ExecuteWriteFlags {
    /// Cancel all prepared writes.
    public static let cancel: UInt8 = 0x00
    /// Write all prepared values, in the order they were prepared.
    public static let write: UInt8 = 0x01
}

/// The longest attribute value (Core Vol 3 Part F 3.2.9): the bound of a
/// long write.
public enum ATTValue {
    public static let maximumBytes = 512
}

/// ATT MTU bounds on LE.
public enum ATTMTU {
    public static let minimum = 23
    /// The largest ATT MTU (Core Vol 3 Part F 3.2.9: attribute values are at
    /// most 512 bytes, plus the largest header).
    public static let maximum = 517
}
