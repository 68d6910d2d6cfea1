@testable import HeraldNotifications
import Testing

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
}
