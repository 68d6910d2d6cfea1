import HeraldDispatch
import HeraldGeo
import Testing

@Suite struct OfferRoundsTests {
    /// A job: each round lasts the offer timeout, the radius widens, and the job expires once
    /// the last round ended.
    @Test func aJobWidensRoundByRoundAndExpiresAfterTheLast() {
        let rounds = OfferRounds(radiiMeters: [2_000, 5_000, 10_000], roundMilliseconds: 120_000)
        #expect(rounds.next(afterRound: 0, now: 1_000) == .offer(round: 1, radiusMeters: 2_000, nextRoundAt: 121_000))
        #expect(rounds.next(afterRound: 1, now: 121_000) == .offer(round: 2, radiusMeters: 5_000, nextRoundAt: 241_000))
        #expect(rounds.next(afterRound: 2, now: 241_500) == .offer(round: 3, radiusMeters: 10_000, nextRoundAt: 361_500))
        #expect(rounds.next(afterRound: 3, now: 361_500) == .expire)
        // A round run late (a node was down) still lasts a whole round from when it runs.
        #expect(rounds.next(afterRound: 1, now: 900_000) == .offer(round: 2, radiusMeters: 5_000, nextRoundAt: 1_020_000))
    }

    /// A ride request: its rounds share one deadline, the last round is cut short by it, and
    /// after the last round the request waits for the deadline before it expires.
    @Test func aRideRequestsRoundsShareItsDeadline() {
        let rounds = OfferRounds(radiiMeters: [2_000, 5_000], roundMilliseconds: 150_000, deadline: 300_000)
        #expect(rounds.next(afterRound: 0, now: 0) == .offer(round: 1, radiusMeters: 2_000, nextRoundAt: 150_000))
        #expect(rounds.next(afterRound: 1, now: 200_000) == .offer(round: 2, radiusMeters: 5_000, nextRoundAt: 300_000))
        #expect(rounds.next(afterRound: 2, now: 250_000) == .waitUntil(300_000))
        #expect(rounds.next(afterRound: 2, now: 300_000) == .expire)
        // The deadline ends the search whatever round it is in.
        #expect(rounds.next(afterRound: 1, now: 300_001) == .expire)
        #expect(rounds.next(afterRound: 0, now: 300_000) == .expire)
    }

    @Test func aRoundOffersNewDriversNearestFirstAndNeverTheRequester() {
        let candidates = ["d1", "cust", "d2", "d3", "d2", "d4", "d5"].enumerated().map {
            DriverMatch(driverID: $0.element, distanceMeters: Double($0.offset) * 100)
        }
        let chosen = OfferRounds.select(candidates, offeredBefore: ["d3"], requester: "cust", limit: 3)
        #expect(chosen.map(\.driverID) == ["d1", "d2", "d4"])
        #expect(chosen.map(\.distanceMeters) == [0, 200, 500])
        #expect(OfferRounds.select(candidates, offeredBefore: [], requester: "cust", limit: 0).isEmpty)
        #expect(OfferRounds.select([], offeredBefore: [], requester: "cust", limit: 10).isEmpty)
    }
}
