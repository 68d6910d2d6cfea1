import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldTestSupport
import Testing

@testable import HeraldTrips

/// A trip's location stream through dispatch's reports and the trips owners on both engines; the route's answers stay in the server.
@Suite struct TripLocationFlowTests {
    static let rider = TripHarness.identity("rider")
    static let alex = TripHarness.identity("alex", .driver)
    static let ops = TripHarness.identity("ops", .operator)

    /// Inaccurate and impossible samples are kept but never shown, warned and flagged; in a trip 1/s passes after a burst of 5.
    @Test(arguments: TestEngine.allCases)
    func theLocationStreamIsLimitedCheckedSharedAndKept(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 800)
            let trip = try await h.acceptedTrip(driver: "alex")
            func send(_ lat: Double, _ accuracy: Double = 5, sequence: Int64) async throws -> DriverTracker.LocationOutcome {
                try await h.report(
                    "alex",
                    LocationUpdate(
                        point: GeoPoint(latitude: lat, longitude: -122.4194), accuracyMeters: accuracy, heading: 180, speedMps: 10,
                        sequence: sequence, altitudeMeters: 12, batteryPercent: 70, isCharging: false))
            }
            // Driving south towards the pickup at ~10 m/s, one sample a second.
            var lat = 37.7749 + 700 / 111_200.0
            var sequence: Int64 = 10
            for _ in 0..<4 {
                h.clock.advance(by: 1)
                lat -= 10 / 111_200.0
                sequence += 1
                #expect(try await send(lat, sequence: sequence) == .accepted)
            }
            // A duplicate sequence is dropped; a sample 80 m inaccurate is kept but not shared.
            #expect(try await send(lat, sequence: sequence) == .stale(lastSequence: sequence))
            h.clock.advance(by: 1)
            sequence += 1
            #expect(try await send(lat, 80, sequence: sequence) == .accepted)
            // A 3 km jump one second later: not shared, the driver is warned, the trip flagged.
            h.clock.advance(by: 1)
            sequence += 1
            #expect(try await send(lat - 3_000 / 111_200.0, sequence: sequence) == .accepted)

            let room = try await h.events("trip:\(trip.id)")
            let shared = room.filter { $0.name == "driver_location" }.map(\.payload)
            #expect(shared.count == 4)
            #expect(shared.allSatisfy { $0["accuracy_meters"] == nil && $0["battery_percent"] == nil })
            #expect(shared.allSatisfy { $0["interpolation_hint"]?["easing"] == "linear" })
            #expect(shared.last?["interpolation_hint"]?["duration_ms"] == 1000 && shared.first?["heading"] == 180)
            let eta = room.first { $0.name == "eta_update" }?.payload
            #expect(eta?["pickup_eta"]?["seconds"]?.doubleValue.map { $0 > 0 && $0 < 200 } == true && eta?["dropoff_eta"]?["confidence"] != nil)
            // The rideshare design's route and traffic fields: the straight segment from a shared position to the pickup.
            let segments = shared.compactMap { p -> JSONValue? in
                guard let lat = p["latitude"]?.doubleValue, let lng = p["longitude"]?.doubleValue else { return nil }
                return .string(Polyline.encode([GeoPoint(latitude: lat, longitude: lng), TripHarness.pickup.point]))
            }
            #expect(eta?["route_polyline"].map { segments.contains($0) } == true, "\(String(describing: eta))")
            #expect(["LIGHT", "MODERATE", "HEAVY", "UNKNOWN"].contains(eta?["traffic_conditions"]?.stringValue ?? "-"))
            let warnings = try await h.events("user:alex").filter { $0.name == "location_warning" }.map(\.payload)
            #expect(warnings.map { $0["warning_code"] } == ["TELEPORTATION"] && warnings.first?["action"] == "SAMPLE_NOT_SHARED")
            let flagged = try await h.trips.book.trip(trip.id, for: Self.ops)
            #expect(flagged.flags == 1 && flagged.lastFlag == "TELEPORTATION")

