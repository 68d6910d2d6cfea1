import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldSchema
import HeraldStorage
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// The parts of a running Herald that tests and commands reach for besides HTTP.
public struct HeraldRuntime: Sendable {
    public let config: HeraldConfig
    public let database: any Database
    public let verifier: TokenVerifier
    /// The HS256 secret in force (configured, or the development secret from the data dir).
    public let jwtSecret: String
    public let metrics: HeraldMetrics
    public let clock: any HeraldClock
    public let operations: [APIOperation]

    /// Every operation the server answers under `/api/v1`, as the OpenAPI document and the
    /// generated `docs/api-reference.md` list them.
    public static func operations(_ config: HeraldConfig) -> [APIOperation] {
        SystemRoutes.operations + DocsRoutes.operations + MeRoutes.operations + RealtimeGateway.operations + RealtimeRoutes.operations
            + NotificationModule.operations(config.notifications) + DispatchModule.operations + TripsModule.operations + TransitModule.operations
            + ConsoleModule.operations
    }
    /// Every route the router serves, as `"METHOD /path/{param}"`.
    public let routes: [String]
    /// The realtime hub and protocols (publish to rooms, Socket.IO handlers).
    public let realtime: RealtimeGateway
    /// The inbox, sending and push delivery.
    public let notifications: NotificationModule
    /// Drivers, jobs, offers and claims.
    public let dispatch: DispatchModule
    /// Ride requests, trips and live tracking.
    public let trips: TripsModule
    /// GTFS timetables, realtime, favourites and alerts.
    public let transit: TransitModule
}

public enum HeraldApplication {
    public static let version = "0.1.0"

    /// Builds the whole server from its configuration: opens the database (migrated before the
    /// server accepts connections), sets up auth, middleware, routes and long-lived services.
    /// `extraRoutes` adds routes under `/api/v1` behind the full middleware chain (embedders
    /// and tests use it).
    public static func build(
        config: HeraldConfig,
        clock: any HeraldClock = SystemClock(),
        logger: Logger,
        extraRoutes: (RouterGroup<HeraldRequestContext>) -> Void = { _ in },
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) async throws -> (application: some ApplicationProtocol, runtime: HeraldRuntime) {
        let problems = config.validationErrors()
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }

        // Everything that can fail on configuration alone comes before the database is opened,
        // so a bad secret or JWKS file stops start-up without leaving a connection behind.
        let databaseURL = try config.resolvedDatabaseURL()
        let secret = try config.auth.jwtSecret ?? DevelopmentSecret.loadOrCreate(dataDir: config.dataDir)
        let (verifier, remoteKeys) = try await makeVerifier(config.auth, secret: secret, clock: clock, logger: logger)
        let database = try await DatabaseFactory.open(databaseURL, config: config, logger: logger)
        let metrics = HeraldMetrics()

        let operations = HeraldRuntime.operations(config)
        let router = Router(context: HeraldRequestContext.self)
        let cors = CORSPolicy(config.cors, development: config.auth.jwtSecret == nil && config.auth.jwksFile == nil && config.auth.jwksURL == nil)
        if config.tracing.isEnabled {
            // Outermost: the request's span covers every other middleware.
            router.add(middleware: TraceContextMiddleware())
        }
        router.add(middleware: RequestIDMiddleware(trustForwardedFor: config.server.trustForwardedFor))
        router.add(middleware: HTTPMetricsMiddleware(metrics: metrics))
        router.add(middleware: CrossOriginMiddleware(policy: cors, clock: clock))
        let recentErrors = RecentErrors()
        router.add(middleware: ErrorEnvelopeMiddleware(clock: clock, errors: recentErrors))
        router.add(middleware: MethodGuardMiddleware())
        // Opened once the migrations ran (`beforeServerStarts`): every service that touches a
        // table waits for it.
        let schemaReady = StartupGate()
        let realtime = RealtimeGateway(
            config: config.realtime, database: database, verifier: verifier, clock: clock, logger: logger, schemaReady: schemaReady)
        let notifications = try await NotificationModule(
            config: config, database: database, realtime: realtime, schemaReady: schemaReady, clock: clock, logger: logger)
        let dispatch = DispatchModule(
            config: config, database: database, realtime: realtime, notifications: notifications, schemaReady: schemaReady, clock: clock, logger: logger)
        let trips = TripsModule(
            config: config, database: database, realtime: realtime, notifications: notifications, dispatch: dispatch, schemaReady: schemaReady,
            clock: clock, logger: logger)
        let transit = TransitModule(
            config: config, database: database, realtime: realtime, notifications: notifications, schemaReady: schemaReady, clock: clock,
            logger: logger)
        SystemRoutes(
            database: database, metrics: metrics, realtime: realtime, notifications: notifications, dispatch: dispatch, trips: trips, transit: transit
        ).addRoutes(to: router)
        realtime.addRoutes(to: router)
        let console = ConsoleModule(
            realtime: realtime, dispatch: dispatch, trips: trips, notifications: notifications, errors: recentErrors, clock: clock)
        console.addPageRoutes(to: router)

