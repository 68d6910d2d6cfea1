import Foundation

/// The console's page, script and style, read once from the package's resources.
///
/// Why a lookup of its own: SwiftPM's generated `Bundle.module` stops the process when the
/// resource bundle is missing (a binary copied without it); here the console answers 503
/// instead and the rest of the server runs on.
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
        let executableDirectory = Bundle.main.bundleURL
        let candidates = [
            executableDirectory.appendingPathComponent("Herald_HeraldServer.resources/Resources"),
            executableDirectory.appendingPathComponent("Herald_HeraldServer.bundle/Contents/Resources/Resources"),
            executableDirectory.appendingPathComponent("Herald_HeraldServer.bundle/Resources"),
            // Running from a checkout: the sources themselves.
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources"),
        ]
        for directory in candidates {
            var files: [String: File] = [:]
            for (name, type) in names {
                guard let bytes = try? Data(contentsOf: directory.appendingPathComponent(name)) else { break }
                files[name] = File(bytes: bytes, contentType: type)
            }
            if files.count == names.count { return ConsoleAssets(files: files) }
        }
        return ConsoleAssets(files: [:])
    }
}
