// SPDX-License-Identifier: Apache-2.0
// A board line's kernel information, for `wristlink doctor`: found or not,
// on which chip and offset, used or free and by whom (the consumer name
// `gpioinfo` shows), direction and bias. Reading line information requests
// nothing, so a running firmware's lines are not disturbed. Only the level
// needs a request: `probe(readLevel: true)` asks for one on a line that is
// free, as an input with the bias left as it is, reads it and releases it
// at once (the doctor asks only when the service is not running).
//
// Both libgpiod versions, chosen as GPIODLines.swift and GPIODLines2.swift
// are (the compilation condition GPIOD2): libgpiod 1.6 finds a line and
// reads its information without requesting it (gpiod_chip_find_line,
// gpiod_line_is_used, gpiod_line_bias); libgpiod 2 reads a
// gpiod_line_info (gpiod_chip_get_line_info). Chips and lines are looked up
// the way the backends look them up, so what the doctor finds is what
// `wristlink run` would get.

import Bounded
import CGPIOD
import CLinux
import Platform

/// What the kernel says about one board line.
public struct LineProbe: Equatable, Sendable {
    public enum Place: Equatable, Sendable {
        /// The chip the board names cannot be opened (`reason` says why).
        case noChip(chip: String, reason: GPIOError.Reason)
        /// No such line on the chip (nil: on any chip).
        case noLine(chip: String?, reason: GPIOError.Reason)
        /// The line: the chip's kernel name (gpiochip0) and the offset.
        case found(chip: String, offset: Int)
    }

    public var place: Place
    public var used: Bool
    /// Who holds it (empty when free or unnamed).
    public var consumer: String
    public var isOutput: Bool
    /// The bias the kernel reports (nil: unknown to it).
    public var bias: Bias?
    /// The physical level (true: high), read only when asked and free.
    public var level: Bool?

    public init(place: Place, used: Bool = false, consumer: String = "", isOutput: Bool = false, bias: Bias? = nil, level: Bool? = nil) {
        self.place = place
        self.used = used
        self.consumer = consumer
        self.isOutput = isOutput
        self.bias = bias
        self.level = level
    }
}

public enum GPIODProbe {
    /// The consumer name of the doctor's short level read.
    public static let consumer = "wristlink-doctor"
}

#if GPIOD2
extension GPIODProbe {
    /// libgpiod's version (gpiod_api_version).
    public static var libraryVersion: String { "libgpiod " + String(cString: gpiod_api_version()) }

    /// The kernel's information on `spec`'s line; with `readLevel`, its
    /// level too if the line is free.
    public static func probe(_ spec: LineSpec, board: BoardLines, readLevel: Bool) -> LineProbe {
        var chip: OpaquePointer? = nil
        var offset: UInt32 = 0
        if let chipName = board.chip(of: spec) {
            do {
                chip = try GPIODLines.openLookup(chipName)
            } catch {
                return LineProbe(place: .noChip(chip: chipName, reason: reason(error, notFound: .noSuchChip)))
            }
            switch spec.line {
            case .named(let name):
                let found = gpiod_chip_get_line_offset_from_name(chip, name)
                guard found >= 0 else {
                    let error = SystemError("gpiod_chip_get_line_offset_from_name", errno: wl_errno())
                    gpiod_chip_close(chip)
                    return LineProbe(place: .noLine(chip: chipName, reason: reason(error, notFound: .noSuchLine)))
                }
                offset = UInt32(found)
            case .offset(let wanted):
                guard wanted >= 0, wanted < GPIODLines.info(chip!).lineCount else {
                    gpiod_chip_close(chip)
                    return LineProbe(place: .noLine(chip: chipName, reason: .noSuchLine))
                }
                offset = UInt32(wanted)
            }
        } else if case .named(let name) = spec.line {
            for device in GPIODCommon.scanChips().names {
                guard let candidate = gpiod_chip_open("/dev/" + device) else { continue }
                let found = gpiod_chip_get_line_offset_from_name(candidate, name)
                if found >= 0 {
                    chip = candidate
                    offset = UInt32(found)
                    break
                }
                gpiod_chip_close(candidate)
            }
            guard chip != nil else {
                let scan = GPIODCommon.scanChips()
                return LineProbe(place: .noLine(chip: nil, reason: scan.inaccessible ? .permission : .noSuchLine))
            }
        } else {
            preconditionFailure("BoardConfig.parse requires a chip for an offset")
        }
        let handle = chip!
        defer { gpiod_chip_close(handle) }
        var probe = LineProbe(place: .found(chip: GPIODLines.info(handle).name, offset: Int(offset)))
        guard let info = gpiod_chip_get_line_info(handle, offset) else { return probe }
        probe.used = gpiod_line_info_is_used(info)
        probe.consumer = gpiod_line_info_get_consumer(info).map { String(cString: $0) } ?? ""
        probe.isOutput = gpiod_line_info_get_direction(info) == GPIOD_LINE_DIRECTION_OUTPUT
        let bias = gpiod_line_info_get_bias(info)
        if bias == GPIOD_LINE_BIAS_PULL_UP {
            probe.bias = .pullUp
        } else if bias == GPIOD_LINE_BIAS_PULL_DOWN {
            probe.bias = .pullDown
        } else if bias == GPIOD_LINE_BIAS_DISABLED {
            probe.bias = .disable
        } else if bias == GPIOD_LINE_BIAS_AS_IS {
            probe.bias = .asIs
        }
        gpiod_line_info_free(info)
        if readLevel && !probe.used { probe.level = level(handle, offset) }
        return probe
    }

