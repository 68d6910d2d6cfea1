// swift-tools-version: 6.1
import PackageDescription

// A Socket.IO (Engine.IO v4 / Socket.IO v5 over WebSocket) load generator on SwiftNIO.
// A separate package so the server's build never pulls it in; build it in release:
//   swift build -c release --package-path Benchmarks/SocketIOLoad
let package = Package(
    name: "SocketIOLoad",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "SocketIOLoad", targets: ["SocketIOLoad"]),
        .executable(name: "NIOFloor", targets: ["NIOFloor"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "SocketIOLoad",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The framework's floor for one fan-out (Benchmarks/run.sh's `nio-floor`).
        .executableTarget(
            name: "NIOFloor",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ]
)
