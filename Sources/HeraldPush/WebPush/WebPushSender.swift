import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1

/// Sends pushes to browsers' push services (RFC 8030), encrypted for the subscription
/// (RFC 8291) and signed with our VAPID key (RFC 8292).
///
/// The endpoint is the device token, so there is no base URL: each subscription names its
/// push service (FCM, Mozilla autopush, Apple, WNS) and the VAPID audience follows it.
public final class WebPushSender: PushSender {
    /// RFC 8030 lets a push service cap TTL; 28 days is what the major services keep at most.
    public static let maxTTL = 2_419_200

    let vapid: VAPIDKey
    let subject: String
    let http: PushHTTP
    let clock: any HeraldClock
    let requestTimeout: Duration

    /// Throws when the VAPID key or subject is unusable, so a bad configuration stops startup
    /// instead of dead-lettering every web push.
    public init(config: WebPushConfig, http: PushHTTP, clock: any HeraldClock, requestTimeout: Duration = .seconds(10)) throws {
        try VAPIDKey.validateSubject(config.subject)
        vapid = try VAPIDKey(config: config)
        subject = config.subject
        self.http = http
        self.clock = clock
        self.requestTimeout = requestTimeout
    }

    /// What browsers pass to `pushManager.subscribe({applicationServerKey})`.
    public var vapidPublicKey: String { vapid.publicKeyBase64URL }

    public func send(_ message: PushMessage) async throws -> PushResult {
        guard let p256dh = message.webpushP256dh, let auth = message.webpushAuth else {
            return .refused(.webPush(.missingSubscriptionKeys))
        }
        guard let userAgentKey = WebPushBase64URL.decode(p256dh), let authSecret = WebPushBase64URL.decode(auth) else {
            return .refused(.webPush(.invalidSubscriptionKeys))
        }
        let now = clock.now()
        let body: Data
        let authorization: String
        do {
            authorization = try vapid.authorization(endpoint: message.token, subject: subject, now: now)
            body = try WebPushEncryption.encrypt(
                plaintext: try Self.plaintext(for: message), userAgentPublicKey: userAgentKey, authSecret: authSecret)
        } catch WebPushError.payloadTooLarge {
            return .refused(.webPush(.payloadTooLarge))
        } catch let error as WebPushError {
            // A bad key or endpoint will not get better by retrying.
            return .refused(.webPush(.invalidSubscription("\(error)")))
        }

        var request = HTTPClientRequest(url: message.token)
        request.method = .POST
        request.headers = Self.headers(for: message, authorization: authorization, now: now)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await http.execute(request, timeout: requestTimeout)
        return Self.classify(response, now: clock.now())
    }

    // MARK: - Request

