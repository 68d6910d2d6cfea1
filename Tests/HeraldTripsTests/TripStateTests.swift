import Testing

@testable import HeraldTrips

@Suite struct TripStateTests {
    /// The rideshare design's machine, written out by hand: the forward chain plus any non-final → CANCELLED.
    static let forward: [(TripState, TripState)] = [
        (.requested, .accepted),
        (.accepted, .arrived),
        (.arrived, .inProgress),
        (.inProgress, .completed),
    ]

    static func expectedAllowed(_ from: TripState, _ to: TripState) -> Bool {
        if to == .cancelled { return [TripState.requested, .accepted, .arrived, .inProgress].contains(from) }
        return forward.contains { $0.0 == from && $0.1 == to }
    }

    @Test func rawValuesMatchTheWireNames() {
        #expect(TripState.allCases.map(\.rawValue) == ["REQUESTED", "ACCEPTED", "ARRIVED", "IN_PROGRESS", "COMPLETED", "CANCELLED"])
        #expect(TripState(rawValue: "IN_PROGRESS") == .inProgress)
        #expect(TripState(rawValue: "in_progress") == nil)
        #expect(TripState(rawValue: "PENDING") == nil)
    }

    @Test func everyForwardStepIsAllowed() {
        for (from, to) in Self.forward {
            #expect(from.canBecome(to), "\(from) → \(to) must be allowed")
        }
    }

    @Test func everyNonFinalStateMayBeCancelled() {
        for state in [TripState.requested, .accepted, .arrived, .inProgress] {
            #expect(state.canBecome(.cancelled), "\(state) → CANCELLED must be allowed")
        }
    }

    @Test func allowedTransitionsListExactlyTheDesignedMachine() {
        #expect(TripState.requested.allowedTransitions == [.accepted, .cancelled])
        #expect(TripState.accepted.allowedTransitions == [.arrived, .cancelled])
        #expect(TripState.arrived.allowedTransitions == [.inProgress, .cancelled])
        #expect(TripState.inProgress.allowedTransitions == [.completed, .cancelled])
        #expect(TripState.completed.allowedTransitions.isEmpty)
        #expect(TripState.cancelled.allowedTransitions.isEmpty)
    }

    @Test func everyPairAgreesWithTheMachine() {
        var allowedCount = 0
        for from in TripState.allCases {
            for to in TripState.allCases {
                let expected = Self.expectedAllowed(from, to)
                #expect(from.canBecome(to) == expected, "\(from) → \(to) should be \(expected ? "allowed" : "refused")")
                if from.canBecome(to) { allowedCount += 1 }
            }
        }
        // 4 forward steps + 4 cancellations.
        #expect(allowedCount == 8)
    }

    @Test func skippingAStepIsRefused() {
        #expect(!TripState.accepted.canBecome(.inProgress))
        #expect(!TripState.arrived.canBecome(.completed))
        #expect(!TripState.requested.canBecome(.arrived))
        #expect(!TripState.requested.canBecome(.completed))
        #expect(!TripState.accepted.canBecome(.completed))
    }

    @Test func goingBackOrStayingIsRefused() {
        #expect(!TripState.arrived.canBecome(.accepted))
        #expect(!TripState.inProgress.canBecome(.arrived))
        #expect(!TripState.inProgress.canBecome(.requested))
        #expect(!TripState.accepted.canBecome(.requested))
        for state in TripState.allCases {
            #expect(!state.canBecome(state), "\(state) → \(state) must be refused")
        }
    }

    @Test func finalStatesGoNowhere() {
        for to in TripState.allCases {
            #expect(!TripState.completed.canBecome(to), "COMPLETED → \(to) must be refused")
            #expect(!TripState.cancelled.canBecome(to), "CANCELLED → \(to) must be refused")
        }
    }

    @Test func finalAndActiveFlags() {
        #expect(TripState.allCases.filter(\.isFinal) == [.completed, .cancelled])
        #expect(TripState.allCases.filter(\.isActive) == [.accepted, .arrived, .inProgress])
        #expect(!TripState.requested.isActive)
        #expect(!TripState.requested.isFinal)
        for state in TripState.allCases {
            #expect(!(state.isFinal && state.isActive), "\(state) cannot be both final and active")
        }
    }

    @Test func riderMayOnlyCancel() {
        for state in TripState.allCases {
            #expect(TripActor.rider.mayMove(to: state) == (state == .cancelled), "rider → \(state)")
        }
    }

    @Test func driverDrivesForwardButDoesNotAccept() {
        #expect(TripActor.driver.mayMove(to: .arrived))
        #expect(TripActor.driver.mayMove(to: .inProgress))
        #expect(TripActor.driver.mayMove(to: .completed))
        #expect(TripActor.driver.mayMove(to: .cancelled))
        #expect(!TripActor.driver.mayMove(to: .accepted))
        #expect(!TripActor.driver.mayMove(to: .requested))
    }

    @Test func operatorAndSystemMayDoAnything() {
        for state in TripState.allCases {
            #expect(TripActor.operator.mayMove(to: state), "operator → \(state)")
            #expect(TripActor.system.mayMove(to: state), "system → \(state)")
        }
    }

    @Test func actorRawValues() {
        #expect(TripActor.rider.rawValue == "RIDER")
        #expect(TripActor.driver.rawValue == "DRIVER")
        #expect(TripActor.system.rawValue == "SYSTEM")
        #expect(TripActor.operator.rawValue == "OPERATOR")
        #expect(TripActor(rawValue: "rider") == nil)
    }

    @Test func rideRequestMayOnlyBeCancelledWhileSearching() {
        #expect(RideRequestState.searching.allowedTransitions == ["CANCELLED"])
        #expect(RideRequestState.matched.allowedTransitions.isEmpty)
        #expect(RideRequestState.cancelled.allowedTransitions.isEmpty)
        #expect(RideRequestState.expired.allowedTransitions.isEmpty)
        #expect(RideRequestState(rawValue: "EXPIRED") == .expired)
    }
}
