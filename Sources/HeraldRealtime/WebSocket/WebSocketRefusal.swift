import HeraldCore

/// The HTTP answer to a refused upgrade.
public struct WebSocketRefusal: Sendable {
    public var status: Int
    public var body: String

    public init(status: Int, body: String) {
        self.status = status
        self.body = body
    }

    /// Herald's error envelope.
    public static func error(_ status: Int, code: ErrorCode, message: String) -> WebSocketRefusal {
        var json = JSONWriter()
        json.ascii(#"{"error":{"code":"#)
        json.write(string: code.rawValue)
        json.ascii(#","message":"#)
        json.write(string: message)
        json.ascii("}}")
        return WebSocketRefusal(status: status, body: json.string)
    }

    /// An upgrade to no WebSocket endpoint (or with a protocol version or transport it does not serve).
    public static let notFound = error(404, code: .notFound, message: "No WebSocket endpoint here.")
}
