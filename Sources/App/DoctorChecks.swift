// SPDX-License-Identifier: Apache-2.0
// `wristlink doctor`'s judgement, sans-IO: the facts DoctorCommand collected
// (systemd units, processes, the controller, the board's lines, the state
// directory, the system) in, one line per check and the exit status out.
// Tests feed it facts; nothing here reads the system. docs/doctor.md lists
// every check and its fix.
//
// Line format, one check per line:
//   ok   <what>: <what is so>
//   FAIL <what>: <what is wrong> — <the fix>
//   skip <what>: <why it could not be checked>
//   note <what>: <what is so> — <what to consider>
// The tag is four characters and a space, so the names line up; only FAIL
// changes the exit status (1 when any check fails, 0 otherwise).

import ANCS
import Bounded
import Config
import Firmware
import Mgmt
import Platform
import PlatformLinux

public enum Doctor {
    /// The consumer name the firmware's line requests carry.
    static let firmwareConsumer = "wristlink"

    public static func checks(_ facts: DoctorFacts) -> [DoctorCheck] {
        var out: [DoctorCheck] = []
        out.append(bluetoothd(facts))
        out.append(bluetoothUnit(facts))
        out.append(dropIn(facts))
        out.append(controller(facts))
        out.append(service(facts))
        out.append(contentsOf: settings(facts))
        out.append(contentsOf: stateDirectory(facts))
        out.append(contentsOf: system(facts))
        return out
    }

    /// 1 if any check failed, else 0.
    public static func exitStatus(_ checks: [DoctorCheck]) -> Int32 {
        checks.contains { $0.verdict == .fail } ? ExitCode.failure : ExitCode.ok
    }

    static let maskFix = "systemctl mask --now bluetooth.service (the package does this at install; README, \"Why bluetoothd must not run\")"
    static let noSystemctl = "skipped: no systemctl (not running under systemd)"

    // MARK: Bluetooth

    static func bluetoothd(_ f: DoctorFacts) -> DoctorCheck {
        guard !f.bluetoothdPIDs.isEmpty else { return DoctorCheck(.ok, "bluetoothd", "not running") }
        let pids = f.bluetoothdPIDs.map { "\($0)" }.joined(separator: ", ")
        return DoctorCheck(
            .fail, "bluetoothd", "running (pid \(pids)): it takes the controller from the firmware",
            fix: f.bluetoothUnit == nil ? "stop it (kill \(pids)) and keep it from starting again" : maskFix)
    }

    static func bluetoothUnit(_ f: DoctorFacts) -> DoctorCheck {
        let what = "bluetooth.service"
        guard let unit = f.bluetoothUnit else {
            if let link = f.bluetoothMaskLink, link.utf8Equals("/dev/null") {
                return DoctorCheck(.ok, what, "masked (/etc/systemd/system/bluetooth.service -> /dev/null)")
            }
            return DoctorCheck(.skip, what, noSystemctl)
        }
        if unit.loadState.utf8Equals("masked") || unit.unitFileState.utf8Equals("masked") {
            return DoctorCheck(.ok, what, "masked, " + unit.activeState)
        }
        if unit.loadState.utf8Equals("not-found") { return DoctorCheck(.ok, what, "not installed") }
        let enabled = unit.unitFileState.isEmpty ? "" : unit.unitFileState + ", "
        return DoctorCheck(
            .fail, what, "\(enabled)\(unit.activeState), not masked: bluetoothd can start and take the controller (bthelper@hci0 pulls it in)",
            fix: maskFix)
    }

    static func dropIn(_ f: DoctorFacts) -> DoctorCheck {
        let what = "bthelper@ drop-in"
        if let path = f.dropIn { return DoctorCheck(.ok, what, path) }
        guard f.bthelperInstalled else { return DoctorCheck(.ok, what, "not needed: no bthelper@.service on this system") }
        return DoctorCheck(
            .fail, what, "missing, and bthelper@.service (pi-bluetooth) is installed: it configures the controller behind the firmware's back",
            fix: "apt install --reinstall wristlink, or copy board/deb/bthelper-wristlink.conf to "
                + "/etc/systemd/system/bthelper@.service.d/wristlink.conf and run systemctl daemon-reload")
    }