        let api = router.group("/api/v1")
        api.add(
            middleware: BodyLimitMiddleware(
                maxBodyBytes: config.limits.maxBodyBytes, binaryRoutes: TransitModule.binaryRoutes(config.transit),
                plainTextJSONRoutes: ["POST /api/v1/push/register"]))
        api.add(middleware: AppVersionGateMiddleware(config: config.appVersions))
        api.add(middleware: AuthenticationMiddleware(verifier: verifier, users: UserDirectory(database: database, clock: clock)))
        let rateLimits = RateLimitGate(config: config.rateLimits, limiter: RateLimiter(), clock: clock)
        api.add(middleware: RateLimitMiddleware(gate: rateLimits))
        api.add(middleware: CredentialCheckMiddleware(operations: operations))
        api.add(
            middleware: IdempotencyMiddleware(
                database: database, config: config.idempotency, maxBodyBytes: config.limits.maxBodyBytes, clock: clock))
        DocsRoutes(document: OpenAPIDocument.build(operations, version: version), operations: operations).addRoutes(to: api)
        MeRoutes(database: database, clock: clock, timeZones: notifications.service.timeZones).addRoutes(to: api)
        RealtimeRoutes(gateway: realtime, maxPayload: config.realtime.maxPayload).addRoutes(to: api)
        realtime.addNativeRoutes(to: api)
        notifications.addRoutes(to: api)
        dispatch.addRoutes(to: api)
        trips.addRoutes(to: api, rateLimits: rateLimits)
        transit.addRoutes(to: api)
        console.addRoutes(to: api)
        extraRoutes(api)
        let routes = router.routes.map { "\($0.method.rawValue) \($0.path)" }

        var services: [any Service] = [DatabaseCloser(database: database)]
        if let remoteKeys { services.append(remoteKeys) }
        if let databaseService = database.service { services.append(databaseService) }
        services.append(IdempotencyJanitor(database: database, clock: clock, interval: .seconds(300), logger: logger))
        services.append(contentsOf: realtime.services)
        services.append(contentsOf: notifications.services)
        services.append(contentsOf: dispatch.services)
        services.append(contentsOf: trips.services)
        services.append(contentsOf: transit.services)
        services.append(console.feed)

        let connectionLimit = ConnectionLimit.resolve(
            configured: config.server.maxConnections, descriptors: ConnectionLimit.raiseDescriptorLimit(),
            databaseConnections: config.database.maxConnections + config.database.backgroundConnections)
        logger.info("accepting at most \(connectionLimit.limit) connections at once", metadata: ["reserved_descriptors": "\(connectionLimit.reserve)"])
        var application = Application(
            router: router,
            server: RealtimeHTTPChannel.builder(
                limits: WebSocketLimits(config.realtime, requestHeadTimeoutMs: config.server.requestHeadTimeoutMs), origins: cors, server: config.server,
                connectionLimit: connectionLimit.limit
            ) { uri, authorization in
                await realtime.decide(uri: uri, authorization: authorization)
            },
            configuration: .init(
                address: .hostname(config.server.host, port: config.server.port), serverName: "Herald",
                backlog: ConnectionLimit.listenBacklog(),
                availableConnectionsDelegate: MaximumAvailableConnections(connectionLimit.limit, logger: logger)),
            services: services,
            onServerRunning: { channel in
                WebSocketPipeline.prepareSharedEventLoops()
                await ConnectionLimit.acceptOneAtATime(channel)
                await onServerRunning(channel)
            },
            logger: logger
        )
        application.beforeServerStarts {
            try await HeraldSchema.migrator.migrate(database, logger: logger, deadline: .seconds(30))
            schemaReady.open()
            // The feeds load in the transit reload loop once the node listens (a calendar or
            // a feed that takes minutes must not keep /healthz unanswered); /readyz says
            // `loading` and transit answers 503 TIMETABLE_NOT_LOADED until then.
        }
        let runtime = HeraldRuntime(
            config: config, database: database, verifier: verifier, jwtSecret: secret,
            metrics: metrics, clock: clock, operations: operations, routes: routes, realtime: realtime,
            notifications: notifications, dispatch: dispatch, trips: trips, transit: transit)
        return (application, runtime)
    }
}

extension HeraldApplication {
    /// The token verifier for `auth`, and the service that keeps a provider's keys fresh when
    /// they come from `auth.jwks_url`. A JWKS file that cannot be read or used is a
    /// configuration error naming `auth.jwks_file`; a JWKS URL that does not answer is not
    /// (the provider may be down for a moment): the node starts, says so in its log, and
    /// fetches again until it has keys.
    static func makeVerifier(_ auth: AuthConfig, secret: String, clock: any HeraldClock, logger: Logger) async throws -> (TokenVerifier, RemoteJWKS?) {
        if let url = auth.jwksURL {
            let remote = RemoteJWKS(url: url, minRefetch: .seconds(auth.jwksMinRefetchSeconds), logger: logger)
            await remote.refresh()
            return (try await TokenVerifier(hmacSecret: secret, jwks: nil, remoteKeys: remote, settings: .init(auth), clock: clock), remote)
        }
        var jwks: String?
        if let path = auth.jwksFile {
            do {
                jwks = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ConfigurationError(problems: [FieldError(field: "auth.jwks_file", message: "cannot be read: \(path)")])
            }
        }
        do {
            return (try await TokenVerifier(hmacSecret: secret, jwks: jwks, settings: .init(auth), clock: clock), nil)
        } catch {
            throw ConfigurationError(problems: [FieldError(field: "auth.jwks_file", message: "is not a usable JWKS: \(error)")])
        }
    }
}

/// The configuration cannot run a server; each problem names its config path.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let problems: [FieldError]
    public var description: String {
        "invalid configuration:\n" + problems.map { "  \($0.field): \($0.message)" }.joined(separator: "\n")
    }
}
