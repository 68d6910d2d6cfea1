/// What APNs and a device require of an ActivityKit push (`apns-push-type: liveactivity`),
/// checked so an end-to-end test fails on a push a phone would drop: the topic is the app's
/// with `.push-type.liveactivity`, the priority 5 or 10, and `aps` holds an `event` (start,
/// update or end), a numeric `timestamp` and a `content-state` object; a start also
/// `attributes-type`, `attributes` and an `alert` (Apple requires one to start an activity).
/// Returns the reason of a 400, nil when the push is well formed. Apple names the header
/// problems (`BadTopic`, `BadPriority`); a payload a device would drop gets this mock's own
/// `InvalidLiveActivityPayload`, since APNs itself does not read the payload.
enum LiveActivityCheck {
    static func problem(topic: String?, priority: String?, payload: [String: Any]?) -> String? {
        guard let topic, topic.hasSuffix(".push-type.liveactivity") else { return "BadTopic" }
        guard priority == "5" || priority == "10" else { return "BadPriority" }
        guard let aps = payload?["aps"] as? [String: Any], let event = aps["event"] as? String, ["start", "update", "end"].contains(event),
            aps["timestamp"] is Double || aps["timestamp"] is Int, aps["content-state"] is [String: Any]
        else { return "InvalidLiveActivityPayload" }
        if event == "start" {
            guard aps["attributes-type"] is String, aps["attributes"] is [String: Any], aps["alert"] is [String: Any] else {
                return "InvalidLiveActivityPayload"
            }
        }
        return nil
    }
}
