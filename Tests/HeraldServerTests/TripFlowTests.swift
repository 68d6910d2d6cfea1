import Foundation
import HeraldCore
import HeraldGeo
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import HeraldTrips
import Testing

@testable import HeraldRealtime

/// Ride requests, trips and the location stream through the real application, on
/// both engines.
@Suite struct TripFlowTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let pickup: JSONValue = ["latitude": 37.7749, "longitude": -122.4194, "address": "123 Market St, San Francisco", "place_id": "pl_abc123"]
    static let dropoff: JSONValue = ["latitude": 37.8044, "longitude": -122.2712, "address": "456 Broadway, Oakland", "place_id": "pl_def456"]
    static let body: JSONValue = ["pickup": pickup, "dropoff": dropoff, "ride_type": "STANDARD", "passenger_count": 2, "payment_method_id": "pm_xyz"]

    /// An approved, online driver with a silver Camry, `meters` north of the pickup.
    static func driver(_ s: TestSession, _ id: String, metersNorth: Double, name: String = "Alex Smith") async throws -> String {
        let token = try await s.token(id, .driver)
        let photo = JSONValue.string("https://cdn.example.com/drivers/\(id).jpg")
        #expect(
            try await s.request(.put, "/api/v1/drivers/me", token: token, json: ["name": .string(name), "truck_type": "sedan", "photo_url": photo]).status
                == 201)
        let ops = try await s.token("ops", .operator)
        #expect(try await s.request(.post, "/api/v1/operators/drivers/\(id)/approval", token: ops, json: ["status": "approved"]).status == 200)
        #expect(try await s.request(.post, "/api/v1/drivers/online", token: token, json: ["online": true]).status == 200)
        let vehicle = try await s.request(
            .put, "/api/v1/drivers/me/vehicle", token: token,
            json: ["make": "Toyota", "model": "Camry", "color": "Silver", "license_plate": "ABC123", "capacity": 4, "ride_types": ["STANDARD"]])
        #expect(vehicle.status == 200 && vehicle.data?["model"] == "Camry")
        let location = try await s.request(
            .post, "/api/v1/drivers/location", token: token,
            json: ["latitude": .number(37.7749 + metersNorth / 111_200), "longitude": -122.4194, "accuracy_meters": 5, "sequence": 1])
        #expect(location.status == 200 && location.data?["accepted"] == true)
        return token
    }

    static func book(_ s: TestSession, _ rider: String, key: String = UUID().uuidString, body: JSONValue = body) async throws -> TestReply {
        try await s.request(.post, "/api/v1/ride-requests", token: try await s.token(rider), headers: [.init("Idempotency-Key")!: key], json: body)
    }

    static func events(_ s: TestSession, _ room: String) async throws -> [(name: String, payload: JSONValue)] {
        try await s.runtime.database.withConnection { db in
            try await RealtimeEventStore().events(db, room: room, after: 0, limit: 10_000)
        }.map { ($0.event, (try? JSONDecoder().decode(JSONValue.self, from: Data($0.payload.utf8))) ?? .null) }
    }

    static func inboxBodies(_ s: TestSession, _ user: String) async throws -> [String] {
        let reply = try await s.request(.get, "/api/v1/notifications?limit=100", token: try await s.token(user))
        return (0..<100).compactMap { reply.data?["notifications"]?[$0]?["body"]?.stringValue }
    }

    /// The application on a manual clock. The driver index's pull from the database (many
    /// nodes on PostgreSQL) is pushed out of the test's way: a pull that read a driver just
    /// before their approval committed would hide them from matching until the next pull.
    static func run(
        _ engine: TestEngine, _ configure: @escaping (inout HeraldConfig) -> Void = { _ in }, _ body: @Sendable @escaping (TestSession) async throws -> Void
    ) async throws {
        try await TestServer.run(
            engine, clock: ManualClock(Self.start),
            configure: { config in
                config.dispatch.indexSyncIntervalMs = 60_000
                configure(&config)
            }, body)
    }

    static func advance(_ s: TestSession, _ seconds: Double) {
        (s.runtime.clock as? ManualClock)?.advance(by: seconds)
    }

    /// The pushes the log sender recorded for `user` (each line holds the exact APNs request).
    static func recordedPushes(_ path: String, user: String) -> [JSONValue] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
            .filter { $0["user_id"]?.stringValue == user }
    }

    @Test(arguments: TestEngine.allCases)
    func aRideGoesFromRequestToCompletionAndEveryChangeIsTold(engine: TestEngine) async throws {
        let pushLog = try TestDatabase.temporaryDirectory() + "/pushes.jsonl"
        try await Self.run(
            engine,
            { config in
                config.push.logFile = pushLog
                config.push.pollIntervalMs = 50
            }
        ) { s in
            // The rider's app is closed: no socket, one iPhone registered.
            let device = try await s.request(
                .post, "/api/v1/push/register", token: try await s.token("rider"),
                json: ["token": .string(String(repeating: "ab", count: 32)), "provider": "apns", "platform": "ios"])
            #expect(device.status == 201)
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let blake = try await Self.driver(s, "blake", metersNorth: 1_500, name: "Blake Jones")
            _ = try await Self.driver(s, "far", metersNorth: 9_000)

            let noKey = try await s.request(.post, "/api/v1/ride-requests", token: try await s.token("rider"), json: Self.body)
            #expect(noKey.status == 400 && noKey.errorCode == "IDEMPOTENCY_KEY_REQUIRED")
            let estimate = try await s.request(.post, "/api/v1/ride-requests/estimate", token: try await s.token("rider"), json: Self.body)
            #expect(estimate.status == 200 && estimate.data?["fare_estimate"]?["surge_multiplier"] == 1.0)

            let booked = try await Self.book(s, "rider")
            #expect(booked.status == 201)
            let request = try #require(booked.data)
            let requestID = try #require(request["request_id"]?.stringValue)
            #expect(request["state"] == "SEARCHING" && request["allowed_transitions"] == ["CANCELLED"])
            #expect(request["search_radius_meters"] == 2000 && request["fare_estimate"]?["currency"] == "USD")
            let low = try #require(request["fare_estimate"]?["min_amount_minor"]?.doubleValue)
            let high = try #require(request["fare_estimate"]?["max_amount_minor"]?.doubleValue)
            #expect(low > 700 && high > low)
            #expect(request["fare_estimate"] == estimate.data?["fare_estimate"])
            #expect(request["expires_at"]?.stringValue == Timestamp.string(epochMilliseconds: Self.start.epochMilliseconds + 300_000))
            // The nearest drivers within 2 km were offered it; the one 9 km away was not (yet).
            #expect(try await Self.events(s, "driver:alex").contains { $0.name == "ride:new" && $0.payload["request_id"]?.stringValue == requestID })
            #expect(try await Self.events(s, "driver:blake").contains { $0.name == "ride:new" })
            #expect(try await Self.events(s, "driver:far").allSatisfy { $0.name != "ride:new" })

            // First accept wins; the winner's retry gets the same trip; the other driver a 409.
            let accepted = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex)
            #expect(accepted.status == 200 && accepted.data?["state"] == "ACCEPTED")
            let tripID = try #require(accepted.data?["trip_id"]?.stringValue)
            #expect(accepted.data?["driver"]?["vehicle"]?["model"] == "Camry")
            #expect(accepted.data?["driver"]?["photo_url"]?.stringValue == "https://cdn.example.com/drivers/alex.jpg")
            let lost = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: blake)
            #expect(lost.status == 409 && lost.errorCode == "RIDE_ALREADY_ACCEPTED")
            #expect(try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue == tripID)
            #expect(try await Self.events(s, "driver:blake").contains { $0.name == "ride:closed" && $0.payload["reason"] == "accepted" })
            let matched = try await Self.events(s, "user:rider").last { $0.name == "ride_request_updated" }
            #expect(matched?.payload["state"] == "MATCHED" && matched?.payload["trip_id"]?.stringValue == tripID)

            // The rider's push names the driver and the car.
            #expect(try await Self.inboxBodies(s, "rider") == ["Alex is on the way in a silver Camry"])

            // REST fallback with ETag; strangers see nothing.
            let rider = try await s.token("rider")
            let read = try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider)
            let etag = try #require(read.header("ETag"))
            #expect(read.status == 200 && etag == "\"trip-v1\"" && read.data?["rider"]?["id"] == "rider" && read.data?["driver"]?["first_name"] == "Alex")
            #expect(read.data?["route"]?["polyline"]?.stringValue?.isEmpty == false && read.data?["flags"] == nil)
            let same = try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider, headers: [.ifNoneMatch: etag])
            #expect(same.status == 304 && same.body.isEmpty)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: try await s.token("stranger")).errorCode == "TRIP_NOT_FOUND")
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: blake).status == 404)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: try await s.token("ops", .operator)).data?["flags"]?["count"] == 0)

            // Invalid transitions say what is allowed; a rider cannot drive the trip.
            let skip = try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": "IN_PROGRESS"])
            #expect(
                skip.status == 409 && skip.errorCode == "INVALID_TRANSITION"
                    && skip.json?["error"]?["details"]?["allowed_transitions"] == ["ARRIVED", "CANCELLED"])
            #expect(try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: rider, json: ["to": "ARRIVED"]).status == 403)
            #expect(try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": "FLYING"]).status == 422)
            #expect(try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": "ARRIVED", "context": "x"]).status == 422)

            for step in ["ARRIVED", "IN_PROGRESS", "COMPLETED"] {
                Self.advance(s, 60)
                // A fresh position each minute (the arrival needs one).
                _ = try await s.request(
                    .post, "/api/v1/drivers/location", token: alex, json: ["latitude": 37.7749, "longitude": -122.4194, "accuracy_meters": 5])
                let moved = try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": .string(step)])
                #expect(moved.status == 200 && moved.data?["state"] == .string(step))
            }
            let done = try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider, headers: [.ifNoneMatch: etag])
            #expect(done.status == 200 && done.header("ETag") == "\"trip-v4\"" && done.data?["allowed_transitions"] == [])
            let late = try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: rider, json: ["to": "CANCELLED"])
            #expect(late.status == 409 && late.errorCode == "INVALID_TRANSITION")

            // Every change is in the trip's room, in order, with who did it.
            let changes = try await Self.events(s, "trip:\(tripID)").filter { $0.name == "trip_state_changed" }.map(\.payload)
            #expect(changes.map { $0["state"] } == ["ACCEPTED", "ARRIVED", "IN_PROGRESS", "COMPLETED"])
            #expect(changes.map { $0["previous_state"] } == ["REQUESTED", "ACCEPTED", "ARRIVED", "IN_PROGRESS"])
            #expect(changes.allSatisfy { $0["triggered_by"] == "DRIVER" && $0["trip_id"]?.stringValue == tripID })
            #expect(changes[1]["context"]?["arrival_location"]?["latitude"] == 37.7749)
            #expect(changes[1]["allowed_transitions"] == ["IN_PROGRESS", "CANCELLED"])
            // The arrival is a high-priority push; the start a silent one that is not in the inbox.
            let titles = try await s.request(.get, "/api/v1/notifications?limit=50", token: rider).data?["notifications"]
            let shown = (0..<50).compactMap { titles?[$0]?["title"]?.stringValue }
            #expect(shown.contains("Driver arrived") && shown.contains("Trip complete") && !shown.contains("Trip started"))
            let silent = try await s.runtime.database.withConnection { db in
                try await db.raw("SELECT COUNT(*) AS n FROM notifications WHERE user_id = 'rider' AND silent = 1 AND type = 'trip_sync'").first()?.decode(
                    column: "n", as: Int.self)
            }
            #expect(silent == 1)

            // What APNs would have received (the rideshare design's push table): the arrival at
            // high priority; the start as a silent background push carrying its state sync.
            let expected: Set<String> = ["Driver on the way", "Driver arrived", "Trip started", "Trip complete"]
            var pushes: [String: JSONValue] = [:]
            // (Not thrown: the expectation below names what did arrive.)
            try? await waitUntil("the trip's pushes", every: .milliseconds(50)) {
                pushes = Dictionary(Self.recordedPushes(pushLog, user: "rider").compactMap { line in line["title"]?.stringValue.map { ($0, line) } }) { a, _ in
                    a
                }
                return Set(pushes.keys).isSuperset(of: expected)
            }
            #expect(Set(pushes.keys).isSuperset(of: expected), "\(pushes.keys)")
            let arrived = try #require(pushes["Driver arrived"]?["request"])
            #expect(arrived["headers"]?["apns-priority"] == "10" && arrived["headers"]?["apns-push-type"] == "alert")
            #expect(arrived["payload"]?["aps"]?["alert"]?["body"] == "Your driver has arrived")
            let started = try #require(pushes["Trip started"]?["request"])
            #expect(started["headers"]?["apns-priority"] == "5" && started["headers"]?["apns-push-type"] == "background")
            #expect(started["payload"]?["aps"]?["content-available"] == 1 && started["payload"]?["aps"]?["alert"] == nil)
            #expect(started["payload"]?["aps"]?["sound"] == nil && started["payload"]?["aps"]?["badge"] == nil)
            #expect(started["payload"]?["trip_id"]?.stringValue == tripID && started["payload"]?["event_type"] == "state_changed")
            #expect(started["payload"]?["new_state"] == "IN_PROGRESS")
            #expect(pushes["Driver on the way"]?["body"] == "Alex is on the way in a silver Camry")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func theLocationStreamIsLimitedCheckedSharedAndKept(engine: TestEngine) async throws {
        try await Self.run(engine) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let requestID = try #require(try await Self.book(s, "rider").data?["request_id"]?.stringValue)
            let tripID = try #require(
                try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue)
            func send(_ lat: Double, _ accuracy: Double = 5, sequence: Int) async throws -> TestReply {
                try await s.request(
                    .post, "/api/v1/drivers/location", token: alex,
                    json: [
                        "latitude": .number(lat), "longitude": -122.4194, "accuracy_meters": .number(accuracy), "heading": 180, "speed_mps": 10,
                        "altitude_meters": 12, "battery_percent": 70, "is_charging": false, "sequence": .number(Double(sequence)),
                    ])
            }
            // Driving south towards the pickup at ~10 m/s, one sample a second.
            var lat = 37.7749 + 700 / 111_200.0
            var sequence = 10
            for _ in 0..<4 {
                Self.advance(s, 1)
                lat -= 10 / 111_200.0
                sequence += 1
                #expect(try await send(lat, sequence: sequence).status == 200)
            }
            // A duplicate sequence is dropped; a sample 80 m inaccurate is kept but not shared.
            #expect(try await send(lat, sequence: sequence).data?["accepted"] == false)
            Self.advance(s, 1)
            sequence += 1
            #expect(try await send(lat, 80, sequence: sequence).data?["accepted"] == true)
            // A 3 km jump one second later: not shared, the driver is warned, the trip flagged.
            Self.advance(s, 1)
            sequence += 1
            #expect(try await send(lat - 3_000 / 111_200.0, sequence: sequence).data?["accepted"] == true)
            _ = await s.runtime.trips.service.writer.flushOnce()

            let shared = try await Self.events(s, "trip:\(tripID)").filter { $0.name == "driver_location" }.map(\.payload)
            #expect(shared.count == 4)
            #expect(shared.allSatisfy { $0["accuracy_meters"] == nil && $0["battery_percent"] == nil && $0["interpolation_hint"]?["easing"] == "linear" })
            #expect(shared.last?["interpolation_hint"]?["duration_ms"] == 1000 && shared.first?["heading"] == 180)
            let eta = try await Self.events(s, "trip:\(tripID)").first { $0.name == "eta_update" }?.payload
            #expect(eta?["pickup_eta"]?["seconds"]?.doubleValue.map { $0 > 0 && $0 < 200 } == true && eta?["dropoff_eta"]?["confidence"] != nil)
            // The rideshare design's route and traffic fields: the straight segment from a shared position to the pickup.
            let pickup = GeoPoint(latitude: 37.7749, longitude: -122.4194)
            let segments = shared.compactMap { p -> JSONValue? in
                guard let lat = p["latitude"]?.doubleValue, let lng = p["longitude"]?.doubleValue else { return nil }
                return .string(Polyline.encode([GeoPoint(latitude: lat, longitude: lng), pickup]))
            }
            #expect(eta?["route_polyline"].map { segments.contains($0) } == true, "\(String(describing: eta))")
            #expect(["LIGHT", "MODERATE", "HEAVY", "UNKNOWN"].contains(eta?["traffic_conditions"]?.stringValue ?? "-"))
            let warnings = try await Self.events(s, "user:alex").filter { $0.name == "location_warning" }.map(\.payload)
            #expect(warnings.map { $0["warning_code"] } == ["TELEPORTATION"] && warnings.first?["action"] == "SAMPLE_NOT_SHARED")
            let ops = try await s.token("ops", .operator)
            let flagged = try await s.request(.get, "/api/v1/trips/\(tripID)", token: ops)
            #expect(flagged.data?["flags"]?["count"] == 1 && flagged.data?["flags"]?["last"] == "TELEPORTATION")

            // The audit trail: every sample for the driver and operators, the shared ones for the rider.
            let full = try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: ops)
            #expect(
                full.data?["count"] == 6 && full.data?["locations"]?[4]?["accuracy_meters"] == 80 && full.data?["locations"]?[5]?["warning"] == "TELEPORTATION")
            #expect(full.data?["locations"]?[0]?["battery_percent"] == 70 && full.data?["locations"]?[0]?["sequence"] == 11)
            let riderView = try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: try await s.token("rider"))
            #expect(riderView.data?["count"] == 4 && riderView.data?["locations"]?[0]?["battery_percent"] == nil)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: try await s.token("stranger")).status == 404)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)/locations?limit=0", token: ops).status == 422)

            // Bad samples are refused with the field named, and change nothing.
            Self.advance(s, 30)
            for (field, value) in [("accuracy_meters", JSONValue.number(-1)), ("heading", 400), ("latitude", "NaN"), ("speed_mps", .number(1e6))] {
                var sample: [String: JSONValue] = ["latitude": .number(lat), "longitude": -122.4194, "sequence": 999]
                sample[field] = value
                let refused = try await s.request(.post, "/api/v1/drivers/location", token: alex, json: .object(sample))
                let named = refused.json?["error"]?["details"]?["fields"]?[0]?["field"]?.stringValue
                #expect(refused.status == 422 && named == field, "\(field): \(refused.text)")
            }
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: ops).data?["count"] == 6)

            // In a trip: 1/s after a burst of 5 — six at one instant, the sixth is throttled.
            var statuses: [Int] = []
            for _ in 0..<6 {
                sequence += 1
                statuses.append(try await send(lat, sequence: sequence).status)
            }
            #expect(statuses == [200, 200, 200, 200, 200, 429])
            let throttled = try await send(lat, sequence: sequence + 1)
            #expect(
                throttled.errorCode == "RATE_LIMIT_EXCEEDED" && throttled.json?["error"]?["details"]?["limit"] == "1/s"
                    && throttled.header("Retry-After") == "1")
            Self.advance(s, 1)
            #expect(try await send(lat, sequence: sequence + 2).status == 200)
        }
    }

    /// The OS's mock-provider signal, through the location route, the dispatch tracker and
    /// the trip tracker: the sample is kept for operators, never shown to the rider, the driver
    /// is warned and the trip flagged (the rideshare design's mock location flag).
    @Test func aMockLocationIsKeptButNotSharedAndTheTripIsFlagged() async throws {
        try await Self.run(.sqlite) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let tripID = try await Self.acceptedTrip(s, driver: alex)
            var sequence = 10
            func send(_ extra: [String: JSONValue]) async throws -> TestReply {
                Self.advance(s, 1)
                sequence += 1
                var sample: [String: JSONValue] = [
                    "latitude": .number(37.7749 + 700 / 111_200.0), "longitude": -122.4194, "accuracy_meters": 5, "sequence": .number(Double(sequence)),
                ]
                sample.merge(extra) { _, new in new }
                return try await s.request(.post, "/api/v1/drivers/location", token: alex, json: .object(sample))
            }
            #expect(try await send([:]).data?["accepted"] == true)
            #expect(try await send(["is_mock_location": true]).data?["accepted"] == true)
            #expect(try await send(["is_from_mock_provider": true]).data?["accepted"] == true)
            _ = await s.runtime.trips.service.writer.flushOnce()
            let shared = try await Self.events(s, "trip:\(tripID)").filter { $0.name == "driver_location" }
            #expect(shared.count == 1, "only the honest sample reaches the rider")
            let warnings = try await Self.events(s, "user:alex").filter { $0.name == "location_warning" }.map(\.payload)
            #expect(warnings.map { $0["warning_code"] } == ["MOCK_LOCATION", "MOCK_LOCATION"])
            let ops = try await s.token("ops", .operator)
            let trip = try await s.request(.get, "/api/v1/trips/\(tripID)", token: ops)
            #expect(trip.data?["flags"]?["count"] == 2 && trip.data?["flags"]?["last"] == "MOCK_LOCATION")
            let trail = try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: ops)
            #expect(trail.data?["count"] == 3 && trail.data?["locations"]?[2]?["warning"] == "MOCK_LOCATION")
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: try await s.token("rider")).data?["count"] == 1)
            #expect(try await s.request(.get, "/metrics").text.contains("herald_trips_fraud_flags_total{code=\"MOCK_LOCATION\"} 2\n"))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anUnmatchedRequestExpiresAndADriverCancelSearchesAgain(engine: TestEngine) async throws {
        try await Self.run(engine) { s in
            let lonely = try #require(try await Self.book(s, "lonely").data?["request_id"]?.stringValue)
            // Half-way the search widens to the second radius, and the rider is told (the app
            // animates the search).
            Self.advance(s, 151)
            _ = try await s.runtime.trips.service.rounds.runDue()
            let widened = try await eventually("the widened search event") {
                try await Self.events(s, "user:lonely").last { $0.name == "ride_request_updated" }?.payload
            }
            #expect(widened["state"] == "SEARCHING" && widened["search_radius_meters"] == 5_000 && widened["offer_round"] == 2, "\(widened)")
            Self.advance(s, 150)
            _ = try await s.runtime.trips.service.rounds.runDue()
            let expired = try await s.request(.get, "/api/v1/ride-requests/\(lonely)", token: try await s.token("lonely"))
            #expect(expired.data?["state"] == "EXPIRED")
            // The scheduler may have expired it first; its event follows its commit.
            let told = try await eventually("the expiry event") {
                try await Self.events(s, "user:lonely").last { $0.name == "ride_request_updated" && $0.payload["state"] == "EXPIRED" }?.payload
            }
            #expect(told["state"] == "EXPIRED" && told["error"]?["code"] == "DRIVER_UNAVAILABLE", "\(told)")
            let cancel = try await s.request(.post, "/api/v1/ride-requests/\(lonely)/cancel", token: try await s.token("lonely"))
            #expect(cancel.status == 409 && cancel.errorCode == "DRIVER_UNAVAILABLE")
            #expect(try await s.request(.get, "/api/v1/ride-requests/\(lonely)", token: try await s.token("other")).status == 404)

            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let blake = try await Self.driver(s, "blake", metersNorth: 1_000)
            let requestID = try #require(try await Self.book(s, "rider").data?["request_id"]?.stringValue)
            let tripID = try #require(
                try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue)
            // The driver is busy: accepting another ride fails.
            let second = try #require(try await Self.book(s, "rider2").data?["request_id"]?.stringValue)
            #expect(try await s.request(.post, "/api/v1/drivers/ride-requests/\(second)/accept", token: alex).errorCode == "DRIVER_BUSY")
            let dropped = try await s.request(
                .post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": "CANCELLED", "context": ["reason": "flat tyre"]])
            #expect(dropped.status == 200 && dropped.data?["state"] == "CANCELLED" && dropped.data?["cancelled_by"] == "DRIVER")
            let again = try #require(try await Self.events(s, "user:rider").last { $0.name == "ride_request_updated" }?.payload)
            #expect(again["state"] == "SEARCHING" && again["previous_trip_id"]?.stringValue == tripID)
            let newID = try #require(again["request_id"]?.stringValue)
            // Offered again, but never to the driver who cancelled.
            #expect(try await Self.events(s, "driver:blake").filter { $0.name == "ride:new" && $0.payload["request_id"]?.stringValue == newID }.count == 1)
            #expect(try await Self.events(s, "driver:alex").allSatisfy { !($0.name == "ride:new" && $0.payload["request_id"]?.stringValue == newID) })
            // (The manual clock gives both notifications one time: look for it, not at the first.)
            #expect(try await Self.inboxBodies(s, "rider").contains("Your driver cancelled. Finding another..."))
            let twice = try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: try await s.token("rider"), json: ["to": "CANCELLED"])
            #expect(twice.status == 409 && twice.errorCode == "TRIP_ALREADY_CANCELLED")
            // The rider cancels the new search; the offered driver's screen drops it.
            let cancelled = try await s.request(.post, "/api/v1/ride-requests/\(newID)/cancel", token: try await s.token("rider"))
            #expect(cancelled.status == 200 && cancelled.data?["state"] == "CANCELLED")
            #expect(try await Self.events(s, "driver:blake").contains { $0.name == "ride:closed" && $0.payload["request_id"]?.stringValue == newID })
            #expect(try await s.request(.post, "/api/v1/drivers/ride-requests/\(newID)/accept", token: blake).errorCode == "RIDE_REQUEST_CLOSED")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func surgeMustBeConfirmedAndManyDriversRaceForOneRide(engine: TestEngine) async throws {
        try await Self.run(engine, { $0.rateLimits.routes["POST /api/v1/ride-requests"] = RateLimitRule(limit: 100, windowSeconds: 60) }) { s in
            var drivers: [String] = []
            for index in 0..<8 { drivers.append(try await Self.driver(s, "d\(index)", metersNorth: 200 + Double(index) * 50)) }
            // 8 drivers in the cell: the first 8 requests are not surged; the 9th and 10th are (10/8 → 1.1).
            for index in 0..<8 { #expect(try await Self.book(s, "r\(index)").status == 201) }
            #expect(try await Self.book(s, "r8").status == 201)
            let surged = try await Self.book(s, "r9")
            #expect(surged.status == 409 && surged.errorCode == "SURGE_CHANGED")
            let multiplier = try #require(surged.json?["error"]?["details"]?["surge_multiplier"]?.doubleValue)
            #expect(multiplier > 1.0 && surged.json?["error"]?["details"]?["fare_estimate"]?["surge_multiplier"]?.doubleValue == multiplier)
            var confirmed = Self.body
            if case .object(var fields) = confirmed {
                fields["surge_multiplier"] = .number(multiplier)
                confirmed = .object(fields)
            }
            let booked = try await Self.book(s, "r9", body: confirmed)
            #expect(booked.status == 201 && booked.data?["fare_estimate"]?["surge_multiplier"]?.doubleValue == multiplier)
            let id = try #require(booked.data?["request_id"]?.stringValue)
            // Every driver (those without a trip yet) accepts at once: exactly one wins.
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for token in drivers {
                    group.addTask {
                        let reply = try await s.request(.post, "/api/v1/drivers/ride-requests/\(id)/accept", token: token)
                        return (reply.status, reply.errorCode)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1)
            #expect(statuses.filter { $0.0 == 409 }.allSatisfy { $0.1 == "RIDE_ALREADY_ACCEPTED" })
        }
    }

    /// The fare is final at COMPLETED, priced from the trail driven (3 km north in
    /// 200 s of samples, 15 minutes from start to end: 250 + 120 × 3 + 30 × 15 = 1,060), and
    /// each side rates the other once.
    @Test(arguments: TestEngine.allCases)
    func aCompletedTripIsPricedFromItsTrailAndEachSideRatesTheOther(engine: TestEngine) async throws {
        try await Self.run(engine) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 300)
            let tripID = try await Self.acceptedTrip(s, driver: alex)
            var sequence = 1
            func at(_ metersNorth: Double, after seconds: Double) async throws {
                sequence += 1
                Self.advance(s, seconds)
                let reply = try await s.request(
                    .post, "/api/v1/drivers/location", token: alex,
                    json: [
                        "latitude": .number(37.7749 + metersNorth / 111_200), "longitude": -122.4194, "accuracy_meters": 5,
                        "sequence": .number(Double(sequence)),
                    ])
                #expect(reply.data?["accepted"] == true, "\(reply.text)")
            }
            let rider = try await s.token("rider")
            func transition(_ to: String) async throws -> TestReply {
                try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": .string(to)])
            }
            try await at(0, after: 5)
            #expect(try await transition("ARRIVED").status == 200)
            let early = try await s.request(.post, "/api/v1/trips/\(tripID)/rating", token: rider, json: ["rating": 5])
            #expect(early.status == 409 && early.errorCode == "TRIP_NOT_COMPLETED")
            #expect(try await transition("IN_PROGRESS").status == 200)
            for step in 1...10 { try await at(Double(step) * 300, after: 20) }
            Self.advance(s, 700)
            let completed = try await transition("COMPLETED")
            #expect(completed.status == 200)
            let fare = completed.data?["fare"]
            #expect(fare?["final_amount_minor"] == 1_060, "\(String(describing: fare))")
            #expect(fare?["duration_seconds"] == 900)
            #expect(fare?["distance_meters"]?.doubleValue.map { abs($0 - 3_000) <= 2 } == true)
            let changed = try await Self.events(s, "trip:\(tripID)").last { $0.name == "trip_state_changed" }?.payload
            #expect(changed?["state"] == "COMPLETED" && changed?["context"]?["fare"]?["final_amount_minor"] == 1_060)

            // Bad ratings name their field; strangers and operators cannot rate.
            let path = "/api/v1/trips/\(tripID)/rating"
            let longComment = String(repeating: "x", count: 501)
            for bad: JSONValue in [
                ["rating": 0], ["rating": 6], ["rating": 4.5], ["rating": "5"], [:], ["rating": 5, "comment": .string(longComment)], ["rating": 5, "stars": 5],
            ] {
                let refused = try await s.request(.post, path, token: rider, json: bad)
                #expect(refused.status == 422 && refused.errorCode == "VALIDATION_FAILED", "\(bad)")
            }
            #expect(try await s.request(.post, path, token: try await s.token("stranger"), json: ["rating": 1]).status == 404)
            let ops = try await s.token("ops", .operator)
            #expect(try await s.request(.post, path, token: ops, json: ["rating": 1]).status == 403)
            // Each side once; the same again answers the same, a different one is refused.
            let byRider = try await s.request(.post, path, token: rider, json: ["rating": 5, "comment": "Great driver"])
            #expect(byRider.status == 200 && byRider.data?["ratings"]?["by_rider"] == 5 && byRider.data?["ratings"]?["by_driver"] == .null)
            #expect(try await s.request(.post, path, token: rider, json: ["rating": 5, "comment": "Great driver"]).status == 200)
            let changedMind = try await s.request(.post, path, token: rider, json: ["rating": 1])
            #expect(changedMind.status == 409 && changedMind.errorCode == "TRIP_ALREADY_RATED")
            #expect(try await s.request(.post, path, token: alex, json: ["rating": 4]).data?["ratings"]?["by_driver"] == 4)
            // The averages show on the trip; the comments only to operators.
            let seen = try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider)
            #expect(seen.data?["driver"]?["rating"] == 5 && seen.data?["rider"]?["rating"] == 4 && seen.data?["rating_comments"] == nil)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: ops).data?["rating_comments"]?["by_rider"] == "Great driver")
        }
    }

    /// The rider's booking, accepted by `driver`: the trip's id.
    /// A driver who opens the app from the offer's push has only the request id (issue 39).
    @Test func aDriverOfferedARideReadsItAndListsTheirOpenOffers() async throws {
        try await Self.run(.sqlite) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let blake = try await Self.driver(s, "blake", metersNorth: 1_500, name: "Blake Jones")
            let far = try await Self.driver(s, "far", metersNorth: 9_000)
            let requestID = try #require(try await Self.book(s, "rider").data?["request_id"]?.stringValue)

            let offered = try await s.request(.get, "/api/v1/ride-requests/\(requestID)", token: alex)
            #expect(offered.status == 200, "\(offered.text)")
            #expect(offered.data?["state"] == "SEARCHING" && offered.data?["offer"]?["outcome"] == "open" && offered.data?["offer"]?["round"] == 1)
            #expect(offered.data?["pickup"]?["address"] == "123 Market St, San Francisco" && offered.data?["trip_id"] == .null)
            #expect(offered.data?["rider_id"] == nil && offered.data?["payment_method_id"] == nil, "nothing of the rider")
            let listed = try await s.request(.get, "/api/v1/drivers/me/ride-offers", token: alex)
            #expect(listed.data?["offers"]?.arrayValue?.map { $0["request_id"] } == [.string(requestID)])
            // A driver it was not offered to learns nothing, not even that it exists.
            #expect(try await s.request(.get, "/api/v1/ride-requests/\(requestID)", token: far).errorCode == "RIDE_REQUEST_NOT_FOUND")
            #expect(try await s.request(.get, "/api/v1/drivers/me/ride-offers", token: far).data?["offers"] == [])

            let accepted = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex)
            let tripID = try #require(accepted.data?["trip_id"]?.stringValue)
            let won = try await s.request(.get, "/api/v1/ride-requests/\(requestID)", token: alex)
            #expect(won.data?["offer"]?["outcome"] == "won" && won.data?["trip_id"]?.stringValue == tripID && won.data?["state"] == "MATCHED")
            let lost = try await s.request(.get, "/api/v1/ride-requests/\(requestID)", token: blake)
            #expect(lost.data?["offer"]?["outcome"] == "lost" && lost.data?["trip_id"] == .null)
            for token in [alex, blake] {
                #expect(try await s.request(.get, "/api/v1/drivers/me/ride-offers", token: token).data?["offers"] == [])
            }
            // /metrics counts what happened on this node.
            let metrics = try await s.request(.get, "/metrics").text
            for line in [
                "herald_trips_ride_requests_total 1", "herald_trips_ride_offers_total 2", "herald_trips_ride_accepts_total{outcome=\"won\"} 1",
                "herald_trips_ride_accepts_total{outcome=\"lost\"} 0", "herald_driver_location_samples_total{outcome=\"accepted\"} 3",
                "herald_driver_location_accuracy_meters_count 3", "herald_driver_location_accuracy_meters_bucket{le=\"5.0\"} 3",
            ] {
                #expect(metrics.contains(line + "\n"), "\(line)")
            }
            #expect(try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: blake).status == 409)
            #expect(try await s.request(.get, "/metrics").text.contains("herald_trips_ride_accepts_total{outcome=\"lost\"} 1\n"))
            // The rider still reads their own request in full.
            #expect(try await s.request(.get, "/api/v1/ride-requests/\(requestID)", token: try await s.token("rider")).data?["trip_id"]?.stringValue == tripID)
        }
    }

    /// An app that lost its trip id finds its trip: in its history, and in the `state_sync`
    /// a native connection is sent when it opens (issue 39).
    @Test func historiesAndTheStateOnConnectFindALiveTrip() async throws {
        try await TestServer.run(.sqlite, setup: .live, clock: ManualClock(Self.start), configure: { $0.dispatch.indexSyncIntervalMs = 60_000 }) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let blake = try await Self.driver(s, "blake", metersNorth: 1_500, name: "Blake Jones")
            let rider = try await s.token("rider")
            let requestID = try #require(try await Self.book(s, "rider").data?["request_id"]?.stringValue)
            let tripID = try #require(
                try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue)

            let riderTrips = try await s.request(.get, "/api/v1/trips", token: rider)
            #expect(riderTrips.data?["total"] == 1 && riderTrips.data?["trips"]?[0]?["trip_id"]?.stringValue == tripID)
            #expect(riderTrips.data?["trips"]?[0]?["state"] == "ACCEPTED" && riderTrips.data?["trips"]?[0]?["request_id"]?.stringValue == requestID)
            #expect(try await s.request(.get, "/api/v1/trips?state=accepted", token: alex).data?["total"] == 1)
            #expect(try await s.request(.get, "/api/v1/trips?state=COMPLETED", token: alex).data?["total"] == 0)
            #expect(try await s.request(.get, "/api/v1/trips", token: blake).data?["total"] == 0)
            #expect(try await s.request(.get, "/api/v1/trips?state=lost", token: rider).errorCode == "VALIDATION_FAILED")
            let requests = try await s.request(.get, "/api/v1/ride-requests?limit=5", token: rider)
            #expect(requests.data?["total"] == 1 && requests.data?["ride_requests"]?[0]?["trip_id"]?.stringValue == tripID)
            #expect(try await s.request(.get, "/api/v1/ride-requests", token: try await s.token("someone-else")).data?["total"] == 0)
            #expect(try await s.request(.get, "/api/v1/trips", token: try await s.token("ops", .operator)).data?["total"] == 1)

            // A native connection is told its live trip's state without asking, and follows it from
            // the event the answer names (nothing before it again, nothing after it missed).
            try await s.runtime.realtime.hub.publish("eta_update", payload: ["eta_seconds": 300], to: "trip:\(tripID)")
            try await withNativeClient(s, token: rider) { app in
                let sync = await app.next(type: "state_sync")
                #expect(sync?["channel"]?.stringValue == "trip:\(tripID)" && sync?["current_state"] == "ACCEPTED" && sync?["reason"] == "connect")
                let latest = try #require(sync?["latest_event_id"]?.stringValue)
                try await s.runtime.realtime.hub.publish("eta_update", payload: ["eta_seconds": 120], to: "trip:\(tripID)")
                app.send(["type": "subscribe", "channel": .string("trip:\(tripID)"), "last_event_id": .string(latest)])
                #expect(await app.next(type: "eta_update")?["payload"]?["eta_seconds"] == 120)
                #expect(await app.next(type: "eta_update", timeout: .milliseconds(300)) == nil, "nothing twice")
            }
        }
    }

    static func acceptedTrip(_ s: TestSession, driver: String) async throws -> String {
        let booked = try await Self.book(s, "rider")
        let requestID = try #require(booked.data?["request_id"]?.stringValue)
        let accepted = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: driver)
        return try #require(accepted.data?["trip_id"]?.stringValue)
    }

    /// The rider's push when the pickup ETA moves by more than trips.eta_push_threshold_seconds
    /// (5 minutes): the driver drives away at 8.3 m/s, 500 m a minute, from 800 m out; the ETA
    /// (distance × 1.3 / speed) goes 125 s, 204, 282, 360, 438 (+313 s: one push), 517, 595.
    @Test func anETAThatMovesByMoreThanFiveMinutesIsPushedOnce() async throws {
        try await Self.run(.sqlite) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let tripID = try await Self.acceptedTrip(s, driver: alex)
            var sequence = 1
            func at(_ metersNorth: Double) async throws {
                sequence += 1
                Self.advance(s, 60)
                let reply = try await s.request(
                    .post, "/api/v1/drivers/location", token: alex,
                    json: [
                        "latitude": .number(37.7749 + metersNorth / 111_200), "longitude": -122.4194, "accuracy_meters": 5, "speed_mps": 8.3,
                        "sequence": .number(Double(sequence)),
                    ])
                #expect(reply.data?["accepted"] == true, "\(reply.text)")
            }
            func etaPushes() async throws -> [String] {
                try await Self.inboxBodies(s, "rider").filter { $0.hasPrefix("Your driver is now about") }
            }
            for meters in [800.0, 1_300, 1_800, 2_300] { try await at(meters) }
            #expect(try await etaPushes().isEmpty)
            #expect(try await Self.events(s, "trip:\(tripID)").contains { $0.name == "eta_update" })
            for meters in [2_800.0, 3_300, 3_800] { try await at(meters) }
            #expect(try await etaPushes() == ["Your driver is now about 7 min away."])
        }
    }

    /// The rideshare design's route-deviation check through the application: a ride 1 km east, the
    /// driver heads south instead at 20 m/s; past the 2 km corridor (trips.location.
    /// route_deviation_meters) the driver is warned once and the trip flagged once, the
    /// samples still shared (action NONE); before the ride starts nothing is checked.
    @Test func aRideThatLeavesItsCorridorIsFlaggedOncePerExcursion() async throws {
        try await Self.run(.sqlite) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 0)
            let body: JSONValue = [
                "pickup": Self.pickup, "ride_type": "STANDARD", "passenger_count": 1, "payment_method_id": "pm_xyz",
                "dropoff": ["latitude": 37.7749, "longitude": .number(-122.4194 + 1_000 / 88_000.0), "address": "1 km east"],
            ]
            let booked = try await Self.book(s, "rider", body: body)
            let requestID = try #require(booked.data?["request_id"]?.stringValue)
            let tripID = try #require(
                try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue)
            var sequence = 1
            func at(metersSouth: Double) async throws {
                sequence += 1
                Self.advance(s, 10)
                let reply = try await s.request(
                    .post, "/api/v1/drivers/location", token: alex,
                    json: [
                        "latitude": .number(37.7749 - metersSouth / 111_200), "longitude": -122.4194, "accuracy_meters": 5, "speed_mps": 20,
                        "sequence": .number(Double(sequence)),
                    ])
                #expect(reply.data?["accepted"] == true, "\(reply.text)")
            }
            func deviations() async throws -> [JSONValue] {
                _ = await s.runtime.trips.service.writer.flushOnce()
                return try await Self.events(s, "user:alex").filter { $0.name == "location_warning" && $0.payload["warning_code"] == "ROUTE_DEVIATION" }.map(
                    \.payload)
            }
            // Before the ride starts the driver may come from anywhere: 2.4 km south is no deviation.
            try await at(metersSouth: 2_400)
            for step in 1...12 { try await at(metersSouth: 2_400 - Double(step) * 200) }
            for step in ["ARRIVED", "IN_PROGRESS"] {
                #expect(try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": .string(step)]).status == 200)
            }
            #expect(try await deviations().isEmpty)
            // In the ride: 200 m every 10 s southwards; inside 2 km nothing, past it one warning.
            for step in 1...9 { try await at(metersSouth: Double(step) * 200) }
            #expect(try await deviations().isEmpty)
            for step in 10...14 { try await at(metersSouth: Double(step) * 200) }
            let warned = try await deviations()
            #expect(warned.count == 1 && warned.first?["action"] == "NONE")
            let flagged = try await s.request(.get, "/api/v1/trips/\(tripID)", token: try await s.token("ops", .operator))
            #expect(flagged.data?["flags"]?["count"] == 1 && flagged.data?["flags"]?["last"] == "ROUTE_DEVIATION")
            // Still shared with the rider: a detour is not a fake position.
            let shared = try await Self.events(s, "trip:\(tripID)").filter { $0.name == "driver_location" }.map(\.payload)
            #expect(shared.last?["latitude"]?.doubleValue.map { abs($0 - (37.7749 - 2_800 / 111_200)) < 1e-6 } == true)
        }
    }

    /// The rideshare design's LOCATION_REQUIRED (an arrival is confirmed by a fresh position) and its
    /// limit of 30 trip reads a minute.
    @Test func anArrivalNeedsAFreshLocationAndTripReadsAreLimited() async throws {
        try await Self.run(.sqlite) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let booked = try await Self.book(s, "rider")
            let requestID = try #require(booked.data?["request_id"]?.stringValue)
            let accepted = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex)
            let tripID = try #require(accepted.data?["trip_id"]?.stringValue)
            // The last position is older than dispatch.location_max_age_seconds.
            Self.advance(s, Double(s.runtime.config.dispatch.locationMaxAgeSeconds) + 1)
            let stale = try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": "ARRIVED"])
            #expect(stale.status == 409 && stale.errorCode == "LOCATION_REQUIRED")
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: alex).data?["state"] == "ACCEPTED")
            let fresh = try await s.request(
                .post, "/api/v1/drivers/location", token: alex, json: ["latitude": 37.7749, "longitude": -122.4194, "accuracy_meters": 5, "sequence": 2])
            #expect(fresh.status == 200 && fresh.data?["accepted"] == true)
            let arrived = try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": "ARRIVED"])
            #expect(arrived.status == 200 && arrived.data?["state"] == "ARRIVED")

            // 30 reads a minute for the rider; the 31st is refused with when to come back.
            let rider = try await s.token("rider")
            for read in 1...30 {
                let reply = try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider)
                #expect(reply.status == 200, "read \(read)")
            }
            let limited = try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider)
            #expect(limited.status == 429 && limited.errorCode == "RATE_LIMIT_EXCEEDED")
            #expect(limited.json?["error"]?["details"]?["limit"] == 30 && limited.json?["error"]?["details"]?["window"] == "1 minute")
            // The driver's own reads are counted apart, and a minute later the rider reads again.
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: alex).status == 200)
            Self.advance(s, 61)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider).status == 200)
        }
    }

    @Test func badRequestsNameTheirFields() async throws {
        // No surge here: with no drivers around, a rider's queue of requests would be surged.
        try await Self.run(.sqlite, { $0.trips.surge.enabled = false }) { s in
            let bad = try await Self.book(
                s, "rider", body: ["pickup": ["latitude": 91, "longitude": "x"], "dropoff": Self.dropoff, "passenger_count": 9, "extra": 1])
            #expect(bad.status == 422 && bad.errorCode == "VALIDATION_FAILED")
            let fields = (0..<10).compactMap { bad.json?["error"]?["details"]?["fields"]?[$0]?["field"]?.stringValue }
            #expect(Set(fields).isSuperset(of: ["pickup.latitude", "pickup.longitude", "passenger_count", "extra"]))
            let notObject = try await Self.book(s, "rider", body: "[]")
            #expect(notObject.status == 400 || notObject.status == 422)
            // Drivers do not book rides; riders do not accept them.
            #expect(
                try await s.request(
                    .post, "/api/v1/ride-requests", token: try await s.token("d", .driver), headers: [.init("Idempotency-Key")!: "k"], json: Self.body
                ).status == 403)
            #expect(try await s.request(.post, "/api/v1/drivers/ride-requests/req_x/accept", token: try await s.token("rider")).status == 403)
            #expect(try await s.request(.get, "/api/v1/trips/tr_nothing", token: try await s.token("rider")).errorCode == "TRIP_NOT_FOUND")
            // Three requests a minute per rider.
            var statuses: [Int] = []
            for _ in 0..<4 { statuses.append(try await Self.book(s, "eager").status) }
            #expect(statuses == [201, 201, 201, 429])
            let vehicle = try await s.request(
                .put, "/api/v1/drivers/me/vehicle", token: try await s.token("nobody", .driver),
                json: ["make": "A", "model": "B", "color": "C", "license_plate": "D"])
            #expect(vehicle.status == 404 && vehicle.errorCode == "DRIVER_NOT_FOUND")
        }
    }
}
