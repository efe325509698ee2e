// SPDX-License-Identifier: Apache-2.0
// The facts `wristlink doctor` judges (DoctorChecks.swift) and the line it
// gives for each check: DoctorCommand collects them from the system, tests
// build them by hand.

import Bounded
import Config
import Firmware
import Mgmt
import Platform
import PlatformLinux

public struct DoctorCheck: Equatable {
    public enum Verdict: Equatable {
        case ok
        case fail
        case skip
        case note
    }

    public var verdict: Verdict
    public var what: String
    public var detail: String
    public var fix: String

    public init(_ verdict: Verdict, _ what: String, _ detail: String, fix: String = "") {
        self.verdict = verdict
        self.what = what
        self.detail = detail
        self.fix = fix
    }

    public var text: String {
        let tag: String
        switch verdict {
        case .ok: tag = "ok   "
        case .fail: tag = "FAIL "
        case .skip: tag = "skip "
        case .note: tag = "note "
        }
        return tag + what + (detail.isEmpty ? "" : ": " + detail) + (fix.isEmpty ? "" : " — " + fix)
    }
}

/// The controller as the management interface answered for it.
public enum ControllerFacts: Equatable {
    /// The management socket could not be opened (the error).
    case noInterface(SystemError)
    /// The kernel did not answer in time.
    case noAnswer
    /// The index is not in the kernel's list (which is given).
    case absent(index: UInt16, list: ControllerIndexList)
    /// Read Controller Information failed with this status.
    case failed(index: UInt16, status: MgmtStatus)
    case present(index: UInt16, info: ControllerInformation)
}

/// A file read and parsed, or why not.
public enum ParsedFile<Value: Equatable>: Equatable {
    case parsed(Value)
    /// It could not be read (the error, with the call and path).
    case unreadable(SystemError)
    /// It has errors: each message with the file and line, one per line
    /// (`ConfigErrors.located(in:)`).
    case invalid([String])
}

/// The bond file.
public enum BondFacts: Equatable {
    /// No state directory: nothing to look at.
    case notChecked
    /// No bond file: no phone bonded yet.
    case none
    case unreadable(SystemError)
    /// Every bad line the parser found.
    case corrupt(BondFileErrors)
    /// `count` bonds; the file's modification time.
    case bonds(count: Int, modifiedSeconds: Int64)
}

/// One board line: its spec, its role and what the kernel said.
public struct LineFacts: Equatable {
    public var spec: LineSpec
    public var isButton: Bool
    public var probe: LineProbe

    public init(spec: LineSpec, isButton: Bool, probe: LineProbe) {
        self.spec = spec
        self.isButton = isButton
        self.probe = probe
    }
}

/// Everything the doctor looks at. Defaults are a healthy system but for
/// the board (`board`, `lines`), so a test sets only what it is about.
public struct DoctorFacts {
    /// `systemctl show bluetooth.service` (nil: no systemctl).
    public var bluetoothUnit: UnitState? = UnitState(loadState: "masked", activeState: "inactive", subState: "dead", unitFileState: "masked")
    /// Where /etc/systemd/system/bluetooth.service points, if it is a link.
    public var bluetoothMaskLink: String? = "/dev/null"
    public var bluetoothdPIDs: [Int32] = []
    /// The bthelper@ drop-in's path, if one is installed.
    public var dropIn: String? = DoctorFacts.dropInPaths[0]
    /// Raspberry Pi OS's bthelper@.service is installed.
    public var bthelperInstalled = true
    /// `systemctl show wristlink.service` (nil: no systemctl).
    public var service: UnitState? = UnitState(
        loadState: "loaded", activeState: "active", subState: "running", result: "success", execMainStatus: "0", unitFileState: "enabled")
    public var controller = ControllerFacts.present(
        index: 0,
        info: ControllerInformation(
            address: BDAddress(0xB8, 0x27, 0xEB, 0x12, 0x34, 0x56), bluetoothVersion: 9, manufacturer: 0x000F,
            supportedSettings: [.powered, .connectable, .bondable, .lowEnergy, .advertising, .secureConnections],
            currentSettings: [.powered, .connectable, .bondable, .lowEnergy, .secureConnections], classOfDevice: 0, name: try! LocalName("raspberrypi")))
    public var boardPath = "/etc/wristlink/board.conf"
    public var board: ParsedFile<BoardConfig> = .invalid(["not read"])
    public var policyPath = "/etc/wristlink/policy.conf"
    /// nil when the board did not parse (the policy needs it).
    public var policy: ParsedFile<Bool>? = .parsed(true)
    /// --gpio sim: lines are simulated, none is looked at.
    public var simulatedGPIO = false
    public var lines: [LineFacts] = []
    /// The power supplies of type Battery, by name
    /// (`PowerSupplyReader.defaultRoot`), and the reading of the one the
    /// board's `battery` picks (nil: none picked, or it said nothing).
    public var batteries: [String] = []
    public var batteryReading: BatteryReading? = nil
    public var stateDir = "/var/lib/wristlink"
    /// stat of the state directory, or why it failed.
    public var stateDirStatus: FileStatus? = FileStatus(
        mode: 0o700, isDirectory: true, isRegular: false, ownerUID: 0, groupGID: 0, modifiedSeconds: 0)
    public var stateDirError: SystemError? = nil
    /// Where the state directory points, if it is a link (DynamicUser=).
    public var stateDirLink: String? = nil
    public var bonds = BondFacts.none
    public var nowSeconds: Int64 = 0
    public var kernel = "6.12.47+rpt-rpi-v8"
    public var libgpiod = "libgpiod 2.2.1"
    /// /proc/device-tree/model.
    public var model: String? = nil
    /// /sys/class/net/wlan0/operstate.
    public var wlan0: String? = nil

    /// Where the package and install.sh put the drop-in.
    public static let dropInPaths = [
        "/usr/lib/systemd/system/bthelper@.service.d/wristlink.conf", "/etc/systemd/system/bthelper@.service.d/wristlink.conf",
        "/lib/systemd/system/bthelper@.service.d/wristlink.conf",
    ]
    public static let bthelperPaths = ["/usr/lib/systemd/system/bthelper@.service", "/lib/systemd/system/bthelper@.service"]

    public init() {}
}
