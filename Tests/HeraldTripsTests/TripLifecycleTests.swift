import HeraldCore
import HeraldNotifications
import Testing

@testable import HeraldTrips

@Suite struct TripLifecycleTests {
    /// What every change does after its own effects: the event row, the Live Activity, the
    /// publish on `trip:{id}` and the trackers' announcement.
    static func tail(driverName: Bool = false) -> [TripLifecycle.Effect] {
        [.updateLiveActivity(withDriverName: driverName), .publishStateChanged, .announce]
    }

    // MARK: Refusals, in the order the service checks them

    @Test func requestedIsNeverATarget() {
        for from in TripState.allCases {
            for actor in [TripActor.rider, .driver, .operator, .system] {
                #expect(TripLifecycle.decide(from: from, to: .requested, by: actor) == .refused(.unknownTarget), "\(from) → REQUESTED by \(actor)")
            }
        }
    }

    @Test func aCancelledTripRefusesEverythingAsAlreadyCancelled() {
        for to in TripState.allCases where to != .requested {
            for actor in [TripActor.rider, .driver, .operator, .system] {
                #expect(TripLifecycle.decide(from: .cancelled, to: to, by: actor) == .refused(.alreadyCancelled), "CANCELLED → \(to) by \(actor)")
            }
        }
    }

    @Test func theSameTargetAgainIsUnchangedBeforeTheRightsAreChecked() {
        #expect(TripLifecycle.decide(from: .arrived, to: .arrived, by: .driver) == .unchanged)
        #expect(TripLifecycle.decide(from: .completed, to: .completed, by: .driver) == .unchanged)
        // The rider may not move a trip to ARRIVED, but a repeat is answered as it is.
        #expect(TripLifecycle.decide(from: .arrived, to: .arrived, by: .rider) == .unchanged)
        #expect(TripLifecycle.decide(from: .accepted, to: .accepted, by: .driver) == .unchanged)
    }

    @Test func aPartyMovesOnlyWhereItMay() {
        #expect(TripLifecycle.decide(from: .accepted, to: .arrived, by: .rider) == .refused(.notYours(.rider, to: .arrived)))
        #expect(TripLifecycle.decide(from: .arrived, to: .inProgress, by: .rider) == .refused(.notYours(.rider, to: .inProgress)))
        #expect(TripLifecycle.decide(from: .inProgress, to: .completed, by: .rider) == .refused(.notYours(.rider, to: .completed)))
        #expect(TripLifecycle.decide(from: .arrived, to: .accepted, by: .driver) == .refused(.notYours(.driver, to: .accepted)))
        // The right comes before the machine: a rider's impossible step is still not theirs.
        #expect(TripLifecycle.decide(from: .completed, to: .arrived, by: .rider) == .refused(.notYours(.rider, to: .arrived)))
    }

    @Test func theMachineRefusesSkipsAndStepsBack() {
        #expect(TripLifecycle.decide(from: .accepted, to: .inProgress, by: .driver) == .refused(.invalid(from: .accepted, to: .inProgress)))
        #expect(TripLifecycle.decide(from: .accepted, to: .completed, by: .driver) == .refused(.invalid(from: .accepted, to: .completed)))
        #expect(TripLifecycle.decide(from: .inProgress, to: .arrived, by: .driver) == .refused(.invalid(from: .inProgress, to: .arrived)))
        #expect(TripLifecycle.decide(from: .completed, to: .cancelled, by: .operator) == .refused(.invalid(from: .completed, to: .cancelled)))
        #expect(TripLifecycle.decide(from: .completed, to: .cancelled, by: .rider) == .refused(.invalid(from: .completed, to: .cancelled)))
        #expect(TripLifecycle.decide(from: .arrived, to: .accepted, by: .operator) == .refused(.invalid(from: .arrived, to: .accepted)))
    }

    @Test func everyRefusalIsTheClientsError() {
        let unknown = TripLifecycle.Refusal.unknownTarget.error
        #expect(unknown.status == 422 && unknown.code == .validationFailed)
        #expect(unknown.message == "Validation failed: to: must be one of ACCEPTED, ARRIVED, IN_PROGRESS, COMPLETED, CANCELLED")
        #expect(TripLifecycle.Refusal.alreadyCancelled.error == TripError.alreadyCancelled)
        let notYours = TripLifecycle.Refusal.notYours(.rider, to: .arrived).error
        #expect(notYours.status == 403 && notYours.code == .forbidden)
        #expect(notYours.message == "A rider cannot move a trip to ARRIVED.")
        let invalid = TripLifecycle.Refusal.invalid(from: .accepted, to: .completed).error
        #expect(invalid.status == 409 && invalid.code.rawValue == "INVALID_TRANSITION")
        #expect(invalid.details == ["state": "ACCEPTED", "allowed_transitions": ["ARRIVED", "CANCELLED"]])
    }

    // MARK: Each allowed change and its effects

    @Test func theDriverArrivesWhereTheirPositionSaysSo() {
        let effects: [TripLifecycle.Effect] = [.confirmArrivalLocation, .notify(.driverArrived), .recordEvent] + Self.tail(driverName: true)
        #expect(TripLifecycle.decide(from: .accepted, to: .arrived, by: .driver) == .changed(to: .arrived, effects: effects))
    }

