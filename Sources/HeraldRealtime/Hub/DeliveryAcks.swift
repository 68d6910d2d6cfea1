/// Whether a client acknowledges the deliveries that ask for it, as it says in its handshake.
///
/// Why a client may decline: a notification sent over a socket waits for the app's ack and
/// is pushed if none comes within `notifications.ack_timeout_ms` (the app was backgrounded
/// with its socket open). The notification design's apps were written for a server that
/// never asks: they never acknowledge, so every notification reached them twice, on the
/// screen and again as a push, the opposite of that design's "no push while the app is
/// open". Such a client connects with `acks: false` (Socket.IO `auth`) or `?acks=false`
/// (either protocol's query), and gets the design's rule instead: a delivery handed to its
/// live socket is delivered. What it gives up is the fallback for a socket that is open but
/// no longer read.
public enum DeliveryAcks {
    /// True unless `auth.acks` is `false` or the query's `acks` is `false`/`0`/`no`.
    public static func acknowledges(auth: SocketValue?, query: [String: String]) -> Bool {
        if case .object(let fields)? = auth, case .bool(false)? = fields["acks"] { return false }
        if let text = query["acks"]?.lowercased(), ["false", "0", "no"].contains(text) { return false }
        return true
    }
}
