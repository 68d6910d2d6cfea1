import Foundation
import HeraldAuth
import HeraldCore
import Logging
import ServiceLifecycle
import Synchronization

/// The native WebSocket protocol of the rideshare tracking design, served at `/api/v1/realtime?token=…`.
///
/// Client → server: `subscribe {channel, last_event_id?}`, `unsubscribe {channel}`,
/// `reconnect {last_event_id, channel (or an id field a channel's owner registered, such as
/// the trips module's `trip_id`), client_state}`, `ping`, and domain messages
/// (e.g. `location`) handled by the module that registered them. Server → client: events
/// `{type, event_id, channel, payload}`, `subscribed`, `unsubscribed`, `state_sync`, `pong`
/// and `error {code, message}`.
public final class NativeRealtimeServer: Service, Sendable {
    public typealias MessageHandler = @Sendable (NativeConnection, [String: JSONValue]) async -> Void

    public struct Configuration: Sendable {
        public var outboundLimitBytes = 1_048_576
        public var messagesPerSecond = 10
        public var maxMessageBytes = 1_000_000
        /// Channels one connection may follow besides its own user room.
        public var maxChannels = 100
        public init() {}
    }

    public let hub: RealtimeHub
    public let policy: ChannelPolicy
    let configuration: Configuration
    let logger: Logger
    private let handlers = Mutex<[String: MessageHandler]>([:])
    private let providers = Mutex<[String: StateSyncProvider]>([:])
    private let connectHandlers = Mutex<[@Sendable (NativeConnection) async -> Void]>([])
    private let connections = Mutex<[UInt64: NativeConnection]>([:])
    private let counter = Atomic<UInt64>(0)

    public init(hub: RealtimeHub, policy: ChannelPolicy, configuration: Configuration, logger: Logger) {
        self.hub = hub
        self.policy = policy
        self.configuration = configuration
        self.logger = logger
    }

    /// Handles client messages of `type` (a domain module's, such as `location`).
    public func on(_ type: String, _ handler: @escaping MessageHandler) {
        handlers.withLock { $0[type] = handler }
    }

    /// Runs after a connection is set up and told `connected` (e.g. to send it a `sync`).
    public func onConnect(_ handler: @escaping @Sendable (NativeConnection) async -> Void) {
        connectHandlers.withLock { $0.append(handler) }
    }

    /// Supplies the domain fields of `state_sync` for channels `prefix:…`.
    public func stateSync(prefix: String, _ provider: @escaping StateSyncProvider) {
        providers.withLock { $0[prefix] = provider }
    }

    public var connectionCount: Int { connections.withLock { $0.count } }

    // MARK: Serving a connection

    /// The receiver of an authenticated WebSocket: registers the connection, puts it in its
    /// user's room and says `connected`, then handles its messages in order.
    /// `acknowledgesDeliveries`: false for a client that connected with `?acks=false`.
    public func accept(identity: Identity, transport: any WebSocketTransport, acknowledgesDeliveries: Bool = true) -> any WebSocketReceiver {
        let connection = NativeConnection(
            connectionID: counter.wrappingAdd(1, ordering: .relaxed).newValue | (1 << 61), identity: identity,
            outboundLimit: configuration.outboundLimitBytes, messagesPerSecond: configuration.messagesPerSecond,
            now: hub.clock.now(), acknowledgesDeliveries: acknowledgesDeliveries)
        connections.withLock { $0[connection.connectionID] = connection }
        hub.register(connection)
        let socket = NativeWebSocket(server: self, connection: connection, transport: transport)
        transport.attach(connection.queue)
        return socket
    }

    /// The first thing a connection's mailbox does.
    func start(_ connection: NativeConnection) async {
        let userRoom = RoomName.user(connection.identity.userID)
        if let base = try? await hub.lastSeq(room: userRoom) {
            connection.follow(userRoom, after: base)
            hub.join(connection, room: userRoom)
        }
        connection.send([
            "type": "connected", "user_id": .string(connection.identity.userID), "role": .string(connection.identity.role.rawValue),
            "channels": [.string(userRoom)],
        ])
        for handler in connectHandlers.withLock({ $0 }) { await handler(connection) }
    }

    /// The last: the connection is gone.
    func finish(_ connection: NativeConnection) {
        hub.unregister(connection)
        if connection.queue.closeReason == .slowConsumer { hub.counters.add(.slowDisconnects) }
        connections.withLock { $0[connection.connectionID] = nil }
        connection.markClosed()
    }

