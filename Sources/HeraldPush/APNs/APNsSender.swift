import Crypto
import Foundation
import HeraldCore
import NIOCore
import NIOHPACK

/// Sends pushes to APNs over HTTP/2 with token authentication.
///
/// Why `apns-id` is derived from the delivery id: a delivery resent after a crash (its lease
/// ran out mid-send) carries the same id, so the device shows it once.
public final class APNsSender: PushSender {
    public static let productionURL = "https://api.push.apple.com"
    public static let sandboxURL = "https://api.sandbox.push.apple.com"

    let config: APNsConfig
    let client: APNsClient
    /// The broadcast channel management API's client (another host); nil: no channels.
    let channelClient: APNsClient?
    let clock: any HeraldClock
    public let providerToken: APNsProviderToken
    let requestTimeout: Duration

    /// The base URL of `config` for `environment` (nil: the configured one): `sandbox_base_url`
    /// for the sandbox when set, else `base_url`, else Apple's host.
    public static func baseURL(_ config: APNsConfig, environment: APNsEnvironment? = nil) -> String {
        url(config, environment: environment, production: productionURL, sandbox: sandboxURL)
    }

    /// The configured URL for `environment`, else Apple's host for it.
    static func url(_ config: APNsConfig, environment: APNsEnvironment?, production: String, sandbox: String) -> String {
        let isSandbox = (environment ?? config.environment) == .sandbox
        if isSandbox, let url = config.sandboxBaseURL { return url }
        return config.baseURL ?? (isSandbox ? sandbox : production)
    }

    /// The client for `config` in `environment`: its base URL, CA file and connection count.
    /// Connections open at the first push, so an environment no device uses costs nothing.
    public static func makeClient(_ config: APNsConfig, environment: APNsEnvironment? = nil) throws -> APNsClient {
        try APNsClient(baseURL: baseURL(config, environment: environment), caFile: config.caFile, connections: config.connections)
    }

    /// Apple's channel management hosts: another host and port than the pushes'.
    public static let productionChannelURL = "https://api-manage-broadcast.push.apple.com:2196"
    public static let sandboxChannelURL = "https://api-manage-broadcast.sandbox.push.apple.com:2195"

    /// The channel management base URL: Apple's, or with `base_url` / `sandbox_base_url` set
    /// (a mock, a proxy) that same server, which then serves both APIs.
    public static func channelBaseURL(_ config: APNsConfig, environment: APNsEnvironment? = nil) -> String {
        url(config, environment: environment, production: productionChannelURL, sandbox: sandboxChannelURL)
    }

    /// The channel management client: one connection, opened at the first channel request.
    public static func makeChannelClient(_ config: APNsConfig, environment: APNsEnvironment? = nil) throws -> APNsClient {
        try APNsClient(baseURL: channelBaseURL(config, environment: environment), caFile: config.caFile, connections: 1)
    }

    /// - Parameters:
    ///   - client: runs as a Service next to the worker (it closes the connections).
    ///   - channelClient: the same, for broadcast channel management (nil: no channels).
    public init(
        config: APNsConfig, client: APNsClient, channelClient: APNsClient? = nil, clock: any HeraldClock, requestTimeout: Duration = .seconds(10)
    ) async throws {
        let pem: String
        do {
            pem = try String(contentsOfFile: config.privateKeyFile, encoding: .utf8)
        } catch {
            throw APNsKeyError("private_key_file \(config.privateKeyFile.debugDescription) cannot be read (\((error as NSError).localizedDescription))")
        }
        do {
            providerToken = try await APNsProviderToken(privateKeyPEM: pem, keyID: config.keyID, teamID: config.teamID, clock: clock)
        } catch {
            throw APNsKeyError("private_key_file \(config.privateKeyFile.debugDescription) is not a P-256 key in PKCS#8 PEM (an AuthKey_<KEYID>.p8): \(error)")
        }
        self.config = config
        self.client = client
        self.channelClient = channelClient
        self.clock = clock
        self.requestTimeout = requestTimeout
    }

