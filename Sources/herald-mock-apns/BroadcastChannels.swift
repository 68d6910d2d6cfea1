import Foundation
import HeraldMockProviders
import Synchronization

/// APNs's broadcast channels (iOS 18) as Apple documents them and its sandbox answers:
/// `POST /1/apps/<bundle>/channels` with `{"message-storage-policy": 0|1, "push-type":
/// "LiveActivity"}` makes one (201, its id in `apns-channel-id`, 24 characters of base64);
/// `GET` and `DELETE` on the same path name it by the `apns-channel-id` header (200 with its
/// policy; 204); `GET /1/apps/<bundle>/all-channels` lists them; `POST
/// /4/broadcasts/apps/<bundle>` sends one push to a channel. A channel that was deleted is
/// 400 `ChannelNotRegistered` to a broadcast, one never made 400 `BadChannelId`, an unknown
/// one 404 `BadPath` to a read or delete. A broadcast must carry `apns-push-type:
/// liveactivity`, a priority of 5 or 10 and `apns-expiration` (400 `BadExpirationDate`
/// without; on a channel that stores nothing only 0), and an update or end payload.
final class BroadcastChannels: Sendable {
    struct Channel: Sendable {
        let bundle: String
        let storagePolicy: Int
    }

    private struct State {
        var channels: [String: Channel] = [:]
        var deleted: Set<String> = []
    }

    private let state = Mutex(State())

    static func handles(_ path: String) -> Bool {
        path.hasPrefix("/1/apps/") || path.hasPrefix("/4/broadcasts/apps/")
    }

    /// The bundle a request's path names (for its provider token's check).
    static func bundle(of path: String) -> String? {
        let rest: Substring
        if path.hasPrefix("/1/apps/") {
            rest = path.dropFirst("/1/apps/".count)
        } else if path.hasPrefix("/4/broadcasts/apps/") {
            rest = path.dropFirst("/4/broadcasts/apps/".count)
        } else {
            return nil
        }
        let bundle = rest.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        return bundle.isEmpty ? nil : bundle
    }

    /// The answer to a channel request whose provider token was accepted.
    func answer(_ request: MockPushServer.Request) -> MockPushServer.Response {
        guard let bundle = Self.bundle(of: request.path) else { return .json(404, ["reason": "BadPath"]) }
        let requestID = [("apns-request-id", request.header("apns-request-id") ?? UUID().uuidString.lowercased())]
        if request.path.hasPrefix("/4/broadcasts/apps/") {
            guard request.method == "POST", request.path == "/4/broadcasts/apps/\(bundle)" else { return .json(405, ["reason": "MethodNotAllowed"]) }
            return broadcast(request, bundle: bundle, headers: requestID)
        }
        switch (request.method, request.path) {
        case ("POST", "/1/apps/\(bundle)/channels"):
            guard let body = request.json, body["push-type"] as? String == "LiveActivity" else {
                return .json(400, ["reason": "InvalidPushType"], headers: requestID)
            }
            guard let policy = body["message-storage-policy"] as? Int, policy == 0 || policy == 1 else {
                return .json(400, ["reason": "BadMessageStoragePolicy"], headers: requestID)
            }
            let id = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            state.withLock { $0.channels[id] = Channel(bundle: bundle, storagePolicy: policy) }
            return MockPushServer.Response(status: 201, headers: requestID + [("apns-channel-id", id)])
        case ("GET", "/1/apps/\(bundle)/channels"), ("DELETE", "/1/apps/\(bundle)/channels"):
            guard let id = request.header("apns-channel-id"), !id.isEmpty else { return .json(400, ["reason": "MissingChannelId"], headers: requestID) }
            let channel: Channel? = state.withLock { state in
                guard let channel = state.channels[id], channel.bundle == bundle else { return nil }
                if request.method == "DELETE" {
                    state.channels[id] = nil
                    state.deleted.insert(id)
                }
                return channel
            }
            guard let channel else { return .json(404, ["reason": "BadPath"], headers: requestID) }
            if request.method == "DELETE" { return MockPushServer.Response(status: 204, headers: requestID) }
            return .json(200, ["message-storage-policy": channel.storagePolicy, "push-type": "LiveActivity"], headers: requestID)
        case ("GET", "/1/apps/\(bundle)/all-channels"):
            let ids = state.withLock { $0.channels.filter { $0.value.bundle == bundle }.keys.sorted() }
            return .json(200, ["channels": ids], headers: requestID)
        default:
            return .json(404, ["reason": "BadPath"], headers: requestID)
        }
    }

    private func broadcast(_ request: MockPushServer.Request, bundle: String, headers: [(String, String)]) -> MockPushServer.Response {
        guard let id = request.header("apns-channel-id"), !id.isEmpty else { return .json(400, ["reason": "MissingChannelId"], headers: headers) }
        let (channel, deleted) = state.withLock { ($0.channels[id], $0.deleted.contains(id)) }
        guard let channel, channel.bundle == bundle else {
            return .json(400, ["reason": deleted ? "ChannelNotRegistered" : "BadChannelId"], headers: headers)
        }
        guard request.header("apns-push-type") == "liveactivity" else { return .json(400, ["reason": "InvalidPushType"], headers: headers) }
        guard let priority = request.header("apns-priority"), priority == "5" || priority == "10" else {
            return .json(400, ["reason": "BadPriority"], headers: headers)
        }
        guard let expiration = request.header("apns-expiration").flatMap({ Int64($0) }), expiration >= 0,
            channel.storagePolicy == 1 || expiration == 0
        else { return .json(400, ["reason": "BadExpirationDate"], headers: headers) }
        // A channel only updates or ends the activities subscribed to it.
        guard let aps = request.json?["aps"] as? [String: Any], let event = aps["event"] as? String, event == "update" || event == "end",
            aps["timestamp"] is Double || aps["timestamp"] is Int, aps["content-state"] is [String: Any]
        else { return .json(400, ["reason": "InvalidLiveActivityPayload"], headers: headers) }
        return MockPushServer.Response(status: 200, headers: headers)
    }
}
