// swift-tools-version:6.1
// SPDX-License-Identifier: Apache-2.0
// Wristlink: an ANCS Notification Consumer for a Raspberry-Pi-class wearable.
// Layout and the direction of imports: docs/architecture.md.
import PackageDescription
#if canImport(Foundation)
import Foundation
#endif

// The core modules use only the standard library so they also build with
// Embedded Swift; `Lifetimes` lets fixed buffers hand out `Span`s.
// Release builds optimise across modules: without it the generic containers
// of `Bounded` (RingBuffer, FixedArray) run unspecialised from every other
// module, through value witnesses and metadata look-ups (a Notification
// Source event cost ~9,400 instructions instead of ~7,100; docs/performance.md).
let core: [SwiftSetting] = [
    .enableExperimentalFeature("Lifetimes"),
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

// The libgpiod backend of PlatformLinux (docs/pi-build.md "Which libgpiod"):
// 1.x (Debian 12 bookworm, this host) compiles GPIODLines.swift, 2.x
// (Debian 13 trixie) GPIODLines2.swift through the compilation condition
// GPIOD2. The manifest does not probe the system: the Makefile passes
// WRISTLINK_GPIOD (pkg-config's major version of libgpiod) and a bare
// `swift build` means 1. The API picked reaches CGPIOD's shim.h too, which
// stops a build against the other major's <gpiod.h> with one clear error
// instead of a page of missing names. An environment variable, so SwiftPM
// evaluates the manifest again when it changes.
let libgpiodMajor = Context.environment["WRISTLINK_GPIOD"].flatMap { Int($0) } ?? 1
let gpiod: [SwiftSetting] =
    (libgpiodMajor >= 2 ? [.define("GPIOD2")] : [])
    + [.unsafeFlags(["-Xcc", "-DWRISTLINK_GPIOD_API=\(libgpiodMajor >= 2 ? 2 : 1)"])]

// What `wristlink --version` says (docs/versions.md): the version is the
// VERSION file's, the git revision the one the Makefile passes in
// WRISTLINK_REVISION (scripts/version-info); without it (a bare
// `swift build`, a tree without git) the revision is "unknown". Both are C
// string definitions of CBuildInfo alone, so a new revision recompiles one
// C file. An environment variable, not a file the manifest reads, because
// SwiftPM evaluates the manifest again when its environment changes.
func releaseVersion() -> String {
    if let forced = Context.environment["WRISTLINK_VERSION"], !forced.isEmpty { return forced }
    #if canImport(Foundation)
    let path = Context.packageDirectory + "/VERSION"
    if let text = try? String(contentsOfFile: path, encoding: .utf8) {
        let version = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if !version.isEmpty { return version }
    }
    #endif
    return "unknown"
}
let revision = Context.environment["WRISTLINK_REVISION"].flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
let buildInfo: [CSetting] = [
    .define("WRISTLINK_VERSION", to: "\"\(releaseVersion())\""),
    .define("WRISTLINK_REVISION", to: "\"\(revision)\""),
]

var targets: [Target] = [
    .target(name: "Bounded", swiftSettings: core),
    .target(name: "ANCS", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "AMS", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "CTS", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "ATT", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "GATT", dependencies: ["ATT", "Bounded"], swiftSettings: core),
    .target(name: "Platform", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "Firmware", dependencies: ["AMS", "CTS", "ANCS", "ATT", "GATT", "Feedback", "Mgmt", "Config", "Platform", "Bounded"], swiftSettings: core),
    .target(name: "CLinux"),
    .target(name: "CBuildInfo", cSettings: buildInfo),
    .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
    .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
    .target(name: "PlatformLinux", dependencies: ["Platform", "ATT", "Bounded", "CLinux", "CBuildInfo", "CBlueZ", "CGPIOD"], swiftSettings: core + gpiod),
    .target(name: "Feedback", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "Mgmt", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "Config", dependencies: ["Bounded", "Feedback", "Platform", "ANCS"], swiftSettings: core),

    .target(
        name: "App",
        dependencies: ["Firmware", "AMS", "CTS", "PlatformLinux", "Platform", "Config", "Feedback", "Mgmt", "ANCS", "ATT", "GATT", "Bounded"],
        swiftSettings: core),
    // The host build's own commands (`phone`, `sim`): the only module that
    // brings PhoneSim into `wristlink`, so the Pi binary, built from App and
    // `wristlink-pi` alone, has no simulator code by construction.
    .target(name: "HostTools", dependencies: ["App", "PhoneSim", "PlatformLinux", "Config", "ATT", "Bounded"], swiftSettings: core),
    .executableTarget(name: "wristlink", dependencies: ["App", "HostTools", "PlatformLinux"], swiftSettings: core),
    // The simulated iPhone (ANCS Notification Provider), sans-IO like the core.
    .target(name: "PhoneSim", dependencies: ["Bounded", "ATT", "GATT", "ANCS", "AMS", "CTS"], swiftSettings: core),
    // The Pi binary's bring-up entry point (docs/pi-build.md); built here too
    // so it stays valid Swift for the host and can be compared with the
    // aarch64 build.
    .executableTarget(name: "wristlink-pi", dependencies: ["App", "PlatformLinux"], swiftSettings: core),

    .target(name: "AllocCounter", path: "Tests/Support/AllocCounter"),
    // `make bench`: the harness (the firmware on the real loop with a scripted
    // phone and time-stamping backends; shared with the flood test) and the
    // figures executable. Neither is linked into `wristlink`.
    .target(
        name: "BenchSupport",
        dependencies: ["Firmware", "PlatformLinux", "Platform", "Config", "ANCS", "Bounded", "CBlueZ", "AllocCounter", "TestSupport"],
        path: "Tests/Bench/Harness", swiftSettings: core),
    .executableTarget(
        name: "wristlink-bench",
        dependencies: ["BenchSupport", "Firmware", "PlatformLinux", "Platform", "Config", "ANCS", "Feedback", "Bounded", "AllocCounter", "TestSupport"],
        path: "Tests/Bench/Runner", swiftSettings: core),
    .target(name: "TestSupport", dependencies: ["AllocCounter", "Bounded"], path: "Tests/Support/TestSupport", swiftSettings: core),
    // The Platform protocol in memory on a virtual clock: the real Runner
    // driven by a test with no socket and no real time.
    .target(name: "MemoryPlatform", dependencies: ["Firmware", "Platform", "Bounded"], path: "Tests/Support/MemoryPlatform", swiftSettings: core),
    .testTarget(name: "BoundedTests", dependencies: ["TestSupport", "Bounded"], swiftSettings: core),
    .testTarget(name: "ANCSTests", dependencies: ["TestSupport", "ANCS", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "AMSTests", dependencies: ["TestSupport", "AMS", "Bounded"], swiftSettings: core),
    .testTarget(name: "CTSTests", dependencies: ["TestSupport", "CTS", "Bounded"], swiftSettings: core),
    .testTarget(name: "ATTTests", dependencies: ["TestSupport", "ATT"], swiftSettings: core),
    .testTarget(name: "GATTTests", dependencies: ["TestSupport", "ATT", "GATT"], swiftSettings: core),
    .testTarget(
        name: "FirmwareTests",
        dependencies: [
            "TestSupport", "Firmware", "AMS", "CTS", "PlatformLinux", "Platform", "ANCS", "ATT", "GATT", "Mgmt", "Config", "Feedback", "Bounded", "AllocCounter",
            "BenchSupport", "MemoryPlatform",
        ],
        swiftSettings: core),
    .testTarget(name: "FeedbackTests", dependencies: ["TestSupport", "Feedback", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "MgmtTests", dependencies: ["TestSupport", "Mgmt", "Bounded", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "ConfigTests", dependencies: ["TestSupport", "Config", "Feedback", "Platform", "ANCS", "Bounded"], swiftSettings: core),
    .testTarget(name: "PlatformLinuxTests", dependencies: ["TestSupport", "PlatformLinux", "Platform", "Config", "Bounded"], swiftSettings: core),
    .testTarget(name: "AppTests", dependencies: ["TestSupport", "App", "PlatformLinux", "Platform", "Mgmt", "Config", "Bounded"], swiftSettings: core),
    .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "wristlink", "wristlink-pi", "PlatformLinux", "Bounded"], swiftSettings: core),
    .testTarget(
        name: "PhoneSimTests",
        dependencies: ["TestSupport", "PhoneSim", "Firmware", "MemoryPlatform", "Config", "ANCS", "AMS", "CTS", "ATT", "GATT", "Bounded", "AllocCounter"],
        swiftSettings: core),
]

var products: [Product] = [.executable(name: "wristlink", targets: ["wristlink"])]

// libFuzzer targets need `--sanitize=fuzzer`, which supplies `main`; a plain
// `swift build` could not link them, so they exist only when asked for
// (`make fuzz` sets WRISTLINK_FUZZ=1).
if Context.environment["WRISTLINK_FUZZ"] != nil {
    targets.append(.executableTarget(
        name: "wristlink-fuzz", dependencies: ["ANCS", "ATT", "GATT", "Firmware", "Mgmt", "Config", "PhoneSim", "PlatformLinux", "Platform", "Bounded"], path: "Tests/Fuzz",
        exclude: ["seeds"], swiftSettings: core))
}

let package = Package(
    name: "Wristlink",
    products: products,
    targets: targets,
    swiftLanguageModes: [.v6]
)
