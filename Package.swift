// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
        // For the push benchmark package (Benchmarks/PushLoad), which drives the senders directly.
        .library(name: "HeraldPush", targets: ["HeraldPush"]),
        // …and its worker drain and queue-memory figures, which run the delivery worker.
        .library(name: "HeraldNotifications", targets: ["HeraldNotifications"]),
        .library(name: "HeraldMockProviders", targets: ["HeraldMockProviders"]),
        // For the geo benchmark package (Benchmarks/GeoIndex); no dependencies of its own.
        .library(name: "HeraldGeo", targets: ["HeraldGeo"]),
        // For the transit benchmark package (Benchmarks/TransitLoad).
        .library(name: "HeraldGTFS", targets: ["HeraldGTFS"]),
        // For apps: REST, push registration, the inbox and realtime, without the server.
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.20"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // Traces over OTLP/HTTP only: the default traits add OTLP/gRPC and grpc-swift-2 to the
        // build (docs/tracing.md has the build cost).
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .target(
            name: "HeraldCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(name: "HeraldGeo", swiftSettings: strict),
        // The app-side client: Foundation everywhere; SwiftNIO's WebSocket client only where
        // Foundation has none (Linux).
        .target(
            name: "HeraldClient",
            dependencies: [
                .product(name: "WSClient", package: "swift-websocket", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldAuth",
            dependencies: [
                "HeraldCore",
                "HeraldStorage",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The provider's JWKS URL (RemoteJWKS).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldStorage",
            dependencies: [
                "HeraldCore",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldRealtime",
            dependencies: [
                "HeraldCore",
                "HeraldAuth",
                "HeraldStorage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldPush",
            dependencies: [
                "HeraldCore",
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldPayments",
            dependencies: [
                "HeraldCore",
                "HeraldStorage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldNotifications",
            dependencies: [
                "HeraldCore",
                "HeraldAuth",
                "HeraldStorage",
                "HeraldRealtime",
                "HeraldPush",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldDispatch",
            dependencies: [
                "HeraldCore",
                "HeraldAuth",
                "HeraldGeo",
                "HeraldStorage",
                "HeraldRealtime",
                "HeraldNotifications",
                "HeraldPayments",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldTrips",
            dependencies: [
                "HeraldCore",
                "HeraldAuth",
                "HeraldGeo",
                "HeraldStorage",
                "HeraldRealtime",
                "HeraldNotifications",
                "HeraldDispatch",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // GTFS and GTFS-Realtime as values: reading, checking, indexing, answering. No server
        // dependencies, so the transit benchmark builds it alone.
        .target(
            name: "HeraldGTFS",
            dependencies: [
                "HeraldGeo",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            exclude: ["Realtime/Generated/gtfs-realtime.proto"],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldTransit",
            dependencies: [
                "HeraldCore",
                "HeraldAuth",
                "HeraldGeo",
                "HeraldGTFS",
                "HeraldStorage",
                "HeraldRealtime",
                "HeraldNotifications",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The REST API's idempotency keys: their table and store (the middleware is the server's).
        .target(
            name: "HeraldIdempotency",
            dependencies: ["HeraldCore", "HeraldStorage", .product(name: "SQLKit", package: "sql-kit")],
            swiftSettings: strict
        ),
        // Every module's migrations in their order: what the server, the CLI and the tests
        // migrate, without linking the HTTP server.
        .target(
            name: "HeraldSchema",
            dependencies: [
                "HeraldStorage", "HeraldAuth", "HeraldIdempotency", "HeraldRealtime", "HeraldNotifications", "HeraldPayments", "HeraldDispatch",
                "HeraldTrips", "HeraldTransit",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldServer",
            dependencies: [
                "HeraldSchema",
                "HeraldIdempotency",
                "HeraldCore",
                "HeraldAuth",
                "HeraldStorage",
                "HeraldRealtime",
                "HeraldPush",
                "HeraldNotifications",
                "HeraldDispatch",
                "HeraldPayments",
                "HeraldTrips",
                "HeraldTransit",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The operations console's page, script and style (served at /console), and ReDoc
            // (MIT, the standalone bundle, unmodified) for /api/v1/docs.
            resources: [.copy("Console/Resources"), .copy("Routes/DocsResources")],
            swiftSettings: strict
        ),
        // The commit `scripts/release` stamps into a release binary (`herald --version`).
        .target(name: "HeraldBuildInfo"),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldBuildInfo",
                "HeraldServer",
                "HeraldSchema",
                "HeraldCore",
                "HeraldAuth",
                "HeraldStorage",
                "HeraldPush",
                "HeraldNotifications",
                "HeraldTransit",
                "HeraldGTFS",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldMockProviders",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "herald-mock-apns",
            dependencies: ["HeraldMockProviders", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "herald-protocol-testserver",
            dependencies: [
                "HeraldServer",
                "HeraldSchema",
                "HeraldCore",
                "HeraldStorage",
                "HeraldRealtime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Test support in three layers, so that a module's tests link only what they need:
        // fixtures (no database), a migrated database on either engine, the whole server.
        .target(
            name: "HeraldTestFixtures",
            dependencies: ["HeraldCore", "HeraldGTFS"],
            path: "Tests/HeraldTestFixtures",
            swiftSettings: strict
        ),
        .target(
            name: "HeraldTestSupport",
            dependencies: [
                "HeraldTestFixtures", "HeraldCore", "HeraldStorage", "HeraldSchema",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/HeraldTestSupport",
            swiftSettings: strict
        ),
        .target(
            name: "HeraldServerTestSupport",
            dependencies: [
                "HeraldTestSupport", "HeraldServer", "HeraldAuth", "HeraldCore",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/HeraldServerTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: ["HeraldCore", .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle")], swiftSettings: strict
        ),
        .testTarget(name: "HeraldGeoTests", dependencies: ["HeraldGeo"], swiftSettings: strict),
        // The client against the real server on a loopback socket.
        .testTarget(
            name: "HeraldClientTests",
            dependencies: [
                "HeraldClient", "HeraldServer", "HeraldServerTestSupport", "HeraldCore",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldRealtimeTests",
            dependencies: [
                "HeraldRealtime", "HeraldStorage", "HeraldTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ], swiftSettings: strict),
        .testTarget(
            name: "HeraldAuthTests",
            dependencies: [
                "HeraldAuth", "HeraldStorage", "HeraldTestSupport", .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldNotificationsTests", dependencies: ["HeraldNotifications", "HeraldPush", "HeraldStorage", "HeraldTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "HeraldPushTests",
            dependencies: [
                "HeraldPush", "HeraldTestFixtures", "HeraldMockProviders",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "HeraldPaymentsTests",
            dependencies: [
                "HeraldPayments", "HeraldServer", "HeraldServerTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldDispatchTests",
            dependencies: [
                "HeraldDispatch", "HeraldTestSupport", "HeraldAuth", "HeraldCore", "HeraldGeo", "HeraldNotifications", "HeraldPayments", "HeraldRealtime",
                "HeraldStorage", .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "HeraldTripsTests",
            dependencies: [
                "HeraldTrips", "HeraldGeo", "HeraldRealtime", "HeraldStorage", "HeraldTestSupport", "HeraldAuth", "HeraldCore", "HeraldDispatch",
                "HeraldNotifications", .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: strict),
        // HeraldGTFS: GTFS parsing, the timetable, the journey planner, GTFS-Realtime, fares.
        .testTarget(
            name: "HeraldGTFSTests",
            dependencies: [
                "HeraldGTFS", "HeraldGeo", "HeraldCore", "HeraldTestFixtures",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "HeraldTransitTests",
            dependencies: [
                "HeraldTransit", "HeraldGTFS", "HeraldTestSupport", "HeraldCore", "HeraldNotifications", "HeraldRealtime", "HeraldStorage",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"), .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: strict),
        .testTarget(name: "HeraldStorageTests", dependencies: ["HeraldStorage", "HeraldAuth", "HeraldSchema", "HeraldTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "HeraldServerTests",
            dependencies: [
                "HeraldServer", "HeraldStorage", "HeraldAuth", "HeraldRealtime", "HeraldServerTestSupport", "HeraldIdempotency", "HeraldSchema", "HeraldPush",
                "HeraldPayments",
                "HeraldTrips",
                "HeraldTransit", "HeraldGTFS", "HeraldMockProviders", "HeraldNotifications",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict
        ),
    ]
)
