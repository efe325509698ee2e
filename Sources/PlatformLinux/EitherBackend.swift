// SPDX-License-Identifier: Apache-2.0
// One link type and one line type for the daemon, whichever backends the
// command line picked: `wristlink run` offers the UNIX or the BlueZ link and
// simulated or libgpiod lines, and a loop generic over both was compiled
// once per pair (four copies of Runner and the core's inputs). These enums
// dispatch each call with a switch instead, so the daemon's loop exists once
// (docs/pi-build.md, "Size"). A call moves the backend out of the enum and
// back, which is a copy of a few words; nothing is reopened or closed.

import Bounded
import Platform

public enum EitherLink: ~Copyable, LinkBackend {
    case unix(UnixLink)
    case bluez(BlueZLink)

    public static var maxDescriptors: Int { max(UnixLink.maxDescriptors, BlueZLink.maxDescriptors) }

    public mutating func addDescriptors(to set: inout PollSet) {
        switch consume self {
        case .unix(var link): link.addDescriptors(to: &set); self = .unix(link)
        case .bluez(var link): link.addDescriptors(to: &set); self = .bluez(link)
        }
    }

    public mutating func nextInput(into pdu: inout ByteBuffer, ready: borrowing PollSet) -> LinkInput {
        switch consume self {
        case .unix(var link):
            let input = link.nextInput(into: &pdu, ready: ready)
            self = .unix(link)
            return input
        case .bluez(var link):
            let input = link.nextInput(into: &pdu, ready: ready)
            self = .bluez(link)
            return input
        }
    }

    public mutating func send(_ pdu: borrowing ByteBuffer) {
        switch consume self {
        case .unix(var link): link.send(pdu); self = .unix(link)
        case .bluez(var link): link.send(pdu); self = .bluez(link)
        }
    }

    public mutating func raiseSecurity(attempt: Int) {
        switch consume self {
        case .unix(var link): link.raiseSecurity(attempt: attempt); self = .unix(link)
        case .bluez(var link): link.raiseSecurity(attempt: attempt); self = .bluez(link)
        }
    }

    public mutating func disconnect() {
        switch consume self {
        case .unix(var link): link.disconnect(); self = .unix(link)
        case .bluez(var link): link.disconnect(); self = .bluez(link)
        }
    }

    public var hasPendingInput: Bool {
        switch self {
        case .unix(let link): link.hasPendingInput
        case .bluez(let link): link.hasPendingInput
        }
    }
}

public enum EitherLines: ~Copyable, LineBackend {
    case simulated(SimLines)
    case gpiod(GPIODLines)

    public static var maxDescriptors: Int { max(SimLines.maxDescriptors, GPIODLines.maxDescriptors) }

    public mutating func addDescriptors(to set: inout PollSet) {
        switch consume self {
        case .simulated(var lines): lines.addDescriptors(to: &set); self = .simulated(lines)
        case .gpiod(var lines): lines.addDescriptors(to: &set); self = .gpiod(lines)
        }
    }

    public mutating func nextInput(now: Instant, ready: borrowing PollSet) -> InputEvent? {
        switch consume self {
        case .simulated(var lines):
            let input = lines.nextInput(now: now, ready: ready)
            self = .simulated(lines)
            return input
        case .gpiod(var lines):
            let input = lines.nextInput(now: now, ready: ready)
            self = .gpiod(lines)
            return input
        }
    }

    public var deadline: Instant? {
        switch self {
        case .simulated(let lines): lines.deadline
        case .gpiod(let lines): lines.deadline
        }
    }

    public mutating func setOutput(_ line: Int, on: Bool) {
        switch consume self {
        case .simulated(var lines): lines.setOutput(line, on: on); self = .simulated(lines)
        case .gpiod(var lines): lines.setOutput(line, on: on); self = .gpiod(lines)
        }
    }

    public mutating func allOff() {
        switch consume self {
        case .simulated(var lines): lines.allOff(); self = .simulated(lines)
        case .gpiod(var lines): lines.allOff(); self = .gpiod(lines)
        }
    }
}
