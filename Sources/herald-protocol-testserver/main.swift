// The gateway configured as the official Socket.IO protocol test suites expect
// (socketio/engine.io-protocol and socketio/socket.io-protocol, `test-suite/`):
// a raw Engine.IO echo endpoint at /engine.io/, Socket.IO at /socket.io/ with the `/` and
// `/custom` namespaces, `message` and `message-with-ack` handlers, no auth, ping 300/200 ms,
// connect timeout 1 s. Not part of `herald serve`; run it with `scripts/protocol-suites`.
//
//   swift run herald-protocol-testserver [PORT]      (default 3000)

import Foundation
import HeraldCore
import HeraldRealtime
import HeraldSchema
import HeraldServer
import HeraldStorage
import Hummingbird
import Logging

/// Echoes every message back as the same kind (text or binary).
final class EchoDelegate: EngineSessionDelegate {
    func engineSession(_ session: EngineSession, didReceiveText text: String) async { session.sendMessage(text) }
    func engineSession(_ session: EngineSession, didReceiveBinary bytes: [UInt8]) async { session.sendBinary(bytes) }
    func engineSessionDidClose(_ session: EngineSession, reason: EngineCloseReason) async {}
}

let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 3000
EventLoopThreads.configure()  // as `herald serve` sizes them
var logger = Logger(label: "protocol-testserver")
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning

let database = try await SQLiteDatabase.open(path: ":memory:", logger: logger)
try await HeraldSchema.migrator.migrate(database, logger: logger)
let clock = SystemClock()
let hub = RealtimeHub(database: database, clock: clock, logger: logger)
_ = ClusterBusFactory.attach(to: hub, database: database, nodeID: "protocol-testserver", logger: logger)

var engineConfiguration = EngineConfiguration()
engineConfiguration.pingInterval = .milliseconds(300)
engineConfiguration.pingTimeout = .milliseconds(200)
engineConfiguration.sweepInterval = .milliseconds(10)

let echo = EchoDelegate()
let rawEngine = EngineServer(configuration: engineConfiguration, clock: clock, logger: logger) { session in
    session.delegate = echo
}

var socketConfiguration = SocketIOConfiguration()
socketConfiguration.namespaces = ["/", "/custom"]
socketConfiguration.requireAuth = false
socketConfiguration.recoveryEnabled = false
socketConfiguration.connectTimeout = .milliseconds(1000)
let socketIO = SocketIOServer(configuration: socketConfiguration, hub: hub, verifier: nil, nodeID: "protocol-testserver", logger: logger)
for namespace in ["/", "/custom"] {
    socketIO.onConnect(namespace: namespace) { socket in
        socket.emit("auth", [socket.handshakeAuth])
    }
}
socketIO.on("message") { socket, arguments, _ in
    socket.emit("message-back", arguments)
}
socketIO.on("message-with-ack") { _, arguments, ack in
    ack?.reply(arguments)
}
let socketEngine = EngineServer(configuration: engineConfiguration, clock: clock, logger: logger) { session in
    socketIO.attach(session, clock: clock)
}

let endpoints = [EngineEndpoint(path: "/engine.io", engine: rawEngine), EngineEndpoint(path: "/socket.io", engine: socketEngine)]
let router = Router()
for endpoint in endpoints { endpoint.addRoutes(to: router) }

// The suites run outside any browser: any origin may connect.
var anyOrigin = CORSConfig()
anyOrigin.allowedOrigins = ["*"]
let app = Application(
    router: router,
    server: RealtimeHTTPChannel.builder(
        // The reference suite connects without tokens and sends messages up to 1 MB.
        limits: WebSocketLimits(maxMessageBytes: 1_000_000, unauthenticatedMaxMessageBytes: 1_000_000, partialMessageTimeout: .seconds(10)),
        origins: CORSPolicy(anyOrigin, development: false)
    ) { uri, _ in
        endpoints.lazy.compactMap { $0.decide(uri: uri) }.first ?? .refuse(.notFound)
    },
    configuration: .init(address: .hostname("127.0.0.1", port: port)),
    services: [rawEngine, socketEngine],
    onServerRunning: { _ in print("protocol test server listening on http://localhost:\(port)") },
    logger: logger
)
try await app.runService()
await database.close()
