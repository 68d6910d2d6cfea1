import HeraldCore
import HeraldDispatch

/// The ride-request machine with what each change does: `SEARCHING` → `MATCHED` (a driver
/// accepts), `CANCELLED` (the rider cancels) or `EXPIRED` (no driver in time). Given what is
/// known of the request and the event, it answers with a refusal, a hand-over to the trip, or
/// the new state and the effects the service runs.
///
/// Why a pure machine: the accept's "is it still open, is it yours", the cancel of a matched
/// request and the effects of each ending (which offers close how, who is told what) were
/// decided inline between database calls (issue 42, part 4). The conditional updates in
/// `RideRequestStore` still decide races; the machine decides from the state read.
public enum RideRequestLifecycle {
    /// What the machine needs of a request.
    public struct Snapshot: Sendable, Equatable {
        public var state: RideRequestState
        public var expiresAt: Int64
        /// The driver who accepted and the trip made (once matched).
        public var driverID: String?
        public var tripID: String?

        public init(state: RideRequestState, expiresAt: Int64, driverID: String? = nil, tripID: String? = nil) {
            self.state = state
            self.expiresAt = expiresAt
            self.driverID = driverID
            self.tripID = tripID
        }

        public init(_ request: RideRequestRecord) {
            self.init(state: request.state, expiresAt: request.expiresAt, driverID: request.driverID, tripID: request.tripID)
        }
    }

    public enum Event: Sendable, Equatable {
        /// A driver accepts at `now` (epoch ms).
        case accept(driverID: String, now: Int64)
        /// The rider (or an operator) cancels.
        case cancel
        /// The scheduler found the request's `expires_at` passed with no driver.
        case expire
    }

    /// A notification to the rider.
    public enum RiderNotice: Sendable, Equatable {
        /// "Driver on the way" with the driver's name and car (the accept).
        case driverOnTheWay
        /// "No drivers available" (`DRIVER_UNAVAILABLE`; the expiry).
        case noDriverAvailable
    }

    /// What a change does, in the order the service runs them, each in its phase: inside the
    /// transaction or after its commit.
    public enum Effect: Sendable, Equatable {
        /// In the transaction: the trip is made, `ACCEPTED`, with its `REQUESTED → ACCEPTED` event.
        case openTrip
        /// In the transaction: the offers still open end with this outcome (the winner's, if
        /// any, with `won`).
        case decideOffers(OfferOutcome)
        /// Prepared (before or in the transaction), written in it, delivered after the commit.
        case notifyRider(RiderNotice)
        /// In the transaction: the rider's trip Live Activity starts; woken after the commit.
        case startLiveActivity
        /// After the commit: the rider and the driver join `trip:{id}`.
        case joinTripRoom
        /// After the commit: `trip_state_changed` (`REQUESTED → ACCEPTED`) on `trip:{id}`.
        case publishTripStateChanged
        /// After the commit: `ride_request_updated` with the new state to the rider.
        case publishRequestUpdated
        /// After the commit: `ride:closed` with this reason to every offered driver but the winner.
        case closeOffers(reason: String)
        /// After the commit: every node's tracker learns of the trip.
        case announceTrip
        /// This node's statistics: a request that ended unmatched, by reason.
        case countUnmatched(String)
    }

    /// Why an event is refused.
    public enum Refusal: Sendable, Equatable {
        /// Accept: another driver has it.
        case alreadyAccepted
        /// Accept: still searching, but its time is up.
        case expiredWhileSearching
        /// Accept: it ended (`CANCELLED`, `EXPIRED`).
        case closed(RideRequestState)
        /// Cancel: it ended unmatched (`DRIVER_UNAVAILABLE`).
        case expired

        /// The error the client gets.
        public var error: APIError {
            switch self {
            case .alreadyAccepted: TripError.alreadyAccepted
            case .expiredWhileSearching: RideRequestLifecycle.expiredError
            case .closed(let state):
                APIError(
                    status: 409, code: .rideRequestClosed, message: "The ride request is \(state.rawValue.lowercased()).",
                    details: ["state": .string(state.rawValue)])
            case .expired: TripError.requestClosed(.expired)
            }
        }
    }

    public enum Decision: Sendable, Equatable {
        case refused(Refusal)
        /// Nothing to do: answered with the request as it is.
        case unchanged
        /// The request is matched and its trip answers: the winner's repeated accept gets the
        /// trip (`tripID`), a cancel cancels the trip (if there is one).
        case deferToTrip(String?)
        case changed(to: RideRequestState, effects: [Effect])
    }

    /// 409 `RIDE_REQUEST_CLOSED` for a request whose time ran out (also an accept that lost
    /// to the expiry).
    static let expiredError = APIError(status: 409, code: .rideRequestClosed, message: "The ride request expired.", details: ["state": "EXPIRED"])

    public static func decide(_ request: Snapshot, _ event: Event) -> Decision {
        switch event {
        case .accept(let driverID, let now): accept(request, by: driverID, at: now)
        case .cancel: cancel(request)
        case .expire: expire(request)
        }
    }

    static func accept(_ request: Snapshot, by driverID: String, at now: Int64) -> Decision {
        switch request.state {
        case .searching:
            if now >= request.expiresAt { return .refused(.expiredWhileSearching) }
            return .changed(
                to: .matched,
                effects: [
                    .openTrip, .decideOffers(.lost), .notifyRider(.driverOnTheWay), .startLiveActivity, .joinTripRoom, .publishTripStateChanged,
                    .publishRequestUpdated, .closeOffers(reason: "accepted"), .announceTrip,
                ])
        case .matched:
            guard request.driverID == driverID, let tripID = request.tripID else { return .refused(.alreadyAccepted) }
            return .deferToTrip(tripID)
        case .cancelled, .expired:
            return .refused(.closed(request.state))
        }
    }

    static func cancel(_ request: Snapshot) -> Decision {
        switch request.state {
        case .cancelled: return .unchanged
        case .expired: return .refused(.expired)
        case .matched: return .deferToTrip(request.tripID)
        case .searching:
            return .changed(
                to: .cancelled, effects: [.decideOffers(.cancelled), .countUnmatched("cancelled"), .publishRequestUpdated, .closeOffers(reason: "cancelled")])
        }
    }

    static func expire(_ request: Snapshot) -> Decision {
        guard request.state == .searching else { return .unchanged }
        return .changed(
            to: .expired,
            effects: [
                .notifyRider(.noDriverAvailable), .decideOffers(.expired), .publishRequestUpdated, .closeOffers(reason: "expired"), .countUnmatched("expired"),
            ])
    }
}
