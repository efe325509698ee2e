// SPDX-License-Identifier: Apache-2.0
import ATT
import Bounded
import TestSupport

/// Everything the bearer wants to send, in order.
func drain(_ bearer: inout ATTBearer) -> [String] {
    var out = ByteBuffer(capacity: 600)
    var sent: [String] = []
    while bearer.popOutgoing(into: &out) { sent.append(out.hexString) }
    return sent
}
