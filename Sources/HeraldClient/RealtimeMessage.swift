/// One message from the server on the native realtime protocol: an event published to a
/// channel (`type` is the event's name, with `event_id`, `channel`, `payload` and, when the
/// server waits for one, `ack_id`), or a protocol answer (`connected`, `subscribed`, `sync`,
/// `error`…) whose fields are in `raw`.
public struct RealtimeMessage: Sendable, Equatable {
    public let type: String
    public let channel: String?
    public let eventID: String?
    public let ackID: String?
    public let payload: HeraldJSON?
    /// The whole message as it came.
    public let raw: HeraldJSON

    init?(_ raw: HeraldJSON) {
        guard let type = raw["type"]?.string else { return nil }
        self.type = type
        channel = raw["channel"]?.string
        eventID = raw["event_id"]?.string
        ackID = raw["ack_id"]?.string
        payload = raw["payload"]
        self.raw = raw
    }

    /// The error code of an `error` message (`RATE_LIMITED`, `FORBIDDEN`, `TOKEN_EXPIRED`…).
    public var errorCode: String? { type == "error" ? raw["code"]?.string : nil }
}
