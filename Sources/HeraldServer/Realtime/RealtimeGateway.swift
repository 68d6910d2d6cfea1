import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Wires the realtime hub and its protocols into the HTTP server: Socket.IO long-polling
/// routes, WebSocket upgrades, and the long-lived services (heartbeat, bus, janitor).
public final class RealtimeGateway: Sendable {
    public let hub: RealtimeHub
    public let engine: EngineServer
    public let socketIO: SocketIOServer
    public let presence: PresenceService
    public let native: NativeRealtimeServer
    /// Who may subscribe to which channel (domain modules register their prefixes).
    public let channels: ChannelPolicy
    let verifier: TokenVerifier?
    public let nodeID: String
    public let services: [any Service]
    let config: RealtimeConfig
    let logger: Logger
    /// Path of the Socket.IO endpoint (`/socket.io/` for Herald; the protocol test server
    /// also serves a raw Engine.IO endpoint).
    let socketIOPath: String

    public init(
        config: RealtimeConfig, database: any Database, verifier: TokenVerifier?, clock: any HeraldClock, logger: Logger,
        schemaReady: StartupGate, socketIOPath: String = "/socket.io"
    ) {
        self.config = config
        self.logger = logger
        self.socketIOPath = socketIOPath
        let hub = RealtimeHub(database: database, clock: clock, logger: logger, schemaReady: schemaReady)
        let nodeID = Identifier.make("node", length: 12)
        var services: [any Service] = []
        if let bus = ClusterBusFactory.attach(to: hub, database: database, nodeID: nodeID, logger: logger) { services.append(bus) }
        var socketIOConfiguration = SocketIOConfiguration()
        socketIOConfiguration.namespaces = Set(["/"] + config.namespaces)
        socketIOConfiguration.connectTimeout = .milliseconds(config.connectTimeoutMs)
        socketIOConfiguration.requireAuth = config.requireAuth
        socketIOConfiguration.recoveryWindow = .seconds(config.recoveryWindowSeconds)
        let socketIO = SocketIOServer(configuration: socketIOConfiguration, hub: hub, verifier: verifier, nodeID: nodeID, logger: logger)
        var engineConfiguration = EngineConfiguration()
        engineConfiguration.pingInterval = .milliseconds(config.pingIntervalMs)
        engineConfiguration.pingTimeout = .milliseconds(config.pingTimeoutMs)
        engineConfiguration.maxPayload = config.maxPayload
        engineConfiguration.outboundLimitBytes = config.outboundLimitBytes
        // The heartbeat sweep looks at every session, so it runs no more often than its
        // deadlines need: a quarter of the shortest (pong or CONNECT), at most once a second
        // (pings then go out up to 1 s after they are due; 10,000 idle sessions cost ~5 ms a sweep).
        engineConfiguration.sweepInterval = .milliseconds(max(10, min(1000, min(config.pingTimeoutMs, config.connectTimeoutMs) / 4)))
        let engine = EngineServer(configuration: engineConfiguration, clock: clock, logger: logger, counters: hub.counters) { session in
            socketIO.attach(session, clock: clock)
        }
        services.append(engine)
        let presence = PresenceService(hub: hub, nodeID: nodeID, logger: logger)
        hub.onPresenceChange { _, _ in presence.changed() }
        services.append(presence)
        Self.addBuiltInEvents(to: socketIO, nodeID: nodeID)
        let channels = ChannelPolicy()
        var nativeConfiguration = NativeRealtimeServer.Configuration()
        nativeConfiguration.outboundLimitBytes = config.outboundLimitBytes
        nativeConfiguration.messagesPerSecond = config.clientMessagesPerSecond
        nativeConfiguration.maxMessageBytes = config.maxPayload
        nativeConfiguration.maxChannels = config.maxChannelsPerConnection
        Self.addChannelEvents(to: socketIO, policy: channels, maxChannels: config.maxChannelsPerConnection, logger: logger)
        let native = NativeRealtimeServer(hub: hub, policy: channels, configuration: nativeConfiguration, logger: logger)
        NativePublishing.add(to: native, hub: hub, maxPayload: config.maxPayload, logger: logger)
        services.append(native)
        services.append(socketIO.tokenExpiry)
        services.append(socketIO.sessionWriter)
        services.append(
            RealtimeJanitor(
                hub: hub, retention: .seconds(config.historyRetentionSeconds), maxPerRoom: config.historyMaxPerRoom,
                interval: .seconds(60), logger: logger))
        self.hub = hub
        self.engine = engine
        self.socketIO = socketIO
        self.presence = presence
        self.native = native
        self.channels = channels
        self.verifier = verifier
        self.nodeID = nodeID
        self.services = services
    }