    public func send(_ message: PushMessage) async throws -> PushResult {
        var token: String
        if let fresh = providerToken.fresh() { token = fresh } else { token = try await providerToken.token() }
        var bodyLimit: Int?
        var renewed = false
        var shortened = false
        while true {
            let payload: Data
            do {
                payload = try APNsPayload.encode(message, bodyLimit: bodyLimit)
            } catch is APNsPayload.TooLarge {
                return .refused(.apns(.payloadTooLarge))
            }
            let verdict = try await exchange(
                deviceToken: message.token, headers: headers(message, token: token), payload: payload, tokenUpdatedAt: message.deviceUpdatedAt)
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
                return .retryLater(.apns(.expiredProviderToken), after: nil)
            case .shortenAndRetry:
                return .refused(.apns(.payloadTooLarge))
            }
        }
    }

    /// Posts one push and classifies APNs's answer (alerts and ActivityKit pushes alike); a
    /// request that got no answer is a retryable result.
    func exchange(deviceToken: String, headers: HPACKHeaders, payload: Data, tokenUpdatedAt: Int64?) async throws -> APNsVerdict {
        let response: PushHTTP.Response
        do {
            response = try await client.post(path: "/3/device/\(deviceToken)", headers: headers, body: ByteBuffer(bytes: payload), timeout: requestTimeout)
        } catch APNsTransportError.timeout {
            return .result(.retryLater(.transport(.timeout), after: nil))
        } catch is APNsTransportError {
            return .result(.retryLater(.transport(.connectionError), after: nil))
        }
        let body = response.json
        return APNsResponse.classify(
            status: response.status, reason: body?["reason"]?.stringValue, goneSince: body?["timestamp"]?.doubleValue.map { Int64($0) },
            deviceUpdatedAt: tokenUpdatedAt, apnsID: response.headers.first(name: "apns-unique-id") ?? response.headers.first(name: "apns-id"),
            retryAfter: response.retryAfter(now: clock.now()))
    }

    /// The request's headers. Values unique to one push (`apns-id`, expiration, collapse id)
    /// are sent without HPACK indexing: inserting each into the dynamic table evicted the
    /// repeated ones and made every lookup scan a full table.
    func headers(_ message: PushMessage, token: String) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(8)
        headers.add(name: "authorization", value: "bearer " + token)
        for (name, value) in Self.headers(for: message, topic: config.topic) {
            headers.add(name: name, value: value, indexing: Self.perPushHeaders.contains(name) ? .nonIndexable : .indexable)
        }
        return headers
    }

    /// Header values unique to one push, sent without HPACK indexing.
    static let perPushHeaders: Set<String> = ["apns-id", "apns-expiration", "apns-collapse-id"]

    /// The APNs headers of a push, besides `authorization` (the log sender shows them too).
    public static func headers(for message: PushMessage, topic: String) -> [(String, String)] {
        var headers: [(String, String)] = [
            ("apns-id", apnsID(forDelivery: message.deliveryID)), ("apns-topic", topic),
            ("apns-push-type", message.silent ? "background" : "alert"), ("apns-priority", message.silent ? "5" : "10"),
        ]
        if let expiresAt = message.expiresAt { headers.append(("apns-expiration", String(max(0, expiresAt / 1000)))) }
        if message.replacementKey.utf8.count <= 64 { headers.append(("apns-collapse-id", message.replacementKey)) }
        headers.append(("content-type", "application/json"))
        return headers
    }

    /// A UUID made from the delivery id (SHA-256, version 8 bits): stable across resends.
    public static func apnsID(forDelivery deliveryID: String) -> String {
        let digest = SHA256.hash(data: Data(deliveryID.utf8))
        return String(unsafeUninitializedCapacity: 36) { output in
            var position = 0
            for (index, var byte) in digest.prefix(16).enumerated() {
                if index == 6 { byte = (byte & 0x0F) | 0x80 }
                if index == 8 { byte = (byte & 0x3F) | 0x80 }
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    output[position] = UInt8(ascii: "-")
                    position += 1
                }
                output[position] = hexDigits[Int(byte >> 4)]
                output[position + 1] = hexDigits[Int(byte & 0x0F)]
                position += 2
            }
            return position
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}

/// The .p8 key cannot be used; says which file and why, for the start-up error and `herald doctor`.
public struct APNsKeyError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
