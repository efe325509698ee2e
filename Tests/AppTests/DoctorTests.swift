// SPDX-License-Identifier: Apache-2.0
// `wristlink doctor`'s judgement from faked facts: each failure's line as
// the wearer reads it, and the exit status.

import App
import Bounded
import Config
import Mgmt
import Platform
import PlatformLinux
import Testing
import TestSupport

/// The Pi Zero 2 W's board (what the package installs) with every line
/// found and held by the running service.
func healthyFacts() throws -> DoctorFacts {
    var f = DoctorFacts()
    let board = try BoardConfig.parse(readRepositoryFile("board/pi-zero-2w/board.conf"))
    f.board = .parsed(board)
    f.lines =
        board.outputs.enumerated().map { i, spec in
            LineFacts(spec: spec, isButton: false, probe: LineProbe(place: .found(chip: "gpiochip0", offset: [17, 27, 18][i]), used: true, consumer: "wristlink", isOutput: true))
        }
        + board.buttons.enumerated().map { i, spec in
            LineFacts(spec: spec, isButton: true, probe: LineProbe(place: .found(chip: "gpiochip0", offset: 22 + i), used: true, consumer: "wristlink", bias: .pullUp))
        }
    f.nowSeconds = 1_764_600_000 + 3 * 3600
    f.bonds = .bonds(count: 1, modifiedSeconds: 1_764_600_000)
    return f
}

/// The check lines whose text starts with `prefix` ("FAIL bluetoothd").
func lines(_ f: DoctorFacts, _ prefix: String) -> [String] { Doctor.checks(f).map(\.text).filter { $0.hasPrefix(prefix) } }

func failures(_ f: DoctorFacts) -> [String] { lines(f, "FAIL") }

@Suite("wristlink doctor: checks from facts")
struct DoctorTests {
    @Test("the board's bluetooth-name is shown, with the part the advertisement has room for")
    func bluetoothName() throws {
        var f = try healthyFacts()
        var board = try BoardConfig.parse(readRepositoryFile("board/pi-zero-2w/board.conf"))
        board.bluetoothName = "Chloë's watch"
        f.board = .parsed(board)
        #expect(lines(f, "ok   bluetooth name") == ["ok   bluetooth name: \"Chloë's watch\" (scan response and Device Name; the advertisement carries \"Chlo\")"])
        board.bluetoothName = "Watch"
        f.board = .parsed(board)
        #expect(lines(f, "ok   bluetooth name") == ["ok   bluetooth name: \"Watch\" (scan response and Device Name; the advertisement carries all of it)"])
    }

