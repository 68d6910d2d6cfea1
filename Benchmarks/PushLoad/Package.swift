// swift-tools-version: 6.1
import PackageDescription

// Push delivery benchmarks: drives Herald's APNs sender, delivery worker and Web Push
// encryption directly against a SwiftNIO mock APNs. A separate package so the server's
// build never pulls it in; build it in release:
//   swift build -c release --package-path Benchmarks/PushLoad
let package = Package(
    name: "PushLoad",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "PushLoad", targets: ["PushLoad"])
    ],
    dependencies: [
        .package(name: "Herald", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        .target(name: "CMallocInfo"),
        .executableTarget(
            name: "PushLoad",
            dependencies: [
                "CMallocInfo",
                .product(name: "HeraldPush", package: "Herald"),
                .product(name: "HeraldNotifications", package: "Herald"),
                .product(name: "HeraldMockProviders", package: "Herald"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ]
)
