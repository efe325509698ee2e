// SPDX-License-Identifier: Apache-2.0
// The ANCS and AMS UUIDs as the phone and the firmware put them on the
// wire (a 128-bit UUID goes least significant byte first), in hex as `hex`
// reads it. Written out, not computed from the codecs' constants, so a test
// that compares bytes checks those constants too. One copy for every test
// target and the bench harness.

/// The ANCS and AMS UUIDs as they appear on the wire.
public enum Wire {
    /// The ANCS service, 7905F431-B5CE-4E99-A40F-4B1E122D00D0.
    public static let ancs = "D0 00 2D 12 1E 4B 0F A4 99 4E CE B5 31 F4 05 79"
    /// Notification Source, 9FBF120D-6301-42D9-8C58-25E699A21DBD.
    public static let ns = "BD 1D A2 99 E6 25 58 8C D9 42 01 63 0D 12 BF 9F"
    /// Control Point, 69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9.
    public static let cp = "D9 D9 AA FD BD 9B 21 98 A8 49 E1 45 F3 D8 D1 69"
    /// Data Source, 22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB.
    public static let ds = "FB 7B 7C CE 6A B3 44 BE B5 4B D6 24 E9 C6 EA 22"
    /// The AMS service, 89D3502B-0F36-433A-8EF4-C502AD55F8DC.
    public static let ams = "DC F8 55 AD 02 C5 F4 8E 3A 43 36 0F 2B 50 D3 89"
    /// AMS Remote Command, 9B3C81D8-57B1-4A8A-B8DF-0E56F7CA51C2.
    public static let remoteCommand = "C2 51 CA F7 56 0E DF B8 8A 4A B1 57 D8 81 3C 9B"
    /// AMS Entity Update, 2F7CABCE-808D-411F-9A0C-BB92BA96C102.
    public static let entityUpdate = "02 C1 96 BA 92 BB 0C 9A 1F 41 8D 80 CE AB 7C 2F"
    /// AMS Entity Attribute, C6B2F38C-23AB-46D8-A6AB-A3A870BBD5D7.
    public static let entityAttribute = "D7 D5 BB 70 A8 A3 AB A6 D8 46 AB 23 8C F3 B2 C6"
}