    @Test func anOperatorsArrivalNeedsNoPosition() {
        let effects: [TripLifecycle.Effect] = [.notify(.driverArrived), .recordEvent] + Self.tail(driverName: true)
        #expect(TripLifecycle.decide(from: .accepted, to: .arrived, by: .operator) == .changed(to: .arrived, effects: effects))
    }

    @Test func theRideStartsWithASilentSync() {
        let effects: [TripLifecycle.Effect] = [.notify(.rideStarted), .recordEvent] + Self.tail()
        #expect(TripLifecycle.decide(from: .arrived, to: .inProgress, by: .driver) == .changed(to: .inProgress, effects: effects))
    }

    @Test func completingFlushesTheTrailAndSettlesTheFare() {
        let effects: [TripLifecycle.Effect] = [.notify(.rideCompleted), .flushTrail, .settleFare, .recordEvent] + Self.tail()
        #expect(TripLifecycle.decide(from: .inProgress, to: .completed, by: .driver) == .changed(to: .completed, effects: effects))
        #expect(TripLifecycle.decide(from: .inProgress, to: .completed, by: .system) == .changed(to: .completed, effects: effects))
    }

    @Test func aDriverWhoDropsTheRiderBeforeTheRideMakesTheRequestSearchAgain() {
        let effects: [TripLifecycle.Effect] = [.notify(.driverCancelled(findingAnother: true)), .recordEvent, .searchAgain] + Self.tail()
        for from in [TripState.accepted, .arrived] {
            #expect(TripLifecycle.decide(from: from, to: .cancelled, by: .driver) == .changed(to: .cancelled, effects: effects), "\(from) → CANCELLED")
        }
    }

    @Test func aDriverWhoCancelsDuringTheRideStartsNoSearch() {
        let effects: [TripLifecycle.Effect] = [.notify(.driverCancelled(findingAnother: false)), .recordEvent] + Self.tail()
        #expect(TripLifecycle.decide(from: .inProgress, to: .cancelled, by: .driver) == .changed(to: .cancelled, effects: effects))
    }

    @Test func theRidersCancelTellsTheDriver() {
        let effects: [TripLifecycle.Effect] = [.notify(.riderCancelled), .recordEvent] + Self.tail()
        for from in [TripState.accepted, .arrived, .inProgress] {
            #expect(TripLifecycle.decide(from: from, to: .cancelled, by: .rider) == .changed(to: .cancelled, effects: effects), "\(from) → CANCELLED")
        }
    }

    @Test func anOperatorsOrTheSystemsCancelTellsBothAndStartsNoSearch() {
        let effects: [TripLifecycle.Effect] = [.notify(.cancelledForRider), .notify(.cancelledForDriver), .recordEvent] + Self.tail()
        for actor in [TripActor.operator, .system] {
            #expect(TripLifecycle.decide(from: .accepted, to: .cancelled, by: actor) == .changed(to: .cancelled, effects: effects), "by \(actor)")
        }
    }

    // MARK: Races and notices

    @Test func aLostRaceIsAnsweredFromTheStateThatWon() {
        #expect(TripLifecycle.answerAfterLostRace(now: .cancelled, wanted: .arrived) == .alreadyCancelled)
        #expect(TripLifecycle.answerAfterLostRace(now: .cancelled, wanted: .cancelled) == .alreadyCancelled)
        #expect(TripLifecycle.answerAfterLostRace(now: .arrived, wanted: .arrived) == nil)
        #expect(TripLifecycle.answerAfterLostRace(now: .completed, wanted: .cancelled) == .invalid(from: .completed, to: .cancelled))
    }

    @Test func noticesNameTheirRecipientAndWording() {
        func draft(_ notice: TripNotice, _ state: TripState) -> NotificationDraft {
            notice.draft(tripID: "tr_1", riderID: "rider", driverID: "driver", newState: state)
        }
        let data: [String: JSONValue] = ["trip_id": "tr_1", "event_type": "state_changed", "new_state": "CANCELLED"]
        #expect(
            draft(.driverCancelled(findingAnother: true), .cancelled)
                == NotificationDraft(
                    userIDs: ["rider"], type: "trip_update", title: "Driver cancelled", body: "Your driver cancelled. Finding another...", data: data,
                    collapseKey: "trip-tr_1"))
        #expect(draft(.driverCancelled(findingAnother: false), .cancelled).body == "Your driver cancelled the trip.")
        #expect(draft(.riderCancelled, .cancelled).userIDs == ["driver"])
        #expect(draft(.cancelledForRider, .cancelled).body == "Your trip was cancelled.")
        #expect(draft(.cancelledForDriver, .cancelled).userIDs == ["driver"])
        #expect(draft(.driverArrived, .arrived).type == "trip_arrived")
        let started = draft(.rideStarted, .inProgress)
        #expect(started.silent && started.type == "trip_sync" && started.body == nil && started.userIDs == ["rider"])
        #expect(started.data["new_state"] == "IN_PROGRESS")
        #expect(draft(.rideCompleted, .completed).body == "Trip complete. Rate your ride?")
    }
}
