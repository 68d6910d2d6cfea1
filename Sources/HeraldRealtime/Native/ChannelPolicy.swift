import HeraldAuth
import HeraldCore
import Synchronization

/// Who may subscribe to which channel. Domain modules own their prefixes (`trip:` is the
/// trips module's: a rider may subscribe only to their own trip) and register a rule here.
///
/// Built in: `user:{id}` and `presence:{id}` belong to that user; services and operators may
/// subscribe to anything. A channel whose prefix no module claims is refused for everyone
/// else, so a new channel kind is private until its owner says otherwise.
public final class ChannelPolicy: Sendable {
    public typealias Rule = @Sendable (Identity, _ channel: String) async throws -> Bool

    /// Thrown by a rule that refuses for a reason the client should read (a limit), not
    /// because the channel is not theirs; both protocols answer with its code.
    public struct Refusal: Error, Sendable, Equatable {
        public var code: ErrorCode
        public var message: String

        public init(code: ErrorCode, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// The refusal of a connection that already follows `limit` channels.
    public static func tooManyChannels(_ limit: Int) -> Refusal {
        Refusal(
            code: .tooManyChannels,
            message: "A connection follows at most \(limit) channels (realtime.max_channels_per_connection): unsubscribe from some first.")
    }

    private let rules = Mutex<[String: Rule]>([:])
    /// Message fields that name a channel by its id (`trip_id` → `trip:{id}`), by field.
    private let aliases = Mutex<[String: String]>([:])

    public init() {}

    /// Registers the rule for channels named `prefix:…`.
    public func allow(prefix: String, _ rule: @escaping Rule) {
        rules.withLock { $0[prefix] = rule }
    }

    /// Lets clients name a `prefix:{id}` channel by `field: id` in a message, as the owner's
    /// original protocol does (the rideshare design's `reconnect {trip_id}`).
    public func alias(field: String, prefix: String) {
        aliases.withLock { $0[field] = prefix }
    }

    /// The channel a message names through a registered alias field, if any.
    public func channel(aliasedIn message: [String: JSONValue]) -> String? {
        for (field, prefix) in aliases.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            if case .string(let id)? = message[field] { return "\(prefix):\(id)" }
        }
        return nil
    }

    public func mayAccess(_ identity: Identity, channel: String) async throws -> Bool {
        if identity.role == .service || identity.role == .operator { return true }
        guard let colon = channel.firstIndex(of: ":") else { return false }
        let prefix = String(channel[..<colon])
        let rest = channel[channel.index(after: colon)...]
        if prefix == "user" || prefix == "presence" { return rest == identity.userID }
        guard let rule = rules.withLock({ $0[prefix] }) else { return false }
        return try await rule(identity, channel)
    }
}

/// Supplies the domain part of a `state_sync` answer (the trip's current state, the driver's
/// latest location) for channels of one prefix.
public typealias StateSyncProvider = @Sendable (Identity, _ channel: String, _ clientState: JSONValue?) async throws -> [String: JSONValue]
