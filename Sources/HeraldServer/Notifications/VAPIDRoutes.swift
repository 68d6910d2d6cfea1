import HeraldCore
import HeraldPush
import Hummingbird

/// The VAPID public key browsers need for `pushManager.subscribe({applicationServerKey})`.
///
/// Why it is served rather than baked into the web app: the key comes from this server's
/// configuration, and a subscription made with any other key is refused by push services
/// (403) for every push. It is public by design, so the route asks for no token.
struct VAPIDRoutes {
    /// By app id; an app without Web Push has none.
    let publicKeys: [String: String]
    var clock: any HeraldClock = SystemClock()

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/push/vapid-public-key") { request, context in
            let app = request.uri.queryParameters.get("app_id") ?? PushApps.defaultID
            guard let publicKey = publicKeys[app] else { throw APIError.notFound("Web Push is not configured for this app") }
            return try Envelope.response(JSONValue.object(["public_key": .string(publicKey)]), context: context, clock: clock)
        }
    }

    static let operations: [APIOperation] = [
        APIOperation(
            "GET", "/api/v1/push/vapid-public-key", summary: "The VAPID public key for Web Push subscriptions",
            description:
                "Pass it to pushManager.subscribe as applicationServerKey (decode the base64url to bytes first), then register the subscription with POST /api/v1/push/register. No token needed. `app_id` names the app (default: `default`).",
            tag: "push", access: .public_,
            response: Schema.object(["public_key": Schema.string("base64url of the uncompressed P-256 point (65 bytes), no padding")]),
            errors: [404: "Web Push is not configured for this app"],
            parameters: [["name": "app_id", "in": "query", "required": false, "schema": ["type": "string", "maxLength": 64]]])
    ]
}
