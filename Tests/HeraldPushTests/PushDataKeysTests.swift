import Foundation
import HeraldCore
import HeraldPush
import Testing

/// What a sender puts in `data` reaches the device; Herald's keys sit beside it.
@Suite struct PushDataKeysTests {
    @Test func theSendersTypeIsKeptAndHeraldsKeysAreAdded() {
        let kept = PushDataKeys.adding(to: ["job_id": "j1", "type": "job:new"], notificationID: "ntf_1", type: "job_new")
        #expect(kept == ["job_id": "j1", "type": "job:new", "notification_id": "ntf_1", "notification_type": "job_new"])
        let filled = PushDataKeys.adding(to: ["job_id": "j1"], notificationID: "ntf_1", type: "job_new")
        #expect(filled["type"] == "job_new" && filled["notification_type"] == "job_new")
    }

    static let keys = [
        "notification_id", "notification_type", "aps", "from", "FROM", "message_type", "Message_Type", "google.c.a.e", "Google_x",
        "gcm.n.e", "GCMthing", "type", "job_id", "notification", "apsx", "from_stop", "my_google", "message", "notification_ids",
    ]

    /// The OpenAPI document states the rule as a pattern; it refuses exactly what the code does.
    @Test(arguments: keys)
    func thePatternAgreesWithTheRule(key: String) throws {
        let pattern = try NSRegularExpression(pattern: PushDataKeys.reservedKeyPattern)
        let matches = pattern.firstMatch(in: key, range: NSRange(key.startIndex..., in: key)) != nil
        #expect(matches == (PushDataKeys.refusal(key) != nil), "\(key)")
    }

    @Test func reservedKeysAreNamed() {
        #expect(PushDataKeys.refusal("type") == nil && PushDataKeys.refusal("job_id") == nil)
        #expect(PushDataKeys.refusal("notification_id")?.contains("Herald") == true)
        #expect(PushDataKeys.refusal("aps")?.contains("APNs") == true)
        #expect(PushDataKeys.refusal("gcm.n.e")?.contains("FCM") == true)
    }
}
