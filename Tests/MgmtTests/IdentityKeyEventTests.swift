// SPDX-License-Identifier: Apache-2.0
// New Identity Resolving Key (event 0x0018) on a second vector, byte for
// byte. BlueZ doc/mgmt-api.txt: Store_Hint (1 octet), Random_Address (6),
// then the Key: Address (6), Address_Type (1), Value (16); all in wire
// order (least significant byte first). This vector differs from
// EventTests' in every field that could be mixed up: Store_Hint 0, a
// Random_Address of zeros (mgmt-api.txt: the peer paired with its identity
// address), a static random identity (Address_Type 2) and a key with no
// symmetry.

import Bounded
import Mgmt
import Testing
import TestSupport

@Suite("New Identity Resolving Key, second vector")
struct IdentityKeyEventTests {
    static let packet = hex("""
        18 00  01 00  1E 00
        00
        00 00 00 00 00 00
        56 34 12 EE FF C0  02
        A1 B2 C3 D4 E5 F6 07 18 29 3A 4B 5C 6D 7E 8F 90
        """)

    @Test("Store_Hint 0, a zero Random_Address and a static random identity decode into their own fields, the key in wire order")
    func staticRandomIdentityWithoutStoreHint() throws {
        let decoded = try decode(Self.packet)
        #expect(decoded.index == ControllerIndex(1))
        guard case .newIdentityResolvingKey(let irk) = decoded.event else {
            Issue.record("not a New IRK event: \(decoded.event)")
            return
        }
        #expect(irk.storeHint == false)
        #expect(irk.randomAddress == .any)
        #expect(irk.identity == phoneStatic)
        #expect(irk.identity.type == .leRandom && irk.identity.address.isStaticRandom)
        #expect((0..<6).map { irk.identity.address.wire[$0] } == [0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0])
        #expect((0..<16).map { irk.key.wire[$0] } == hex("A1 B2 C3 D4 E5 F6 07 18 29 3A 4B 5C 6D 7E 8F 90"))
    }

    @Test("with Store_Hint 0 the key is not kept; the same event with Store_Hint 1 bonds the static identity with that key")
    func storeHintDecidesTheBond() throws {
        var store = BondStore()
        guard case .newIdentityResolvingKey(let unhinted) = try decode(Self.packet).event else {
            Issue.record("not a New IRK event")
            return
        }
        #expect(store.apply(unhinted) == .ignored(.notPersistent))
        #expect(store.count == 0)
        var hinted = Self.packet
        hinted[6] = 0x01
        guard case .newIdentityResolvingKey(let irk) = try decode(hinted).event else {
            Issue.record("not a New IRK event")
            return
        }
        #expect(store.apply(irk) == .stored)
        #expect(store.firstIndex(of: phoneStatic) == 0)
        #expect(store[0].identityResolvingKey.map { k in (0..<16).map { k.wire[$0] } } == hex("A1 B2 C3 D4 E5 F6 07 18 29 3A 4B 5C 6D 7E 8F 90"))
    }
}
