// swift-tools-version: 6.1
import PackageDescription

// Driver spatial index benchmark: Herald's `HeraldGeo` grid against Redis GEOSEARCH on the
// same points and queries. A separate package so the server's build never pulls it in;
// build it in release:
//   swift build -c release --package-path Benchmarks/GeoIndex
// Only HeraldGeo (no dependencies) is compiled from the root package, but SwiftPM still
// resolves the root package's dependencies.
let package = Package(
    name: "GeoIndex",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "GeoIndex", targets: ["GeoIndex"])
    ],
    dependencies: [
        .package(name: "Herald", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(name: "CMallocInfo"),
        .executableTarget(
            name: "GeoIndex",
            dependencies: [
                "CMallocInfo",
                .product(name: "HeraldGeo", package: "Herald"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
