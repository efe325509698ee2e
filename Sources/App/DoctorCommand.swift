// SPDX-License-Identifier: Apache-2.0
// `wristlink doctor`: collects what DoctorChecks judges, through
// PlatformLinux's read-only probes (systemctl, /proc, stat, GPIO line
// information, the management interface's Read Controller Index List and
// Read Controller Information), and prints one line per check after the
// version line (BuildInfo). It never
// requests a line another process holds and reads a button's level only
// when the service is not running, so it can run beside the service.

import Bounded
import Config
import Mgmt
import Platform
import PlatformLinux

public enum DoctorCommand {
    public static let usage = """
        USAGE: wristlink doctor [--board FILE] [--policy FILE] [--state-dir DIR] [--gpio chip|sim]

          Checks what the firmware needs, one line per check (docs/doctor.md), after the version line
          (as `wristlink version` prints it):
            ok   <what>: <what is so>
            FAIL <what>: <what is wrong> — <the fix>
            skip <what>: <why it was not checked>   (no systemctl: a container, a test)
            note <what>: <what is so> — <what to consider>
          bluetoothd stopped and masked, the bthelper@ drop-in, the controller (hci0: present, powered,
          LE, address), wristlink.service's state and last exit status, the board and policy files, every
          board line (present, who holds it, a button's bias and level), the state directory and bonds,
          the kernel, libgpiod, and Wi-Fi on a board that shares its radio with Bluetooth.
          Read-only: safe beside the running service (it reads line information; a button's level only
          when the service is not running). Run it as root to see everything.

          --board FILE     default /etc/wristlink/board.conf
          --policy FILE    default /etc/wristlink/policy.conf
          --state-dir DIR  default /var/lib/wristlink
          --gpio chip|sim  sim: a simulated board, no GPIO lines looked at (default chip)

        Exit status: 0 every check passed (ok, skip or note), 1 a check failed, 2 bad command line.
        """

    struct Options {
        var boardPath = "/etc/wristlink/board.conf"
        var policyPath = "/etc/wristlink/policy.conf"
        var stateDir = "/var/lib/wristlink"
        var simulatedGPIO = false
    }

