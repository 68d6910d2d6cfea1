import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTrips
import Testing

@testable import HeraldRealtime

/// The trips routes' own concerns over HTTP, sockets and pushes; the domain flows are HeraldTripsTests' `RideFlowTests`, `TripLocationFlowTests`.
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

    /// The rider's booking, accepted by `driver`: the trip's id.
    static func acceptedTrip(_ s: TestSession, driver: String) async throws -> String {
        let booked = try await Self.book(s, "rider")
        let requestID = try #require(booked.data?["request_id"]?.stringValue)
        let accepted = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: driver)
        return try #require(accepted.data?["trip_id"]?.stringValue)
    }

    /// A whole ride over REST as the apps see it: the booking's key, each answer and ETag, refusals as HTTP errors, pushes as APNs gets them.
    @Test(arguments: TestEngine.allCases)
    func aRideOverRESTAnswersEachStepAndItsPushesReachAPNs(engine: TestEngine) async throws {
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
            #expect(request["fare_estimate"] == estimate.data?["fare_estimate"])
            #expect(request["expires_at"]?.stringValue == Timestamp.string(epochMilliseconds: Self.start.epochMilliseconds + 300_000))

            // First accept wins; the winner's retry gets the same trip; the other driver a 409.
            let accepted = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex)
            #expect(accepted.status == 200 && accepted.data?["state"] == "ACCEPTED")
            let tripID = try #require(accepted.data?["trip_id"]?.stringValue)
            #expect(accepted.data?["driver"]?["vehicle"]?["model"] == "Camry")
            #expect(accepted.data?["driver"]?["photo_url"]?.stringValue == "https://cdn.example.com/drivers/alex.jpg")
            let lost = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: blake)
            #expect(lost.status == 409 && lost.errorCode == "RIDE_ALREADY_ACCEPTED")
            #expect(try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue == tripID)

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

    /// An app that lost its trip id finds its trip over REST and in the `state_sync` its native connection is sent (issue 39).
    @Test func historiesAndTheStateOnConnectFindALiveTrip() async throws {
        try await TestServer.run(.sqlite, setup: .live, clock: ManualClock(Self.start), configure: { $0.dispatch.indexSyncIntervalMs = 60_000 }) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let rider = try await s.token("rider")
            let requestID = try #require(try await Self.book(s, "rider").data?["request_id"]?.stringValue)
            let tripID = try #require(
                try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue)

            let riderTrips = try await s.request(.get, "/api/v1/trips", token: rider)
            #expect(riderTrips.data?["total"] == 1 && riderTrips.data?["trips"]?[0]?["trip_id"]?.stringValue == tripID)
            #expect(riderTrips.data?["trips"]?[0]?["state"] == "ACCEPTED" && riderTrips.data?["trips"]?[0]?["request_id"]?.stringValue == requestID)
            // The state filter takes any case; an unknown state is named.
            #expect(try await s.request(.get, "/api/v1/trips?state=accepted", token: alex).data?["total"] == 1)
            #expect(try await s.request(.get, "/api/v1/trips?state=lost", token: rider).errorCode == "VALIDATION_FAILED")
            let requests = try await s.request(.get, "/api/v1/ride-requests?limit=5", token: rider)
            #expect(requests.data?["total"] == 1 && requests.data?["ride_requests"]?[0]?["trip_id"]?.stringValue == tripID)

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

    /// The rideshare design's limit of 30 trip reads a minute, counted per caller, with when to come back.
    @Test func tripReadsAreLimitedPerCaller() async throws {
        try await Self.run(.sqlite) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let tripID = try await Self.acceptedTrip(s, driver: alex)
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

    /// The location route's own answers: both mock-flag spellings, the trail's JSON by role, bad samples named, the throttle as 429.
    @Test(arguments: TestEngine.allCases)
    func theLocationRouteNamesBadSamplesAndAnswersItsThrottle(engine: TestEngine) async throws {
        try await Self.run(engine) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 800)
            let tripID = try await Self.acceptedTrip(s, driver: alex)
            let at = JSONValue.number(37.7749 + 700 / 111_200.0)
            var sequence = 10
            func send(_ extra: [String: JSONValue] = [:]) async throws -> TestReply {
                sequence += 1
                var sample: [String: JSONValue] = [
                    "latitude": at, "longitude": -122.4194, "accuracy_meters": 5, "heading": 180, "speed_mps": 10, "altitude_meters": 12,
                    "battery_percent": 70, "is_charging": false, "sequence": .number(Double(sequence)),
                ]
                sample.merge(extra) { _, new in new }
                return try await s.request(.post, "/api/v1/drivers/location", token: alex, json: .object(sample))
            }
            Self.advance(s, 1)
            #expect(try await send().data?["accepted"] == true)
            for flag in ["is_mock_location", "is_from_mock_provider"] {
                Self.advance(s, 1)
                #expect(try await send([flag: true]).data?["accepted"] == true, "\(flag)")
            }
            #expect(try await s.request(.get, "/metrics").text.contains("herald_trips_fraud_flags_total{code=\"MOCK_LOCATION\"} 2\n"))
            _ = await s.runtime.trips.service.writer.flushOnce()

            // The trail: every sample in full for operators, the shared ones without the device's details for the rider.
            let ops = try await s.token("ops", .operator)
            let full = try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: ops)
            #expect(full.data?["count"] == 3 && full.data?["locations"]?[2]?["warning"] == "MOCK_LOCATION")
            #expect(full.data?["locations"]?[0]?["accuracy_meters"] == 5 && full.data?["locations"]?[0]?["battery_percent"] == 70)
            #expect(full.data?["locations"]?[0]?["sequence"] == 11)
            let riderView = try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: try await s.token("rider"))
            #expect(riderView.data?["count"] == 1 && riderView.data?["locations"]?[0]?["battery_percent"] == nil)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: try await s.token("stranger")).status == 404)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)/locations?limit=0", token: ops).status == 422)

            // Bad samples are refused with the field named, and change nothing.
            Self.advance(s, 30)
            for (field, value) in [("accuracy_meters", JSONValue.number(-1)), ("heading", 400), ("latitude", "NaN"), ("speed_mps", .number(1e6))] {
                var sample: [String: JSONValue] = ["latitude": at, "longitude": -122.4194, "sequence": 999]
                sample[field] = value
                let refused = try await s.request(.post, "/api/v1/drivers/location", token: alex, json: .object(sample))
                let named = refused.json?["error"]?["details"]?["fields"]?[0]?["field"]?.stringValue
                #expect(refused.status == 422 && named == field, "\(field): \(refused.text)")
            }
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)/locations", token: ops).data?["count"] == 3)

            // In a trip: 1/s after a burst of 5 — six at one instant, the sixth is throttled.
            var statuses: [Int] = []
            for _ in 0..<6 { statuses.append(try await send().status) }
            #expect(statuses == [200, 200, 200, 200, 200, 429])
            let throttled = try await send()
            #expect(
                throttled.errorCode == "RATE_LIMIT_EXCEEDED" && throttled.json?["error"]?["details"]?["limit"] == "1/s"
                    && throttled.header("Retry-After") == "1")
            Self.advance(s, 1)
            #expect(try await send().status == 200)
        }
    }

    /// The rating route's checks, who may rate, and the trip's JSON: the fare settled, both averages, comments to operators only.
    @Test(arguments: TestEngine.allCases)
    func ratingsAreCheckedAndShownByRole(engine: TestEngine) async throws {
        try await Self.run(engine) { s in
            let alex = try await Self.driver(s, "alex", metersNorth: 300)
            let tripID = try await Self.acceptedTrip(s, driver: alex)
            var completed: TestReply?
            for step in ["ARRIVED", "IN_PROGRESS", "COMPLETED"] {
                Self.advance(s, 60)
                completed = try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": .string(step)])
                #expect(completed?.status == 200, "\(step): \(completed?.text ?? "")")
            }
            // No trail was driven: the estimated distance stands in; the time is start to end.
            let fare = completed?.data?["fare"]
            #expect(fare?["final_amount_minor"]?.doubleValue != nil && fare?["distance_meters"]?.doubleValue != nil, "\(String(describing: fare))")
            #expect(fare?["duration_seconds"] == 60)

            // Bad ratings name their field; strangers and operators cannot rate.
            let path = "/api/v1/trips/\(tripID)/rating"
            let rider = try await s.token("rider")
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
            let byRider = try await s.request(.post, path, token: rider, json: ["rating": 5, "comment": "Great driver"])
            #expect(byRider.status == 200 && byRider.data?["ratings"]?["by_rider"] == 5 && byRider.data?["ratings"]?["by_driver"] == .null)
            #expect(try await s.request(.post, path, token: alex, json: ["rating": 4]).data?["ratings"]?["by_driver"] == 4)
            // The averages show on the trip; the comments only to operators.
            let seen = try await s.request(.get, "/api/v1/trips/\(tripID)", token: rider)
            #expect(seen.data?["driver"]?["rating"] == 5 && seen.data?["rider"]?["rating"] == 4 && seen.data?["rating_comments"] == nil)
            #expect(try await s.request(.get, "/api/v1/trips/\(tripID)", token: ops).data?["rating_comments"]?["by_rider"] == "Great driver")
        }
    }

    /// A driver who opens the app from the offer's push has only the request id (issue 39): what they read of it, what /metrics counts.
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
