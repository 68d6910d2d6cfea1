import Foundation
import HeraldCore
import HeraldDispatch
import HeraldGeo
import Testing

@Suite struct JobRulesTests {
    /// Stripe's 7 days, a day for the job: a hold taken at booking covers jobs up to 6 days
    /// ahead; a later job's is taken as soon as it covers the job.
    @Test func aHoldIsTakenWhenItStillCoversTheJob() {
        let timing = HoldTiming(lifetimeHours: 168, allowanceHours: 24)
        let now: Int64 = 1_000_000_000
        let hour: Int64 = 3_600_000
        #expect(timing.holdAt(scheduledAt: nil, now: now) == nil)
        #expect(timing.holdAt(scheduledAt: now - hour, now: now) == nil)
        #expect(timing.holdAt(scheduledAt: now + 144 * hour, now: now) == nil)
        #expect(timing.holdAt(scheduledAt: now + 144 * hour + 1, now: now) == now + 1)
        #expect(timing.holdAt(scheduledAt: now + 240 * hour, now: now) == now + 96 * hour)
    }

    @Test func theStateMachineGivesEachPartyItsOwnMoves() {
        #expect(JobStateMachine.check(from: .accepted, to: .enRoute, by: .driver) == .allowed)
        #expect(JobStateMachine.check(from: .accepted, to: .arrived, by: .driver) == .invalid(allowed: [.enRoute]))
        #expect(JobStateMachine.check(from: .started, to: .completed, by: .driver) == .allowed)
        #expect(JobStateMachine.check(from: .pending, to: .cancelled, by: .customer) == .allowed)
        #expect(JobStateMachine.check(from: .enRoute, to: .cancelled, by: .customer) == .allowed)
        #expect(JobStateMachine.check(from: .arrived, to: .cancelled, by: .customer) == .invalid(allowed: []))
        #expect(JobStateMachine.check(from: .arrived, to: .cancelled, by: .operator) == .allowed)
        #expect(JobStateMachine.check(from: .pending, to: .expired, by: .system) == .allowed)
        #expect(JobStateMachine.check(from: .accepted, to: .expired, by: .system) == .invalid(allowed: [.cancelled]))
        // An unpaid job booked ahead is cancelled by the system before the work starts, never after.
        #expect(JobStateMachine.check(from: .arrived, to: .cancelled, by: .system) == .allowed)
        #expect(JobStateMachine.check(from: .started, to: .cancelled, by: .system) == .invalid(allowed: []))
        #expect(JobStateMachine.check(from: .enRoute, to: .cancelled, by: .driver) == .invalid(allowed: [.arrived]))
        for final in [JobStatus.completed, .cancelled, .expired] {
            for actor in [JobActor.customer, .driver, .operator, .system] { #expect(JobStateMachine.allowedTransitions(from: final, by: actor).isEmpty) }
        }
    }

    func draft(_ object: [String: JSONValue]) throws -> JobDraft {
        try JobDraft.parse(object, pricing: PricingConfig(), now: Date(timeIntervalSince1970: 1_800_000_000))
    }

    func fields(_ object: [String: JSONValue]) -> Set<String> {
        do {
            _ = try draft(object)
            return []
        } catch let error as APIError {
            guard case .array(let list)? = error.details?["fields"] else { return [] }
            return Set(list.compactMap { $0["field"]?.stringValue })
        } catch {
            return ["unexpected"]
        }
    }

    @Test func aGoodBookingParses() throws {
        let job = try draft([
            "address": " 1 Market St ", "lat": 37.79, "lng": -122.39, "items": [["category": "furniture", "quantity": 2]],
            "volume_estimate": 2.75, "scheduled_at": "2027-01-20T10:00:00Z", "notes": "Side door",
        ])
        #expect(job.address == "1 Market St")
        #expect(job.point == GeoPoint(latitude: 37.79, longitude: -122.39))
        #expect(job.items == [JobItem(category: "furniture", quantity: 2)])
        #expect(job.volumeHundredths == 275)
        #expect(try draft(["address": "x", "volume_estimate": 3]).point == nil)
    }

    @Test func badBookingsNameEveryField() {
        #expect(fields(["address": "x", "lat": 91, "lng": -200, "volume_estimate": 1]) == ["lat", "lng"])
        #expect(fields(["address": "x", "lat": 10, "volume_estimate": 1]) == ["lng"])
        #expect(fields(["address": "x", "items": [["category": "furniture", "quantity": -1]]]) == ["items[0].quantity"])
        #expect(fields(["address": "x", "items": [["category": "spaceship", "quantity": 1]]]) == ["items[0].category"])
        #expect(fields(["address": "x", "items": [["category": "furniture", "quantity": 1.5]]]) == ["items[0].quantity"])
        #expect(fields(["address": "x", "volume_estimate": 2.555]) == ["volume_estimate"])
        #expect(fields(["address": "x", "volume_estimate": 0]) == ["volume_estimate"])
        #expect(fields(["address": "x", "volume_estimate": 31]) == ["volume_estimate"])
        #expect(fields(["address": "x"]) == ["items"])
        #expect(fields(["volume_estimate": 1, "colour": "red"]) == ["address", "colour"])
        #expect(fields(["address": "x", "volume_estimate": 1, "scheduled_at": "2020-01-01T00:00:00Z"]) == ["scheduled_at"])
        #expect(fields(["address": "x", "volume_estimate": 1, "lat": "37", "lng": -122]) == ["lat"])
    }

    @Test func locationReportsAreValidatedAndTakeBothSpellings() throws {
        let dispatchApp = try LocationUpdate.parse([
            "lat": 37.7, "lng": -122.4, "accuracy": 5, "heading": 90, "speed": 12, "sequence": 7, "timestamp": "2027-01-01T00:00:00Z",
        ])
        #expect(dispatchApp.point == GeoPoint(latitude: 37.7, longitude: -122.4) && dispatchApp.sequence == 7 && dispatchApp.clientTime == 1_798_761_600_000)
        let rideshareApp = try LocationUpdate.parse(
            ["latitude": 37.7, "longitude": -122.4, "accuracy_meters": 5, "speed_mps": 3, "battery_percent": 80], sequenceOverride: 9)
        #expect(rideshareApp.sequence == 9 && rideshareApp.speedMps == 3)
        for bad: [String: JSONValue] in [
            ["lat": 90.5, "lng": 0], ["lat": 0, "lng": 181], ["lat": 0], ["lat": 0, "lng": 0, "sequence": -1], ["lat": 0, "lng": 0, "heading": 400],
            ["lat": 0, "lng": 0, "speed": 151], ["lat": 0, "lng": 0, "course": "north"], ["lat": "0", "lng": 0],
            ["lat": 0, "lng": 0, "timestamp": "yesterday"],
            ["lat": 0, "lng": 0, "is_mock_location": "yes"], ["lat": 0, "lng": 0, "device_integrity": "rooted"],
        ] {
            #expect(throws: APIError.self) { try LocationUpdate.parse(bad) }
        }
    }

    /// iOS's `CLLocation.course` and `.speed` are -1 whenever the phone cannot tell (standing
    /// at a light): such a sample is a position with the course and speed unknown, not an
    /// error (refused, the rider's map froze at every stop).
    @Test func iOSUnknownCourseAndSpeedAreUnknownNotRefused() throws {
        let stopped = try LocationUpdate.parse(["latitude": 37.7, "longitude": -122.4, "course": -1, "speed_mps": -1, "accuracy_meters": 5])
        #expect(stopped.point == GeoPoint(latitude: 37.7, longitude: -122.4))
        #expect(stopped.heading == nil && stopped.speedMps == nil && stopped.accuracyMeters == 5)
        let moving = try LocationUpdate.parse(["lat": 37.7, "lng": -122.4, "course": 271.5, "speed": 8.25])
        #expect(moving.heading == 271.5 && moving.speedMps == 8.25)
        #expect(try LocationUpdate.parse(["lat": 1, "lng": 2, "heading": -0.5]).heading == nil)
    }

    /// A newer app's extra fields must not make a sample fail (the rider's map
    /// would freeze); the fraud signals are read under both platforms' names.
    @Test func unknownFieldsAreIgnoredAndFraudSignalsRead() throws {
        let extra = try LocationUpdate.parse(["lat": 37.7, "lng": -122.4, "floor_level": 3, "provider": ["name": "fused"], "vertical_accuracy": 2.5])
        #expect(extra.point == GeoPoint(latitude: 37.7, longitude: -122.4) && extra.isMockLocation == nil && extra.deviceIntegrity == nil)
        let android = try LocationUpdate.parse(["lat": 1, "lng": 2, "is_from_mock_provider": true, "device_integrity": "failed"])
        #expect(android.isMockLocation == true && android.deviceIntegrity == .failed)
        let ios = try LocationUpdate.parse(["latitude": 1, "longitude": 2, "is_mock_location": false, "device_integrity": "passed"])
        #expect(ios.isMockLocation == false && ios.deviceIntegrity == .passed)
    }
}