    static func parse(_ args: ArraySlice<String>) throws(UsageError) -> Options {
        let a = try Arguments(args, valued: ["--board", "--policy", "--state-dir", "--gpio"])
        var o = Options()
        if let p = a.value("--board") { o.boardPath = p }
        if let p = a.value("--policy") { o.policyPath = p }
        if let d = a.value("--state-dir") { o.stateDir = d }
        if let gpio = a.value("--gpio"), !gpio.utf8Equals("chip") {
            guard gpio.utf8Equals("sim") else { throw UsageError("--gpio must be chip or sim (got '\(gpio)')") }
            o.simulatedGPIO = true
        }
        return o
    }

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        let options: Options
        do { options = try parse(args) } catch { return CLI.fail(error, command: "doctor") }
        print(BuildInfo.line)
        let checks = Doctor.checks(collect(options))
        for check in checks { print(check.text) }
        return Doctor.exitStatus(checks)
    }

    /// The controller the service uses (`--link bluez:hci0` in the unit).
    static let controllerIndex: UInt16 = 0
    static let mgmtTimeoutMs: Int64 = 2_000

    static func collect(_ o: Options) -> DoctorFacts {
        var f = DoctorFacts()
        f.bluetoothUnit = SystemProbe.unit("bluetooth.service")
        f.bluetoothMaskLink = SystemProbe.linkTarget("/etc/systemd/system/bluetooth.service")
        f.bluetoothdPIDs = SystemProbe.processes(named: "bluetoothd")
        f.dropIn = DoctorFacts.dropInPaths.first { SystemProbe.exists($0) }
        f.bthelperInstalled = DoctorFacts.bthelperPaths.contains { SystemProbe.exists($0) }
        f.service = SystemProbe.unit("wristlink.service")
        f.controller = controller(index: controllerIndex)
        f.boardPath = o.boardPath
        f.policyPath = o.policyPath
        f.simulatedGPIO = o.simulatedGPIO
        f.board = board(o.boardPath)
        f.policy = nil
        if case .parsed(let board) = f.board {
            f.policy = policy(o.policyPath, board: board)
            let supplies = PowerSupplyReader()
            f.batteries = supplies.batteries()
            f.batteryReading = supplies.resolve(board.battery).flatMap { supplies.read($0) }
            if !board.simulated && !o.simulatedGPIO {
                // A level needs a short request: never while the service runs.
                let readLevels = f.service?.isActive != true
                for spec in board.outputs {
                    f.lines.append(LineFacts(spec: spec, isButton: false, probe: GPIODProbe.probe(spec, board: board.lines, readLevel: false)))
                }
                for spec in board.buttons {
                    f.lines.append(LineFacts(spec: spec, isButton: true, probe: GPIODProbe.probe(spec, board: board.lines, readLevel: readLevels)))
                }
            }
        }
        f.stateDir = o.stateDir
        f.stateDirLink = SystemProbe.linkTarget(o.stateDir)
        f.stateDirStatus = SystemProbe.status(o.stateDir)
        f.stateDirError = f.stateDirStatus == nil ? SystemProbe.statusError(o.stateDir) : nil
        f.bonds = f.stateDirStatus?.isDirectory == true ? bonds(StateFile.path(o.stateDir)) : .notChecked
        f.nowSeconds = SystemProbe.nowSeconds
        f.kernel = SystemProbe.kernelRelease
        f.libgpiod = GPIODProbe.libraryVersion
        f.model = SystemProbe.text("/proc/device-tree/model")
        f.wlan0 = SystemProbe.text("/sys/class/net/wlan0/operstate")
        return f
    }

    static func board(_ path: String) -> ParsedFile<BoardConfig> {
        let text: String
        do throws(SystemError) { text = try ProcessControl.readFile(path) } catch { return .unreadable(error) }
        do throws(ConfigErrors) { return .parsed(try BoardConfig.parseReportingAll(text)) } catch { return .invalid(error.located(in: path)) }
    }

    static func policy(_ path: String, board: BoardConfig) -> ParsedFile<Bool> {
        let text: String
        do throws(SystemError) { text = try ProcessControl.readFile(path) } catch { return .unreadable(error) }
        do throws(ConfigErrors) {
            _ = try PolicyConfig.parseReportingAll(text, board: board)
            return .parsed(true)
        } catch {
            return .invalid(error.located(in: path))
        }
    }

    static func bonds(_ path: String) -> BondFacts {
        if let error = SystemProbe.statusError(path) { return error.notFound ? .none : .unreadable(error) }
        let bytes: [UInt8]?
        do throws(SystemError) { bytes = try StateFile.read(path) } catch { return .unreadable(error) }
        guard let bytes else { return .none }
        do throws(BondFileErrors) {
            let store = try BondStore.parseReportingAll(bytes.span)
            return .bonds(count: store.count, modifiedSeconds: SystemProbe.status(path)?.modifiedSeconds ?? 0)
        } catch {
            return .corrupt(error)
        }
    }

    /// Read Controller Index List, then Read Controller Information for
    /// `index`: both read-only, allowed without CAP_NET_ADMIN.
    static func controller(index: UInt16) -> ControllerFacts {
        var socket: MgmtSocket
        do { socket = try MgmtSocket.open() } catch { return .noInterface(error) }
        var command = ByteBuffer(capacity: 16)
        var reply = ByteBuffer(capacity: MgmtSocket.maxPacketBytes)
        do { try MgmtCommand.readControllerIndexList.encode(index: .none, into: &command) } catch { return .noAnswer }
        guard socket.request(command, reply: &reply, timeoutMs: mgmtTimeoutMs),
            let listEvent = try? MgmtEvent.decode(reply.span).event,
            case .commandComplete(let listComplete) = listEvent, case .controllerIndexList(let list) = listComplete.reply
        else { return .noAnswer }
        guard list.contains(index) else { return .absent(index: index, list: list) }
        do { try MgmtCommand.readControllerInformation.encode(index: ControllerIndex(index), into: &command) } catch { return .noAnswer }
        guard socket.request(command, reply: &reply, timeoutMs: mgmtTimeoutMs), let event = try? MgmtEvent.decode(reply.span).event
        else { return .noAnswer }
        switch event {
        case .commandComplete(let complete):
            if case .controllerInformation(let info) = complete.reply, complete.status.isSuccess { return .present(index: index, info: info) }
            // The controller went away between the two questions.
            if complete.status == .invalidIndex { return .absent(index: index, list: ControllerIndexList([])) }
            return .failed(index: index, status: complete.status)
        case .commandStatus(_, let status):
            if status == .invalidIndex { return .absent(index: index, list: ControllerIndexList([])) }
            return .failed(index: index, status: status)
        default:
            return .noAnswer
        }
    }
}
