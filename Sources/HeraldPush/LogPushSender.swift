import Foundation
import HeraldCore
import Logging
import Synchronization

/// The sender in force until a provider is configured: it accepts every push, logs it (ids only,
/// never the token or the content) and, when given a file, appends one JSON line per
/// send (device id, never the token) so tests and operators can see exactly what would have gone out.
public final class LogPushSender: PushSender {
    private let logger: Logger
    private let file: Mutex<FileHandle?>

    public init(logger: Logger, file path: String? = nil) throws {
        self.logger = logger
        guard let path else {
            file = Mutex(nil)
            return
        }
        // O_APPEND: every line lands at the end even when several nodes share the file.
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        file = Mutex(FileHandle(fileDescriptor: descriptor, closeOnDealloc: true))
    }

    public func send(_ message: PushMessage) async throws -> PushResult {
        logger.info(
            "push recorded by the log sender",
            metadata: [
                "delivery_id": "\(message.deliveryID)", "notification_id": "\(message.notificationID)",
                "provider": "\(message.provider.rawValue)", "attempt": "\(message.attempt)",
            ])
        let line: JSONValue = [
            "delivery_id": .string(message.deliveryID), "notification_id": .string(message.notificationID),
            "user_id": .string(message.userID), "provider": .string(message.provider.rawValue), "device_id": .string(message.deviceID),
            "title": .string(message.title), "body": message.body.map(JSONValue.string) ?? .null,
            "badge": .number(Double(message.badge)), "collapse_key": message.collapseKey.map(JSONValue.string) ?? .null,
            "category": message.category.map(JSONValue.string) ?? .null,
            "interruption_level": message.interruptionLevel.map { JSONValue.string($0.rawValue) } ?? .null,
            "attempt": .number(Double(message.attempt)), "data": message.data, "silent": .bool(message.silent),
        ]
        var record = line
        if case .object(var object) = line, let request = Self.request(for: message) {
            object["request"] = request
            record = .object(object)
        }
        let data = try JSONEncoder().encode(record) + Data("\n".utf8)
        try file.withLock { handle in try handle?.write(contentsOf: data) }
        return .accepted(providerMessageID: "log-\(message.deliveryID)")
    }

    /// The provider request the push would have been (APNs: path, headers, payload), so the
    /// log shows what a device would get.
    static func request(for message: PushMessage) -> JSONValue? {
        guard message.provider == .apns, let payload = try? APNsPayload.encode(message),
            let body = try? JSONDecoder().decode(JSONValue.self, from: payload)
        else { return nil }
        var headers: [String: JSONValue] = [:]
        for (name, value) in APNsSender.headers(for: message, topic: "<apns.topic>") { headers[name] = .string(value) }
        return ["method": "POST", "path": "/3/device/<token>", "headers": .object(headers), "payload": body]
    }
}

/// Records ActivityKit pushes the same way, with the request APNs would have received.
extension LogPushSender: LiveActivitySender {
    public func sendLiveActivity(_ message: LiveActivityMessage) async throws -> PushResult {
        logger.info(
            "live activity push recorded by the log sender",
            metadata: ["activity_id": "\(message.activityID)", "event": "\(message.event.rawValue)", "app": "\(message.app)"])
        guard let payload = try? LiveActivityPayload.encode(message) else { return .refused(.apns(.payloadTooLarge)) }
        var headers: [String: JSONValue] = [:]
        for (name, value) in LiveActivityPayload.headers(for: message, topic: "<apns.topic>") { headers[name] = .string(value) }
        let line: JSONValue = [
            "live_activity_id": .string(message.activityID), "app_id": .string(message.app), "event": .string(message.event.rawValue),
            "request": [
                "method": "POST", "path": "/3/device/<token>", "headers": .object(headers),
                "payload": (try? JSONDecoder().decode(JSONValue.self, from: payload)) ?? .null,
            ],
        ]
        let data = try JSONEncoder().encode(line) + Data("\n".utf8)
        try file.withLock { handle in try handle?.write(contentsOf: data) }
        return .accepted(providerMessageID: "log-\(message.pushID)")
    }
}

/// Records broadcast channels too: a development server hands apps channel ids (random, in
/// Apple's base64 shape) and logs each broadcast as the request APNs would have received.
extension LogPushSender: LiveActivityBroadcaster {
    public func createChannel(storage: LiveActivityChannelStorage) async -> Result<String, LiveActivityChannelFailure> {
        let id = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        writeChannelLine(["channel": ["method": "POST", "channel_id": .string(id), "message_storage_policy": .number(Double(storage.apnsValue))]])
        return .success(id)
    }

    public func deleteChannel(_ channelID: String) async -> Result<Void, LiveActivityChannelFailure> {
        writeChannelLine(["channel": ["method": "DELETE", "channel_id": .string(channelID)]])
        return .success(())
    }

    public func broadcast(_ message: LiveActivityMessage, storage: LiveActivityChannelStorage) async throws -> PushResult {
        logger.info(
            "live activity broadcast recorded by the log sender",
            metadata: ["activity_id": "\(message.activityID)", "event": "\(message.event.rawValue)", "app": "\(message.app)"])
        guard let payload = try? LiveActivityPayload.encode(message) else { return .refused(.apns(.payloadTooLarge)) }
        var headers: [String: JSONValue] = [:]
        for (name, value) in LiveActivityPayload.broadcastHeaders(for: message, storage: storage) { headers[name] = .string(value) }
        writeChannelLine([
            "live_activity_id": .string(message.activityID), "app_id": .string(message.app), "event": .string(message.event.rawValue),
            "request": [
                "method": "POST", "path": "/4/broadcasts/apps/<apns.topic>", "headers": .object(headers),
                "payload": (try? JSONDecoder().decode(JSONValue.self, from: payload)) ?? .null,
            ],
        ])
        return .accepted(providerMessageID: "log-\(message.pushID)")
    }

    private func writeChannelLine(_ line: JSONValue) {
        guard let data = try? JSONEncoder().encode(line) else { return }
        try? file.withLock { handle in try handle?.write(contentsOf: data + Data("\n".utf8)) }
    }
}
