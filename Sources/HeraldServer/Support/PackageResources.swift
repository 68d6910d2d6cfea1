import Foundation

/// Where a folder the package copies into its resources is at run time.
///
/// Why not SwiftPM's generated `Bundle.module`: it stops the process when the resource bundle
/// is missing (a binary copied without it); callers here answer 503 for that one page instead
/// and the rest of the server runs on.
enum PackageResources {
    /// Candidate directories for the resource folder `name`, best first: next to the binary
    /// (Linux and macOS bundle layouts), then the sources of a checkout (`sourceDirectory`).
    static func directories(_ name: String, sourceDirectory: URL) -> [URL] {
        let executableDirectory = Bundle.main.bundleURL
        return [
            executableDirectory.appendingPathComponent("Herald_HeraldServer.resources/\(name)"),
            executableDirectory.appendingPathComponent("Herald_HeraldServer.bundle/Contents/Resources/\(name)"),
            executableDirectory.appendingPathComponent("Herald_HeraldServer.bundle/\(name)"),
            sourceDirectory.appendingPathComponent(name),
        ]
    }

    /// The files `names` from the first directory that has all of them (empty: none has).
    static func load(_ name: String, sourceDirectory: URL, files names: [String]) -> [String: Data] {
        for directory in directories(name, sourceDirectory: sourceDirectory) {
            var files: [String: Data] = [:]
            for file in names {
                guard let bytes = try? Data(contentsOf: directory.appendingPathComponent(file)) else { break }
                files[file] = bytes
            }
            if files.count == names.count { return files }
        }
        return [:]
    }
}
