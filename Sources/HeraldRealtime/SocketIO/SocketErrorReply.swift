import HeraldCore

/// The answer to a Socket.IO event that failed: `{"status": "error", "code", "message"}`.
///
/// Why one builder: the gateway's, the inbox's and the dispatch module's events all answer
/// failures, and a client switches on one shape and one set of codes (`ErrorCode`).
public enum SocketErrorReply {
    public static func json(_ code: ErrorCode, _ message: String, details: JSONValue? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["status": "error", "code": .string(code.rawValue), "message": .string(message)]
        if let details { object["details"] = details }
        return .object(object)
    }

    /// The answer to an event that failed with an `APIError` (its code, message and details).
    public static func json(_ failure: APIError) -> JSONValue {
        json(failure.code, failure.message, details: failure.details)
    }

    /// The answer to an event that failed inside the server: no detail reaches the client.
    public static let internalError = json(.internalError, "Try again later.")
}
