// SPDX-License-Identifier: Apache-2.0
// What a wearer who owns the firmware reads off it (docs/versions.md): one
// version in VERSION, NEWS.md and the Debian changelog; the version line;
// the events stream's hello; exit codes systemd names; the licence in every
// source file, the package's copyright and the SD-card image's source offer.

import App
import Bounded
import Config
import Glibc
import PlatformLinux
import Testing
import TestSupport

/// The VERSION file's version.
func releaseVersion() -> String {
    readRepositoryFile("VERSION").split(separator: "\n").first.map(String.init) ?? ""
}

@Suite("One version, the version line and the hello event")
struct VersionTests {
    @Test("VERSION, NEWS.md's newest release and the Debian changelog's top entry name one version")
    func oneVersion() {
        let version = releaseVersion()
        #expect(!version.isEmpty && version.allSatisfy { $0.isNumber || $0 == "." }, "VERSION: '\(version)'")
        let releases = readRepositoryFile("NEWS.md").split(separator: "\n").filter { $0.hasPrefix("## ") && !$0.hasPrefix("## Unreleased") }
        #expect(releases.first?.hasPrefix("## \(version) (") == true, "NEWS.md's newest release: \(releases.first ?? "none")")
        let changelog = readRepositoryFile("board/deb/changelog").split(separator: "\n").first ?? ""
        #expect(changelog.hasPrefix("wristlink (\(version)-"), "board/deb/changelog starts: \(changelog)")
    }

    @Test("the version line names the version, the git revision, the libgpiod API and the licence")
    func versionLine() {
        #expect(
            BuildInfo.line(version: "1.2.3", revision: "0123456789ab-dirty", libgpiodAPI: "2")
                == "wristlink 1.2.3 (git 0123456789ab-dirty, libgpiod 2 API), licence Apache-2.0")
        // This build's: VERSION's version, and a revision that is a commit or "unknown".
        #expect(BuildInfo.version == releaseVersion())
        #expect(BuildInfo.line.hasPrefix("wristlink \(releaseVersion()) (git \(BuildInfo.revision), libgpiod "))
        #expect(!BuildInfo.revision.isEmpty && !BuildInfo.revision.contains(" "))
        #expect(BuildInfo.licence == "Apache-2.0")
    }

    @Test("the events stream opens with hello: the version, the revision and events_format 1, before any other event")
    func helloFirst() throws {
        let dir = makeScratchDirectory("hello")
        defer { removeTree(dir) }
        let board = try BoardConfig.parse(readRepositoryFile("board/sim/board.conf"))
        do {
            var reporter = Reporter(board: board, events: try OutputFile(path: dir + "/events"), start: Instant(ms: 5_000))
            reporter.advertising(now: Instant(ms: 5_020))
        }
        let lines = ((try? ProcessControl.readFile(dir + "/events")) ?? "").split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        let hello = lines.first ?? ""
        #expect(hello.hasPrefix("{\"t_ms\":0,\"kind\":\"hello\",\"version\":\"\(releaseVersion())\",\"revision\":\""), "\(hello)")
        #expect(hello.hasSuffix("\",\"events_format\":1}"), "\(hello)")
        #expect(lines.last == "{\"t_ms\":20,\"kind\":\"session\",\"state\":\"advertising\"}")
    }
}

@Suite("Exit codes systemd names")
struct ExitCodeTests {
    @Test("a bad file exits 6 (LSB not configured), missing hardware 5 (not installed); the unit does not restart 2 or 6")
    func lsbCodes() {
        // systemd's exit-status table: 5 EXIT_NOTINSTALLED, 6 EXIT_NOTCONFIGURED.
        #expect(ExitCode.setup == 5)
        #expect(ExitCode.config == 6)
        let unit = readRepositoryFile("board/wristlink.service").split(separator: "\n")
        let prevent = unit.filter { $0.hasPrefix("RestartPreventExitStatus=") }
        #expect(prevent == ["RestartPreventExitStatus=\(ExitCode.usage) \(ExitCode.config)"])
        let man = readRepositoryFile("board/deb/wristlink.1")
        #expect(man.contains("5 hardware or OS set-up failed") && man.contains("6 bad board, policy or scenario file"))
    }

    @Test("doctor explains a last exit status of 6 as a bad file and 5 as hardware that could not be set up")
    func doctorMeanings() throws {
        var f = try healthyFacts()
        for (status, meaning) in [("6", "bad board or policy file"), ("5", "GPIO lines or Bluetooth could not be set up")] {
            f.service = UnitState(
                loadState: "loaded", activeState: "failed", subState: "failed", result: "exit-code", execMainStatus: status, unitFileState: "enabled")
            #expect(lines(f, "FAIL wristlink.service").first?.contains("last exit status \(status) (\(meaning)), result exit-code") == true)
        }
    }
}