    func handle(_ text: String, from connection: NativeConnection) async {
        hub.counters.add(.messagesIn)
        // Backends (services, operators) publish at their own rate; the budget is for clients.
        let backend = connection.identity.role == .service || connection.identity.role == .operator
        if !backend, let wait = connection.admitMessage(now: hub.clock.now()) {
            connection.sendError(.rateLimited, "Too many messages; slow down.", extra: ["retry_after_ms": .number(Double(wait))])
            return
        }
        // The protocol's own parser (the Socket.IO one): several times faster than
        // Foundation's on the small messages a location stream is made of.
        guard text.utf8.count <= configuration.maxMessageBytes, case .success(let parsed) = JSONParser.parse(Substring(text)),
            case .object(let message) = parsed.json, case .string(let type)? = message["type"]
        else {
            connection.sendError(.invalidMessage, "Messages are JSON objects with a \"type\".")
            return
        }
        switch type {
        case "subscribe": await subscribe(message, connection)
        case "unsubscribe": unsubscribe(message, connection)
        case "reconnect": await reconnect(message, connection)
        case "ping": connection.send(["type": "pong"])
        case "ack":
            // {"type":"ack","ack_id":…} for an event that carried an ack_id.
            guard case .string(let ackID)? = message["ack_id"], let token = connection.takeAck(ackID) else {
                connection.sendError(.unknownAck, "No delivery with this ack_id is waiting for an ack.")
                return
            }
            await hub.acknowledge(token)
        default:
            if let handler = handlers.withLock({ $0[type] }) {
                await handler(connection, message)
            } else {
                connection.sendError(.unknownType, "Unknown message type.", extra: ["message_type": .string(String(type.prefix(64)))])
            }
        }
    }

    /// Checks the channel name and the caller's right to it; sends the error itself.
    private func authorized(_ channel: JSONValue?, _ connection: NativeConnection) async -> String? {
        guard case .string(let name)? = channel, (1...200).contains(name.utf8.count),
            name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else {
            connection.sendError(.invalidChannel, "A channel is a name like trip:tr_4e5f.")
            return nil
        }
        if !connection.isSubscribed(name), connection.channels.filter({ $0 != RoomName.user(connection.identity.userID) }).count >= configuration.maxChannels {
            let refusal = ChannelPolicy.tooManyChannels(configuration.maxChannels)
            connection.sendError(refusal.code, refusal.message, extra: ["channel": .string(name)])
            return nil
        }
        do {
            guard try await policy.mayAccess(connection.identity, channel: name) else {
                connection.sendError(.forbidden, "You may not subscribe to this channel.", extra: ["channel": .string(name)])
                return nil
            }
        } catch let refusal as ChannelPolicy.Refusal {
            connection.sendError(refusal.code, refusal.message, extra: ["channel": .string(name)])
            return nil
        } catch {
            logger.error("channel authorisation failed", metadata: ["error": "\(String(reflecting: error))"])
            connection.sendError(.internalError, "Try again later.", extra: ["channel": .string(name)])
            return nil
        }
        return name
    }

