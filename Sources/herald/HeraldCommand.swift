import ArgumentParser
import Foundation
import HeraldAuth
import HeraldCore
import HeraldSchema
import HeraldServer
import HeraldStorage
import Logging
import ServiceLifecycle
import UnixSignals

@main
struct HeraldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Realtime dispatch and notification server.",
        version: BuildVersion.description,
        subcommands: [Serve.self, Migrate.self, Token.self, DoctorCommand.self, PushTest.self, VAPIDKeysCommand.self, TransitCommand.self]
    )
}

/// Options every command that reads the configuration shares.
struct CommonOptions: ParsableArguments {
    @Option(help: "A JSON or YAML config file (env: HERALD_CONFIG).")
    var config: String?

    @Option(help: "sqlite:PATH or postgres://user:pass@host:port/db (env: HERALD_DATABASE_URL).")
    var database: String?

    @Option(name: .customLong("data-dir"), help: "Directory for the embedded database and local state (env: HERALD_DATA_DIR; default ./herald-data).")
    var dataDir: String?

    func load() throws -> HeraldConfig {
        let environment = ProcessInfo.processInfo.environment
        var loaded = try ConfigLoader.load(file: config ?? environment["HERALD_CONFIG"], environment: environment)
        if let database { loaded.database.url = database }
        if let dataDir { loaded.dataDir = dataDir }
        return loaded
    }
}

func makeLogger(_ config: HeraldConfig) -> Logger {
    let level = Logger.Level(rawValue: config.logging.level.rawValue) ?? .info
    let json = config.logging.format == .json
    LoggingSystem.bootstrap { label in
        var handler: any LogHandler = json ? JSONLogHandler(label: label) : TextLogHandler(label: label)
        handler.logLevel = level
        return handler
    }
    var logger = Logger(label: "herald")
    logger.logLevel = level
    return logger
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the server (migrates the database first).")

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on (env: HERALD_HOST; default 0.0.0.0).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (env: HERALD_PORT; default 8080).")
    var port: Int?

    func run() async throws {
        var config = try common.load()
        if let host { config.server.host = host }
        if let port { config.server.port = port }
        // Before anything touches the event loops: the singleton group is sized once.
        EventLoopThreads.configure(config.server.threads)
        let logger = makeLogger(config)
        let traces = try TraceExport.start(config.tracing, logger: logger)
        let databaseDescription = (try? config.resolvedDatabaseURL().description) ?? "?"
        let host = config.server.host
        let configuredPort = config.server.port
        let (application, _) = try await HeraldApplication.build(
            config: config, logger: logger,
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuredPort
                print("Herald \(BuildVersion.token) listening on http://\(host):\(port) (database: \(databaseDescription))")
                fflush(nil)
            })
        // A graceful stop lets in-flight work finish, but at most 6 s: then everything is
        // cancelled. A call stuck inside the database driver (the database vanished mid-query)
        // can ignore even cancellation, so a watchdog ends the process 8 s after the signal —
        // before the 10 s an orchestrator usually waits before SIGKILL — instead of hanging
        // or crashing.
        // The exporter first: services stop in reverse order, so it sends the spans of the
        // server's last requests before it stops.
        var group = ServiceGroupConfiguration(
            services: (traces.map { [$0] } ?? []) + [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(6)
        group.maximumCancellationDuration = nil
        let services = ServiceGroup(configuration: group)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await services.run() }
            tasks.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
                    try await CancellableSleep.sleep(for: .seconds(8))
                    logger.error("shutdown did not finish within 8 s of the signal (a database call is stuck); exiting")
                    Foundation.exit(0)
                }
            }
            try await tasks.next()
            tasks.cancelAll()
        }
        logger.info("Herald stopped")
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    @OptionGroup var common: CommonOptions

    @Option(help: "Keep trying for this many seconds while the database does not answer (a container started beside it; default 0: one try).")
    var wait: Int = 0

    func validate() throws {
        guard (0...3600).contains(wait) else { throw ValidationError("--wait must be 0 to 3600 seconds") }
    }

    func run() async throws {
        let config = try common.load()
        let logger = makeLogger(config)
        let url = try config.resolvedDatabaseURL()
        let database = try await DatabaseFactory.open(url, config: config, logger: logger)
        let applied = try await database.running {
            try await DatabaseWait.untilAnswering(database, seconds: wait, logger: logger)
            return try await HeraldSchema.migrator.migrate(database, logger: logger, deadline: .seconds(30))
        }
        print(applied.isEmpty ? "\(url): schema is up to date" : "\(url): applied migrations \(applied.map(\.description).joined(separator: ", "))")
    }
}

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a signed development token (HS256 with the server's secret).")

    @OptionGroup var common: CommonOptions

    @Option(help: "The user id (the token's sub).")
    var user: String

    @Option(help: "customer, driver, operator or service.")
    var role: String

    @Option(help: "Lifetime: 90s, 30m, 1h, 7d (default 1h).")
    var ttl: String = "1h"

    func validate() throws {
        guard Role(rawValue: role) != nil else { throw ValidationError("--role must be customer, driver, operator or service") }
        guard TokenVerifier.isValidSubject(user) else { throw ValidationError("--user must be 1 to 128 printable characters without spaces") }
        guard let seconds = Self.seconds(ttl), seconds > 0, seconds <= 366 * 86_400 else {
            throw ValidationError("--ttl must look like 90s, 30m, 1h or 7d (at most a year)")
        }
    }

    func run() async throws {
        let config = try common.load()
        let secret = try config.auth.jwtSecret ?? DevelopmentSecret.loadOrCreate(dataDir: config.dataDir)
        let issuer = await TokenIssuer(secret: secret, config: config.auth)
        print(try await issuer.issue(userID: user, role: Role(rawValue: role)!, ttl: TimeInterval(Self.seconds(ttl)!)))
    }

    static func seconds(_ text: String) -> Int? {
        guard let unit = text.last, let number = Int(text.dropLast()) else { return Int(text) }
        switch unit {
        case "s": return number
        case "m": return number * 60
        case "h": return number * 3600
        case "d": return number * 86_400
        default: return nil
        }
    }
}
