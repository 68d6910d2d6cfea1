import Foundation

/// The console's page, script and style, read once from the package's resources
/// (`PackageResources`: a binary copied without them answers 503 here, and runs on).
struct ConsoleAssets: Sendable {
    struct File: Sendable {
        let bytes: Data
        let contentType: String
    }

    let files: [String: File]

    static let names: [String: String] = [
        "index.html": "text/html; charset=utf-8", "console.js": "text/javascript; charset=utf-8", "console.css": "text/css; charset=utf-8",
    ]

    static func load() -> ConsoleAssets {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let loaded = PackageResources.load("Resources", sourceDirectory: sources, files: Array(names.keys))
        return ConsoleAssets(files: loaded.reduce(into: [:]) { files, entry in files[entry.key] = File(bytes: entry.value, contentType: names[entry.key]!) })
    }
}
