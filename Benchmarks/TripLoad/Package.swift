// swift-tools-version: 6.1
import PackageDescription

// Trip location load generator (issue 8): drivers stream `location` messages over Herald's
// native WebSocket protocol and each trip's rider, on a socket of the same process, times
// the `driver_location` broadcast. A separate package so the server's build never pulls it
// in; build it in release:
//   swift build -c release --package-path Benchmarks/TripLoad
let package = Package(
    name: "TripLoad",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "TripLoad", targets: ["TripLoad"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "TripLoad",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        )
    ]
)
