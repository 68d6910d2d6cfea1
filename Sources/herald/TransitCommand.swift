import ArgumentParser
import Foundation
import HeraldCore
import HeraldGTFS
import HeraldSchema
import HeraldServer
import HeraldStorage
import HeraldTransit
import Synchronization

/// `herald transit import|validate`: load a GTFS feed into the database, or check one.
struct TransitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transit", abstract: "GTFS feeds: import one into the database, or check one.",
        subcommands: [TransitImport.self, TransitValidate.self])
}

/// Prints a report as an operator reads it: counts, then each finding with where it was.
func printReport(_ report: FeedReport) {
    print("\(report.errorCount) error(s), \(report.warningCount) warning(s)")
    for notice in report.sorted {
        print("  \(notice.severity.rawValue) \(notice.code) ×\(notice.count)")
        for sample in notice.samples.prefix(5) {
            var place = [sample.file, sample.line.map { "line \($0)" }, sample.field].compactMap { $0 }.joined(separator: ":")
            if let value = sample.value { place += " value \"\(value)\"" }
            print("    \(place.isEmpty ? "" : place + ": ")\(sample.message)")
        }
    }
}

struct TransitImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a GTFS feed (a .zip, a folder, or an http(s) URL) as the feed's new version.",
        discussion: """
            The feed is checked first; one with errors is refused and the version in service stays. Importing \
            the feed already in service changes nothing. Running servers switch to the new version within \
            transit.reload_interval_seconds (an import through the API switches them at once).
            """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "A GTFS .zip, a folder of GTFS files, or an http(s) URL.")
    var source: String

    @Option(help: "The feed's name (default: the first configured feed, else \"default\").")
    var feed: String?

    @Flag(help: "Replace the version in service even with one that serves nothing or less than half of its stop times.")
    var force = false

    func run() async throws {
        let config = try common.load()
        let logger = makeLogger(config)
        let name = feed ?? config.transit.feeds.first?.name ?? TransitConfig.defaultFeedName
        guard TransitConfig.isValidName(name) else { throw ValidationError("--feed must be 1 to 64 characters of a-z, 0-9, - and _") }
        let database = try await DatabaseFactory.open(try config.resolvedDatabaseURL(), config: config, logger: logger)
        let feedSource: FeedImporter.Source = source.hasPrefix("http://") || source.hasPrefix("https://") ? .url(source) : .path(source)
        let fetcher = FeedFetcher()
        let result: FeedImporter.Outcome
        let elapsed: Duration
        do {
            (result, elapsed) = try await database.running { () -> (FeedImporter.Outcome, Duration) in
                try await HeraldSchema.migrator.migrate(database, logger: logger, deadline: .seconds(30))
                // Timed from here: the import itself (read, check, write, swap), not the migration.
                let started = ContinuousClock.now
                let importer = FeedImporter(database: database, config: config.transit, fetcher: fetcher, clock: SystemClock(), logger: logger)
                let record = try await importer.begin(feed: name, source: feedSource, requestedBy: "cli")
                let outcome = try await importer.run(record, source: feedSource, force: force, progress: ImportProgressPrinter().callback)
                return (outcome, ContinuousClock.now - started)
            }
        } catch {
            // The HTTP client must be shut down whatever happened.
            await fetcher.shutdown()
            logger.error("import failed", metadata: ["error": "\(String(reflecting: error))"])
            throw ExitCode(1)
        }
        await fetcher.shutdown()
        let record = result.record
        switch record.status {
        case .succeeded:
            let version = result.version
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(
                "imported \(name): version \(version?.version ?? "?") (\(version?.id ?? "?")), \(version?.rowCount ?? 0) rows in "
                    + String(format: "%.2f s (%.0f rows/s)", seconds, Double(version?.rowCount ?? 0) / max(seconds, 0.001)))
        case .unchanged:
            print("\(name) is unchanged: the version in service (\(record.versionID ?? "?")) has the same bytes")
        case .failed, .running:
            print("refused \(name): \(record.error ?? "the feed has errors"); the version in service stays")
        }
        if let report = result.report { printReport(report) }
        if record.status == .failed { throw ExitCode(1) }
    }
}

/// Prints an import's progress as it goes: the read, the check, each tenth of the rows
/// written, the switch.
final class ImportProgressPrinter: Sendable {
    private let lastTenth = Mutex(0)

    var callback: @Sendable (FeedImportProgress) -> Void {
        { [self] progress in
            switch progress {
            case .read(let bytes):
                print(bytes < 1_000_000 ? String(format: "read %.0f kB", Double(bytes) / 1000) : String(format: "read %.1f MB", Double(bytes) / 1_000_000))
            case .checked(let rows, let warnings):
                print("checked: \(rows) rows, \(warnings) warning(s); writing")
            case .writing(let written, let total):
                let tenth = total == 0 ? 10 : min(10, written * 10 / total)
                guard
                    lastTenth.withLock({ last in
                        defer { last = max(last, tenth) }
                        return tenth > last
                    })
                else { return }
                print("  \(tenth * 10)% of the rows written (\(min(written, total)) of \(total))")
            case .activated(let version):
                print("version \(version) now serves")
            }
            fflush(nil)
        }
    }
}

struct TransitValidate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate", abstract: "Check a GTFS feed (a .zip or a folder) and print its report; nothing is stored.")

    @Argument(help: "A GTFS .zip or a folder of GTFS files.")
    var path: String

    func run() async throws {
        let archive = try FeedArchive(path: path)
        let (feed, report) = FeedParser.parse(archive, scope: .full)
        if let feed {
            print("\(path): valid; \(feed.stops.count) stops, \(feed.routes.count) routes, \(feed.trips.count) trips, \(feed.stopTimes.count) stop times")
        } else {
            print("\(path): would be refused")
        }
        printReport(report)
        if feed == nil { throw ExitCode(1) }
    }
}
