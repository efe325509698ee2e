// SPDX-License-Identifier: Apache-2.0
import Bounded
import Mgmt
import Testing
import TestSupport

let scKey = LongTermKey(type: .authenticatedP256, central: false, encryptionSizeBytes: 16, ediv: 0, rand: 0,
                        value: key("00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF"))
let legacyCentralKey = LongTermKey(type: .unauthenticatedLegacy, central: true, encryptionSizeBytes: 7, ediv: 0x1234,
                                   rand: 0x0102_0304_0506_0708, value: key("A1 A2 A3 A4 A5 A6 A7 00 00 00 00 00 00 00 00 00"))
let irkValue = key("0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00")

func ltk(_ address: DeviceAddress, _ key: LongTermKey, storeHint: Bool = true) -> NewLongTermKey {
    NewLongTermKey(storeHint: storeHint, address: address, key: key)
}

func irk(_ identity: DeviceAddress, _ key: Key128 = irkValue, storeHint: Bool = true) -> NewIdentityResolvingKey {
    NewIdentityResolvingKey(storeHint: storeHint, randomAddress: BDAddress(0x4A, 0x3B, 0x2C, 0x1D, 0x0E, 0xF1), identity: identity, key: key)
}

/// Static random addresses C0:00:00:00:00:nn.
func peer(_ n: Int) -> DeviceAddress { DeviceAddress(BDAddress(0xC0, 0, 0, 0, 0, UInt8(n)), .leRandom) }

@Suite("Bonds from key events, and the Load commands")
struct BondTests {
    @Test("New Identity Resolving Key then New Long Term Key make one bond; a repeat changes nothing")
    func buildsBond() {
        var store = BondStore()
        #expect(store.apply(irk(phonePublic)) == .stored)
        #expect(store.apply(ltk(phonePublic, scKey)) == .stored)
        #expect(store.apply(ltk(phonePublic, scKey)) == .unchanged)
        #expect(store.apply(irk(phonePublic)) == .unchanged)
        #expect(store.count == 1)
        #expect(store[0].address == phonePublic)
        #expect(store[0].longTermKey(central: false) == scKey)
        #expect(store[0].longTermKey(central: true) == nil)
        #expect(store[0].identityResolvingKey == irkValue)
    }

    @Test("keys the kernel says not to store, non-identity addresses and debug keys are not kept")
    func ignoredKeys() {
        var store = BondStore()
        #expect(store.apply(ltk(phonePublic, scKey, storeHint: false)) == .ignored(.notPersistent))
        let resolvable = DeviceAddress(BDAddress(0x4A, 0x3B, 0x2C, 0x1D, 0x0E, 0xF1), .leRandom)
        #expect(store.apply(ltk(resolvable, scKey)) == .ignored(.notIdentity))
        #expect(store.apply(irk(DeviceAddress(BDAddress(0, 1, 2, 3, 4, 5), .bredr))) == .ignored(.notIdentity))
        var debug = scKey
        debug.type = .debugP256
        #expect(store.apply(ltk(phonePublic, debug)) == .ignored(.debugKey))
        #expect(store.apply(irk(phonePublic, storeHint: false)) == .ignored(.notPersistent))
        #expect(store.isEmpty == true)
    }

    @Test("legacy pairing keeps one key per Central value; a new key for the same role replaces the old")
    func keyPerRole() {
        var store = BondStore()
        _ = store.apply(ltk(phoneStatic, scKey))
        _ = store.apply(ltk(phoneStatic, legacyCentralKey))
        #expect(store.longTermKeyCount == 2)
        var replacement = scKey
        replacement.value = key("FF EE DD CC BB AA 99 88 77 66 55 44 33 22 11 00")
        #expect(store.apply(ltk(phoneStatic, replacement)) == .stored)
        #expect(store[0].longTermKey(central: false) == replacement)
        #expect(store.longTermKeyCount == 2)
    }

    @Test("a ninth peer evicts the bond updated longest ago, and says which")
    func evictsLeastRecentlyUpdated() {
        var store = BondStore()
        for n in 1...8 { #expect(store.apply(ltk(peer(n), scKey)) == .stored) }
        var newer = scKey
        newer.ediv = 1
        _ = store.apply(ltk(peer(1), newer))
        #expect(store.apply(ltk(peer(9), scKey)) == .storedEvicting(peer(2)))
        #expect(store.count == 8)
        #expect(store.evictedCount == 1)
        #expect(store.firstIndex(of: peer(2)) == nil)
        #expect(store.firstIndex(of: peer(1)) == 6)
        #expect(store.firstIndex(of: peer(9)) == 7)
        #expect(store.remove(peer(1)) == true)
        #expect(store.remove(peer(1)) == false)
        #expect(store.count == 7)
    }

    @Test("Load Long Term Keys 0x0013: Key_Count then 36-byte records, byte for byte")
    func loadLongTermKeys() throws {
        var store = BondStore()
        _ = store.apply(ltk(phoneStatic, legacyCentralKey))
        _ = store.apply(ltk(phoneStatic, scKey))
        _ = store.apply(irk(phonePublic))
        var out = ByteBuffer(capacity: BondStore.maxLoadLongTermKeysByteCount)
        try store.encodeLoadLongTermKeys(index: ControllerIndex(0), into: &out)
        #expect(out.toArray() == hex("13 00 00 00 4A 00  02 00")
            + hex(phoneStaticWire + "03 00 10  00 00  00 00 00 00 00 00 00 00  00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF")
            + hex(phoneStaticWire + "00 01 07  34 12  08 07 06 05 04 03 02 01  A1 A2 A3 A4 A5 A6 A7 00 00 00 00 00 00 00 00 00"))
    }

    @Test("Load Identity Resolving Keys 0x0030: Key_Count then 23-byte records")
    func loadIdentityResolvingKeys() throws {
        var store = BondStore()
        _ = store.apply(ltk(phoneStatic, scKey))
        _ = store.apply(irk(phonePublic))
        var out = ByteBuffer(capacity: 64)
        try store.encodeLoadIdentityResolvingKeys(index: ControllerIndex(1), into: &out)
        #expect(out.toArray() == hex("30 00 01 00 19 00  01 00" + phonePublicWire + "0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))
    }

    @Test("an empty store loads zero keys: the kernel's lists are cleared")
    func emptyLoads() throws {
        let store = BondStore()
        var out = ByteBuffer(capacity: 16)
        try store.encodeLoadLongTermKeys(index: ControllerIndex(0), into: &out)
        #expect(out.toArray() == hex("13 00 00 00 02 00 00 00"))
        try store.encodeLoadIdentityResolvingKeys(index: ControllerIndex(0), into: &out)
        #expect(out.toArray() == hex("30 00 00 00 02 00 00 00"))
    }

    @Test("a full store's Load Long Term Keys fits the documented buffer size")
    func fullStoreFits() throws {
        var store = BondStore()
        for n in 1...8 {
            _ = store.apply(ltk(peer(n), scKey))
            _ = store.apply(ltk(peer(n), legacyCentralKey))
        }
        var out = ByteBuffer(capacity: BondStore.maxLoadLongTermKeysByteCount)
        try store.encodeLoadLongTermKeys(index: ControllerIndex(0), into: &out)
        #expect(out.count == 6 + 2 + 16 * 36)
        #expect(out.count == BondStore.maxLoadLongTermKeysByteCount)
        #expect(out.count == ControllerSetup.commandBufferCapacity)
    }
}
