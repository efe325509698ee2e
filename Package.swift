// swift-tools-version:6.1
// Wristlink: an ANCS Notification Consumer for a Raspberry-Pi-class wearable.
// Layout and the direction of imports: docs/architecture.md.
import PackageDescription

// The core modules use only the standard library so they also build with
// Embedded Swift; `Lifetimes` lets fixed buffers hand out `Span`s.
let core: [SwiftSetting] = [.enableExperimentalFeature("Lifetimes")]

var targets: [Target] = [
    .target(name: "Bounded", swiftSettings: core),
    .target(name: "ANCS", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "ATT", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "GATT", dependencies: ["ATT", "Bounded"], swiftSettings: core),
    .target(name: "Platform", dependencies: ["Bounded"], swiftSettings: core),
    .target(name: "Firmware", dependencies: ["ANCS", "ATT", "GATT", "Feedback", "Platform", "Bounded"], swiftSettings: core),
    .target(name: "CLinux"),
    .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
    .target(name: "PlatformLinux", dependencies: ["Platform", "Bounded", "CLinux", "CBlueZ"], swiftSettings: core),
    .target(name: "Feedback", dependencies: ["Bounded"], swiftSettings: core),
    // The Pi binary's bring-up entry point (docs/pi-build.md); built here too
    // so it stays valid Swift for the host and can be compared with the
    // aarch64 build.
    .executableTarget(
        name: "wristlink-pi", dependencies: ["Firmware", "PlatformLinux", "Platform", "ANCS", "Bounded"], swiftSettings: core),

    .target(name: "AllocCounter", path: "Tests/Support/AllocCounter"),
    .testTarget(name: "BoundedTests", dependencies: ["Bounded", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "ANCSTests", dependencies: ["ANCS", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "ATTTests", dependencies: ["ATT", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "GATTTests", dependencies: ["ATT", "GATT"], swiftSettings: core),
    .testTarget(
        name: "FirmwareTests",
        dependencies: ["Firmware", "PlatformLinux", "Platform", "ANCS", "ATT", "GATT", "Bounded", "AllocCounter"],
        swiftSettings: core),
    .testTarget(name: "FeedbackTests", dependencies: ["Feedback", "AllocCounter"], swiftSettings: core),
]

var products: [Product] = []

// libFuzzer targets need `--sanitize=fuzzer`, which supplies `main`; a plain
// `swift build` could not link them, so they exist only when asked for
// (`make fuzz` sets WRISTLINK_FUZZ=1).
if Context.environment["WRISTLINK_FUZZ"] != nil {
    targets.append(.executableTarget(
        name: "wristlink-fuzz", dependencies: ["ANCS", "ATT", "GATT", "Firmware", "Bounded"], path: "Tests/Fuzz", swiftSettings: core))
}

let package = Package(
    name: "Wristlink",
    products: products,
    targets: targets,
    swiftLanguageModes: [.v6]
)
