import HeraldCore

/// The trip machine with what each change does: given the trip's state, the target a party
/// asked for and who asked, either a refusal (the error the client gets) or the new state and
/// the effects `TripBook.transition` runs.
///
/// Why a pure machine: which push goes to whom, when the fare is settled, when a rider's
/// request searches again and which checks come first were decided inline in the service,
/// between database calls; here each transition and its effects are a value a unit test reads
/// (issue 42, part 4). The conditional update in `TripStore.transition` still decides races:
/// a trip that changed since it was read is answered by `answerAfterLostRace`.
public enum TripLifecycle {
    /// What a transition does, in the order the service runs them. The service runs each in
    /// its phase: before the transaction, inside it, or after its commit.
    public enum Effect: Sendable, Equatable {
        /// Before: the driver's fresh position confirms the arrival (else `LOCATION_REQUIRED`)
        /// and joins the event's context with the distance to the pickup.
        case confirmArrivalLocation
        /// Prepared before, written in the transaction, delivered after its commit.
        case notify(TripNotice)
        /// Before: the location writer flushes, since the fare is priced from the trail.
        case flushTrail
        /// In the transaction: the final fare from the trail, shown in the event as `fare`.
        case settleFare
        /// In the transaction: the `trip_events` row.
        case recordEvent
        /// In the transaction: the rider's request searches again, never offered to this
        /// driver; after the commit the rider hears of it and its first round runs.
        case searchAgain
        /// In the transaction: the rider's Live Activity shows the new state (with the
        /// driver's name at the arrival); its pushes are woken after the commit.
        case updateLiveActivity(withDriverName: Bool)
        /// After the commit: `trip_state_changed` on `trip:{id}`.
        case publishStateChanged
        /// After the commit: every node's tracker hears the new state (rate limits change; a
        /// trip that is over frees its driver).
        case announce
    }

    /// Why a transition is refused.
    public enum Refusal: Sendable, Equatable {
        /// The target is not a state a trip can be asked to take (`REQUESTED`).
        case unknownTarget
        /// The trip was already cancelled (the rideshare design's race answer).
        case alreadyCancelled
        /// This party may not move a trip to that state.
        case notYours(TripActor, to: TripState)
        /// The machine does not go from one to the other.
        case invalid(from: TripState, to: TripState)

        /// The error the client gets.
        public var error: APIError {
            switch self {
            case .unknownTarget: APIError.validation(field: "to", "must be one of ACCEPTED, ARRIVED, IN_PROGRESS, COMPLETED, CANCELLED")
            case .alreadyCancelled: TripError.alreadyCancelled
            case .notYours(let actor, let to): TripError.notYours(actor, to: to)
            case .invalid(let from, let to): TripError.invalidTransition(from: from, to: to.rawValue)
            }
        }
    }

    public enum Decision: Sendable, Equatable {
        case refused(Refusal)
        /// The same target again (a retried request): answered with the trip as it is.
        case unchanged
        case changed(to: TripState, effects: [Effect])
    }

    /// `current` → `to` asked by `actor`. The checks keep the order clients rely on: an unknown
    /// target, an already cancelled trip, a repeat, the party's right, then the machine.
    public static func decide(from current: TripState, to: TripState, by actor: TripActor) -> Decision {
        if to == .requested { return .refused(.unknownTarget) }
        if current == .cancelled { return .refused(.alreadyCancelled) }
        if current == to { return .unchanged }
        guard actor.mayMove(to: to) else { return .refused(.notYours(actor, to: to)) }
        guard current.canBecome(to) else { return .refused(.invalid(from: current, to: to)) }
        var effects: [Effect] = []
        if to == .arrived && actor == .driver { effects.append(.confirmArrivalLocation) }
        effects += notices(from: current, to: to, by: actor).map(Effect.notify)
        if to == .completed { effects += [.flushTrail, .settleFare] }
        effects.append(.recordEvent)
        // A driver who drops a rider before the ride starts: the rider's request searches again.
        if to == .cancelled && actor == .driver && (current == .accepted || current == .arrived) { effects.append(.searchAgain) }
        effects += [.updateLiveActivity(withDriverName: to == .arrived), .publishStateChanged, .announce]
        return .changed(to: to, effects: effects)
    }

    /// The answer when the trip changed between the read and the conditional update: nil
    /// answers with the trip as it now is (it reached `wanted` anyway).
    public static func answerAfterLostRace(now state: TripState, wanted: TripState) -> Refusal? {
        if state == .cancelled { return .alreadyCancelled }
        if state == wanted { return nil }
        return .invalid(from: state, to: wanted)
    }

    /// The pushes of the rideshare design's table for a change, plus the silent state-sync
    /// push for a change the rider is not shown.
    static func notices(from current: TripState, to: TripState, by actor: TripActor) -> [TripNotice] {
        switch to {
        case .arrived: return [.driverArrived]
        case .inProgress: return [.rideStarted]
        case .completed: return [.rideCompleted]
        case .cancelled:
            switch actor {
            case .driver: return [.driverCancelled(findingAnother: current == .accepted || current == .arrived)]
            case .rider: return [.riderCancelled]
            case .operator, .system: return [.cancelledForRider, .cancelledForDriver]
            }
        case .requested, .accepted: return []
        }
    }
}
