// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Quire",
    products: [
        .library(name: "ReplicatingTypes", targets: ["ReplicatingTypes"]),
        .executable(name: "quire", targets: ["quire"]),
        .executable(name: "quire-bench", targets: ["quire-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The CRDT library: pure Swift, no I/O, no JSON.
        .target(
            name: "ReplicatingTypes",
            swiftSettings: [.unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // jansson through pkg-config; only the JSON module imports it.
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        .target(name: "JSON", dependencies: ["CJansson"]),
        // Loads the editing traces in ../shared/traces for tests and benchmarks.
        .target(name: "EditingTraces", dependencies: ["JSON"]),
        .executableTarget(
            name: "quire",
            dependencies: [
                "ReplicatingTypes",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Heap statistics for the benchmark (glibc's mallinfo2 is not in Swift's Glibc module).
        .target(name: "CMallocStats"),
        .executableTarget(
            name: "quire-bench",
            dependencies: [
                "ReplicatingTypes", "EditingTraces", "JSON", "CMallocStats",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "ReplicatingTypesTests", dependencies: ["ReplicatingTypes", "EditingTraces"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
    ]
)