    static func headers(for message: PushMessage, authorization: String, now: Date) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Encoding", value: "aes128gcm")
        headers.add(name: "Content-Type", value: "application/octet-stream")
        headers.add(name: "TTL", value: String(ttl(expiresAt: message.expiresAt, now: now)))
        headers.add(name: "Urgency", value: urgency(severity: message.severity, interruptionLevel: message.interruptionLevel))
        if let topic = topic(collapseKey: message.replacementKey) {
            headers.add(name: "Topic", value: topic)
        }
        headers.add(name: "Authorization", value: authorization)
        return headers
    }

    /// Seconds the push service should keep the message for an offline browser. RFC 8030
    /// requires the header; without an expiry we ask for the longest services keep.
    static func ttl(expiresAt: Int64?, now: Date) -> Int {
        guard let expiresAt else { return maxTTL }
        let remaining = expiresAt - now.epochMilliseconds
        guard remaining > 0 else { return 0 }
        return Int(min(Int64(maxTTL), (remaining + 999) / 1000))
    }

    /// RFC 8030 §5.3. `high` lets the push service wake a sleeping device, so it is kept for
    /// what the sender marked urgent; a `passive` interruption level says nothing is pressing,
    /// which is `low`. `info` stays `normal`: services may hold `low` until the device is on
    /// power and Wi-Fi, too late for an ordinary notification.
    static func urgency(severity: Severity, interruptionLevel: InterruptionLevel?) -> String {
        if severity == .alert || interruptionLevel?.isUrgent == true { return "high" }
        if interruptionLevel == .passive { return "low" }
        return "normal"
    }

    /// The `Topic` that makes a newer push replace an undelivered older one (RFC 8030 §5.4).
    ///
    /// A topic is at most 32 characters of the base64url alphabet. A collapse key that fits is
    /// sent as it is; any other key is mapped to base64url(SHA-256(key)[0..<24]), exactly 32
    /// characters and stable across nodes and restarts, so it collapses the same way (two keys
    /// would have to collide in 192 bits of SHA-256 to share a topic).
    static func topic(collapseKey: String) -> String? {
        guard !collapseKey.isEmpty else { return nil }
        if collapseKey.utf8.count <= 32, collapseKey.utf8.allSatisfy(WebPushBase64URL.isDigit) { return collapseKey }
        return WebPushBase64URL.encode(Data(SHA256.hash(data: Data(collapseKey.utf8)).prefix(24)))
    }

    // MARK: - Payload

    /// The JSON a service worker reads with `event.data.json()`: `notification.title`,
    /// `notification.body`, `notification.tag` (the collapse key, so a newer notification
    /// replaces the shown one), the app's `data`, and the unread count as `badge`.
    ///
    /// `badge` is top-level, not in `notification`: there the Notifications API reads it as an
    /// image URL, and a service worker passing `notification` to `showNotification` as options
    /// would load a URL named "3". `body` and `tag` are omitted when absent because JavaScript
    /// would turn a null into the text "null".
    ///
    /// Why it may shrink: one Web Push message carries at most 3993 bytes of plaintext while a
    /// notification's data may be 16 KiB. A message that does not fit keeps what the user sees:
    /// first `data` is cut down to Herald's keys and `type` (`PushDataKeys`), then the body is shortened
    /// (ending in "…"), and `truncated: true` tells the service worker to fetch the rest from
    /// the inbox. Only a payload that cannot fit even then is refused.
    static func plaintext(for message: PushMessage, limit: Int = WebPushEncryption.maxPlaintextSize) throws -> Data {
        let full = try payload(message, body: message.body, data: message.data, truncated: false)
        if full.count <= limit { return full }
        let keep = [PushDataKeys.notificationID, PushDataKeys.notificationType, PushDataKeys.type]
        let herald = PushDataKeys.adding(to: message.data.objectValue ?? [:], notificationID: message.notificationID, type: message.type)
        let slimData = herald.filter { keep.contains($0.key) }
        var body = message.body
        var slim = try payload(message, body: body, data: .object(slimData), truncated: true)
        while slim.count > limit, let current = body, !current.isEmpty {
            body = PushText.shorten(current, toBytes: current.utf8.count - (slim.count - limit))
            slim = try payload(message, body: body, data: .object(slimData), truncated: true)
        }
        guard slim.count <= limit else { throw WebPushError.payloadTooLarge(plaintextBytes: full.count, limit: limit) }
        return slim
    }

    private static func payload(_ message: PushMessage, body: String?, data: JSONValue, truncated: Bool) throws -> Data {
        var notification: [String: JSONValue] = ["title": .string(message.title)]
        if let body { notification["body"] = .string(body) }
        if !message.replacementKey.isEmpty { notification["tag"] = .string(message.replacementKey) }
        // The Notifications API's `silent` option, for the service worker to pass through.
        if message.interruptionLevel == .passive { notification["silent"] = true }
        var object: [String: JSONValue] = [
            "notification": .object(notification), "data": data, "notification_id": .string(message.notificationID),
            "type": .string(message.type), "badge": .number(Double(message.badge)),
        ]
        if truncated { object["truncated"] = .bool(true) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(JSONValue.object(object))
    }

    // MARK: - Answer

    /// How a push service's answer maps to the worker's outcomes (RFC 8030 §5 and the major
    /// services' documented statuses).
    ///
    /// 404 and 410 mean the subscription expired or was revoked: the device goes. 413 is a
    /// payload the service will never take. 429 and 5xx are transient and honour
    /// `Retry-After`. 400/401/403 are failures of this message or of our VAPID identity
    /// (403 usually means the subscription was made with another VAPID key); retrying the
    /// same request would not help, so they are dead-lettered with the service's reason.
    public static func classify(_ response: PushHTTP.Response, now: Date) -> PushResult {
        let status = response.status
        switch status {
        case 200, 201, 202:
            let location = response.headers.first(name: "location")?.trimmingCharacters(in: .whitespaces)
            return .accepted(providerMessageID: location.flatMap { $0.isEmpty ? nil : $0 })
        case 404:
            return .tokenGone(.webPush(.notFound))
        case 410:
            return .tokenGone(.webPush(.gone))
        case 413:
            return .refused(.webPush(.payloadTooLarge))
        case 408, 429:
            return .retryLater(.webPush(status == 429 ? .tooManyRequests : .requestTimeout), after: response.retryAfter(now: now))
        case 500...599:
            return .retryLater(.webPush(.serverError(status)), after: response.retryAfter(now: now))
        default:
            return .refused(.webPush(.refused(status: status, detail: detail(of: response))))
        }
    }

    /// The service's own words: Mozilla answers `{"errno", "message"}`, Apple `{"reason"}`,
    /// FCM plain text. Bounded, because it is stored with the delivery.
    static func detail(of response: PushHTTP.Response) -> String? {
        var text: String?
        if let json = response.json {
            text = json["reason"]?.stringValue ?? json["message"]?.stringValue ?? json["error"]?.stringValue
        } else if let plain = String(data: response.body, encoding: .utf8) {
            text = plain
        }
        guard let cleaned = text?.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces),
            !cleaned.isEmpty
        else { return nil }
        return cleaned.count > 200 ? String(cleaned.prefix(200)) + "…" : cleaned
    }
}
