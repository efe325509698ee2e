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
    .target(name: "Mgmt", dependencies: ["Bounded"], swiftSettings: core),

    .target(name: "AllocCounter", path: "Tests/Support/AllocCounter"),
    .testTarget(name: "BoundedTests", dependencies: ["Bounded", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "ANCSTests", dependencies: ["ANCS", "AllocCounter"], swiftSettings: core),
    .testTarget(name: "MgmtTests", dependencies: ["Mgmt", "Bounded", "AllocCounter"], swiftSettings: core),
]

var products: [Product] = []

// libFuzzer targets need `--sanitize=fuzzer`, which supplies `main`; a plain
// `swift build` could not link them, so they exist only when asked for
// (`make fuzz` sets WRISTLINK_FUZZ=1).
if Context.environment["WRISTLINK_FUZZ"] != nil {
    targets.append(.executableTarget(name: "wristlink-fuzz", dependencies: ["ANCS", "Mgmt"], path: "Tests/Fuzz", swiftSettings: core))
}

let package = Package(
    name: "Wristlink",
    products: products,
    targets: targets,
    swiftLanguageModes: [.v6]
)
