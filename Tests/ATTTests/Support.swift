import ATT
import Bounded

func hex(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var pending: UInt8? = nil
    for c in text.unicodeScalars {
        guard let v = UInt8(String(c), radix: 16) else { continue }
        if let high = pending {
            out.append(high << 4 | v)
            pending = nil
        } else {
            pending = v
        }
    }
    precondition(pending == nil, "odd number of hex digits")
    return out
}

func toHex(_ bytes: [UInt8]) -> String {
    bytes.map { b in let s = String(b, radix: 16, uppercase: true); return s.count == 1 ? "0" + s : s }.joined(separator: " ")
}

extension ByteBuffer {
    var hexString: String { toHex(toArray()) }
}

/// Everything the bearer wants to send, in order.
func drain(_ bearer: inout ATTBearer) -> [String] {
    var out = ByteBuffer(capacity: 600)
    var sent: [String] = []
    while bearer.popOutgoing(into: &out) { sent.append(out.hexString) }
    return sent
}