    @Test("the battery: its supply, level and status; none is said plainly; a named supply that is absent fails")
    func battery() throws {
        var f = try healthyFacts()
        #expect(lines(f, "ok   battery") == ["ok   battery: none (board: battery auto; no supply of type Battery in /sys/class/power_supply)"])
        f.batteries = ["BAT0"]
        f.batteryReading = BatteryReading(percent: 82, estimated: false, status: .discharging, voltageMicrovolts: 3_871_000)
        #expect(lines(f, "ok   battery") == ["ok   battery BAT0: 82%, discharging, 3871 mV"])
        f.batteryReading = BatteryReading(percent: 55, estimated: true, status: .charging, voltageMicrovolts: 3_800_000)
        #expect(lines(f, "ok   battery") == ["ok   battery BAT0: 55% (estimated from voltage_now), charging, 3800 mV"])
        f.batteryReading = nil
        #expect(lines(f, "note battery") == ["note battery BAT0: says neither capacity nor voltage_now — a level cannot be known from this supply"])
        var board = try BoardConfig.parse(readRepositoryFile("board/pi-zero-2w/board.conf"))
        board.battery = .named("max17048")
        f.board = .parsed(board)
        #expect(failures(f) == [
            "FAIL battery max17048: no supply of type Battery named max17048 in /sys/class/power_supply — check `battery` in the board file against ls /sys/class/power_supply (a fuel gauge appears there once its driver is bound: dmesg), or write battery auto"
        ])
        board.battery = .none
        f.board = .parsed(board)
        #expect(lines(f, "ok   battery") == ["ok   battery: none (board: battery none)"])
    }

    @Test("a healthy wearable: every line ok, exit 0")
    func healthy() throws {
        let f = try healthyFacts()
        let checks = Doctor.checks(f)
        #expect(failures(f).isEmpty, "\(checks.map(\.text))")
        #expect(Doctor.exitStatus(checks) == 0)
        let text = checks.map(\.text)
        #expect(text.contains("ok   bluetoothd: not running"))
        #expect(text.contains("ok   bluetooth.service: masked, inactive"))
        #expect(text.contains("ok   bthelper@ drop-in: /usr/lib/systemd/system/bthelper@.service.d/wristlink.conf"))
        #expect(text.contains("ok   controller hci0: powered, b8:27:eb:12:34:56 (public), LE, connectable, bondable"))
        #expect(text.contains("ok   wristlink.service: active (running), last exit status 0, result success"))
        #expect(text.contains("ok   board /etc/wristlink/board.conf: pi-zero-2w, 3 outputs, 2 buttons"))
        #expect(text.contains("ok   bluetooth name: \"Wristlink\" (scan response and Device Name; the advertisement carries \"Wrist\")"))
        #expect(text.contains("ok   output led-notify: GPIO17 (gpiochip0 offset 17), held by the running service"))
        #expect(text.contains(
            "ok   button accept: GPIO22 (gpiochip0 offset 22), held by the running service, bias pull-up (board), level not read (the line is held)"))
        #expect(text.contains("ok   state directory /var/lib/wristlink: mode 0700, owner root"))
        #expect(text.contains(
            "ok   bonds /var/lib/wristlink/bonds: 1 bonded phone, last written 2025-12-01 14:40 UTC (3 h ago): it changes when a phone pairs; no connection time is kept"))
        #expect(text.contains("ok   kernel: Linux 6.12.47+rpt-rpi-v8"))
        // Every line has its tag and a name; fixes come only with FAIL and note.
        for line in text { #expect(line.hasPrefix("ok   ") || line.hasPrefix("skip ") || line.hasPrefix("note ")) }
    }

    @Test("bluetoothd running fails with its pid and the mask command")
    func bluetoothdRunning() throws {
        var f = try healthyFacts()
        f.bluetoothdPIDs = [612]
        f.bluetoothUnit = UnitState(loadState: "loaded", activeState: "active", subState: "running", unitFileState: "enabled")
        f.bluetoothMaskLink = nil
        #expect(failures(f) == [
            "FAIL bluetoothd: running (pid 612): it takes the controller from the firmware — systemctl mask --now bluetooth.service (the package does this at install; README, \"Why bluetoothd must not run\")",
            "FAIL bluetooth.service: enabled, active, not masked: bluetoothd can start and take the controller (bthelper@hci0 pulls it in) — systemctl mask --now bluetooth.service (the package does this at install; README, \"Why bluetoothd must not run\")",
        ])
        #expect(Doctor.exitStatus(Doctor.checks(f)) == 1)
    }

    @Test("without systemctl the unit checks are skipped, not failed; a mask link still counts")
    func noSystemctl() throws {
        var f = try healthyFacts()
        f.bluetoothUnit = nil
        f.service = nil
        f.bluetoothMaskLink = nil
        #expect(lines(f, "skip bluetooth.service") == ["skip bluetooth.service: skipped: no systemctl (not running under systemd)"])
        #expect(lines(f, "skip wristlink.service") == ["skip wristlink.service: skipped: no systemctl (not running under systemd)"])
        #expect(lines(f, "ok   output led-notify") == ["ok   output led-notify: GPIO17 (gpiochip0 offset 17), held by wristlink"])
        #expect(Doctor.exitStatus(Doctor.checks(f)) == 0)
        f.bluetoothMaskLink = "/dev/null"
        #expect(lines(f, "ok   bluetooth.service") == ["ok   bluetooth.service: masked (/etc/systemd/system/bluetooth.service -> /dev/null)"])
        f.bluetoothdPIDs = [77]
        #expect(lines(f, "FAIL bluetoothd") == [
            "FAIL bluetoothd: running (pid 77): it takes the controller from the firmware — stop it (kill 77) and keep it from starting again"
        ])
    }

    @Test("the bthelper@ drop-in missing fails where bthelper@.service is installed, and is not needed where it is not")
    func dropInMissing() throws {
        var f = try healthyFacts()
        f.dropIn = nil
        #expect(failures(f) == [
            "FAIL bthelper@ drop-in: missing, and bthelper@.service (pi-bluetooth) is installed: it configures the controller behind the firmware's back — apt install --reinstall wristlink, or copy board/deb/bthelper-wristlink.conf to /etc/systemd/system/bthelper@.service.d/wristlink.conf and run systemctl daemon-reload"
        ])
        f.bthelperInstalled = false
        #expect(failures(f).isEmpty)
        #expect(lines(f, "ok   bthelper@") == ["ok   bthelper@ drop-in: not needed: no bthelper@.service on this system"])
    }

    @Test("an absent controller fails naming what the kernel has and where to look")
    func controllerAbsent() throws {
        var f = try healthyFacts()
        f.controller = .absent(index: 0, list: ControllerIndexList([]))
        #expect(failures(f) == [
            "FAIL controller hci0: absent (the kernel has no Bluetooth controller) — check dmesg | grep -i -e hci -e bluetooth (on a Pi: the UART controller, no dtoverlay=disable-bt in /boot/firmware/config.txt); the firmware waits for it and sets it up when it appears"
        ])
        f.controller = .absent(index: 0, list: ControllerIndexList([1]))
        #expect(failures(f).first?.hasPrefix("FAIL controller hci0: absent (the kernel has hci1) — ") == true)
        f.controller = .noInterface(SystemError("socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)", errno: 97))
        #expect(failures(f).first?.hasSuffix("— this kernel has no Bluetooth support (modprobe bluetooth; a Pi's kernel has it)") == true)
    }

    @Test("an unpowered controller fails only while the service runs; one without LE always fails")
    func controllerState() throws {
        var f = try healthyFacts()
        let info = ControllerInformation(
            address: .any, bluetoothVersion: 9, manufacturer: 2, supportedSettings: [.powered, .lowEnergy], currentSettings: [.lowEnergy],
            classOfDevice: 0, name: try! LocalName(""))
        f.controller = .present(index: 0, info: info)
        #expect(failures(f) == [
            "FAIL controller hci0: not powered though wristlink.service runs: no public address (LE-only: a static random address), LE — rfkill list (rfkill unblock bluetooth if it is blocked); journalctl -u wristlink -b says why set-up stopped"
        ])
        f.service = UnitState(loadState: "loaded", activeState: "inactive", subState: "dead", result: "success", execMainStatus: "0", unitFileState: "enabled")
        #expect(lines(f, "ok   controller") == [
            "ok   controller hci0: not powered (the firmware powers it when it starts), no public address (LE-only: a static random address), LE"
        ])
        var noLE = info
        noLE.supportedSettings = [.powered, .bredr]
        f.controller = .present(index: 0, info: noLE)
        #expect(lines(f, "FAIL controller").count == 1)
    }

    @Test("a running service whose controller set-up keeps failing fails the check with the firmware's STATUS (why set-up stopped)")
    func serviceSetupFailing() throws {
        var f = try healthyFacts()
        f.service = UnitState(
            loadState: "loaded", activeState: "active", subState: "running", result: "success", execMainStatus: "0", unitFileState: "enabled",
            statusText: "controller set-up failed at power-on: rfkilled; trying again every 5 s")
        #expect(lines(f, "FAIL wristlink.service") == [
            "FAIL wristlink.service: active (running), last exit status 0, result success; controller set-up failed at power-on: rfkilled; trying again every 5 s — rfkill list (rfkill unblock bluetooth if it is blocked); journalctl -u wristlink -b says more"
        ])
        f.service?.statusText = "advertising"
        #expect(lines(f, "ok   wristlink.service") == ["ok   wristlink.service: active (running), last exit status 0, result success; advertising"])
    }

    @Test("the service stopped after a bad board file: its state, the exit status's meaning and where to look")
    func serviceFailed() throws {
        var f = try healthyFacts()
        f.service = UnitState(loadState: "loaded", activeState: "failed", subState: "failed", result: "exit-code", execMainStatus: "6", unitFileState: "enabled")
        f.lines = f.lines.map { var l = $0; l.probe.used = false; l.probe.consumer = ""; return l }
        #expect(lines(f, "FAIL wristlink.service") == [
            "FAIL wristlink.service: failed (failed), last exit status 6 (bad board or policy file), result exit-code — journalctl -u wristlink -b -n 50 says why; fix that, then systemctl restart wristlink"
        ])
    }

    @Test("a board line that does not exist fails naming the line and gpioinfo")
    func lineMissing() throws {
        var f = try healthyFacts()
        f.lines[1].probe = LineProbe(place: .noLine(chip: nil, reason: .noSuchLine))
        #expect(failures(f) == ["FAIL output led-call: no line named GPIO27 on any GPIO chip — check line= in the board file against gpioinfo"])
        f.lines[1].probe = LineProbe(place: .noChip(chip: "gpiochip9", reason: .noSuchChip))
        #expect(failures(f) == ["FAIL output led-call: no GPIO chip gpiochip9 — check `chip` in the board file against gpiodetect"])
    }

    @Test("a line held by another process fails with its consumer name")
    func lineHeld() throws {
        var f = try healthyFacts()
        f.lines[3].probe.consumer = "gpioset"
        #expect(failures(f) == [
            "FAIL button accept: GPIO22 (gpiochip0 offset 22) is held by \"gpioset\" — stop that process (gpioinfo gpiochip0 lists who holds which line); the firmware cannot request it"
        ])
    }

    @Test("a line held by wristlink while the service is stopped: another wristlink run holds it")
    func heldByStrayFirmware() throws {
        var f = try healthyFacts()
        f.service = UnitState(loadState: "loaded", activeState: "inactive", subState: "dead", result: "success", execMainStatus: "0", unitFileState: "enabled")
        #expect(lines(f, "FAIL output led-notify") == [
            "FAIL output led-notify: GPIO17 (gpiochip0 offset 17) is held by wristlink, but wristlink.service is not running — another `wristlink run` (started by hand?) holds it: stop that process"
        ])
    }

    @Test("with the service stopped a free button's level is shown; pressed at rest is a note, not a failure")
    func buttonLevels() throws {
        var f = try healthyFacts()
        f.service = UnitState(loadState: "loaded", activeState: "inactive", subState: "dead", result: "success", execMainStatus: "0", unitFileState: "disabled")
        f.lines = f.lines.map { var l = $0; l.probe.used = false; l.probe.consumer = ""; l.probe.level = l.isButton ? true : nil; return l }
        f.lines[4].probe.level = false
        #expect(lines(f, "ok   button accept") == ["ok   button accept: GPIO22 (gpiochip0 offset 22), free, bias pull-up (board), level high (released)"])
        #expect(lines(f, "note button reject") == [
            "note button reject: GPIO23 (gpiochip0 offset 23), free, bias pull-up (board), level low (pressed) — reads pressed with nothing pressed? check active-low= and bias= in the board file, and the wiring (wristlink test-board)"
        ])
        #expect(failures(f) == [
            "FAIL wristlink.service: inactive (dead), last exit status 0, result success — journalctl -u wristlink -b -n 50 says why; fix that, then systemctl enable --now wristlink"
        ])
    }

    @Test("a state directory others can read fails with the chmod; systemd's DynamicUser= owner is fine")
    func stateDirMode() throws {
        var f = try healthyFacts()
        f.stateDirStatus?.mode = 0o755
        #expect(failures(f) == ["FAIL state directory /var/lib/wristlink: mode 0755: the bonds' keys are readable by others — chmod 0700 /var/lib/wristlink"])
        f.stateDirStatus?.mode = 0o700
        f.stateDirStatus?.ownerUID = 1000
        #expect(failures(f) == ["FAIL state directory /var/lib/wristlink: mode 0700, owned by uid 1000, not root — chown root:root /var/lib/wristlink"])
        f.stateDirLink = "private/wristlink"
        f.stateDirStatus?.ownerUID = 61_874
        #expect(failures(f).isEmpty)
        #expect(lines(f, "ok   state directory") == ["ok   state directory /var/lib/wristlink: mode 0700, -> private/wristlink (the service's DynamicUser=, uid 61874)"])
    }

    @Test("a missing state directory, and a corrupt bond file")
    func stateMissingAndCorrupt() throws {
        var f = try healthyFacts()
        f.stateDirStatus = nil
        f.stateDirError = SystemError("stat(/var/lib/wristlink)", errno: 2)
        #expect(failures(f) == [
            "FAIL state directory /var/lib/wristlink: missing — systemctl start wristlink creates it (StateDirectory=); by hand: install -d -m 0700 /var/lib/wristlink"
        ])
        #expect(lines(f, "skip bonds") == ["skip bonds: no state directory to look in"])
        f = try healthyFacts()
        var errors = BondFileErrors()
        errors.add(BondFileError(line: 3, .malformedRecord))
        f.bonds = .corrupt(errors)
        #expect(failures(f) == [
            "FAIL bonds /var/lib/wristlink/bonds: line 3: corrupt (malformed-record) — the firmware sets it aside at its next start and starts without bonds: restart it and pair the phone again"
        ])
        errors.add(BondFileError(line: 5, .badKeyType))
        f.bonds = .corrupt(errors)
        #expect(failures(f) == [
            "FAIL bonds /var/lib/wristlink/bonds: line 3: corrupt (malformed-record)",
            "FAIL bonds /var/lib/wristlink/bonds: line 5: corrupt (bad-key-type) — the firmware sets it aside at its next start and starts without bonds: restart it and pair the phone again",
        ])
    }

    @Test("a board file error fails with its file and line, and the lines and policy are skipped")
    func boardInvalid() throws {
        var f = try healthyFacts()
        f.board = .invalid(["/etc/wristlink/board.conf:7: unknown setting 'buton'"])
        f.policy = nil
        #expect(failures(f) == ["FAIL board: /etc/wristlink/board.conf:7: unknown setting 'buton' — fix that line (docs/config.md), then systemctl restart wristlink"])
        #expect(lines(f, "skip lines") == ["skip lines: the board file has an error"])
        #expect(lines(f, "skip policy") == ["skip policy: checked against the board, which could not be used"])
    }

    @Test("every error of the board or policy file is a FAIL line of its own, the fix on the last")
    func everyFileError() throws {
        var f = try healthyFacts()
        f.policy = .invalid(["/etc/wristlink/policy.conf:2: no pattern named 'x'", "/etc/wristlink/policy.conf:9: unknown setting 'wobble'"])
        #expect(failures(f) == [
            "FAIL policy: /etc/wristlink/policy.conf:2: no pattern named 'x'",
            "FAIL policy: /etc/wristlink/policy.conf:9: unknown setting 'wobble' — fix these lines (docs/config.md), then systemctl restart wristlink",
        ])
        #expect(Doctor.exitStatus(Doctor.checks(f)) == 1)
    }

    @Test("Wi-Fi up on a Zero 2 W is a note pointing at README step 3, and does not fail")
    func wifiOnZero2W() throws {
        var f = try healthyFacts()
        f.model = "Raspberry Pi Zero 2 W Rev 1.0"
        f.wlan0 = "up"
        #expect(lines(f, "note Wi-Fi") == [
            "note Wi-Fi: wlan0 is up, and on this board it shares one radio with Bluetooth: LE links drop while it is busy — add dtoverlay=disable-wifi to /boot/firmware/config.txt and reboot (README, step 3)"
        ])
        #expect(Doctor.exitStatus(Doctor.checks(f)) == 0)
        f.model = "Raspberry Pi 4 Model B Rev 1.5"
        #expect(lines(f, "note Wi-Fi").isEmpty)
    }
}