    static func controller(_ f: DoctorFacts) -> DoctorCheck {
        switch f.controller {
        case .noInterface(let error):
            let fix =
                error.addressFamilyUnsupported
                ? "this kernel has no Bluetooth support (modprobe bluetooth; a Pi's kernel has it)"
                : "run wristlink doctor as root"
            return DoctorCheck(.fail, "controller", "cannot open the Bluetooth management interface: \(error)", fix: fix)
        case .noAnswer:
            return DoctorCheck(
                .fail, "controller", "the Bluetooth management interface did not answer",
                fix: "look at dmesg for Bluetooth errors; reboot if the kernel's Bluetooth stack is stuck")
        case .absent(let index, let list):
            let others = list.indices.map { "hci\($0)" }.joined(separator: ", ")
            let seen = list.count == 0 ? "the kernel has no Bluetooth controller" : "the kernel has \(others)"
            return DoctorCheck(
                .fail, "controller hci\(index)", "absent (\(seen))",
                fix: "check dmesg | grep -i -e hci -e bluetooth (on a Pi: the UART controller, no dtoverlay=disable-bt in "
                    + "/boot/firmware/config.txt); the firmware waits for it and sets it up when it appears")
        case .failed(let index, let status):
            return DoctorCheck(
                .fail, "controller hci\(index)", "Read Controller Information failed: \(status.name)",
                fix: "look at dmesg for Bluetooth errors")
        case .present(let index, let info):
            let what = "controller hci\(index)"
            let address = addressText(info.address)
            guard info.supportedSettings.contains(.lowEnergy) else {
                return DoctorCheck(.fail, what, "\(address), no Bluetooth LE support", fix: "Wristlink needs an LE controller (Bluetooth 4.0 or later)")
            }
            var detail = address + ", LE"
            for (bit, name) in [(ControllerSettings.advertising, "advertising"), (.connectable, "connectable"), (.bondable, "bondable")]
            where info.currentSettings.contains(bit) {
                detail += ", " + name
            }
            if info.currentSettings.contains(.powered) { return DoctorCheck(.ok, what, "powered, " + detail) }
            if f.service?.isActive == true {
                return DoctorCheck(
                    .fail, what, "not powered though wristlink.service runs: " + detail,
                    fix: "rfkill list (rfkill unblock bluetooth if it is blocked); journalctl -u wristlink -b says why set-up stopped")
            }
            return DoctorCheck(.ok, what, "not powered (the firmware powers it when it starts), " + detail)
        }
    }

    /// "B8:27:EB:12:34:56 (public)", or the LE-only case without one.
    static func addressText(_ address: BDAddress) -> String {
        if address == BDAddress.any { return "no public address (LE-only: a static random address)" }
        var out = ByteBuffer(capacity: 32)
        for i in stride(from: 5, through: 0, by: -1) {
            out.append(hexByte: address.wire[i])
            if i > 0 { out.append(UInt8(ascii: ":")) }
        }
        return String(decoding: out.toArray(), as: UTF8.self) + " (public)"
    }

    static func service(_ f: DoctorFacts) -> DoctorCheck {
        let what = "wristlink.service"
        guard let unit = f.service else { return DoctorCheck(.skip, what, noSystemctl) }
        if unit.loadState.utf8Equals("not-found") {
            return DoctorCheck(.fail, what, "not installed", fix: "apt install ./wristlink_…deb (README, \"Installing on a Raspberry Pi\")")
        }
        let last = "last exit status \(unit.execMainStatus)" + exitMeaning(unit.execMainStatus) + ", result \(unit.result)"
        let state = "\(unit.activeState) (\(unit.subState)), " + last
        if unit.isActive {
            // The firmware's STATUS=: a set-up that keeps failing leaves the
            // service running (it retries) but the wearable unreachable.
            guard !unit.statusText.isEmpty else { return DoctorCheck(.ok, what, state) }
            let detail = state + "; " + unit.statusText
            if ServiceStatus.isSetupFailure(unit.statusText) {
                return DoctorCheck(
                    .fail, what, detail, fix: "rfkill list (rfkill unblock bluetooth if it is blocked); journalctl -u wristlink -b says more")
            }
            return DoctorCheck(.ok, what, detail)
        }
        if unit.loadState.utf8Equals("masked") {
            return DoctorCheck(.fail, what, "masked", fix: "systemctl unmask wristlink && systemctl enable --now wristlink")
        }
        if unit.activeState.utf8Equals("activating") {
            return DoctorCheck(.fail, what, state, fix: "wait a few seconds and run wristlink doctor again; journalctl -u wristlink -b -n 50")
        }
        let start = unit.unitFileState.utf8Equals("enabled") ? "systemctl restart wristlink" : "systemctl enable --now wristlink"
        return DoctorCheck(.fail, what, state, fix: "journalctl -u wristlink -b -n 50 says why; fix that, then \(start)")
    }

