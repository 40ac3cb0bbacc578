// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Quire",
    products: [
        .library(name: "ReplicatingTypes", targets: ["ReplicatingTypes"]),
        .library(name: "QuireProject", targets: ["QuireProject"]),
        .executable(name: "quire", targets: ["quire"]),
        .executable(name: "quire-bench", targets: ["quire-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
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
        // Loads the editing traces in ../shared/traces for tests and benchmarks, and the seeded random source they generate inputs with.
        .target(name: "EditingTraces", dependencies: ["JSON"]),
        // JSON-RPC 2.0 framing, message shapes and errors; no SwiftNIO, no CRDT internals.
        .target(name: "QuireProtocol", dependencies: ["JSON"]),
        // A shared project: the files to share (ignore rules), the join line, the replicated file tree
        // and what to write to disk; no SwiftNIO, no JSON.
        .target(
            name: "QuireProject",
            dependencies: ["ReplicatingTypes", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The relay (`quire relay`): pairs two daemons' connections and forwards bytes; no secret, no crypto.
        .target(
            name: "QuireRelay",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Documents, editor sessions, sync; SwiftNIO for stdio and sockets.
        .target(
            name: "QuireDaemon",
            dependencies: [
                "ReplicatingTypes", "QuireProtocol", "JSON", "QuireRelay", "QuireProject",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // What `quire share` and `quire join` say and how they talk to a daemon: a JSON-RPC client on
        // its editor socket and the words on the terminal.
        .target(
            name: "QuireConsole",
            dependencies: ["QuireDaemon", "QuireProtocol", "QuireProject", "JSON"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "quire",
            dependencies: [
                "QuireDaemon", "QuireRelay", "QuireProject", "QuireConsole", "ReplicatingTypes",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Heap statistics for the benchmark (glibc's mallinfo2 is not in Swift's Glibc module).
        .target(name: "CMallocStats"),
        .executableTarget(
            name: "quire-bench",
            dependencies: [
                "ReplicatingTypes", "EditingTraces", "JSON", "CMallocStats", "QuireDaemon", "QuireProtocol", "QuireProject", "QuireRelay",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "ReplicatingTypesTests", dependencies: ["ReplicatingTypes", "EditingTraces"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "QuireProjectTests", dependencies: ["QuireProject", "ReplicatingTypes", "EditingTraces", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "QuireProtocolTests", dependencies: ["QuireProtocol", "JSON"]),
        .testTarget(
            name: "QuireConsoleTests",
            dependencies: ["QuireConsole", "QuireProject", "JSON", "QuireTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // What the test targets share: daemon processes, test editors, waiting on a condition.
        .target(
            name: "QuireTestSupport",
            dependencies: [
                "QuireDaemon", "QuireProtocol", "JSON", "ReplicatingTypes",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/QuireTestSupport",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "QuireDaemonTests",
            dependencies: [
                "QuireDaemon", "QuireProtocol", "JSON", "ReplicatingTypes", "EditingTraces", "QuireTestSupport", "QuireRelay",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
