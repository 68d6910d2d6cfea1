// swift-tools-version: 6.1
import PackageDescription

// Transit benchmark: Herald's GTFS reader and timetable (`HeraldGTFS`, no server
// dependencies) loading a feed and answering "next departures at a stop", and Herald's CSV
// reader against the CSV libraries in the package mirror. A separate package so the
// server's build never pulls it in; build it in release:
//   swift build -c release --package-path Benchmarks/TransitLoad
let package = Package(
    name: "TransitLoad",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "TransitLoad", targets: ["TransitLoad"])
    ],
    dependencies: [
        .package(name: "Herald", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swiftcsv/SwiftCSV.git", from: "0.10.0"),
        .package(url: "https://github.com/yaslab/CSV.swift.git", from: "2.5.2"),
    ],
    targets: [
        .executableTarget(
            name: "TransitLoad",
            dependencies: [
                .product(name: "HeraldGTFS", package: "Herald"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SwiftCSV", package: "SwiftCSV"),
                .product(name: "CSV", package: "CSV.swift"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
