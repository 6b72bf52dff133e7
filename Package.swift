// swift-tools-version:6.1
// A Matter device simulator fleet and the controller library that drives it.
// One module per layer; see docs/ARCHITECTURE.md.
import PackageDescription

let package = Package(
    name: "MatterSim",
    // It builds and runs on Linux only (Debian 12): Avahi, OpenSSL through pkg-config and glibc's
    // mallinfo2 are Linux parts. The macOS line states only what Synchronization's Mutex needs;
    // it is no macOS port (the mallinfo2 calls are `#if canImport(Glibc)`, Avahi is not).
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MatterTLV", targets: ["MatterTLV"]),
        .library(name: "MatterModel", targets: ["MatterModel"]),
        .library(name: "MatterCrypto", targets: ["MatterCrypto"]),
        .library(name: "MatterProtocol", targets: ["MatterProtocol"]),
        .library(name: "MatterDevice", targets: ["MatterDevice"]),
        .library(name: "MatterController", targets: ["MatterController"]),
        .library(name: "HomeAPI", targets: ["HomeAPI"]),
        // The SDK's module names, so app code written for the Google Home APIs builds as it is.
        .library(name: "GoogleHomeSDK", targets: ["GoogleHomeSDK"]),
        .library(name: "GoogleHomeTypes", targets: ["GoogleHomeTypes"]),
        .executable(name: "matter-sim", targets: ["matter-sim"]),
        .executable(name: "homectl", targets: ["homectl"]),
        .library(name: "CloudRelay", targets: ["CloudRelay"]),
        .library(name: "RelayClients", targets: ["RelayClients"]),
        .executable(name: "matter-relay", targets: ["matter-relay"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/jpsim/Yams", "5.0.1"..<"7.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        // The relay's shared store when several instances run (`serve --database postgres://…`).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // The relay's /metrics: swift-metrics instruments on swift-prometheus's registry.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // Layer 0: the spec's TLV encoding (Appendix A).
        .target(name: "MatterTLV"),
        // Layer 1: clusters, attributes, commands, device types, as data.
        .target(name: "MatterModel", dependencies: ["MatterTLV"], resources: [.process("Resources")]),
        // System libraries: OpenSSL libcrypto (AES-CCM, EC point arithmetic for SPAKE2+) and Avahi.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CAvahi", pkgConfig: "avahi-client", providers: [.apt(["libavahi-client-dev"])]),
        .target(name: "MatterCrypto", dependencies: [
            "COpenSSL", "MatterTLV",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        .target(name: "MatterDNSSD", dependencies: [
            "CAvahi", .product(name: "Logging", package: "swift-log"),
        ]),
        // Messages, sessions, MRP, exchanges, PASE/CASE and the Interaction Model, for both sides.
        .target(name: "MatterProtocol", dependencies: [
            "MatterTLV", "MatterModel", "MatterCrypto",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // A node: endpoints, cluster servers over one attribute store.
        .target(name: "MatterDevice", dependencies: [
            "MatterTLV", "MatterModel", "MatterCrypto", "MatterProtocol", "MatterDNSSD", .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // The controller: commissioner, fabric CA, CASE sessions, IM client with resubscription.
        .target(name: "MatterController", dependencies: [
            "MatterTLV", "MatterModel", "MatterCrypto", "MatterProtocol", "MatterDNSSD",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The Google Home API-shaped library over the controller, with the home graph in SQLite.
        .target(name: "HomeAPI", dependencies: [
            "MatterController", "RelayProtocol", "MatterTLV", "MatterModel", "MatterProtocol", "MatterCrypto",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `import GoogleHomeSDK` / `import GoogleHomeTypes`: HomeAPI under the SDK's names (with
        // OpenCombine and its DispatchQueue scheduler, the Combine the guides' code uses).
        .target(name: "GoogleHomeSDK", dependencies: [
            "HomeAPI",
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "OpenCombineDispatch", package: "OpenCombine"),
        ]),
        .target(name: "GoogleHomeTypes", dependencies: ["HomeAPI"]),
        // A home's relay and hub links over RelayClients' WebSocket client, for the apps and
        // CLIs to give a Home: HomeAPI itself reaches the relay through a protocol.
        .target(name: "HomeRelayLink", dependencies: ["HomeAPI", "MatterProtocol", "RelayClients", "RelayProtocol"]),
        // glibc's allocator statistics, for `homectl soak`'s heap-in-use figure.
        .systemLibrary(name: "CMalloc"),
        .executableTarget(name: "homectl", dependencies: [
            "HomeAPI", "HomeRelayLink", "MatterController", "MatterCrypto", "MatterDNSSD", "MatterModel", "MatterProtocol", "MatterTLV", "DeviceProfile", "CMalloc",
            "RelayClients", "RelayProtocol",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "OpenCombine", package: "OpenCombine"),
        ]),
        // `/metrics` for operators: one swift-prometheus registry and exporter, shared by the relay,
        // the hub and `matter-sim home`.
        .target(name: "OperatorMetrics", dependencies: [
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The cloud relay, split by role. The frames both ends speak:
        .target(name: "RelayProtocol", dependencies: [
            "MatterTLV", "MatterModel",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // Its clients (a device's link, a controller's link) over one reconnecting WebSocket link.
        .target(name: "RelayClients", dependencies: [
            "RelayProtocol", "MatterModel", "MatterProtocol",
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The server (Hummingbird + WebSocket; registrations in SQLite, or PostgreSQL for several instances).
        .target(name: "CloudRelay", dependencies: [
            "RelayProtocol", "MatterCrypto", "MatterProtocol",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            // Instance-to-instance links (`--cross-instance forward`).
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            "OperatorMetrics",
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The local hub: the relay's server side in front of a Matter controller on the LAN.
        .target(name: "HomeHub", dependencies: [
            "CloudRelay", "RelayProtocol", "MatterController", "MatterModel", "MatterProtocol",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "matter-relay", dependencies: [
            "CloudRelay", "HomeHub", "RelayClients", "RelayProtocol", "HomeAPI", "HomeRelayLink", "MatterController", "MatterCrypto", "MatterProtocol", "MatterModel", "MatterTLV",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // libqrencode: the dashboard's pairing QR codes.
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // `matter-sim home --dashboard`: a running home in the browser (Hummingbird, WebSocket push).
        .target(name: "HomeDashboard", dependencies: [
            "CMalloc", "CQREncode", "MatterDevice", "MatterModel", "MatterProtocol", "MatterTLV", "OperatorMetrics",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], resources: [.copy("Resources")]),
        // Device and home profiles (YAML) with path-precise validation.
        .target(name: "DeviceProfile", dependencies: ["MatterModel", "MatterTLV", "Yams"]),
        .executableTarget(name: "matter-sim", dependencies: [
            "DeviceProfile", "HomeDashboard", "MatterCrypto", "MatterDevice", "MatterDNSSD", "MatterModel", "MatterProtocol", "MatterTLV", "RelayClients",
            "RelayProtocol",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),

        // The Discovery guide's own code (Examples/GuideCode, linked) run on a home file: the
        // app on the fake LAN's controller host in GuideCodeFakeLANTests.
        .executableTarget(name: "guide-code-run", dependencies: ["GoogleHomeSDK", "GoogleHomeTypes", "MatterProtocol"]),

        // Publishes and browses on command inside fake-LAN namespaces (tests, benchmark).
        .executableTarget(name: "dnssd-probe", dependencies: [
            "MatterDNSSD", .product(name: "Logging", package: "swift-log"),
        ]),

        // Test support: child processes with signals unblocked and bounded waits.
        .target(name: "ChildProcess", path: "Tests/Support/ChildProcess"),
        // Test support: waits that wake on the changes of the part under test, bounded in real time.
        .target(name: "TestWaiting", dependencies: ["MatterProtocol"], path: "Tests/Support/TestWaiting"),
        // Test support: simulated devices in the test process on loopback UDP, and their fixtures.
        .target(name: "TestDevices", dependencies: [
            "TestWaiting", "MatterDevice", "MatterProtocol", "MatterCrypto", "MatterModel", "MatterTLV",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/Support/TestDevices"),
        // Test support: read, write, invoke and subscribe by relay device ID, with MatterController's IM client.
        .target(name: "RelayTestClient", dependencies: [
            "MatterController", "RelayClients", "MatterProtocol", "MatterModel", "MatterTLV",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ], path: "Tests/Support/RelayTestClient"),

        .testTarget(name: "MatterTLVTests", dependencies: ["MatterTLV"]),
        .testTarget(name: "MatterModelTests", dependencies: ["MatterModel", "MatterTLV"]),
        .testTarget(name: "MatterCryptoTests", dependencies: [
            "MatterCrypto", "MatterTLV", "COpenSSL", .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        .testTarget(name: "MatterDNSSDTests", dependencies: [
            "MatterDNSSD", "dnssd-probe", "ChildProcess", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "MatterProtocolTests", dependencies: [
            "TestWaiting", "MatterProtocol", "MatterCrypto", "MatterTLV", "MatterModel",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .testTarget(name: "MatterDeviceTests", dependencies: [
            "TestWaiting", "MatterDevice", "MatterModel", "MatterProtocol", "MatterTLV", "MatterCrypto", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "MatterSimTests", dependencies: [
            "TestWaiting", "matter-sim", "HomeDashboard", "OperatorMetrics", .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"), "MatterDevice", "MatterProtocol", "MatterCrypto", "MatterModel", "MatterTLV", "DeviceProfile",
            "CloudRelay", "RelayClients", "RelayProtocol", "RelayTestClient", "MatterController", "ChildProcess",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The commissioner and IM client against in-process devices.
        .testTarget(name: "MatterControllerTests", dependencies: [
            "MatterController", "TestDevices", "TestWaiting", "MatterModel", "MatterProtocol", "MatterTLV",
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        .testTarget(name: "HomeAPITests", dependencies: [
            "homectl", "matter-sim", "ChildProcess", "TestDevices", "TestWaiting",  // the fake-LAN tests run these binaries from the build folder
            "matter-relay",  // the local hub and cloud fake-LAN tests
            "guide-code-run",  // the guides' code on the fake LAN
            "HomeAPI", "HomeRelayLink", "MatterController", "MatterDevice", "MatterProtocol", "MatterModel", "MatterTLV",
            "GoogleHomeSDK", "GoogleHomeTypes",  // GuideCode/: Examples/GuideCode's sources, run against simulated devices
            "CloudRelay", "HomeHub", "OperatorMetrics", "RelayClients", "RelayProtocol", "RelayTestClient",  // the hub and routing tests run an in-process relay and RelayDeviceClients
            .product(name: "GRDB", package: "GRDB.swift"),  // a home file written by an older version
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "OpenCombineDispatch", package: "OpenCombine"),  // the guides' receive(on: DispatchQueue.main)
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], exclude: ["Support/circuitmatter_light.py"]),
        .testTarget(name: "CloudRelayTests", dependencies: [
            "TestWaiting", "CloudRelay", "ChildProcess", "HomeHub", "OperatorMetrics", "RelayClients", "RelayProtocol", "RelayTestClient", "MatterController", "MatterProtocol", "MatterModel",
            "MatterTLV",
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "PostgresNIO", package: "postgres-nio"),  // the cluster tests read the instances' records
        ]),
        .testTarget(name: "DeviceProfileTests", dependencies: ["DeviceProfile", "MatterModel", "MatterTLV"]),
    ]
)

// `scripts/fuzz.sh`: the libFuzzer harnesses (Fuzz/), in the package only when it builds them
// (MATTERSIM_FUZZ=1, every Swift module compiled with -sanitize=fuzzer,address).
if Context.environment["MATTERSIM_FUZZ"] != nil {
    // Its entry point (matter_fuzz_main, which SwiftPM makes main) starts libFuzzer's driver.
    package.targets += [
        .target(name: "CFuzzerDriver", path: "Fuzz/CFuzzerDriver"),
        .executableTarget(name: "matter-fuzz", dependencies: [
            "CFuzzerDriver", "MatterTLV", "MatterModel", "MatterCrypto", "MatterProtocol", "DeviceProfile", "RelayProtocol",
        ], path: "Fuzz/Harnesses", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ]
    package.products += [.executable(name: "matter-fuzz", targets: ["matter-fuzz"])]
}