@Suite("Licence")
struct LicenceTests {
    @Test("LICENSE is the Apache License 2.0 and every source file we wrote opens with its SPDX line")
    func spdxEverywhere() {
        #expect(readRepositoryFile("LICENSE").contains("Apache License\n                           Version 2.0, January 2004"))
        // Source files: Swift, C, module maps, shell, Python, make; not data
        // (board files, scenarios, captures, seeds).
        let find = capture(
            "cd '\(repositoryRoot)' && find Sources Tests scripts board Makefile Package.swift -type f "
                + "\\( -name '*.swift' -o -name '*.c' -o -name '*.h' -o -name '*.modulemap' -o -name '*.sh' -o -name '*.py' "
                + "-o -path 'scripts/*' -o -name Makefile -o -name Kbuild -o -path 'board/image/boot-report' \\) "
                + "! -path '*/__pycache__/*' ! -path 'Tests/Fuzz/seeds/*' ! -path 'Tests/VM/gpio-sim/*.c' ! -path 'Tests/VM/gpio-sim/*.h'")
        let files = find.output.split(separator: "\n").map(String.init)
        #expect(files.count > 100, "find: \(find)")
        var missing: [String] = []
        for file in files {
            var head = readRepositoryFile(file).split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            // A shebang, or SwiftPM's tools-version line, must stay first.
            if head.first?.hasPrefix("#!") == true || head.first?.hasPrefix("// swift-tools-version:") == true { head.removeFirst() }
            let first = head.first ?? ""
            if first != "// SPDX-License-Identifier: Apache-2.0" && first != "# SPDX-License-Identifier: Apache-2.0" { missing.append(file) }
        }
        #expect(missing.isEmpty, "no SPDX line first: \(missing)")
    }

    @Test("the package's copyright is DEP-5: Apache-2.0 for the firmware, the Swift runtime's paragraph kept")
    func debianCopyright() {
        let text = readRepositoryFile("board/deb/copyright")
        #expect(text.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"))
        #expect(text.contains("Files: *\nCopyright: 2026 Wristlink maintainers\nLicense: Apache-2.0\n"))
        #expect(text.contains("Files: stdlib/public/*\nCopyright: 2014-2026 Apple Inc. and the Swift project authors\nLicense: Apache-2.0 with Runtime Library Exception\n"))
        #expect(!text.contains("reserved"))
    }

    @Test("SOURCES.txt names each Debian source package of the image manifest once, with its version, not the firmware, and the files the image leaves out")
    func sourceOffer() {
        let run = capture("'\(repositoryRoot)/scripts/image-sources' '\(repositoryRoot)/Tests/Image/sample.manifest'")
        #expect(run.status == 0)
        let listed = run.output.split(separator: "\n").drop { !$0.hasPrefix("Debian source packages") }.dropFirst().map(String.init)
        // glibc once for libc6 and libc-bin; the kernel by its source's name
        // and version, not the binary package's.
        #expect(
            listed == ["  bash 5.2.37-2", "  glibc 2.41-12", "  libgpiod 2.2.1-2", "  linux-signed-arm64 6.12.57+1", "  systemd 257.9-1~deb13u1"])
        #expect(run.output.hasPrefix("Wristlink SD-card image wristlink-0.1.0-1+deb13-pi-zero-2w: where its sources are\n"))
        #expect(run.output.contains("wristlink 0.1.0-1+deb13, is free software under the Apache\nLicense 2.0"))
        // The files the image leaves out of Debian's packages are named,
        // from the manifest's "# removed: " lines, and nothing claims the
        // packages are installed whole.
        #expect(run.output.contains(
            "Left out of the installed packages:\n  kernel modules: 4276 of 4351 (73 MiB; 8 MiB kept) by scripts/image-modules' rule: the boards' device trees\n  glibc's gconv modules,"))
        #expect(!run.output.contains("unmodified"))
        // A manifest from before the source columns is refused, not guessed.
        let dir = makeScratchDirectory("sources")
        defer { removeTree(dir) }
        writeText(dir + "/old.manifest", "# Wristlink SD-card image x\nlibc6 2.41-12 arm64\n")
        #expect(capture("'\(repositoryRoot)/scripts/image-sources' '\(dir)/old.manifest'").status != 0)
    }
}

func writeText(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    _ = Array(text.utf8).withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}
