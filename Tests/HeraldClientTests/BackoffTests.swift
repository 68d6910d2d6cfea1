import HeraldClient
import Testing

@Suite struct BackoffTests {
    @Test func theBoundDoublesUpToTheCap() {
        let backoff = Backoff(base: .milliseconds(500), cap: .seconds(30))
        #expect(
            (0..<8).map { backoff.bound(attempt: $0) } == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30),
            ])
        // Far past the cap (no overflow either).
        #expect(backoff.bound(attempt: 1_000) == .seconds(30))
        #expect(backoff.bound(attempt: -3) == .milliseconds(500))
    }

    @Test func theDelayIsAFullJitterOfTheBound() {
        let backoff = Backoff(base: .seconds(1), cap: .seconds(10))
        #expect(backoff.delay(attempt: 2, random: 0) == .zero)
        #expect(backoff.delay(attempt: 2, random: 1) == .seconds(4))
        #expect(backoff.delay(attempt: 2, random: 0.25) == .seconds(1))
        #expect(backoff.delay(attempt: 2, random: 7) == .seconds(4))  // clamped
        // The random one stays within [0, bound] and is not always the same.
        let delays = (0..<200).map { _ in backoff.delay(attempt: 3) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .seconds(8) })
        #expect(Set(delays).count > 100)
    }
}
