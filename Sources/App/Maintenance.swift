// SPDX-License-Identifier: Apache-2.0
// Small commands around the daemon: forgetting bonds and turning the
// outputs off from outside (systemd's ExecStopPost, after a crash).

import Config
import PlatformLinux

public enum ForgetCommand {
    public static let usage = """
        USAGE: wristlink forget [--state-dir DIR]

          Removes every stored bond (DIR/bonds; default /var/lib/wristlink). Phones must pair again.
          A running firmware keeps its keys until it restarts: systemctl restart wristlink.
          On the iPhone, also choose Forget This Device under Settings > Bluetooth.
        """

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        let a: Arguments
        do { a = try Arguments(args, valued: ["--state-dir"]) } catch { return CLI.fail(error, command: "forget") }
        let path = StateFile.path(a.value("--state-dir") ?? "/var/lib/wristlink")
        guard ProcessControl.exists(path) else {
            print("no bonds stored (\(path) does not exist)")
            return ExitCode.ok
        }
        guard StateFile.remove(path) else {
            Log.error("cannot remove \(path) (run as root?)")
            return ExitCode.setup
        }
        print("removed \(path); restart the firmware so the controller forgets the keys too")
        return ExitCode.ok
    }
}

public enum LinesOffCommand {
    public static let usage = """
        USAGE: wristlink lines-off --board FILE [--fallback-board FILE]

          Requests every output of the board with its initial value (off) and releases it:
          outputs off even when the firmware died without doing it (systemd ExecStopPost).
          With --fallback-board, that board's outputs when --board cannot be used (as `run` does).
        """

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        let a: Arguments
        do { a = try Arguments(args, valued: ["--board", "--fallback-board"]) } catch { return CLI.fail(error, command: "lines-off") }
        guard let path = a.value("--board") else { return CLI.fail(UsageError("--board FILE is required"), command: "lines-off") }
        let code = linesOff(path)
        // The firmware ran on the fallback board when this one could not be
        // used (wristlink run --fallback-board): those are the lines to turn off.
        if code != ExitCode.ok, let fallback = a.value("--fallback-board") { return linesOff(fallback) }
        return code
    }

    static func linesOff(_ path: String) -> Int32 {
        guard let board = BoardFile.load(path) else { return ExitCode.config }
        guard !board.simulated else { return ExitCode.ok }
        do {
            let lines = try GPIODLines(board: board.lines)
            _ = consume lines  // released with every output off
        } catch {
            Log.error("\(error)")
            return ExitCode.setup
        }
        return ExitCode.ok
    }
}
