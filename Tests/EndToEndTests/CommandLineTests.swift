// SPDX-License-Identifier: Apache-2.0
// The command line as a wearer meets it, on both entry points (the host's
// `wristlink` and the Pi's `wristlink-pi`): usage errors on stderr with exit
// code 2, the Pi binary's commands, the version line, and `run`'s defaults.

import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

/// The Pi entry point's host build, next to `wristlink`.
let wristlinkPi: String = {
    var parts = wristlink.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast()
    return parts.joined(separator: "/") + "/wristlink-pi"
}()

/// The VERSION file's version.
func releaseVersion() -> String {
    readRepositoryFile("VERSION").split(separator: "\n").first.map(String.init) ?? ""
}

/// A command's exit status, stdout and stderr.
struct Finished {
    var status: Int32
    var out: String
    var err: String
    var outLines: [String] { out.split(separator: "\n").map(String.init) }
}

func finish(_ arguments: [String]) throws -> Finished {
    let dir = makeScratchDirectory("cli")
    defer { removeTree(dir) }
    var child = try ChildProcess.spawn(
        ["/bin/sh", "-c", "exec \"$@\" > '\(dir)/out'", "sh"] + arguments, pipeStdin: false, pipeStdout: false,
        stderrFD: ProcessControl.openForAppend(dir + "/err"))
    let status = child.wait(timeoutMs: 10_000)
    return Finished(status: status, out: readText(dir + "/out"), err: readText(dir + "/err"))
}

@Suite("The command line: usage errors, the Pi binary's commands, the version line, run's defaults", .serialized)
struct CommandLineTests {
    @Test("a bare wristlink is a usage error: the usage on stderr, nothing on stdout, exit 2", arguments: [wristlink, wristlinkPi])
    func bareIsUsageError(binary: String) throws {
        let r = try finish([binary])
        #expect(r.status == 2)
        #expect(r.out.isEmpty, "\(r.out)")
        #expect(r.err.contains("USAGE: wristlink <command> [options]"))
    }

    @Test("help of a command the build lacks is a usage error on stderr (exit 2); help itself and --help go to stdout (exit 0)",
          arguments: [wristlink, wristlinkPi])
    func helpUnknown(binary: String) throws {
        let r = try finish([binary, "help", "frobnicate"])
        #expect(r.status == 2)
        #expect(r.out.isEmpty)
        #expect(r.err.contains("frobnicate"))
        let help = try finish([binary, "help"])
        #expect(help.status == 0 && help.out.contains("COMMANDS:") && help.err.isEmpty)
        let run = try finish([binary, "run", "--help"])
        #expect(run.status == 0 && run.out.contains("USAGE: wristlink run"))
    }

    @Test("the Pi binary neither lists nor runs phone and sim, which it lacks; the host build has them")
    func piBinaryCommands() throws {
        func commands(_ help: String) -> [String] {
            help.split(separator: "\n").drop { $0 != "COMMANDS:" }.dropFirst().prefix { !$0.isEmpty }
                .compactMap { $0.hasPrefix("  ") && !$0.hasPrefix("   ") ? $0.split(separator: " ").first.map(String.init) : nil }
        }
        let pi = commands(try finish([wristlinkPi, "help"]).out)
        #expect(pi == ["run", "forget", "lines-off", "doctor", "test-board", "pinout", "version", "help"])
        #expect(commands(try finish([wristlink, "help"]).out) == ["run", "phone", "sim", "forget", "lines-off", "doctor", "test-board", "pinout", "version", "help"])
        for command in ["phone", "sim"] {
            #expect(try finish([wristlinkPi, "help", command]).status == 2)
            #expect(try finish([wristlinkPi, command]).status == 2)
        }
        #expect(try finish([wristlink, "help", "phone"]).out.contains("USAGE: wristlink phone"))
    }

    @Test("--version and version print one line: the version, the git revision, the libgpiod API and the licence",
          arguments: [wristlink, wristlinkPi])
    func versionLine(binary: String) throws {
        let long = try finish([binary, "--version"])
        let short = try finish([binary, "version"])
        #expect(long.status == 0 && short.status == 0)
        #expect(long.outLines.count == 1 && long.out == short.out, "\(long.out)")
        let line = long.outLines.first ?? ""
        #expect(line.hasPrefix("wristlink \(releaseVersion()) (git "), "\(line)")
        #expect(line.contains(", libgpiod ") && line.hasSuffix(" API), licence Apache-2.0"), "\(line)")
        #expect(try finish([binary, "version", "extra"]).status == 2)
    }

    @Test("the log of run opens with the version line, before a settings error (exit 6)")
    func runLogOpensWithVersion() throws {
        let dir = makeScratchDirectory("cli")
        defer { removeTree(dir) }
        writeFile(dir + "/bad.conf", "name x\nchip sim\noutput a\nbutton b\nwobble 3\n")
        let version = try finish([wristlink, "version"]).out.split(separator: "\n").first.map(String.init) ?? "?"
        let r = try finish([wristlink, "run", "--link", "unix:\(dir)/s", "--gpio", "sim", "--board", dir + "/bad.conf"])
        #expect(r.status == 6)
        let log = r.err.split(separator: "\n").map(String.init)
        #expect(log.first == "wristlink: notice: " + version, "\(log)")
        #expect(log.dropFirst().first?.contains("bad.conf:5:") == true, "\(log)")
    }

    @Test("run with --gpio chip reads /etc/wristlink/board.conf and policy.conf unless told otherwise, as doctor does",
          .enabled(if: !ProcessControl.exists("/etc/wristlink"), "this machine has /etc/wristlink"))
    func runChipDefaults() throws {
        let dir = makeScratchDirectory("cli")
        defer { removeTree(dir) }
        let board = try finish([wristlink, "run", "--link", "unix:\(dir)/s", "--gpio", "chip"])
        #expect(board.status == 6, "\(board.err)")
        #expect(board.err.contains("/etc/wristlink/board.conf"), "\(board.err)")
        let policy = try finish([wristlink, "run", "--link", "unix:\(dir)/s", "--board", repositoryRoot + "/board/pi-zero-2w/board.conf"])
        #expect(policy.status == 6, "\(policy.err)")
        #expect(policy.err.contains("/etc/wristlink/policy.conf"), "\(policy.err)")
    }
}