            // The audit trail: every sample for the driver and operators, the shared ones for the rider.
            let kept = try await h.trips.trail.locations(of: flagged, for: Self.ops, after: 0, limit: 100)
            try #require(kept.full && kept.rows.count == 6)
            #expect(kept.rows[4].accuracyM == 80 && kept.rows[5].warning == "TELEPORTATION")
            #expect(kept.rows[0].batteryPercent == 70 && kept.rows[0].sequence == 11)
            #expect(try await h.trips.trail.locations(of: flagged, for: Self.alex, after: 0, limit: 100).rows.count == 6)
            let riderView = try await h.trips.trail.locations(of: flagged, for: Self.rider, after: 0, limit: 100)
            try #require(!riderView.full && riderView.rows.count == 4)
            #expect(TripJSON.locationRow(riderView.rows[0], full: riderView.full)["battery_percent"] == nil)
            await #expect(throws: TripError.tripNotFound) { try await h.trips.book.trip(trip.id, for: TripHarness.identity("stranger")) }

            // In a trip: 1/s after a burst of 5 — six at one instant, the sixth is throttled.
            h.clock.advance(by: 30)
            var outcomes: [DriverTracker.LocationOutcome] = []
            for _ in 0..<6 {
                sequence += 1
                outcomes.append(try await send(lat, sequence: sequence))
            }
            let throttled = DriverTracker.LocationOutcome.throttled(LocationThrottle(retryAfterMs: 1_000, limit: "1/s"))
            #expect(outcomes == [.accepted, .accepted, .accepted, .accepted, .accepted, throttled])
            #expect(try await send(lat, sequence: sequence + 1) == throttled)
            h.clock.advance(by: 1)
            #expect(try await send(lat, sequence: sequence + 2) == .accepted)
        }
    }

    /// The OS's mock-provider signal: the sample is kept for operators, never shown to the rider, warned and flagged.
    @Test(arguments: TestEngine.allCases)
    func aMockLocationIsKeptButNotSharedAndTheTripIsFlagged(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 800)
            let trip = try await h.acceptedTrip(driver: "alex")
            var sequence: Int64 = 10
            func send(mock: Bool?) async throws -> DriverTracker.LocationOutcome {
                h.clock.advance(by: 1)
                sequence += 1
                return try await h.report(
                    "alex", LocationUpdate(point: TripHarness.north(700), accuracyMeters: 5, sequence: sequence, isMockLocation: mock))
            }
            #expect(try await send(mock: nil) == .accepted)
            #expect(try await send(mock: true) == .accepted)
            #expect(try await send(mock: true) == .accepted)
            let shared = try await h.events("trip:\(trip.id)").filter { $0.name == "driver_location" }
            #expect(shared.count == 1, "only the honest sample reaches the rider")
            let warnings = try await h.events("user:alex").filter { $0.name == "location_warning" }.map(\.payload)
            #expect(warnings.map { $0["warning_code"] } == ["MOCK_LOCATION", "MOCK_LOCATION"])
            let flagged = try await h.trips.book.trip(trip.id, for: Self.ops)
            #expect(flagged.flags == 2 && flagged.lastFlag == "MOCK_LOCATION")
            let trail = try await h.trips.trail.locations(of: flagged, for: Self.ops, after: 0, limit: 100)
            #expect(trail.rows.count == 3 && trail.rows.last?.warning == "MOCK_LOCATION")
            #expect(try await h.trips.trail.locations(of: flagged, for: Self.rider, after: 0, limit: 100).rows.count == 1)
            #expect(h.trips.statistics.snapshot.flags.values["MOCK_LOCATION"] == 2)
        }
    }

    /// An ETA that moves by more than trips.eta_push_threshold_seconds (5 minutes) is pushed to the rider once.
    @Test(arguments: TestEngine.allCases)
    func anETAThatMovesByMoreThanFiveMinutesIsPushedOnce(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 800)
            let trip = try await h.acceptedTrip(driver: "alex")
            var sequence: Int64 = 1
            func at(_ metersNorth: Double) async throws {
                sequence += 1
                h.clock.advance(by: 60)
                #expect(try await h.report("alex", metersNorth: metersNorth, sequence: sequence, speedMps: 8.3) == .accepted)
            }
            func etaPushes() async throws -> [String] {
                try await h.notifications("rider").compactMap(\.body).filter { $0.hasPrefix("Your driver is now about") }
            }
            // The driver drives away at 8.3 m/s, 500 m a minute, from 800 m out; the ETA (distance × 1.3 / speed)
            // goes 125 s, 204, 282, 360, 438 (+313 s: one push), 517, 595.
            for meters in [800.0, 1_300, 1_800, 2_300] { try await at(meters) }
            #expect(try await etaPushes().isEmpty)
            #expect(try await h.events("trip:\(trip.id)").contains { $0.name == "eta_update" })
            for meters in [2_800.0, 3_300, 3_800] { try await at(meters) }
            #expect(try await etaPushes() == ["Your driver is now about 7 min away."])
        }
    }

    /// Past the corridor (trips.location.route_deviation_meters) in a ride, the driver is warned and the trip flagged once.
    @Test(arguments: TestEngine.allCases)
    func aRideThatLeavesItsCorridorIsFlaggedOncePerExcursion(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TripHarness(database: database)
            try await h.driver("alex", metersNorth: 0)
            // A ride 1 km east; the driver heads south instead at 20 m/s, out of the 2 km corridor.
            var east = TripHarness.ride
            east.passengerCount = 1
            east.dropoff = Place(point: GeoPoint(latitude: 37.7749, longitude: -122.4194 + 1_000 / 88_000.0), address: "1 km east")
            let request = try await h.book("rider", east)
            let trip = try await h.trips.accepts.accept(request.id, driverID: "alex")
            var sequence: Int64 = 1
            func at(metersSouth: Double) async throws {
                sequence += 1
                h.clock.advance(by: 10)
                #expect(try await h.report("alex", metersNorth: -metersSouth, sequence: sequence, speedMps: 20) == .accepted)
            }
            func deviations() async throws -> [JSONValue] {
                try await h.events("user:alex").filter { $0.name == "location_warning" && $0.payload["warning_code"] == "ROUTE_DEVIATION" }
                    .map(\.payload)
            }
            // Before the ride starts the driver may come from anywhere: 2.4 km south is no deviation.
            try await at(metersSouth: 2_400)
            for step in 1...12 { try await at(metersSouth: 2_400 - Double(step) * 200) }
            for step in [TripState.arrived, .inProgress] {
                #expect(try await h.trips.book.transition(trip.id, to: step.rawValue, by: Self.alex, context: [:]).state == step)
            }
            #expect(try await deviations().isEmpty)
            // In the ride: 200 m every 10 s southwards; inside 2 km nothing, past it one warning.
            for step in 1...9 { try await at(metersSouth: Double(step) * 200) }
            #expect(try await deviations().isEmpty)
            for step in 10...14 { try await at(metersSouth: Double(step) * 200) }
            let warned = try await deviations()
            #expect(warned.count == 1 && warned.first?["action"] == "NONE")
            let flagged = try await h.trips.book.trip(trip.id, for: Self.ops)
            #expect(flagged.flags == 1 && flagged.lastFlag == "ROUTE_DEVIATION")
            // Still shared with the rider: a detour is not a fake position.
            let shared = try await h.events("trip:\(trip.id)").filter { $0.name == "driver_location" }.map(\.payload)
            #expect(shared.last?["latitude"]?.doubleValue.map { abs($0 - (37.7749 - 2_800 / 111_200)) < 1e-6 } == true)
        }
    }
}
