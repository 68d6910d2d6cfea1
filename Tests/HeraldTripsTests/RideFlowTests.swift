import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldTrips

/// Rides through the trips module's owners on both engines, without HTTP; the routes' own concerns stay in the server's `TripFlowTests`.
@Suite struct RideFlowTests {
    static let rider = TripHarness.identity("rider")
    static let alex = TripHarness.identity("alex", .driver)
    static let ops = TripHarness.identity("ops", .operator)

    /// Every party hears of every change: offers, the race's result, each state in the trip's room, the rider's notifications.
    @Test(arguments: TestEngine.allCases)
    func aRideGoesFromRequestToCompletionAndEveryChangeIsTold(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 800)
            try await h.driver("blake", metersNorth: 1_500, name: "Blake Jones")
            try await h.driver("far", metersNorth: 9_000)

            let quote = try await h.trips.requests.quote(TripHarness.ride, riderID: "rider")
            #expect(quote.estimate.surgeMultiplier == 1.0)
            let request = try await h.book("rider")
            #expect(request.state == .searching && request.state.allowedTransitions == ["CANCELLED"])
            #expect(request.searchRadiusM == 2_000 && request.currency == "USD")
            #expect(request.fareMinMinor > 700 && request.fareMaxMinor > request.fareMinMinor)
            // The booking is priced as it was quoted.
            #expect(request.fareMinMinor == quote.estimate.minMinor && request.fareMaxMinor == quote.estimate.maxMinor)
            #expect(request.surgeMultiplier == quote.estimate.surgeMultiplier)
            #expect(request.expiresAt == TripHarness.start.epochMilliseconds + 300_000)
            // The nearest drivers within 2 km were offered it; the one 9 km away was not (yet).
            #expect(try await h.events("driver:alex").contains { $0.name == "ride:new" && $0.payload["request_id"]?.stringValue == request.id })
            #expect(try await h.events("driver:blake").contains { $0.name == "ride:new" })
            #expect(try await h.events("driver:far").allSatisfy { $0.name != "ride:new" })

            // First accept wins; the winner's retry gets the same trip; the other driver is too late.
            let trip = try await h.trips.accepts.accept(request.id, driverID: "alex")
            #expect(trip.state == .accepted && trip.driverID == "alex" && trip.riderID == "rider" && trip.requestID == request.id)
            await #expect(throws: TripError.alreadyAccepted) { try await h.trips.accepts.accept(request.id, driverID: "blake") }
            #expect(try await h.trips.accepts.accept(request.id, driverID: "alex").id == trip.id)
            #expect(try await h.events("driver:blake").contains { $0.name == "ride:closed" && $0.payload["reason"] == "accepted" })
            let matched = try await h.events("user:rider").last { $0.name == "ride_request_updated" }
            #expect(matched?.payload["state"] == "MATCHED" && matched?.payload["trip_id"]?.stringValue == trip.id)
            // The rider's notification names the driver and the car.
            #expect(try await h.notifications("rider").map(\.body) == ["Alex is on the way in a silver Camry"])

