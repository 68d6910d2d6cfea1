import HeraldAuth
import HeraldCore
import HeraldRealtime
import Logging

/// Publishing over a native WebSocket, for backends that publish a lot: one connection
/// instead of a request per event, and a batch per message.
///
/// `{"type":"publish","ref":…,"room":…,"event":…,"payload":…,"persist":…}` publishes one
/// event and `{"type":"publish","ref":…,"events":[…]}` a batch, with the same fields, rules
/// and limits as `POST /realtime/publish` and `/realtime/publish/batch`. The answer is
/// `{"type":"published","ref":…}` with the event's `room`, `event`, `event_id` and `seq`
/// (or `events`, in the order given), or an `error` carrying the same `ref`, a stable `code`
/// and, for a wrong field, `fields`. Only services and operators may publish; their
/// connections are not held to the per-client message rate (see `NativeRealtimeServer`).
enum NativePublishing {
    static func add(to native: NativeRealtimeServer, hub: RealtimeHub, maxPayload: Int, logger: Logger) {
        native.on("publish") { connection, message in
            var reply: [String: JSONValue] = [:]
            switch message["ref"] {
            case nil, .null?: break
            case .string(let ref)? where ref.utf8.count <= 100: reply["ref"] = .string(ref)
            case .number(let ref)? where ref.isFinite: reply["ref"] = .number(ref)
            default:
                connection.reply(errorMessage(.validation(field: "ref", "must be a string of at most 100 bytes or a number"), reply))
                return
            }
            guard connection.identity.role == .service || connection.identity.role == .operator else {
                connection.reply(errorMessage(.forbidden("Only services and operators may publish."), reply))
                return
            }
            do {
                reply["type"] = "published"
                if message["events"] != nil {
                    let events = try await hub.publish(try Publication.readBatch(message["events"], maxPayload: maxPayload))
                    reply["events"] = .array(events.map { .object(RealtimeRoutes.describe($0)) })
                } else {
                    let event = try await hub.publish(try Publication.read(message, maxPayload: maxPayload))
                    reply.merge(RealtimeRoutes.describe(event)) { _, new in new }
                }
                connection.reply(.object(reply))
            } catch let failure as APIError {
                connection.reply(errorMessage(failure, reply))
            } catch {
                logger.error("native publish failed", metadata: ["error": "\(String(reflecting: error))"])
                connection.reply(errorMessage(APIError(status: 500, code: .internalError, message: "The event could not be published."), reply))
            }
        }
    }

    /// The protocol's error message for `failure`, keeping the caller's `ref`.
    private static func errorMessage(_ failure: APIError, _ reply: [String: JSONValue]) -> JSONValue {
        var object: [String: JSONValue] = ["type": "error", "code": .string(failure.code.rawValue), "message": .string(failure.message)]
        object["ref"] = reply["ref"]
        if case .object(let details)? = failure.details, let fields = details["fields"] { object["fields"] = fields }
        return .object(object)
    }
}
