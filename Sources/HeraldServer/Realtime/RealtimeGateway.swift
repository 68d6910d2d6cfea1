import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// Wires the realtime hub and its protocols into the HTTP server: Socket.IO long-polling
/// routes, WebSocket upgrades, and the long-lived services (heartbeat, bus, janitor).
public final class RealtimeGateway: Sendable {
    public let hub: RealtimeHub
    public let engine: EngineServer
    public let socketIO: SocketIOServer
    public let services: [any Service]
    let config: RealtimeConfig
    let logger: Logger
    /// Path of the Socket.IO endpoint (`/socket.io/` for Herald; the protocol test server
    /// also serves a raw Engine.IO endpoint).
    let socketIOPath: String

    public init(
        config: RealtimeConfig, database: any Database, verifier: TokenVerifier?, clock: any HeraldClock, logger: Logger,
        socketIOPath: String = "/socket.io"
    ) {
        self.config = config
        self.logger = logger
        self.socketIOPath = socketIOPath
        let hub = RealtimeHub(database: database, clock: clock, logger: logger)
        var services: [any Service] = []
        if let postgres = database as? PostgresDatabase {
            let bus = PostgresBus(hub: hub, client: postgres.client, nodeID: Identifier.make("node"), logger: logger)
            hub.attach(bus: bus)
            services.append(bus)
        } else {
            hub.attach(bus: LocalBus(hub: hub))
        }
        var socketIOConfiguration = SocketIOConfiguration()
        socketIOConfiguration.namespaces = Set(["/"] + config.namespaces)
        socketIOConfiguration.connectTimeout = .milliseconds(config.connectTimeoutMs)
        socketIOConfiguration.requireAuth = config.requireAuth
        socketIOConfiguration.recoveryWindow = .seconds(config.recoveryWindowSeconds)
        let socketIO = SocketIOServer(configuration: socketIOConfiguration, hub: hub, verifier: verifier, logger: logger)
        var engineConfiguration = EngineConfiguration()
        engineConfiguration.pingInterval = .milliseconds(config.pingIntervalMs)
        engineConfiguration.pingTimeout = .milliseconds(config.pingTimeoutMs)
        engineConfiguration.maxPayload = config.maxPayload
        engineConfiguration.outboundLimitBytes = config.outboundLimitBytes
        engineConfiguration.sweepInterval = .milliseconds(max(10, min(250, config.pingTimeoutMs / 4)))
        let engine = EngineServer(configuration: engineConfiguration, clock: clock, logger: logger) { session in
            socketIO.attach(session, clock: clock)
        }
        services.append(engine)
        services.append(
            RealtimeJanitor(
                hub: hub, retention: .seconds(config.historyRetentionSeconds), maxPerRoom: config.historyMaxPerRoom,
                recoveryWindow: .seconds(config.recoveryWindowSeconds), interval: .seconds(60), logger: logger))
        self.hub = hub
        self.engine = engine
        self.socketIO = socketIO
        self.services = services
    }

    var endpoint: EngineEndpoint { EngineEndpoint(path: socketIOPath, engine: engine) }

    static let operations: [APIOperation] = {
        let query: [JSONValue] = [
            ["name": "EIO", "in": "query", "required": true, "schema": ["type": "string", "enum": ["4"]]],
            ["name": "transport", "in": "query", "required": true, "schema": ["type": "string", "enum": ["polling", "websocket"]]],
            ["name": "sid", "in": "query", "required": false, "schema": ["type": "string"]],
        ]
        let errors: [Int: String] = [400: "Engine.IO error: {\"code\", \"message\"} (unknown transport, unknown session, bad request, unsupported version)"]
        return [
            APIOperation(
                "GET", "/socket.io", summary: "Socket.IO (Engine.IO v4): handshake, long-polling, or upgrade to WebSocket",
                description: "Clients (socket.io-client 4, socket.io-client-swift 16, python-socketio) connect here unchanged. A GET without sid opens a session; with sid it long-polls. A GET with Upgrade: websocket becomes a WebSocket. Authenticate in the CONNECT packet's auth payload {\"token\": JWT} (or ?token=).",
                tag: "realtime", access: .public_, response: Schema.string("Engine.IO payload"), enveloped: false, errors: errors, parameters: query),
            APIOperation(
                "POST", "/socket.io", summary: "Socket.IO long-polling: send packets", tag: "realtime", access: .public_,
                response: Schema.string("ok"), enveloped: false, errors: errors, parameters: query),
            APIOperation(
                "PUT", "/socket.io", summary: "Not part of the protocol: answered 400 (Bad handshake method)", tag: "realtime",
                access: .public_, enveloped: false, errors: errors, parameters: query),
        ]
    }()

    func addRoutes(to router: Router<HeraldRequestContext>) {
        endpoint.addRoutes(to: router)
    }

    /// Decides whether a request with `Upgrade: websocket` becomes a WebSocket, and serves it.
    /// Requests it declines fall through to the router, which answers with the reason.
    func shouldUpgrade(_ head: HTTPRequest) async -> ShouldUpgradeResult<EngineEndpoint.UpgradeHandler> {
        if let handler = endpoint.upgradeHandler(for: head) { return .upgrade([:], handler) }
        return .dontUpgrade
    }
}

/// Trims realtime history and forgets expired recoverable sessions, once a minute.
struct RealtimeJanitor: Service {
    let hub: RealtimeHub
    let retention: Duration
    let maxPerRoom: Int
    let recoveryWindow: Duration
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
            let now = hub.clock.now().epochMilliseconds
            let before = now - retention.components.seconds * 1000
            let sessionsBefore = now - recoveryWindow.components.seconds * 1000
            do {
                try await hub.database.withConnection { db in
                    try await RealtimeEventStore().trim(db, before: before, keepPerRoom: maxPerRoom)
                    try await db.raw("DELETE FROM realtime_sessions WHERE updated_at < \(bind: sessionsBefore)").run()
                }
            } catch {
                logger.warning("trimming realtime history failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}
