import Foundation
import HeraldCore
import HeraldRealtime
import Logging
import ServiceLifecycle

/// The notification design's socket events on both realtime protocols.
///
/// Server → client: `notification`, `notification_read`, `notifications_bulk_read`, `sync`
/// (also sent on connect). Client → server: `resync {last_sync_at?}`, `mark_read {notification_id}`,
/// `bulk_read {notification_ids}`, `get_unread_count`. On Socket.IO answers are acks; on the
/// native protocol they are messages `{type: "sync" | "mark_read_result" |
/// "bulk_read_result" | "unread_count" | "subscribed", request_id?}`.
public struct NotificationSocketEvents: Sendable {
    let inbox: NotificationInbox
    let logger: Logger

    public init(inbox: NotificationInbox, logger: Logger) {
        self.inbox = inbox
        self.logger = logger
    }

    public static let maxBulkIDs = 500

    enum Answer {
        case sync(JSONValue)
        case reply(JSONValue)
    }

    /// Handles one client request; `nil` user never reaches here.
    func answer(_ event: String, userID: String, _ argument: JSONValue?) async -> Answer? {
        let object: [String: JSONValue] = if case .object(let o)? = argument { o } else { [:] }
        do {
            switch event {
            case "resync":
                var since: Int64?
                if case .string(let text)? = object["last_sync_at"] {
                    guard let date = Timestamp.parse(text) else {
                        return .reply(SocketErrorReply.json(.invalidArgument, "last_sync_at must be an ISO 8601 time"))
                    }
                    since = date.epochMilliseconds
                }
                return .sync(try await inbox.syncPayload(userID: userID, since: since))
            case "mark_read":
                guard case .string(let id)? = object["notification_id"], (1...128).contains(id.utf8.count) else {
                    return .reply(SocketErrorReply.json(.invalidArgument, "notification_id is required"))
                }
                guard try await inbox.markRead(userID: userID, id: id) != nil else {
                    return .reply(SocketErrorReply.json(.notFound, "No such notification."))
                }
                return .reply(["status": "ok", "notification_id": .string(id)])
            case "bulk_read":
                guard case .array(let values)? = object["notification_ids"], !values.isEmpty, values.count <= Self.maxBulkIDs else {
                    return .reply(SocketErrorReply.json(.invalidArgument, "notification_ids must be a list of 1 to \(Self.maxBulkIDs) ids"))
                }
                let ids = values.compactMap { value -> String? in if case .string(let s) = value { s } else { nil } }
                guard ids.count == values.count else { return .reply(SocketErrorReply.json(.invalidArgument, "notification_ids must be strings")) }
                let changed = try await inbox.markRead(userID: userID, ids: ids)
                return .reply(["status": "ok", "updated": .number(Double(changed.count))])
            case "get_unread_count":
                return .reply(["count": .number(Double(try await inbox.unreadCount(userID: userID)))])
            default:
                return nil
            }
        } catch {
            logger.error("notification socket event failed", metadata: ["event": "\(event)", "error": "\(String(reflecting: error))"])
            return .reply(SocketErrorReply.internalError)
        }
    }

    /// (`subscribe` is the realtime gateway's: channels on both protocols.)
    static let events = ["resync", "mark_read", "bulk_read", "get_unread_count"]

    /// Registers the handlers on both protocols.
    public func install(socketIO: SocketIOServer, native: NativeRealtimeServer) {
        let this = self
        socketIO.onConnect { socket in
            // A recovered socket got exactly what it missed; a sync would only repeat it.
            guard let user = socket.userID, socket.namespace == "/", !socket.recovered else { return }
            if let payload = try? await this.inbox.syncPayload(userID: user, since: nil) {
                socket.emit("sync", [SocketValue(payload)])
            }
        }
        for event in Self.events {
            socketIO.on(event) { socket, arguments, ack in
                guard let user = socket.userID else {
                    ack?(SocketValue(SocketErrorReply.json(.unauthorized, "Connect with a token.")))
                    return
                }
                switch await this.answer(event, userID: user, arguments.first?.json) {
                case .sync(let payload)?:
                    socket.emit("sync", [SocketValue(payload)])
                    ack?(SocketValue(payload))
                case .reply(let payload)?:
                    ack?(SocketValue(payload))
                case nil:
                    break
                }
            }
        }
        native.onConnect { connection in
            guard let payload = try? await this.inbox.syncPayload(userID: connection.identity.userID, since: nil),
                case .object(var object) = payload
            else { return }
            object["type"] = "sync"
            connection.reply(.object(object))
        }
        let replyTypes = [
            "mark_read": "mark_read_result", "bulk_read": "bulk_read_result",
            "get_unread_count": "unread_count",
        ]
        for event in Self.events {
            native.on(event) { connection, message in
                let answer = await this.answer(event, userID: connection.identity.userID, .object(message))
                var object: [String: JSONValue]
                switch answer {
                case .sync(let payload)?:
                    guard case .object(let o) = payload else { return }
                    object = o
                    object["type"] = "sync"
                case .reply(let payload)?:
                    guard case .object(let o) = payload else { return }
                    object = o
                    object["type"] = .string(replyTypes[event] ?? event)
                case nil:
                    return
                }
                if let requestID = message["request_id"] { object["request_id"] = requestID }
                connection.reply(.object(object))
            }
        }
    }
}

/// Falls back to push for socket deliveries whose ack did not come in time (also those left
/// waiting by a crash: the deadline is in the database).
public struct AckFallbackService: Service {
    let service: NotificationService
    let interval: Duration
    let ready: @Sendable () async -> Bool

    public init(service: NotificationService, interval: Duration, ready: @escaping @Sendable () async -> Bool) {
        self.service = service
        self.interval = interval
        self.ready = ready
    }

    public func run() async throws {
        guard await ready() else { return }
        // Cancelled by a shutdown (each fallback is its own transaction: nothing half-done).
        let service = self.service
        await PeriodicLoop.run(every: interval, start: .immediately, logger: service.logger, failure: "ack fallback round failed") {
            _ = try await service.fallBackOverdueAcks()
        }
    }
}
