import Foundation
import HeraldCore
import HeraldPush
import Testing

@Suite struct FCMMessageBuilderTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func message(
        severity: Severity = .alert, body: String? = "Silver Camry, 4 min", data: JSONValue = [:], category: String? = "DRIVER_ASSIGNED",
        threadID: String? = "job_42", collapseKey: String? = "job_42", interruptionLevel: InterruptionLevel? = .timeSensitive,
        expiresAt: Int64? = 1_800_000_120_000
    ) -> PushMessage {
        PushMessage(
            deliveryID: "dlv_1", notificationID: "ntf_1", userID: "ann", deviceID: "dev_1", type: "driver_assigned", severity: severity,
            provider: .fcm, platform: .android, token: "fcm-token", title: "Alex is on the way", body: body, data: data,
            category: category, threadID: threadID, collapseKey: collapseKey, interruptionLevel: interruptionLevel, badge: 3,
            expiresAt: expiresAt)
    }

    /// Every field of an urgent message with an expiry and a collapse key.
    @Test func fullMessage() {
        let body = FCMMessageBuilder.body(for: Self.message(data: ["job_id": "job_42"]), now: Self.now)
        let expected: JSONValue = [
            "message": [
                "token": "fcm-token",
                "notification": ["title": "Alex is on the way", "body": "Silver Camry, 4 min"],
                "data": ["job_id": "job_42", "notification_id": "ntf_1", "notification_type": "driver_assigned", "type": "driver_assigned"],
                "android": ["collapse_key": "job_42", "priority": "HIGH", "ttl": "120s", "notification": ["tag": "job_42"]],
                "apns": [
                    "headers": ["apns-collapse-id": "job_42", "apns-priority": "10", "apns-expiration": "1800000120"],
                    "payload": [
                        "aps": [
                            "badge": 3, "category": "DRIVER_ASSIGNED", "thread-id": "job_42", "interruption-level": "time-sensitive",
                            "sound": "default",
                        ]
                    ],
                ],
                "webpush": ["headers": ["TTL": "120", "Topic": "job_42", "Urgency": "high"]],
            ]
        ]
        #expect(body == expected)
    }

    /// Optional fields are left out rather than sent empty; no expiry means FCM's default.
    /// Without a collapse key the notification id still keys the copy a device replaces (a
    /// push re-sent after a crash shows once), but Android's `collapse_key` stays unset.
    @Test func minimalMessage() {
        let message = Self.message(
            severity: .info, body: nil, category: nil, threadID: nil, collapseKey: nil, interruptionLevel: nil, expiresAt: nil)
        let body = FCMMessageBuilder.body(for: message, now: Self.now)
        let expected: JSONValue = [
            "message": [
                "token": "fcm-token",
                "notification": ["title": "Alex is on the way"],
                "data": ["notification_id": "ntf_1", "notification_type": "driver_assigned", "type": "driver_assigned"],
                "android": ["priority": "NORMAL", "notification": ["tag": "ntf_1"]],
                "apns": ["headers": ["apns-priority": "5", "apns-collapse-id": "ntf_1"], "payload": ["aps": ["badge": 3, "sound": "default"]]],
                "webpush": ["headers": ["TTL": "2419200", "Urgency": "normal", "Topic": "ntf_1"]],
            ]
        ]
        #expect(body == expected)
    }

    /// Urgency follows the severity and the interruption level.
    @Test(arguments: [
        (Severity.alert, InterruptionLevel.active, "HIGH", "10", "high"),
        (.info, .timeSensitive, "HIGH", "10", "high"),
        (.warning, .critical, "HIGH", "10", "high"),
        (.warning, .active, "NORMAL", "5", "normal"),
        (.info, .passive, "NORMAL", "5", "low"),
    ])
    func priority(_ severity: Severity, _ level: InterruptionLevel, _ android: String, _ apns: String, _ web: String) {
        let body = FCMMessageBuilder.body(for: Self.message(severity: severity, interruptionLevel: level), now: Self.now)
        #expect(body["message"]?["android"]?["priority"] == .string(android))
        #expect(body["message"]?["apns"]?["headers"]?["apns-priority"] == .string(apns))
        #expect(body["message"]?["webpush"]?["headers"]?["Urgency"] == .string(web))
        // Passive plays no sound on iPhone and is low priority on Android.
        let quiet = level == .passive
        #expect((body["message"]?["apns"]?["payload"]?["aps"]?["sound"] == nil) == quiet)
        #expect((body["message"]?["android"]?["notification"]?["notification_priority"] == "PRIORITY_LOW") == quiet)
    }

    /// FCM's `data` takes strings only: non-strings become JSON text the app can decode.
    @Test func dataValuesAreAllStrings() throws {
        let data: JSONValue = [
            "text": "plain", "count": 5, "ratio": 0.5, "flag": false, "nothing": .null, "list": [1, "two"],
            "nested": ["a": ["b": "c/d"]], "notification_id": "spoofed",
        ]
        let flat = FCMMessageBuilder.data(for: Self.message(data: data))
        #expect(
            flat == [
                "text": "plain", "count": "5", "ratio": "0.5", "flag": "false", "nothing": "null", "list": "[1,\"two\"]",
                "nested": "{\"a\":{\"b\":\"c/d\"}}", "notification_id": "ntf_1", "notification_type": "driver_assigned",
                "type": "driver_assigned",
            ])
        // And on the wire, through the encoder the sender uses.
        let encoded = try FCMMessageBuilder.encodedBody(for: Self.message(data: data), now: Self.now)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: encoded)
        let wire = try #require(decoded["message"]?["data"]?.objectValue)
        #expect(wire.count == 10)
        #expect(wire.values.allSatisfy { $0.stringValue != nil })
    }

    /// Keys FCM reserves would make it reject the whole message, so one stored before the
    /// creation rule refused them is dropped.
    @Test func reservedDataKeysAreDropped() {
        let data: JSONValue = ["from": "x", "message_type": "x", "google.c.a.e": "1", "gcm.n.e": "1", "Google_thing": "x", "kept": "yes"]
        #expect(
            FCMMessageBuilder.data(for: Self.message(data: data))
                == ["kept": "yes", "notification_id": "ntf_1", "notification_type": "driver_assigned", "type": "driver_assigned"])
    }

    /// Apps route a tap on the sender's `type` (the dispatch design's `job:new`): it reaches the device
    /// unchanged, and the catalog type travels beside it.
    @Test func theSendersTypeIsKept() {
        let flat = FCMMessageBuilder.data(for: Self.message(data: ["job_id": "job_1", "type": "job:new"]))
        #expect(flat == ["job_id": "job_1", "type": "job:new", "notification_id": "ntf_1", "notification_type": "driver_assigned"])
    }

    /// The TTL counts down from `now` and never goes negative.
    @Test(arguments: [(1_800_000_120_000 as Int64, "120"), (1_800_000_000_999, "0"), (1_799_999_000_000, "0"), (1_800_086_400_000, "86400")])
    func ttl(_ expiresAt: Int64, _ seconds: String) {
        let body = FCMMessageBuilder.body(for: Self.message(expiresAt: expiresAt), now: Self.now)
        #expect(body["message"]?["android"]?["ttl"] == .string(seconds + "s"))
        #expect(body["message"]?["webpush"]?["headers"]?["TTL"] == .string(seconds))
        #expect(body["message"]?["apns"]?["headers"]?["apns-expiration"] == .string(String(expiresAt / 1000)))
    }

    /// A collapse key Web Push cannot carry as a Topic (too long, other characters) is hashed
    /// to one it can, the same each time.
    @Test func webPushTopicIsAlwaysValid() throws {
        let key = "trip:9f8e7d6c-5b4a-3210-fedc-ba9876543210/eta"
        let topic = try #require(
            FCMMessageBuilder.body(for: Self.message(collapseKey: key), now: Self.now)["message"]?["webpush"]?["headers"]?["Topic"]?.stringValue)
        #expect(topic.count == 32)
        #expect(topic.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(FCMMessageBuilder.body(for: Self.message(collapseKey: key), now: Self.now)["message"]?["webpush"]?["headers"]?["Topic"] == .string(topic))
        // Android and APNs take the key as it is.
        #expect(FCMMessageBuilder.body(for: Self.message(collapseKey: key), now: Self.now)["message"]?["android"]?["collapse_key"] == .string(key))
    }
}
