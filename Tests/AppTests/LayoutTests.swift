// SPDX-License-Identifier: Apache-2.0
// The source tree's shape rules (docs/architecture.md): no Swift file in
// Sources/ over 500 lines, so a module's parts stay small enough to read in
// one sitting; the shipped App does not import the simulator; the import
// edges the layers forbid (a module importing a sibling or one above it)
// stay out, in the sources and in Package.swift alike.

import Testing
import TestSupport

@Suite("The source tree's layout")
struct LayoutTests {
    static let maxLines = 500

    @Test("no Swift file in Sources/ is over 500 lines")
    func filesStaySmall() {
        let find = capture("cd '\(repositoryRoot)' && find Sources -type f -name '*.swift'")
        let files = find.output.split(separator: "\n").map(String.init)
        #expect(files.count > 100, "find: \(find)")
        var long: [String] = []
        for file in files {
            let lines = readRepositoryFile(file).split(separator: "\n", omittingEmptySubsequences: false).count - 1
            if lines > Self.maxLines { long.append("\(file): \(lines)") }
        }
        #expect(long.isEmpty, "over \(Self.maxLines) lines: \(long)")
    }

    @Test("App, which the Pi binary is built from, imports no PhoneSim; only HostTools does")
    func appHasNoSimulator() {
        let grep = capture("cd '\(repositoryRoot)' && grep -rl '^import PhoneSim' Sources")
        let importers = grep.output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("Sources/PhoneSim/") }
        #expect(!importers.isEmpty, "grep: \(grep)")
        #expect(importers.allSatisfy { $0.hasPrefix("Sources/HostTools/") }, "\(importers)")
        let package = readRepositoryFile("Package.swift")
        #expect(package.contains(".target(name: \"HostTools\", dependencies: [\"App\", \"PhoneSim\""))
    }

    @Test("PlatformLinux does not import Config: the board's lines and battery reach it as Platform's values")
    func platformLinuxTakesNoConfig() {
        Self.expectEdges(from: "PlatformLinux", including: "Platform", excluding: ["Config"])
    }

    @Test("Config imports neither CTS nor AMS: quiet hours are a DailyWindow of Bounded, media buttons a MediaAction of its own")
    func configTakesNoCTSOrAMS() {
        Self.expectEdges(from: "Config", including: "Bounded", excluding: ["CTS", "AMS"])
    }

    /// `module`'s sources and its Package.swift target import `present`
    /// (so the look-up found them) and none of `absent`.
    private static func expectEdges(from module: String, including present: String, excluding absent: [String]) {
        let modules = imports(of: module)
        let dependencies = dependencies(of: module)
        #expect(modules.contains(present), "\(module) imports \(modules)")
        #expect(dependencies.contains(present), "\(module) depends on \(dependencies)")
        for edge in absent {
            #expect(!modules.contains(edge), "\(module) imports \(modules)")
            #expect(!dependencies.contains(edge), "\(module) depends on \(dependencies)")
        }
    }

    /// The modules `import`ed by any Swift file of Sources/`module`.
    private static func imports(of module: String) -> Set<String> {
        let grep = capture("cd '\(repositoryRoot)' && grep -rh '^import ' Sources/\(module)")
        return Set(grep.output.split(separator: "\n").map { String($0.dropFirst("import ".count)) })
    }

    /// The `dependencies` of `.target(name: "module", ...)` in Package.swift
    /// (each target is declared on one line).
    private static func dependencies(of module: String) -> [String] {
        let package = readRepositoryFile("Package.swift")
        let declaration = ".target(name: \"\(module)\", dependencies: ["
        for line in package.split(separator: "\n") {
            guard let start = line.firstRange(of: declaration)?.upperBound, let end = line[start...].firstIndex(of: "]") else { continue }
            return line[start..<end].split(separator: ",").map { String($0.filter { $0 != "\"" && $0 != " " }) }
        }
        return []
    }
}