    static func exitMeaning(_ status: String) -> String {
        switch Int32(status) ?? -1 {
        case 0: return ""
        case 1: return " (a failure while running)"
        case 2: return " (bad command line)"
        case ExitCode.setup: return " (GPIO lines or Bluetooth could not be set up)"
        case ExitCode.config: return " (bad board or policy file)"
        default: return ""
        }
    }

    // MARK: Board, policy, lines

    static func settings(_ f: DoctorFacts) -> [DoctorCheck] {
        var out: [DoctorCheck] = []
        let boardWhat = "board " + f.boardPath
        let board: BoardConfig
        switch f.board {
        case .unreadable(let error):
            out.append(DoctorCheck(.fail, boardWhat, "cannot read: \(error)", fix: fileFix(error, f.boardPath, pick: true)))
            out.append(DoctorCheck(.skip, "lines", "the board file cannot be read"))
            out += policyChecks(f)
            return out
        case .invalid(let messages):
            out += fileErrors("board", messages)
            out.append(DoctorCheck(.skip, "lines", "the board file has an error"))
            out += policyChecks(f)
            return out
        case .parsed(let b):
            board = b
        }
        out.append(DoctorCheck(.ok, boardWhat, "\(board.name), \(board.outputs.count) outputs, \(board.buttons.count) buttons"))
        out.append(bluetoothName(board))
        out.append(battery(f, board: board))
        out += policyChecks(f)
        if board.simulated {
            if f.simulatedGPIO {
                out.append(DoctorCheck(.skip, "lines", "simulated board (--gpio sim): no GPIO lines to look at"))
            } else {
                out.append(
                    DoctorCheck(
                        .fail, "lines", "\(f.boardPath) is a simulated board (chip sim)",
                        fix: "use a board file for real lines: cp /usr/share/wristlink/board/pi-zero-2w/board.conf /etc/wristlink/board.conf"))
            }
            return out
        }
        if f.simulatedGPIO {
            out.append(DoctorCheck(.skip, "lines", "--gpio sim: no GPIO lines are looked at"))
            return out
        }
        for line in f.lines { out.append(lineCheck(line, board: board, serviceActive: f.service?.isActive)) }
        return out
    }

    static func policyChecks(_ f: DoctorFacts) -> [DoctorCheck] {
        let what = "policy " + f.policyPath
        guard let policy = f.policy else { return [DoctorCheck(.skip, "policy", "checked against the board, which could not be used")] }
        switch policy {
        case .parsed: return [DoctorCheck(.ok, what, "parses")]
        case .unreadable(let error): return [DoctorCheck(.fail, what, "cannot read: \(error)", fix: fileFix(error, f.policyPath, pick: false))]
        case .invalid(let messages): return fileErrors("policy", messages)
        }
    }

    /// A FAIL line per error of a settings file; the fix on the last.
    static func fileErrors(_ what: String, _ messages: [String]) -> [DoctorCheck] {
        var out: [DoctorCheck] = []
        for (i, message) in messages.enumerated() {
            let fix =
                i < messages.count - 1 ? "" : messages.count == 1
                ? "fix that line (docs/config.md), then systemctl restart wristlink"
                : "fix these lines (docs/config.md), then systemctl restart wristlink"
            out.append(DoctorCheck(.fail, what, message, fix: fix))
        }
        return out
    }

    static func fileFix(_ error: SystemError, _ path: String, pick: Bool) -> String {
        if error.notFound {
            return pick
                ? "copy your board's file there: cp /usr/share/wristlink/board/pi-zero-2w/board.conf \(path) (or pi4, pi5)"
                : "copy the default there: cp /usr/share/wristlink/board/policy.conf \(path)"
        }
        return "run wristlink doctor as root; the file should be mode 0644"
    }

