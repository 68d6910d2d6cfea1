import HeraldCore
import HeraldDispatch
import Testing

@testable import HeraldTrips

@Suite struct RideRequestLifecycleTests {
    static let expiresAt: Int64 = 1_000_000
    static func request(_ state: RideRequestState, driver: String? = nil, trip: String? = nil) -> RideRequestLifecycle.Snapshot {
        RideRequestLifecycle.Snapshot(state: state, expiresAt: expiresAt, driverID: driver, tripID: trip)
    }

    // MARK: The accept

    @Test func theFirstAcceptWhileSearchingMatchesAndOpensTheTrip() {
        let effects: [RideRequestLifecycle.Effect] = [
            .openTrip, .decideOffers(.lost), .notifyRider(.driverOnTheWay), .startLiveActivity, .joinTripRoom, .publishTripStateChanged,
            .publishRequestUpdated, .closeOffers(reason: "accepted"), .announceTrip,
        ]
        let decision = RideRequestLifecycle.decide(Self.request(.searching), .accept(driverID: "d1", now: Self.expiresAt - 1))
        #expect(decision == .changed(to: .matched, effects: effects))
    }

    @Test func anAcceptAtOrAfterTheDeadlineIsRefusedAsExpired() {
        for now in [Self.expiresAt, Self.expiresAt + 1] {
            #expect(
                RideRequestLifecycle.decide(Self.request(.searching), .accept(driverID: "d1", now: now)) == .refused(.expiredWhileSearching), "at \(now)")
        }
        let error = RideRequestLifecycle.Refusal.expiredWhileSearching.error
        #expect(error.status == 409 && error.code == .rideRequestClosed && error.message == "The ride request expired.")
        #expect(error.details == ["state": "EXPIRED"])
    }

    @Test func theWinnersRepeatGetsItsTripAndEveryoneElseIsTooLate() {
        let matched = Self.request(.matched, driver: "d1", trip: "tr_1")
        #expect(RideRequestLifecycle.decide(matched, .accept(driverID: "d1", now: 0)) == .deferToTrip("tr_1"))
        #expect(RideRequestLifecycle.decide(matched, .accept(driverID: "d2", now: 0)) == .refused(.alreadyAccepted))
        // A match without its trip id cannot answer with a trip.
        #expect(RideRequestLifecycle.decide(Self.request(.matched, driver: "d1"), .accept(driverID: "d1", now: 0)) == .refused(.alreadyAccepted))
        #expect(RideRequestLifecycle.Refusal.alreadyAccepted.error == TripError.alreadyAccepted)
    }

    @Test func anEndedRequestRefusesTheAcceptWithItsState() {
        for state in [RideRequestState.cancelled, .expired] {
            #expect(RideRequestLifecycle.decide(Self.request(state), .accept(driverID: "d1", now: 0)) == .refused(.closed(state)))
        }
        let error = RideRequestLifecycle.Refusal.closed(.cancelled).error
        #expect(error.status == 409 && error.code == .rideRequestClosed && error.message == "The ride request is cancelled.")
        #expect(error.details == ["state": "CANCELLED"])
        // Unlike the cancel's answer, an accept of an expired request says RIDE_REQUEST_CLOSED.
        #expect(RideRequestLifecycle.Refusal.closed(.expired).error.code == .rideRequestClosed)
    }

    // MARK: The cancel

    @Test func cancellingWhileSearchingClosesTheOffers() {
        let effects: [RideRequestLifecycle.Effect] = [
            .decideOffers(.cancelled), .countUnmatched("cancelled"), .publishRequestUpdated, .closeOffers(reason: "cancelled"),
        ]
        #expect(RideRequestLifecycle.decide(Self.request(.searching), .cancel) == .changed(to: .cancelled, effects: effects))
    }

    @Test func aMatchedRequestsCancelIsItsTrips() {
        #expect(RideRequestLifecycle.decide(Self.request(.matched, driver: "d1", trip: "tr_1"), .cancel) == .deferToTrip("tr_1"))
        #expect(RideRequestLifecycle.decide(Self.request(.matched), .cancel) == .deferToTrip(nil))
    }

    @Test func aSecondCancelIsAnsweredAsItIsAndAnExpiredRequestCannotBeCancelled() {
        #expect(RideRequestLifecycle.decide(Self.request(.cancelled), .cancel) == .unchanged)
        #expect(RideRequestLifecycle.decide(Self.request(.expired), .cancel) == .refused(.expired))
        let error = RideRequestLifecycle.Refusal.expired.error
        #expect(error == TripError.requestClosed(.expired))
        #expect(error.code == .driverUnavailable)
    }

    // MARK: The expiry

    @Test func anUnmatchedSearchExpiresAndTellsTheRider() {
        let effects: [RideRequestLifecycle.Effect] = [
            .notifyRider(.noDriverAvailable), .decideOffers(.expired), .publishRequestUpdated, .closeOffers(reason: "expired"), .countUnmatched("expired"),
        ]
        #expect(RideRequestLifecycle.decide(Self.request(.searching), .expire) == .changed(to: .expired, effects: effects))
    }

    @Test func onlyASearchingRequestExpires() {
        for state in [RideRequestState.matched, .cancelled, .expired] {
            #expect(RideRequestLifecycle.decide(Self.request(state), .expire) == .unchanged, "\(state)")
        }
    }
}