    /// Requests the line as an input (bias as it is), reads, releases.
    private static func level(_ chip: OpaquePointer, _ offset: UInt32) -> Bool? {
        guard let settings = gpiod_line_settings_new() else { return nil }
        defer { gpiod_line_settings_free(settings) }
        guard let config = gpiod_line_config_new() else { return nil }
        defer { gpiod_line_config_free(config) }
        guard let requestConfig = gpiod_request_config_new() else { return nil }
        defer { gpiod_request_config_free(requestConfig) }
        gpiod_request_config_set_consumer(requestConfig, consumer)
        _ = gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT)
        var line = offset
        guard gpiod_line_config_add_line_settings(config, &line, 1, settings) == 0 else { return nil }
        guard let request = gpiod_chip_request_lines(chip, requestConfig, config) else { return nil }
        defer { gpiod_line_request_release(request) }
        let value = gpiod_line_request_get_value(request, offset)
        if value == GPIOD_LINE_VALUE_ACTIVE { return true }
        if value == GPIOD_LINE_VALUE_INACTIVE { return false }
        return nil
    }
}
#else
extension GPIODProbe {
    /// libgpiod's version (gpiod_version_string).
    public static var libraryVersion: String { "libgpiod " + String(cString: gpiod_version_string()) }

    /// The kernel's information on `spec`'s line; with `readLevel`, its
    /// level too if the line is free.
    public static func probe(_ spec: LineSpec, board: BoardLines, readLevel: Bool) -> LineProbe {
        let line: OpaquePointer
        if let chipName = board.chip(of: spec) {
            let chip: OpaquePointer
            do {
                chip = try Sys.pointer("gpiod_chip_open_lookup") { gpiod_chip_open_lookup(chipName) }
            } catch {
                return LineProbe(place: .noChip(chip: chipName, reason: reason(error, notFound: .noSuchChip)))
            }
            do {
                switch spec.line {
                case .named(let name):
                    line = try Sys.pointer("gpiod_chip_find_line") { gpiod_chip_find_line(chip, name) }
                case .offset(let offset):
                    line = try Sys.pointer("gpiod_chip_get_line") { gpiod_chip_get_line(chip, UInt32(offset)) }
                }
            } catch {
                gpiod_chip_close(chip)
                let why = error.errno == EINVAL ? GPIOError.Reason.noSuchLine : reason(error, notFound: .noSuchLine)
                return LineProbe(place: .noLine(chip: chipName, reason: why))
            }
        } else if case .named(let name) = spec.line {
            do {
                line = try Sys.pointer("gpiod_line_find") { gpiod_line_find(name) }
            } catch {
                return LineProbe(place: .noLine(chip: nil, reason: reason(error, notFound: .noSuchLine)))
            }
        } else {
            preconditionFailure("BoardConfig.parse requires a chip for an offset")
        }
        defer { gpiod_line_close_chip(line) }
        let chip = gpiod_line_get_chip(line)!
        var probe = LineProbe(place: .found(chip: String(cString: gpiod_chip_name(chip)), offset: Int(gpiod_line_offset(line))))
        probe.used = gpiod_line_is_used(line)
        probe.consumer = gpiod_line_consumer(line).map { String(cString: $0) } ?? ""
        probe.isOutput = gpiod_line_direction(line) == Int32(GPIOD_LINE_DIRECTION_OUTPUT)
        switch gpiod_line_bias(line) {
        case Int32(GPIOD_LINE_BIAS_PULL_UP): probe.bias = .pullUp
        case Int32(GPIOD_LINE_BIAS_PULL_DOWN): probe.bias = .pullDown
        case Int32(GPIOD_LINE_BIAS_DISABLE): probe.bias = .disable
        case Int32(GPIOD_LINE_BIAS_AS_IS): probe.bias = .asIs
        default: probe.bias = nil
        }
        if readLevel && !probe.used && gpiod_line_request_input(line, consumer) == 0 {
            let value = gpiod_line_get_value(line)
            probe.level = value < 0 ? nil : value == 1
            gpiod_line_release(line)
        }
        return probe
    }
}
#endif

extension GPIODProbe {
    /// The reason for a failed lookup, as the backends would report it.
    static func reason(_ error: SystemError, notFound: GPIOError.Reason) -> GPIOError.Reason {
        switch error.errno {
        case EBUSY: return .busy
        case EACCES, EPERM: return .permission
        case ENOENT, ENODEV, ENOTTY:
            return GPIODCommon.scanChips().inaccessible ? .permission : notFound
        default: return .failed
        }
    }
}
