import Foundation

/// Where transit tests find their feeds: the public GTFS sample feed (a copy in
/// `Tests/Fixtures`, a few kilobytes), and the real
/// feeds `scripts/transit-data` fetches from PyPI (scripts/test sets HERALD_TEST_TRANSIT_DATA).
public enum TransitFixtures {
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The GTFS sample feed (9 stops, 5 routes, services 2007–2010, America/Los_Angeles).
    public static func sampleFeedPath() throws -> String {
        if let path = ProcessInfo.processInfo.environment["HERALD_TEST_SAMPLE_FEED"] { return path }
        let candidate = repositoryRoot.appendingPathComponent("Tests/Fixtures/gtfs/sample-feed-1").path
        guard FileManager.default.fileExists(atPath: candidate + "/stops.txt") else {
            throw Missing(description: "the sample feed is not at \(candidate): set HERALD_TEST_SAMPLE_FEED")
        }
        return candidate
    }

    /// A real feed fetched by scripts/transit-data (halifax.zip, cairns.zip, barrie.zip, nyc_subway.zip, tripUpdates.pb).
    public static func realFeedPath(_ name: String) throws -> String {
        let base = ProcessInfo.processInfo.environment["HERALD_TEST_TRANSIT_DATA"] ?? repositoryRoot.appendingPathComponent(".cache/transit-data").path
        let path = base + "/feeds/" + name
        guard FileManager.default.fileExists(atPath: path) else {
            throw Missing(description: "\(path) is missing: run the suite with scripts/test (it runs scripts/transit-data), or scripts/transit-data yourself")
        }
        return path
    }
}
