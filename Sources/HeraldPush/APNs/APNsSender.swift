import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1

/// Sends pushes to APNs over HTTP/2 with token authentication.
///
/// Why `apns-id` is derived from the delivery id: a delivery resent after a crash (its lease
/// ran out mid-send) carries the same id, so the device shows it once.
public final class APNsSender: PushSender {
    public static let productionURL = "https://api.push.apple.com"
    public static let sandboxURL = "https://api.sandbox.push.apple.com"

    let config: APNsConfig
    let http: PushHTTP
    let clock: any HeraldClock
    let baseURL: String
    public let providerToken: APNsProviderToken
    let requestTimeout: Duration

    public init(config: APNsConfig, http: PushHTTP, clock: any HeraldClock, requestTimeout: Duration = .seconds(10)) async throws {
        let pem = try String(contentsOfFile: config.privateKeyFile, encoding: .utf8)
        providerToken = try await APNsProviderToken(privateKeyPEM: pem, keyID: config.keyID, teamID: config.teamID, clock: clock)
        self.config = config
        self.http = http
        self.clock = clock
        self.requestTimeout = requestTimeout
        baseURL = config.baseURL ?? (config.environment == "sandbox" ? Self.sandboxURL : Self.productionURL)
    }

    public func send(_ message: PushMessage) async throws -> PushResult {
        var token = try await providerToken.token()
        var bodyLimit: Int?
        var renewed = false
        var shortened = false
        while true {
            let payload: Data
            do {
                payload = try APNsPayload.encode(message, bodyLimit: bodyLimit)
            } catch is APNsPayload.TooLarge {
                return .failed(reason: "PayloadTooLarge")
            }
            let response = try await http.execute(request(message, payload: payload, token: token), timeout: requestTimeout)
            let body = response.json
            let verdict = APNsResponse.classify(
                status: response.status, reason: body?["reason"]?.stringValue,
                goneSince: body?["timestamp"]?.doubleValue.map { Int64($0) }, deviceUpdatedAt: message.deviceUpdatedAt,
                apnsID: response.headers.first(name: "apns-unique-id") ?? response.headers.first(name: "apns-id"),
                retryAfter: response.retryAfter(now: clock.now()))
            switch verdict {
            case .result(let result):
                return result
            case .renewTokenAndRetry where !renewed:
                renewed = true
                token = try await providerToken.renew(rejected: token)
            case .shortenAndRetry where !shortened:
                shortened = true
                bodyLimit = max(0, (message.body?.utf8.count ?? 0) / 2)
            case .renewTokenAndRetry:
                return .retry(reason: "ExpiredProviderToken", after: nil)
            case .shortenAndRetry:
                return .failed(reason: "PayloadTooLarge")
            }
        }
    }

    func request(_ message: PushMessage, payload: Data, token: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: "\(baseURL)/3/device/\(message.token)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token)")
        for (name, value) in Self.headers(for: message, topic: config.topic) { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: payload))
        return request
    }

    /// The APNs headers of a push, besides `authorization` (the log sender shows them too).
    public static func headers(for message: PushMessage, topic: String) -> [(String, String)] {
        var headers: [(String, String)] = [
            ("apns-id", apnsID(forDelivery: message.deliveryID)), ("apns-topic", topic),
            ("apns-push-type", message.silent ? "background" : "alert"), ("apns-priority", message.silent ? "5" : "10"),
        ]
        if let expiresAt = message.expiresAt { headers.append(("apns-expiration", String(max(0, expiresAt / 1000)))) }
        if let collapse = message.collapseKey, collapse.utf8.count <= 64 { headers.append(("apns-collapse-id", collapse)) }
        headers.append(("content-type", "application/json"))
        return headers
    }

    /// A UUID made from the delivery id (SHA-256, version 8 bits): stable across resends.
    public static func apnsID(forDelivery deliveryID: String) -> String {
        var bytes = Array(SHA256.hash(data: Data(deliveryID.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let digits = Array("0123456789ABCDEF".utf8)
        var hexBytes: [UInt8] = []
        hexBytes.reserveCapacity(32)
        for byte in bytes {
            hexBytes.append(digits[Int(byte >> 4)])
            hexBytes.append(digits[Int(byte & 0x0F)])
        }
        let hex = String(decoding: hexBytes, as: UTF8.self)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.map(String.init).joined(separator: "-")
    }
}
