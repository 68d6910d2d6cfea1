import Foundation
import NIOCore
import NIOHPACK

/// iOS 18 broadcast channels, as Apple documents them ("Sending channel management requests
/// to APNs", "Sending broadcast push notification requests to APNs"): channels are made and
/// deleted at `/1/apps/<bundle>/channels` on the management host, named by the
/// `apns-channel-id` header; a broadcast is `POST /4/broadcasts/apps/<bundle>` on the push
/// host with that header, `apns-expiration` (required) and no `apns-topic`.
extension APNsSender: LiveActivityBroadcaster {
    var channelsPath: String { "/1/apps/\(config.topic)/channels" }

    public func createChannel(storage: LiveActivityChannelStorage) async -> Result<String, LiveActivityChannelFailure> {
        let body = Data(#"{"message-storage-policy":\#(storage.apnsValue),"push-type":"LiveActivity"}"#.utf8)
        switch await manage(method: "POST", channelID: nil, body: body) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let response):
            guard response.status == 201 || response.status == 200, let id = response.headers.first(name: "apns-channel-id"), !id.isEmpty else {
                return .failure(LiveActivityChannelFailure(reason: "MissingChannelId", retryable: true))
            }
            return .success(id)
        }
    }

    public func deleteChannel(_ channelID: String) async -> Result<Void, LiveActivityChannelFailure> {
        switch await manage(method: "DELETE", channelID: channelID, body: nil) {
        case .failure(let failure): .failure(failure)
        case .success: .success(())
        }
    }

    /// One management request, with the provider token renewed once when APNs says it
    /// expired. A 2xx, or a 404 to a delete (a channel APNs no longer has), is a success.
    private func manage(method: String, channelID: String?, body: Data?) async -> Result<PushHTTP.Response, LiveActivityChannelFailure> {
        guard let channelClient else { return .failure(LiveActivityChannelFailure(reason: "ChannelsNotConfigured", retryable: false)) }
        var renewed = false
        do {
            var token: String
            if let fresh = providerToken.fresh() { token = fresh } else { token = try await providerToken.token() }
            while true {
                var headers = HPACKHeaders()
                headers.add(name: "authorization", value: "bearer " + token)
                if let channelID { headers.add(name: "apns-channel-id", value: channelID, indexing: .nonIndexable) }
                if body != nil { headers.add(name: "content-type", value: "application/json") }
                let response = try await channelClient.request(
                    method: method, path: channelsPath, headers: headers, body: body.map { ByteBuffer(bytes: $0) }, timeout: requestTimeout)
                if (200..<300).contains(response.status) || (method == "DELETE" && response.status == 404) { return .success(response) }
                let reason = response.json?["reason"]?.stringValue
                if response.status == 403 && reason == "ExpiredProviderToken" && !renewed {
                    renewed = true
                    token = try await providerToken.renew(rejected: token)
                    continue
                }
                let retryable = response.status == 429 || response.status >= 500 || (response.status == 403 && reason == "ExpiredProviderToken")
                return .failure(LiveActivityChannelFailure(reason: reason ?? "HTTP\(response.status)", retryable: retryable))
            }
        } catch APNsTransportError.timeout {
            return .failure(LiveActivityChannelFailure(reason: PushTransportFailure.timeout.rawValue, retryable: true))
        } catch {
            return .failure(LiveActivityChannelFailure(reason: PushTransportFailure.connectionError.rawValue, retryable: true))
        }
    }

    public func broadcast(_ message: LiveActivityMessage, storage: LiveActivityChannelStorage) async throws -> PushResult {
        let payload: Data
        do {
            payload = try LiveActivityPayload.encode(message)
        } catch {
            return .refused(.apns(.payloadTooLarge))
        }
        return try await sendRenewingToken { token in
            var headers = HPACKHeaders()
            headers.reserveCapacity(7)
            headers.add(name: "authorization", value: "bearer " + token)
            for (name, value) in LiveActivityPayload.broadcastHeaders(for: message, storage: storage) {
                headers.add(name: name, value: value, indexing: name == "apns-request-id" ? .nonIndexable : .indexable)
            }
            let response: PushHTTP.Response
            do {
                response = try await client.post(
                    path: "/4/broadcasts/apps/\(config.topic)", headers: headers, body: ByteBuffer(bytes: payload), timeout: requestTimeout)
            } catch APNsTransportError.timeout {
                return .result(.retryLater(.transport(.timeout), after: nil))
            } catch is APNsTransportError {
                return .result(.retryLater(.transport(.connectionError), after: nil))
            }
            let reason = response.json?["reason"]?.stringValue
            // Apple answers 400 for a channel it deleted or never made: the channel is gone.
            if let reason, Self.goneChannelReasons.contains(reason) {
                return .result(.tokenGone(.apns(.unlisted(status: response.status, reason: reason))))
            }
            return APNsResponse.classify(
                status: response.status, reason: reason, goneSince: nil, deviceUpdatedAt: nil,
                apnsID: response.headers.first(name: "apns-request-id"), retryAfter: response.retryAfter(now: clock.now()))
        }
    }

    static let goneChannelReasons: Set<String> = ["ChannelNotRegistered", "BadChannelId"]
}
