import Foundation

/// The native realtime connection (`/api/v1/realtime`), kept up for as long as `run()` runs.
///
/// What it does for the app: subscribes to its channels on every (re)connect, asking for
/// what was missed since the last event id it saw on each (kept in an `EventCursorStore`, so a
/// relaunched app catches up too); reconnects after a drop with exponential backoff and full
/// jitter; asks the token provider for a fresh token when the server said the old one
/// expired or refused the upgrade; acknowledges events that ask for it (a notification the
/// server will otherwise push) once they have been handed to the app.
///
/// Catching up keeps order and hands each event over once: the server puts a connection in
/// the user's own channel at connect, so live events there can arrive before the answer to
/// the catch-up `subscribe`. They are held until that answer; when it says the missed events
/// follow (`recovered`), held events with an id are dropped (the replay brings them again,
/// in order), otherwise they are handed over after it. An event whose id is not newer than
/// the channel's cursor is never handed over twice.
///
/// Why `run()` and not `connect()`: the connection lives exactly as long as the task that
/// runs it (a SwiftUI `.task`, a service's task group), so nothing outlives its owner.
public actor RealtimeConnection {
    let client: HeraldClient
    let cursors: any EventCursorStore
    let backoff: Backoff
    let transport: any RealtimeTransport
    /// Acks events with an `ack_id` once delivered to the app (on by default).
    public var acknowledgesAutomatically = true

    private var channels: [String] = []
    private var send: (@Sendable (String) async throws -> Void)?
    private var refreshToken = false
    /// Channels whose catch-up `subscribe` is unanswered, with the live events held meanwhile.
    private var catchingUp: [String: [RealtimeMessage]] = [:]
    private let listeners = Listeners<RealtimeMessage>()
    private let stateListeners = Listeners<RealtimeState>()
    public private(set) var state: RealtimeState = .stopped

    init(client: HeraldClient, cursors: any EventCursorStore, backoff: Backoff, transport: any RealtimeTransport) {
        self.client = client
        self.cursors = cursors
        self.backoff = backoff
        self.transport = transport
    }

    /// Uses another transport (tests; an app with its own WebSocket stack).
    public init(client: HeraldClient, cursors: any EventCursorStore, backoff: Backoff = Backoff(), using transport: any RealtimeTransport) {
        self.init(client: client, cursors: cursors, backoff: backoff, transport: transport)
    }

    // MARK: What the app reads

    /// Every message from now on (each call gives its own stream; end it by leaving the loop).
    public func messages() -> AsyncStream<RealtimeMessage> {
        listeners.stream(buffering: 1024)
    }

    /// The connection's state as it changes, starting with the current one.
    public func states() -> AsyncStream<RealtimeState> {
        stateListeners.stream(current: state, buffering: 8)
    }

    // MARK: What the app asks

    /// Follows `channel` (`trip:tr_…`, `stop:…`); sent now when connected and again on every
    /// reconnect, with the last event id seen on it.
    public func subscribe(_ channel: String) async {
        guard !channels.contains(channel) else { return }
        channels.append(channel)
        if send != nil { await sendSubscribe(channel) }
    }

    public func unsubscribe(_ channel: String) async {
        channels.removeAll { $0 == channel }
        try? await send?(Self.json(["type": .string("unsubscribe"), "channel": .string(channel)]))
    }

    /// Acknowledges an event that carried `ack_id` (when `acknowledgesAutomatically` is off).
    public func acknowledge(_ ackID: String) async throws {
        guard let send else { throw HeraldClientError.transport("not connected") }
        try await send(Self.json(["type": .string("ack"), "ack_id": .string(ackID)]))
    }

    /// Sends a message of the protocol as it is (`{"type": "mark_read", …}`).
    public func sendMessage(_ message: HeraldJSON) async throws {
        guard let send else { throw HeraldClientError.transport("not connected") }
        try await send(Self.json(message))
    }

    // MARK: The loop

    /// Connects and stays connected until the calling task is cancelled.
    public func run() async {
        var attempt = 0
        while !Task.isCancelled {
            setState(.connecting)
            let started = ContinuousClock.now
            do {
                let token = try await client.tokens.token(forceRefresh: refreshToken)
                refreshToken = false
                try await transport.connect(url: realtimeURL(token: token)) { inbound, send in
                    await self.opened(send)
                    for try await text in inbound { await self.received(text) }
                }
            } catch is CancellationError {
                break
            } catch {
                // A refused upgrade is most often an expired token: ask for a fresh one next.
                refreshToken = true
            }
            send = nil
            // Held events were not handed over and advanced no cursor: the next catch-up brings them.
            catchingUp = [:]
            if Task.isCancelled { break }
            if ContinuousClock.now - started >= backoff.resetAfter { attempt = 0 }
            let delay = backoff.delay(attempt: attempt)
            attempt += 1
            setState(.waiting(retryIn: delay))
            do { try await Task.sleep(for: delay) } catch { break }
        }
        send = nil
        setState(.stopped)
    }

    func realtimeURL(token: String) -> URL {
        var components = URLComponents(url: client.url("/api/v1/realtime"), resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        components.queryItems = [URLQueryItem(name: "token", value: token)]
        return components.url!
    }

    private func opened(_ send: @escaping @Sendable (String) async throws -> Void) async {
        self.send = send
        setState(.connected)
        for channel in channels { await sendSubscribe(channel) }
    }

    private func sendSubscribe(_ channel: String) async {
        var message: [String: HeraldJSON] = ["type": .string("subscribe"), "channel": .string(channel)]
        if let last = cursors.lastEventID(channel: channel) {
            message["last_event_id"] = .string(last)
            catchingUp[channel] = catchingUp[channel] ?? []
        }
        try? await send?(Self.json(.object(message)))
    }

    /// Answers of the protocol itself, as opposed to events published to a channel.
    private static let protocolTypes: Set<String> = ["connected", "subscribed", "unsubscribed", "error", "state_sync", "pong", "sync"]

    private func received(_ text: String) async {
        guard let raw = try? JSONDecoder().decode(HeraldJSON.self, from: Data(text.utf8)), let message = RealtimeMessage(raw) else { return }
        if let channel = message.channel, !Self.protocolTypes.contains(message.type), catchingUp[channel] != nil {
            catchingUp[channel]?.append(message)
            return
        }
        var released: [RealtimeMessage] = []
        switch message.type {
        case "connected":
            // The server put the connection in the user's own channel: catch up on it if this
            // app saw events there before.
            if case .array(let joined)? = raw["channels"] {
                for case .string(let channel) in joined where !channels.contains(channel) && cursors.lastEventID(channel: channel) != nil {
                    await sendSubscribe(channel)
                }
            }
        case "error" where message.errorCode == "TOKEN_EXPIRED":
            refreshToken = true
        case "subscribed", "error":
            if let channel = message.channel, let held = catchingUp.removeValue(forKey: channel) {
                let replayFollows = message.type == "subscribed" && raw["recovered"] != .bool(false)
                released = replayFollows ? held.filter { $0.eventID == nil } : held
            }
        default:
            break
        }
        await handOver(message)
        for held in released { await handOver(held) }
    }

    private func handOver(_ message: RealtimeMessage) async {
        if let eventID = message.eventID, let channel = message.channel {
            if let seq = Self.seq(eventID), let last = cursors.lastEventID(channel: channel).flatMap(Self.seq), seq <= last {
                // Seen already (a replay overlapping what came live): acknowledged, not repeated.
                if acknowledgesAutomatically, let ackID = message.ackID { try? await acknowledge(ackID) }
                return
            }
            listeners.yield(message)
            cursors.save(eventID: eventID, channel: channel)
        } else {
            listeners.yield(message)
        }
        if acknowledgesAutomatically, let ackID = message.ackID { try? await acknowledge(ackID) }
    }

    /// The sequence number in an event id (`evt_42` → 42); nil for ids of another shape.
    static func seq(_ eventID: String) -> Int64? {
        guard eventID.hasPrefix("evt_") else { return nil }
        return Int64(eventID.dropFirst(4))
    }

    private func setState(_ new: RealtimeState) {
        state = new
        stateListeners.yield(new)
    }

    static func json(_ value: HeraldJSON) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