    static func lineCheck(_ line: LineFacts, board: BoardConfig, serviceActive: Bool?) -> DoctorCheck {
        let what = (line.isButton ? "button " : "output ") + line.spec.name
        let probe = line.probe
        switch probe.place {
        case .noChip(let chip, let reason):
            if reason == .permission {
                return DoctorCheck(.fail, what, "cannot open GPIO chip \(chip): permission denied", fix: "run wristlink doctor as root")
            }
            return DoctorCheck(.fail, what, "no GPIO chip \(chip)", fix: "check `chip` in the board file against gpiodetect")
        case .noLine(let chip, let reason):
            if reason == .permission {
                return DoctorCheck(.fail, what, "cannot open the GPIO chips: permission denied", fix: "run wristlink doctor as root")
            }
            let missing: String
            switch line.spec.line {
            case .named(let name): missing = "no line named \(name)"
            case .offset(let offset): missing = "no line at offset \(offset)"
            }
            let place = chip.map { " on \($0)" } ?? " on any GPIO chip"
            return DoctorCheck(
                .fail, what, missing + place, fix: "check line= in the board file against gpioinfo" + (chip.map { " \($0)" } ?? ""))
        case .found(let chip, let offset):
            let name: String
            if case .named(let n) = line.spec.line { name = n + " " } else { name = "" }
            let at = "\(name)(\(chip) offset \(offset))"
            if probe.used && !probe.consumer.utf8Equals(firmwareConsumer) {
                let who = probe.consumer.isEmpty ? "another process (no consumer name)" : "\"\(probe.consumer)\""
                return DoctorCheck(
                    .fail, what, "\(at) is held by \(who)",
                    fix: "stop that process (gpioinfo \(chip) lists who holds which line); the firmware cannot request it")
            }
            var detail = at
            if probe.used {
                if serviceActive == false {
                    return DoctorCheck(
                        .fail, what, "\(at) is held by wristlink, but wristlink.service is not running",
                        fix: "another `wristlink run` (started by hand?) holds it: stop that process")
                }
                detail += serviceActive == true ? ", held by the running service" : ", held by wristlink"
            } else {
                detail += ", free"
            }
            guard line.isButton else { return DoctorCheck(.ok, what, detail) }
            detail += ", bias " + biasName(line.spec.bias) + " (board)"
            if probe.used, let kernelBias = probe.bias, kernelBias != line.spec.bias {
                detail += ", " + biasName(kernelBias) + " (kernel)"
            }
            guard let level = probe.level else {
                if probe.used { detail += ", level not read (the line is held)" }
                return DoctorCheck(.ok, what, detail)
            }
            let pressed = level != line.spec.activeLow
            detail += ", level " + (level ? "high" : "low") + (pressed ? " (pressed)" : " (released)")
            if pressed {
                return DoctorCheck(
                    .note, what, detail,
                    fix: "reads pressed with nothing pressed? check active-low= and bias= in the board file, and the wiring "
                        + "(wristlink test-board)")
            }
            return DoctorCheck(.ok, what, detail)
        }
    }

    static func biasName(_ bias: Bias) -> String {
        switch bias {
        case .asIs: "as-is"
        case .disable: "disable"
        case .pullUp: "pull-up"
        case .pullDown: "pull-down"
        }
    }

    // MARK: State

    static func stateDirectory(_ f: DoctorFacts) -> [DoctorCheck] {
        let what = "state directory " + f.stateDir
        guard let st = f.stateDirStatus else {
            let check: DoctorCheck
            if let error = f.stateDirError, !error.notFound {
                check = DoctorCheck(.fail, what, "cannot look at it: \(error)", fix: "run wristlink doctor as root")
            } else {
                check = DoctorCheck(
                    .fail, what, "missing",
                    fix: "systemctl start wristlink creates it (StateDirectory=); by hand: install -d -m 0700 \(f.stateDir)")
            }
            return [check, DoctorCheck(.skip, "bonds", "no state directory to look in")]
        }
        guard st.isDirectory else {
            return [
                DoctorCheck(.fail, what, "not a directory", fix: "move it away; systemctl restart wristlink makes the directory"),
                DoctorCheck(.skip, "bonds", "no state directory to look in"),
            ]
        }
        // systemd's DynamicUser=: /var/lib/wristlink is a link into
        // /var/lib/private/, whose directory belongs to the service's user.
        let dynamic = f.stateDirLink.map { $0.utf8HasPrefix("private/") || $0.utf8HasPrefix("/var/lib/private/") } ?? false
        let mode = octal(st.mode)
        var out: [DoctorCheck] = []
        if st.mode != 0o700 && st.mode != 0o750 {
            out.append(DoctorCheck(.fail, what, "mode \(mode): the bonds' keys are readable by others", fix: "chmod 0700 \(f.stateDir)"))
        } else if st.ownerUID != 0 && !dynamic {
            out.append(DoctorCheck(.fail, what, "mode \(mode), owned by uid \(st.ownerUID), not root", fix: "chown root:root \(f.stateDir)"))
        } else if dynamic {
            out.append(DoctorCheck(.ok, what, "mode \(mode), -> \(f.stateDirLink!) (the service's DynamicUser=, uid \(st.ownerUID))"))
        } else {
            out.append(DoctorCheck(.ok, what, "mode \(mode), owner root"))
        }
        out += bonds(f)
        return out
    }

