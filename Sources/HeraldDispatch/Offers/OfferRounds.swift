import HeraldGeo

/// The offer-round rules both marketplaces share: a job offered to drivers (dispatch) and a
/// ride request offered to drivers (trips) each search in rounds of growing radius, offer
/// each driver once, and end unclaimed when the rounds (or the request's own deadline) run
/// out.
///
/// Why one value type: the widening, the round length, the end and the choice of drivers were
/// written twice, once per module, and had begun to differ only by accident. What differs on
/// purpose is configuration: a job's rounds each last `offer_timeout_seconds` and the job
/// expires after the last; a ride request has one deadline (`request_timeout_seconds`) that
/// its rounds share, and after the last round it waits for that deadline.
public struct OfferRounds: Sendable, Equatable {
    /// Each round's search radius, in order (a round without a centre ignores it).
    public var radiiMeters: [Double]
    /// How long a round lasts before the next one (milliseconds).
    public var roundMilliseconds: Int64
    /// When the whole search ends, if it has a deadline of its own (epoch milliseconds).
    public var deadline: Int64?

    public init(radiiMeters: [Double], roundMilliseconds: Int64, deadline: Int64? = nil) {
        self.radiiMeters = radiiMeters
        self.roundMilliseconds = roundMilliseconds
        self.deadline = deadline
    }

    /// What a due subject does next.
    public enum Step: Sendable, Equatable {
        /// Offer round `round` (1-based) within `radiusMeters`; the round after it is due at `nextRoundAt`.
        case offer(round: Int, radiusMeters: Double, nextRoundAt: Int64)
        /// Every round ran: nothing more until the deadline.
        case waitUntil(Int64)
        /// The search ends unclaimed.
        case expire
    }

    /// The step for a subject whose round `completed` (0: none yet) has ended at `now`.
    public func next(afterRound completed: Int, now: Int64) -> Step {
        if let deadline, now >= deadline { return .expire }
        guard completed < radiiMeters.count else {
            return deadline.map(Step.waitUntil) ?? .expire
        }
        let end = now + roundMilliseconds
        return .offer(round: completed + 1, radiusMeters: radiiMeters[completed], nextRoundAt: deadline.map { min($0, end) } ?? end)
    }

    /// The drivers a round offers to: never one offered before, never the one who asked (a
    /// test account may be both), nearest first as given, at most `limit` (one notification's
    /// recipients).
    public static func select(_ candidates: [DriverMatch], offeredBefore: Set<String>, requester: String, limit: Int) -> [DriverMatch] {
        var seen = offeredBefore
        seen.insert(requester)
        var chosen: [DriverMatch] = []
        for candidate in candidates where chosen.count < limit {
            if seen.insert(candidate.driverID).inserted { chosen.append(candidate) }
        }
        return chosen
    }
}
