import Foundation
import NIOHPACK

/// ActivityKit pushes go through the same connections and provider token as alerts; only the
/// topic, push type, priority and payload differ.
extension APNsSender: LiveActivitySender {
    public func sendLiveActivity(_ message: LiveActivityMessage) async throws -> PushResult {
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
            for (name, value) in LiveActivityPayload.headers(for: message, topic: config.topic) {
                headers.add(name: name, value: value, indexing: name == "apns-id" ? .nonIndexable : .indexable)
            }
            return try await exchange(deviceToken: message.token, headers: headers, payload: payload, tokenUpdatedAt: message.tokenUpdatedAt)
        }
    }

    /// Runs `attempt` with the provider token, renewed once when APNs says it expired. An
    /// ActivityKit payload is never shortened (a cut content state would not decode): too
    /// large is refused.
    func sendRenewingToken(_ attempt: (String) async throws -> APNsVerdict) async throws -> PushResult {
        var token: String
        if let fresh = providerToken.fresh() { token = fresh } else { token = try await providerToken.token() }
        var renewed = false
        while true {
            switch try await attempt(token) {
            case .result(let result):
                return result
            case .renewTokenAndRetry where !renewed:
                renewed = true
                token = try await providerToken.renew(rejected: token)
            case .renewTokenAndRetry:
                return .retryLater(.apns(.expiredProviderToken), after: nil)
            case .shortenAndRetry:
                return .refused(.apns(.payloadTooLarge))
            }
        }
    }
}