    static func bonds(_ f: DoctorFacts) -> [DoctorCheck] {
        let what = "bonds " + f.stateDir + "/bonds"
        switch f.bonds {
        case .notChecked:
            return [DoctorCheck(.skip, "bonds", "not looked at")]
        case .none:
            return [DoctorCheck(.ok, what, "none yet: the wearable is in pairing mode when it starts")]
        case .unreadable(let error):
            return [DoctorCheck(.fail, what, "cannot read: \(error)", fix: "run wristlink doctor as root")]
        case .corrupt(let errors):
            // A FAIL line per bad line; the fix on the last.
            var details: [String] = []
            for i in 0..<errors.count { details.append("line \(errors[i].line): corrupt (\(errors[i].problem.name))") }
            if errors.notKept > 0 { details.append("\(errors.notKept) more bad line\(errors.notKept == 1 ? "" : "s") after these") }
            var out: [DoctorCheck] = []
            for (i, detail) in details.enumerated() {
                let fix =
                    i < details.count - 1
                    ? "" : "the firmware sets it aside at its next start and starts without bonds: restart it and pair the phone again"
                out.append(DoctorCheck(.fail, what, detail, fix: fix))
            }
            return out
        case .bonds(let count, let modified):
            return [
                DoctorCheck(
                    .ok, what,
                    "\(count) bonded phone\(count == 1 ? "" : "s"), last written \(utcText(modified)) (\(ago(f.nowSeconds - modified))): "
                        + "it changes when a phone pairs; no connection time is kept")
            ]
        }
    }

    // MARK: System

    static func system(_ f: DoctorFacts) -> [DoctorCheck] {
        var out = [DoctorCheck(.ok, "kernel", "Linux " + f.kernel), DoctorCheck(.ok, "libgpiod", f.libgpiod)]
        guard let model = f.model else { return out }
        out.append(DoctorCheck(.ok, "machine", model))
        // One radio for Wi-Fi and Bluetooth (CYW43438): README step 3.
        let sharedRadio = model.utf8HasPrefix("Raspberry Pi Zero 2") || model.utf8HasPrefix("Raspberry Pi 3")
        if sharedRadio, let state = f.wlan0, state.utf8Equals("up") {
            out.append(
                DoctorCheck(
                    .note, "Wi-Fi", "wlan0 is up, and on this board it shares one radio with Bluetooth: LE links drop while it is busy",
                    fix: "add dtoverlay=disable-wifi to /boot/firmware/config.txt and reboot (README, step 3)"))
        }
        return out
    }

    // MARK: Text

    static func octal(_ mode: UInt32) -> String {
        var digits = ""
        var value = mode
        repeat {
            digits = "\(value & 7)" + digits
            value >>= 3
        } while value > 0
        while digits.utf8.count < 4 { digits = "0" + digits }
        return digits
    }

    /// "2026-12-01 14:02 UTC" (civil from days: proleptic Gregorian).
    static func utcText(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)) UTC"
    }

    static func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// "5 min ago", "3 h ago", "2 days ago".
    static func ago(_ seconds: Int64) -> String {
        if seconds < 0 { return "in the future: is the clock set?" }
        if seconds < 120 { return "\(seconds) s ago" }
        if seconds < 2 * 3600 { return "\(seconds / 60) min ago" }
        if seconds < 2 * 86_400 { return "\(seconds / 3600) h ago" }
        return "\(seconds / 86_400) days ago"
    }
}