    private func lastEventSeq(_ value: JSONValue?, _ connection: NativeConnection) -> Int64?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .string(let id)?:
            if let seq = RealtimeEvent.seq(fromEventID: id) { return .some(seq) }
        case .number(let number)? where number >= 0 && number.rounded() == number && number < 9e15:
            return .some(Int64(number))
        default: break
        }
        connection.sendError(.invalidEventID, "last_event_id looks like evt_123.")
        return nil
    }

    /// `{"channel": …, "last_event_id"?: …}`, or the notification design's `{"user_id": …}`, which names the
    /// user's own room `user:{id}` (joined at connect, so it only confirms) or, for callers the
    /// channel policy lets in, another user's.
    private func subscribe(_ message: [String: JSONValue], _ connection: NativeConnection) async {
        var named = message["channel"]
        if named == nil, let user = message["user_id"] {
            guard case .string(let id) = user else {
                connection.sendError(.invalidChannel, "user_id is a user id.")
                return
            }
            named = .string(RoomName.user(id))
        }
        let ownRoom = RoomName.user(connection.identity.userID)
        if named == .string(ownRoom), message["last_event_id"] == nil, connection.isSubscribed(ownRoom) {
            connection.send(["type": "subscribed", "status": "subscribed", "channel": .string(ownRoom)])
            return
        }
        guard let channel = await authorized(named, connection) else { return }
        guard let last = lastEventSeq(message["last_event_id"], connection) else { return }
        do {
            let (events, recovered, latest) = try await join(channel, after: last, connection)
            var reply: [String: JSONValue] = ["type": "subscribed", "status": "subscribed", "channel": .string(channel)]
            reply["replay_from"] = events.first?.eventID.map(JSONValue.string) ?? .null
            reply["latest_event_id"] = latest > 0 ? .string("evt_\(latest)") : .null
            if last != nil { reply["recovered"] = .bool(recovered) }
            connection.send(.object(reply))
            for event in events { connection.send(NativeConnection.frame(event)) }
            connection.completeReplay(channel)
        } catch {
            connection.completeReplay(channel)
            logger.error("subscribe failed", metadata: ["error": "\(String(reflecting: error))"])
            connection.sendError(.internalError, "Try again later.", extra: ["channel": .string(channel)])
        }
    }

    /// Joins the channel (before reading its history, so nothing slips between) and returns
    /// what to send: the missed events plus live ones that arrived meanwhile. Live events stay
    /// held until the caller has sent these and calls `completeReplay`.
    private func join(_ channel: String, after last: Int64?, _ connection: NativeConnection) async throws -> ([RealtimeEvent], Bool, Int64) {
        if connection.isSubscribed(channel) { connection.forget(channel) }
        guard let last else {
            let latest = try await hub.lastSeq(room: channel)
            connection.follow(channel, after: latest)
            hub.join(connection, room: channel)
            return ([], true, latest)
        }
        connection.beginReplay(channel, after: last)
        hub.join(connection, room: channel)
        let result = try await hub.replay(room: channel, after: last)
        let latest = try await hub.lastSeq(room: channel)
        switch result {
        case .recovered(let events):
            return (connection.drainReplay(channel, replayed: events), true, latest)
        case .unavailable:
            return (connection.drainReplay(channel, replayed: nil), false, latest)
        }
    }

    private func unsubscribe(_ message: [String: JSONValue], _ connection: NativeConnection) {
        guard case .string(let channel)? = message["channel"], connection.isSubscribed(channel) else {
            connection.sendError(.notSubscribed, "You are not subscribed to this channel.")
            return
        }
        connection.forget(channel)
        hub.leave(connection, room: channel)
        connection.send(["type": "unsubscribed", "channel": .string(channel)])
    }

    /// `reconnect` → `state_sync {channel, current_state, missed_events, recovered, …}`: the
    /// missed events inline, plus whatever the channel's owner supplies (the latest driver
    /// location is always there for a trip, even when history was trimmed).
    private func reconnect(_ message: [String: JSONValue], _ connection: NativeConnection) async {
        var channelValue = message["channel"]
        if channelValue == nil, let aliased = policy.channel(aliasedIn: message) { channelValue = .string(aliased) }
        guard let channel = await authorized(channelValue, connection) else { return }
        guard let last = lastEventSeq(message["last_event_id"], connection) else { return }
        await sendStateSync(channel, after: last ?? 0, clientState: message["client_state"], connection)
    }

    /// Sends a connection `channel`'s `state_sync` with `reason: "connect"`, no missed events
    /// and `latest_event_id`, without subscribing it. The domain calls it when a connection
    /// opens, for the channels the user is part of (an app that lost its trip id finds its
    /// live trip); the caller has decided the user may follow `channel`.
    ///
    /// Why not subscribed: native clients choose their channels, and one that resubscribes
    /// with its own `last_event_id` would get twice what a server-made subscription had
    /// already sent it. The app subscribes (or sends `reconnect`) from `latest_event_id`, and
    /// misses nothing.
    public func syncState(of channel: String, to connection: NativeConnection) async {
        await sendStateSync(channel, after: nil, clientState: nil, connection, subscribing: false, extra: ["reason": "connect", "recovered": false])
    }

    private func sendStateSync(
        _ channel: String, after last: Int64?, clientState: JSONValue?, _ connection: NativeConnection, subscribing: Bool = true,
        extra: [String: JSONValue] = [:]
    ) async {
        do {
            let (events, recovered, latest) = subscribing ? try await join(channel, after: last, connection) : ([], false, try await hub.lastSeq(room: channel))
            var reply: [String: JSONValue] = [
                "type": "state_sync", "channel": .string(channel), "current_state": .null, "recovered": .bool(recovered),
                "latest_event_id": latest > 0 ? .string("evt_\(latest)") : .null,
            ]
            reply.merge(extra) { _, new in new }
            let prefix = channel.split(separator: ":", maxSplits: 1).first.map(String.init) ?? channel
            if let provider = providers.withLock({ $0[prefix] }) {
                for (key, value) in try await provider(connection.identity, channel, clientState) where key != "type" {
                    reply[key] = value
                }
            }
            var text = SocketPacketEncoder.json(.object(reply))
            // missed_events carries the events exactly as they are sent live.
            text.removeLast()
            text += ",\"missed_events\":[" + events.map { NativeConnection.frame($0) }.joined(separator: ",") + "]}"
            connection.send(text)
            if subscribing { connection.completeReplay(channel) }
        } catch {
            if subscribing { connection.completeReplay(channel) }
            logger.error("reconnect failed", metadata: ["error": "\(String(reflecting: error))"])
            connection.sendError(.internalError, "Try again later.", extra: ["channel": .string(channel)])
        }
    }

    // MARK: Token expiry

    /// Closes connections whose token has expired (the client refreshes it and reconnects).
    public func run() async throws {
        await PeriodicLoop.run(every: .seconds(1), start: .afterInterval, cancellingRound: false) {
            let now = self.hub.clock.now().timeIntervalSince1970
            let expired = self.connections.withLock { $0.values.filter { $0.identity.expiresAt <= now } }
            for connection in expired {
                connection.sendError(.tokenExpired, "Your token expired; reconnect with a fresh one.")
                connection.queue.close()
            }
        }
        for connection in connections.withLock({ Array($0.values) }) {
            connection.sendError(.serverClosing, "The server is restarting; reconnect.")
            connection.queue.close()
        }
    }
}
