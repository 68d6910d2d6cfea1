import Foundation
import HeraldAuth
import HeraldCore
import HeraldStorage
import Logging
import ServiceLifecycle
import Synchronization

/// Socket.IO v5: namespaces, CONNECT with a token, events and acks both ways, binary, and
/// connection state recovery, on the Engine.IO server and the realtime hub.
///
/// Domain modules use `onConnect` to join sockets to their rooms and `on(_:)` to handle
/// client events; they publish through the hub, which every protocol delivers.
public final class SocketIOServer: Sendable {
    public typealias ConnectHandler = @Sendable (SocketIOSocket) async -> Void
    public typealias EventHandler = @Sendable (SocketIOSocket, _ arguments: [SocketValue], _ ack: SocketIOAck?) async -> Void

    public let configuration: SocketIOConfiguration
    public let hub: RealtimeHub
    let verifier: TokenVerifier?
    let logger: Logger
    let sessions: RecoverableSessionStore
    /// Disconnects sockets whose token expired; run it as a service.
    public let tokenExpiry: SocketIOTokenExpiry
    private let handlers = Mutex<(connect: [String: [ConnectHandler]], events: [String: [String: EventHandler]])>(([:], [:]))
    private let connectionCounter = Atomic<UInt64>(0)

    /// Writes live sockets' sessions and expires old ones; run it as a service.
    public var sessionWriter: any Service { sessions }

    /// - Parameter nodeID: this node's id in the cluster (its live sockets' sessions carry it).
    public init(configuration: SocketIOConfiguration, hub: RealtimeHub, verifier: TokenVerifier?, nodeID: String, logger: Logger) {
        self.configuration = configuration
        self.hub = hub
        self.verifier = verifier
        self.logger = logger
        sessions = RecoverableSessionStore(
            database: hub.database, clock: hub.clock, nodeID: nodeID, recoveryWindow: configuration.recoveryWindow, logger: logger)
        tokenExpiry = SocketIOTokenExpiry(clock: hub.clock)
    }

    /// Runs when a socket connects to `namespace` (also after a recovery, with `recovered` set).
    public func onConnect(namespace: String = "/", _ handler: @escaping ConnectHandler) {
        handlers.withLock { $0.connect[namespace, default: []].append(handler) }
    }

    /// Handles the client event `event` in `namespace`.
    public func on(_ event: String, namespace: String = "/", _ handler: @escaping EventHandler) {
        handlers.withLock { $0.events[namespace, default: [:]][event] = handler }
    }

    func connectHandlers(_ namespace: String) -> [ConnectHandler] {
        handlers.withLock { $0.connect[namespace] ?? [] }
    }

    func eventHandler(_ namespace: String, _ event: String) -> EventHandler? {
        handlers.withLock { $0.events[namespace]?[event] }
    }

    func nextConnectionID() -> UInt64 {
        connectionCounter.wrappingAdd(1, ordering: .relaxed).newValue | (1 << 62)
    }

    /// Takes over a new Engine.IO session.
    public func attach(_ session: EngineSession, clock: any HeraldClock) {
        let client = SocketIOClient(server: self, session: session)
        session.delegate = client
        session.setDeadline(clock.now().epochMilliseconds + EngineConfiguration.milliseconds(configuration.connectTimeout))
    }

    // MARK: Auth

    enum ConnectDecision {
        case accepted(Identity?)
        case refused(String)
    }

    func authenticate(auth: SocketValue?, query: [String: String]) async -> ConnectDecision {
        var token: String?
        if case .object(let object)? = auth, case .string(let value)? = object["token"] { token = value }
        if token == nil { token = query["token"] }
        guard let token, !token.isEmpty else {
            return configuration.requireAuth ? .refused("Authentication is required.") : .accepted(nil)
        }
        guard let verifier else {
            // No token checking configured: the auth payload is application data.
            return configuration.requireAuth ? .refused("Tokens are not accepted here.") : .accepted(nil)
        }
        do {
            return .accepted(try await verifier.verify(token))
        } catch {
            return .refused(error.message)
        }
    }
}

/// Replies to a client event that asked for an acknowledgement.
public struct SocketIOAck: Sendable {
    let send: @Sendable ([SocketValue]) -> Void
    public func callAsFunction(_ arguments: SocketValue...) { send(arguments) }
    public func reply(_ arguments: [SocketValue]) { send(arguments) }
}