    /// Client events every Herald server answers: `whoami` (ack: user, role, rooms, recovered,
    /// and the node holding the connection, as `/readyz` names it) and `echo` (ack: the same
    /// arguments, for round-trip checks).
    static func addBuiltInEvents(to socketIO: SocketIOServer, nodeID: String) {
        socketIO.on("whoami") { socket, _, ack in
            ack?(
                .object([
                    "user_id": socket.userID.map(SocketValue.string) ?? .null,
                    "role": socket.identity.map { .string($0.role.rawValue) } ?? .null,
                    "rooms": .array(socket.rooms.map(SocketValue.string)),
                    "recovered": .bool(socket.recovered),
                    "node": .string(nodeID),
                ]))
        }
        socketIO.on("echo") { _, arguments, ack in
            ack?.reply(arguments)
        }
    }

    /// Channels for Socket.IO clients, as the native protocol has them: `subscribe
    /// {channel}` joins a channel the caller may follow (the module owning its prefix decides)
    /// and acks `{status: "subscribed", channel}`; `unsubscribe {channel}` leaves it. Without a
    /// channel, `subscribe` answers as it always has: every socket is already in `user:{id}`.
    static func addChannelEvents(to socketIO: SocketIOServer, policy: ChannelPolicy, maxChannels: Int, logger: Logger) {
        // `{channel}`, or the notification design's `{user_id}` naming `user:{id}`; neither: the caller's own room.
        @Sendable func channel(_ arguments: [SocketValue]) -> String?? {
            guard case .object(let object)? = arguments.first?.json else { return .some(nil) }
            if object["channel"] == nil, let user = object["user_id"] {
                guard case .string(let id) = user, (1...128).contains(id.utf8.count) else { return nil }
                return .some(RoomName.user(id))
            }
            guard let value = object["channel"] else { return .some(nil) }
            guard case .string(let name) = value, (1...200).contains(name.utf8.count),
                name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }), !name.hasPrefix("$")
            else { return nil }
            return .some(name)
        }
        @Sendable func error(_ code: ErrorCode, _ message: String) -> SocketValue {
            SocketValue(SocketErrorReply.json(code, message))
        }
        socketIO.on("subscribe") { socket, arguments, ack in
            guard let identity = socket.identity else {
                ack?(error(.unauthorized, "Connect with a token."))
                return
            }
            guard let requested = channel(arguments) else {
                ack?(error(.invalidChannel, "A channel is a name like stop:200060."))
                return
            }
            let userRoom = RoomName.user(identity.userID)
            guard let name = requested, name != userRoom else {
                ack?(.object(["status": .string("subscribed"), "room": .string(userRoom)]))
                return
            }
            if !socket.rooms.contains(name), socket.rooms.filter({ $0 != userRoom }).count >= maxChannels {
                let refusal = ChannelPolicy.tooManyChannels(maxChannels)
                ack?(error(refusal.code, refusal.message))
                return
            }
            do {
                guard try await policy.mayAccess(identity, channel: name) else {
                    ack?(error(.forbidden, "You may not subscribe to this channel."))
                    return
                }
                try await socket.join(name)
                ack?(.object(["status": .string("subscribed"), "channel": .string(name)]))
            } catch let refusal as ChannelPolicy.Refusal {
                ack?(error(refusal.code, refusal.message))
            } catch {
                logger.error("subscribing a socket failed", metadata: ["error": "\(String(reflecting: error))"])
                ack?(SocketValue(SocketErrorReply.internalError))
            }
        }
        socketIO.on("unsubscribe") { socket, arguments, ack in
            guard case .some(.some(let name)) = channel(arguments), socket.rooms.contains(name), name != RoomName.user(socket.userID ?? "") else {
                ack?(error(.notSubscribed, "You are not subscribed to this channel."))
                return
            }
            socket.leave(name)
            ack?(.object(["status": .string("unsubscribed"), "channel": .string(name)]))
        }
    }

    var endpoint: EngineEndpoint { EngineEndpoint(path: socketIOPath, engine: engine) }

    static let operations: [APIOperation] = {
        let query: [JSONValue] = [
            ["name": "EIO", "in": "query", "required": true, "schema": ["type": "string", "enum": ["4"]]],
            ["name": "transport", "in": "query", "required": true, "schema": ["type": "string", "enum": ["polling", "websocket"]]],
            ["name": "sid", "in": "query", "required": false, "schema": ["type": "string"]],
        ]
        let engineError = "#/components/schemas/EngineError"
        let errors: [Int: String] = [400: "Engine.IO error: {\"code\", \"message\"} (unknown transport, unknown session, bad request, unsupported version)"]
        return [
            APIOperation(
                "GET", "/socket.io", summary: "Socket.IO (Engine.IO v4): handshake, long-polling, or upgrade to WebSocket",
                description:
                    "Clients (socket.io-client 4, socket.io-client-swift 16, python-socketio) connect here unchanged. A GET without sid opens a session; with sid it long-polls. A GET with Upgrade: websocket becomes a WebSocket. Authenticate in the CONNECT packet's auth payload {\"token\": JWT} (or ?token=).",
                tag: "realtime", access: .public_, response: Schema.string("Engine.IO payload"), enveloped: false, errors: errors, parameters: query,
                contentType: "text/plain", errorSchemaRef: engineError),
            APIOperation(
                "POST", "/socket.io", summary: "Socket.IO long-polling: send packets", tag: "realtime", access: .public_,
                response: Schema.string("ok"), enveloped: false, errors: errors, parameters: query,
                contentType: "text/plain", errorSchemaRef: engineError),
            APIOperation(
                "GET", "/api/v1/realtime", summary: "Native realtime protocol (WebSocket): channels, replay, state sync",
                description:
                    "Upgrade to WebSocket with ?token=<JWT>. Client messages: subscribe {channel, last_event_id?}, unsubscribe {channel}, reconnect {last_event_id, trip_id|channel, client_state}, ping. Server messages: events {type, event_id, channel, payload}, subscribed {channel, replay_from, latest_event_id, recovered?}, state_sync, pong, error {code, message}.",
                tag: "realtime", access: .public_, enveloped: true,
                errors: [401: "Missing or refused token (`UNAUTHORIZED`)", 426: "Not a WebSocket upgrade (`UPGRADE_REQUIRED`)"],
                parameters: [["name": "token", "in": "query", "required": true, "schema": ["type": "string"]]]),
            APIOperation(
                "PUT", "/socket.io", summary: "Not part of the protocol: answered 400 (Bad handshake method)", tag: "realtime",
                access: .public_, enveloped: false, errors: errors, parameters: query, contentType: "text/plain", errorSchemaRef: engineError),
        ]
    }()

    static let nativePath = "/api/v1/realtime"

    /// The realtime counters and gauges in Prometheus text format.
    func renderMetrics() -> String {
        var text = ""
        func gauge(_ name: String, _ help: String, _ value: Int) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
        }
        gauge("herald_realtime_connections", "Realtime connections on this node (both protocols).", hub.connectionCount)
        gauge("herald_realtime_engine_sessions", "Engine.IO sessions on this node.", engine.sessionCount)
        gauge("herald_realtime_native_connections", "Native WebSocket connections on this node.", native.connectionCount)
        gauge(
            "herald_realtime_fanout_pending", "Events waiting for their fan-out on this node (publishers wait above \(RealtimeHub.fanOutLimit)).",
            hub.pendingFanOuts)
        for counter in RealtimeCounters.Counter.allCases {
            text += "# TYPE \(counter.metricName) counter\n\(counter.metricName) \(hub.counters.value(counter))\n"
        }
        return text
    }

    func addRoutes(to router: Router<HeraldRequestContext>) {
        endpoint.addRoutes(to: router)
    }

    /// `GET /api/v1/realtime` without an upgrade (or with a refused token): say why.
    func addNativeRoutes(to api: RouterGroup<HeraldRequestContext>) {
        let verifier = self.verifier
        api.get("/realtime") { request, _ -> Response in
            let query = QueryString.split(request.uri.description).query
            guard let token = query["token"] ?? Self.bearer(request.headers[.authorization]), let verifier else {
                throw APIError.unauthorized("Connect with ?token=<JWT> (or an Authorization header).")
            }
            do {
                _ = try await verifier.verify(token)
            } catch let failure as AuthFailure {
                throw APIError.unauthorized(failure.message)
            }
            throw APIError(status: 426, code: .upgradeRequired, message: "This endpoint speaks WebSocket: send Upgrade: websocket.")
        }
    }

    static func bearer(_ header: String?) -> String? {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// Decides whether a request with `Upgrade: websocket` becomes a WebSocket, and if not,
    /// what to answer.
    func decide(uri: String, authorization: String?) async -> WebSocketDecision {
        if let decision = endpoint.decide(uri: uri) { return decision }
        let (path, query) = QueryString.split(uri)
        let normalized = path.hasSuffix("/") ? path.dropLast() : path
        guard normalized == Self.nativePath else { return .refuse(.notFound) }
        guard let verifier, let token = query["token"] ?? Self.bearer(authorization) else {
            return .refuse(.error(401, code: .unauthorized, message: "Connect with ?token=<JWT> (or an Authorization header)."))
        }
        let identity: Identity
        do {
            identity = try await verifier.verify(token)
        } catch {
            return .refuse(.error(401, code: .unauthorized, message: error.message))
        }
        let native = self.native
        let acks = DeliveryAcks.acknowledges(auth: nil, query: query)
        return .accept { transport in native.accept(identity: identity, transport: transport, acknowledgesDeliveries: acks) }
    }
}