            // Invalid transitions say what is allowed; a rider cannot drive the trip.
            let skip = await #expect(throws: APIError.self) {
                try await h.trips.book.transition(trip.id, to: "IN_PROGRESS", by: Self.alex, context: [:])
            }
            #expect(skip == TripError.invalidTransition(from: .accepted, to: "IN_PROGRESS"))
            #expect(skip?.details?["allowed_transitions"] == ["ARRIVED", "CANCELLED"])
            await #expect(throws: TripError.notYours(.rider, to: .arrived)) {
                try await h.trips.book.transition(trip.id, to: "ARRIVED", by: Self.rider, context: [:])
            }
            await #expect(throws: TripLifecycle.Refusal.unknownTarget.error) {
                try await h.trips.book.transition(trip.id, to: "FLYING", by: Self.alex, context: [:])
            }

            for step in [TripState.arrived, .inProgress, .completed] {
                h.clock.advance(by: 60)
                // A fresh position each minute (the arrival needs one).
                #expect(try await h.report("alex", metersNorth: 0, sequence: nil) == .accepted)
                #expect(try await h.trips.book.transition(trip.id, to: step.rawValue, by: Self.alex, context: [:]).state == step)
            }
            let done = try await h.trips.book.trip(trip.id, for: Self.rider)
            #expect(done.version == 4 && done.etag == "\"trip-v4\"" && done.state.allowedTransitions.isEmpty)
            await #expect(throws: TripError.invalidTransition(from: .completed, to: "CANCELLED")) {
                try await h.trips.book.transition(trip.id, to: "CANCELLED", by: Self.rider, context: [:])
            }

            // Every change is in the trip's room, in order, with who did it.
            let changes = try await h.events("trip:\(trip.id)").filter { $0.name == "trip_state_changed" }.map(\.payload)
            #expect(changes.map { $0["state"] } == ["ACCEPTED", "ARRIVED", "IN_PROGRESS", "COMPLETED"])
            #expect(changes.map { $0["previous_state"] } == ["REQUESTED", "ACCEPTED", "ARRIVED", "IN_PROGRESS"])
            #expect(changes.allSatisfy { $0["triggered_by"] == "DRIVER" && $0["trip_id"]?.stringValue == trip.id })
            try #require(changes.count == 4)
            #expect(changes[1]["context"]?["arrival_location"]?["latitude"] == 37.7749)
            #expect(changes[1]["allowed_transitions"] == ["IN_PROGRESS", "CANCELLED"])
            // The arrival and the end are shown; the start is a silent sync that is not in the inbox.
            let shown = try await h.notifications("rider")
            #expect(shown.contains { $0.title == "Driver arrived" && $0.body == "Your driver has arrived" })
            #expect(shown.contains { $0.title == "Trip complete" } && !shown.contains { $0.title == "Trip started" })
            #expect(try await h.silentNotifications("rider", type: "trip_sync") == 1)
        }
    }

    /// An app that lost its trip id finds its live trip in each party's history and in its state sync (issue 39).
    @Test(arguments: TestEngine.allCases)
    func historiesAndTheStateSyncFindALiveTrip(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 800)
            try await h.driver("blake", metersNorth: 1_500, name: "Blake Jones")
            let request = try await h.book("rider")
            let trip = try await h.trips.accepts.accept(request.id, driverID: "alex")

            let riderTrips = try await h.trips.book.history(for: Self.rider, state: nil, offset: 0, limit: 20)
            #expect(riderTrips.total == 1 && riderTrips.trips.first?.id == trip.id)
            #expect(riderTrips.trips.first?.state == .accepted && riderTrips.trips.first?.requestID == request.id)
            #expect(try await h.trips.book.history(for: Self.alex, state: .accepted, offset: 0, limit: 20).total == 1)
            #expect(try await h.trips.book.history(for: Self.alex, state: .completed, offset: 0, limit: 20).total == 0)
            #expect(try await h.trips.book.history(for: TripHarness.identity("blake", .driver), state: nil, offset: 0, limit: 20).total == 0)
            #expect(try await h.trips.book.history(for: Self.ops, state: nil, offset: 0, limit: 20).total == 1)
            let requests = try await h.trips.requests.requestHistory(for: Self.rider, offset: 0, limit: 5)
            #expect(requests.total == 1 && requests.requests.first?.tripID == trip.id)
            #expect(try await h.trips.requests.requestHistory(for: TripHarness.identity("someone-else"), offset: 0, limit: 20).total == 0)

            // What a connection of the rider follows, and the state it is told without asking.
            #expect(try await h.trips.book.activeTripIDs("rider") == [trip.id])
            let sync = try await h.trips.book.stateSync(Self.rider, channel: "trip:\(trip.id)", clientState: nil)
            #expect(sync["trip_id"]?.stringValue == trip.id && sync["current_state"] == "ACCEPTED")
        }
    }

    /// The rideshare design's LOCATION_REQUIRED: an arrival is confirmed by a fresh position; a refused one changes nothing.
    @Test(arguments: TestEngine.allCases)
    func anArrivalNeedsAFreshLocation(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 800)
            let trip = try await h.acceptedTrip(driver: "alex")
            // The last position is older than dispatch.location_max_age_seconds.
            h.clock.advance(by: Double(h.dispatch.config.locationMaxAgeSeconds) + 1)
            await #expect(throws: TripError.locationRequired) {
                try await h.trips.book.transition(trip.id, to: "ARRIVED", by: Self.alex, context: [:])
            }
            #expect(try await h.trips.book.trip(trip.id, for: Self.alex).state == .accepted)
            #expect(try await h.report("alex", metersNorth: 0, sequence: 2) == .accepted)
            #expect(try await h.trips.book.transition(trip.id, to: "ARRIVED", by: Self.alex, context: [:]).state == .arrived)
        }
    }

    /// A search widens, then ends unmatched; a driver who drops the rider makes the request search again without them.
    @Test(arguments: TestEngine.allCases)
    func anUnmatchedRequestExpiresAndADriverCancelSearchesAgain(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            let lonely = try await h.book("lonely")
            // Half-way the search widens to the second radius, and the rider is told (the app
            // animates the search).
            h.clock.advance(by: 151)
            try await h.trips.rounds.runDue()
            let widened = try #require(try await h.events("user:lonely").last { $0.name == "ride_request_updated" }?.payload)
            #expect(widened["state"] == "SEARCHING" && widened["search_radius_meters"] == 5_000 && widened["offer_round"] == 2, "\(widened)")
            h.clock.advance(by: 150)
            try await h.trips.rounds.runDue()
            #expect(try await h.trips.requests.request(lonely.id, for: TripHarness.identity("lonely")).state == .expired)
            let told = try #require(
                try await h.events("user:lonely").last { $0.name == "ride_request_updated" && $0.payload["state"] == "EXPIRED" }?.payload)
            #expect(told["error"]?["code"] == "DRIVER_UNAVAILABLE", "\(told)")
            #expect(try await h.notifications("lonely").first?.title == "No drivers available")
            await #expect(throws: TripError.requestClosed(.expired)) {
                try await h.trips.requests.cancelRequest(lonely.id, by: TripHarness.identity("lonely"), reason: nil)
            }
            await #expect(throws: TripError.requestNotFound) { try await h.trips.requests.request(lonely.id, for: TripHarness.identity("other")) }

            try await h.driver("alex", metersNorth: 800)
            try await h.driver("blake", metersNorth: 1_000)
            let trip = try await h.acceptedTrip(driver: "alex")
            // The driver is busy: accepting another ride fails.
            let second = try await h.book("rider2")
            await #expect(throws: TripError.driverBusy) { try await h.trips.accepts.accept(second.id, driverID: "alex") }
            let dropped = try await h.trips.book.transition(trip.id, to: "CANCELLED", by: Self.alex, context: ["reason": "flat tyre"])
            #expect(dropped.state == .cancelled && dropped.cancelledBy == "DRIVER" && dropped.cancelReason == "flat tyre")
            let again = try #require(try await h.events("user:rider").last { $0.name == "ride_request_updated" }?.payload)
            #expect(again["state"] == "SEARCHING" && again["previous_trip_id"]?.stringValue == trip.id)
            let newID = try #require(again["request_id"]?.stringValue)
            // Offered again, but never to the driver who cancelled.
            #expect(try await h.events("driver:blake").filter { $0.name == "ride:new" && $0.payload["request_id"]?.stringValue == newID }.count == 1)
            #expect(try await h.events("driver:alex").allSatisfy { !($0.name == "ride:new" && $0.payload["request_id"]?.stringValue == newID) })
            // (The manual clock gives both notifications one time: look for it, not at the first.)
            #expect(try await h.notifications("rider").contains { $0.body == "Your driver cancelled. Finding another..." })
            await #expect(throws: TripError.alreadyCancelled) {
                try await h.trips.book.transition(trip.id, to: "CANCELLED", by: Self.rider, context: [:])
            }
            // The rider cancels the new search; the offered driver's screen drops it.
            #expect(try await h.trips.requests.cancelRequest(newID, by: Self.rider, reason: nil).state == .cancelled)
            #expect(try await h.events("driver:blake").contains { $0.name == "ride:closed" && $0.payload["request_id"]?.stringValue == newID })
            await #expect(throws: RideRequestLifecycle.Refusal.closed(.cancelled).error) {
                try await h.trips.accepts.accept(newID, driverID: "blake")
            }
        }
    }

    /// An unconfirmed surge books nothing and names the new price; every driver accepting at once leaves exactly one winner.
    @Test(arguments: TestEngine.allCases)
    func surgeMustBeConfirmedAndManyDriversRaceForOneRide(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            for index in 0..<8 { try await h.driver("d\(index)", metersNorth: 200 + Double(index) * 50) }
            // 8 drivers in the cell: the first 8 requests are not surged; the 9th and 10th are (10/8 → 1.1).
            for index in 0..<8 { #expect(try await h.book("r\(index)").state == .searching) }
            #expect(try await h.book("r8").state == .searching)
            let surged = try await #require(throws: APIError.self) { try await h.book("r9") }
            #expect(surged.status == 409 && surged.code == .surgeChanged)
            let multiplier = try #require(surged.details?["surge_multiplier"]?.doubleValue)
            #expect(multiplier > 1.0 && surged.details?["fare_estimate"]?["surge_multiplier"]?.doubleValue == multiplier)
            var confirmed = TripHarness.ride
            confirmed.confirmedSurge = multiplier
            let booked = try await h.book("r9", confirmed)
            #expect(booked.state == .searching && booked.surgeMultiplier == multiplier)
            // Every driver (those without a trip yet) accepts at once: exactly one wins.
            let results = await withTaskGroup(of: Result<String, any Error>.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        do {
                            return .success(try await h.trips.accepts.accept(booked.id, driverID: "d\(index)").driverID)
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var all: [Result<String, any Error>] = []
                for await result in group { all.append(result) }
                return all
            }
            let winners = results.compactMap { try? $0.get() }
            #expect(winners.count == 1)
            let refused = results.compactMap { result -> APIError? in
                if case .failure(let error as APIError) = result { return error }
                return nil
            }
            #expect(refused.filter { $0.status == 409 }.allSatisfy { $0 == TripError.alreadyAccepted })
            let tripID = try #require(try await h.trips.requests.request(booked.id, for: Self.ops).tripID)
            #expect(try await h.trips.book.trip(tripID, for: Self.ops).driverID == winners.first)
        }
    }

    /// The fare is final at COMPLETED, priced from the trail driven, and each side rates the other once.
    @Test(arguments: TestEngine.allCases)
    func aCompletedTripIsPricedFromItsTrailAndEachSideRatesTheOther(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 300)
            let trip = try await h.acceptedTrip(driver: "alex")
            var sequence: Int64 = 1
            func at(_ metersNorth: Double, after seconds: Double) async throws {
                sequence += 1
                h.clock.advance(by: seconds)
                #expect(try await h.report("alex", metersNorth: metersNorth, sequence: sequence) == .accepted)
            }
            func transition(_ to: TripState) async throws -> TripRecord {
                try await h.trips.book.transition(trip.id, to: to.rawValue, by: Self.alex, context: [:])
            }
            func rate(_ identity: Identity, _ rating: Int, _ comment: String? = nil) async throws -> TripRecord {
                try await h.trips.book.rate(trip.id, by: identity, rating: rating, comment: comment)
            }
            try await at(0, after: 5)
            #expect(try await transition(.arrived).state == .arrived)
            await #expect(throws: TripError.notCompleted) { try await rate(Self.rider, 5) }
            #expect(try await transition(.inProgress).state == .inProgress)
            // 3 km north in 200 s of samples, 15 minutes from start to end: 250 + 120 × 3 + 30 × 15 = 1,060.
            for step in 1...10 { try await at(Double(step) * 300, after: 20) }
            h.clock.advance(by: 700)
            let completed = try await transition(.completed)
            #expect(completed.state == .completed)
            #expect(completed.finalFareMinor == 1_060, "\(completed)")
            #expect(completed.travelledDurationS == 900)
            #expect(completed.travelledDistanceM.map { abs($0 - 3_000) <= 2 } == true)
            let changed = try await h.events("trip:\(trip.id)").last { $0.name == "trip_state_changed" }?.payload
            #expect(changed?["state"] == "COMPLETED" && changed?["context"]?["fare"]?["final_amount_minor"] == 1_060)

            // Only the parties rate: a stranger learns nothing, an operator is refused.
            await #expect(throws: TripError.tripNotFound) { try await rate(TripHarness.identity("stranger"), 1) }
            await #expect(throws: TripError.notAParty) { try await rate(Self.ops, 1) }
            // Each side once; the same again answers the same, a different one is refused.
            let byRider = try await rate(Self.rider, 5, "Great driver")
            #expect(byRider.riderRating == 5 && byRider.riderComment == "Great driver" && byRider.driverRating == nil)
            #expect(try await rate(Self.rider, 5, "Great driver").riderRating == 5)
            await #expect(throws: TripError.alreadyRated) { try await rate(Self.rider, 1) }
            #expect(try await rate(Self.alex, 4).driverRating == 4)
            // Each rating joins the other side's average.
            #expect(try await h.dispatch.drivers.profile("alex")?.averageRating == 5)
            let riderAverage = try await database.withConnection { db in try await TripStore().riderRating(db, riderID: "rider") }
            #expect(riderAverage == 4)
        }
    }

    /// A driver who opens the app from the offer's push has only the request id (issue 39): what they may read of it.
    @Test(arguments: TestEngine.allCases)
    func aDriverOfferedARideReadsItAndListsTheirOpenOffers(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 800)
            try await h.driver("blake", metersNorth: 1_500, name: "Blake Jones")
            try await h.driver("far", metersNorth: 9_000)
            let request = try await h.book("rider")

            let (offered, offer) = try await h.trips.requests.offeredRequest(request.id, driverID: "alex")
            #expect(offered.state == .searching && offer.outcome == nil && offer.round == 1)
            #expect(offered.pickupAddress == "123 Market St, San Francisco" && offered.tripID == nil)
            #expect(try await h.trips.requests.openOffers(driverID: "alex").map { $0.0.id } == [request.id])
            // A driver it was not offered to learns nothing, not even that it exists.
            await #expect(throws: TripError.requestNotFound) { try await h.trips.requests.offeredRequest(request.id, driverID: "far") }
            #expect(try await h.trips.requests.openOffers(driverID: "far").isEmpty)

            let trip = try await h.trips.accepts.accept(request.id, driverID: "alex")
            let won = try await h.trips.requests.offeredRequest(request.id, driverID: "alex")
            #expect(won.1.outcome == .won && won.0.tripID == trip.id && won.0.state == .matched)
            #expect(try await h.trips.requests.offeredRequest(request.id, driverID: "blake").1.outcome == .lost)
            for driver in ["alex", "blake"] {
                #expect(try await h.trips.requests.openOffers(driverID: driver).isEmpty, "\(driver)")
            }
            // What this node counts for /metrics (the server's test reads the text).
            var counted = h.trips.statistics.snapshot
            #expect(counted.requests == 1 && counted.rideOffers == 2)
            #expect(counted.accepts.values["won"] == 1 && (counted.accepts.values["lost"] ?? 0) == 0)
            await #expect(throws: TripError.alreadyAccepted) { try await h.trips.accepts.accept(request.id, driverID: "blake") }
            counted = h.trips.statistics.snapshot
            #expect(counted.accepts.values["lost"] == 1)
            // The rider still reads their own request in full.
            #expect(try await h.trips.requests.request(request.id, for: Self.rider).tripID == trip.id)
        }
    }
}
