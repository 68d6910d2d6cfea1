import Testing

@testable import HeraldNotifications

@Suite struct PushStatisticsTests {
    @Test func countsOutcomesReasonsAndLatencyWithBoundedLabels() {
        let stats = PushStatistics()
        stats.record(outcome: "sent", reason: nil, latencyMs: 7)
        stats.record(outcome: "retry", reason: "gave_up: timeout", latencyMs: 300)
        stats.record(outcome: "failed", reason: "Unregistered", latencyMs: nil)
        for index in 0..<150 { stats.record(outcome: "dead", reason: "Reason\(index)", latencyMs: nil) }
        let snapshot = stats.snapshot
        #expect(snapshot.outcomes == ["sent": 1, "retry": 1, "failed": 1, "dead": 150])
        #expect(snapshot.reasons["gave_up"] == 1 && snapshot.reasons["Unregistered"] == 1)
        #expect(snapshot.reasons.count == 100)
        #expect(snapshot.latencyCount == 2 && snapshot.latencySumMs == 307)
        // 7 ms falls in every bucket from 10 ms up; 300 ms from 500 ms up.
        #expect(snapshot.latencyBuckets == [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2])
        #expect(PushStatistics.label("InvalidSubscription: bad key") == "InvalidSubscription")
        #expect(PushStatistics.label("  ") == "other")
    }

    @Test func outcomesAreAlsoCountedByTypeAndProviderWithABound() {
        let stats = PushStatistics()
        stats.record(outcome: "sent", reason: nil, latencyMs: 5, type: "job_offer", provider: "apns")
        stats.record(outcome: "sent", reason: nil, latencyMs: 5, type: "job_offer", provider: "apns")
        stats.record(outcome: "failed", reason: "Unregistered", latencyMs: 5, type: "service_alert", provider: "fcm")
        stats.record(outcome: "skipped", reason: "already_read", latencyMs: nil)
        let typed = stats.snapshot.outcomesByType
        #expect(typed[.init(type: "job_offer", provider: "apns", outcome: "sent")] == 2)
        #expect(typed[.init(type: "service_alert", provider: "fcm", outcome: "failed")] == 1)
        #expect(typed[.init(type: "unknown", provider: "unknown", outcome: "skipped")] == 1)
        for index in 0..<600 { stats.record(outcome: "sent", reason: nil, latencyMs: nil, type: "type_\(index)", provider: "apns") }
        #expect(stats.snapshot.outcomesByType.count <= PushStatistics.maxTypedOutcomes + 1)
        #expect(stats.snapshot.outcomesByType[.init(type: "other", provider: "apns", outcome: "sent")] ?? 0 > 0)
    }
}
