// SPDX-License-Identifier: Apache-2.0
// A fixed name from the program text (an event kind, a drop reason): no
// allocation, usable in Embedded Swift, comparable in tests.

public struct Name: Equatable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let text: StaticString

    public init(_ text: StaticString) { self.text = text }
    public init(stringLiteral value: StaticString) { text = value }

    public static func == (a: Name, b: Name) -> Bool {
        a.text.withUTF8Buffer { x in
            b.text.withUTF8Buffer { y in
                guard x.count == y.count else { return false }
                for i in 0..<x.count where x[i] != y[i] { return false }
                return true
            }
        }
    }

    public var description: String { text.description }
}
