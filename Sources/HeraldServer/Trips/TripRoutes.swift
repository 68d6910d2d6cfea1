import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldRealtime
import HeraldTrips
import Hummingbird

/// Ride requests and trips over REST.
struct TripRoutes {
    let trips: TripService
    let clock: any HeraldClock
    let rateLimits: RateLimitGate

    /// Whichever way a trip is cancelled, it spends the cancel route's allowance.
    static let cancelRoute = "POST /api/v1/ride-requests/{id}/cancel"

    func respond(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], _ context: HeraldRequestContext) throws -> Response {
        try Envelope.response(value, status: status, headers: headers, context: context, clock: clock)
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        addRequestRoutes(to: api)
        addTripRoutes(to: api)
    }

    func addRequestRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/ride-requests/estimate") { request, context in
            let identity = try context.require(.customer)
            let input = try RideRequestInput.parse(try await request.jsonObject(context: context), config: trips.config)
            let quote = try await trips.requests.quote(input, riderID: identity.userID)
            return try respond(
                [
                    "fare_estimate": quote.fareJSON,
                    "route": [
                        "distance_meters": .number(quote.route.distanceMeters.rounded()), "duration_seconds": .number(quote.route.durationSeconds.rounded()),
                        "polyline": .string(quote.route.polyline),
                    ],
                    "estimated_pickup_seconds": quote.estimatedPickupSeconds.map { .number(Double($0)) } ?? .null,
                ], context)
        }
        api.post("/ride-requests") { request, context in
            let identity = try context.require(.customer)
            // Checked before the body: a booking without a key could be made twice by a retry.
            guard request.headers[HTTPField.Name("Idempotency-Key")!] != nil else { throw TripError.idempotencyKeyRequired }
            let input = try RideRequestInput.parse(try await request.jsonObject(context: context), config: trips.config)
            // The answer commits with the booking: a retry after a crash replays it.
            return try await IdempotentAnswer.answer(
                RideRequests.BookedRequest.self,
                respond: { booked in
                    try respond(
                        TripJSON.request(booked.record, estimatedPickupSeconds: booked.quote.estimatedPickupSeconds), status: .created,
                        headers: [.location: "/api/v1/ride-requests/\(booked.record.id)"], context)
                }
            ) { answer in
                let (record, quote) = try await trips.requests.createRequest(input, riderID: identity.userID, answer: answer)
                return RideRequests.BookedRequest(record: record, quote: quote)
            }
        }
        api.get("/ride-requests/{id}") { _, context in
            let identity = try context.require(.customer, .operator, .service, .driver)
            let id = try context.parameters.require("id")
            if identity.role == .driver {
                let (request, offer) = try await trips.requests.offeredRequest(id, driverID: identity.userID)
                return try respond(TripJSON.offeredRequest(request, offer), context)
            }
            return try respond(TripJSON.request(try await trips.requests.request(id, for: identity)), context)
        }
        api.get("/ride-requests") { request, context in
            let identity = try context.require(.customer, .operator, .service)
            let (offset, limit) = try DispatchRoutes.offsetLimit(request)
            let page = try await trips.requests.requestHistory(for: identity, offset: offset, limit: limit)
            return try respond(
                [
                    "ride_requests": .array(page.requests.map { TripJSON.request($0) }), "total": .number(Double(page.total)),
                    "offset": .number(Double(offset)), "limit": .number(Double(limit)),
                ], headers: [.cacheControl: "private, no-cache"], context)
        }
        api.get("/trips") { request, context in
            let identity = try context.requireIdentity()
            let (offset, limit) = try DispatchRoutes.offsetLimit(request)
            var v = FieldValidator()
            var state: TripState?
            if let text = request.uri.queryParameters["state"] {
                state = TripState(rawValue: String(text).uppercased())
                if state == nil { v.fail("state", "must be one of \(TripState.allCases.map(\.rawValue).joined(separator: ", "))") }
            }
            try v.validate()
            let page = try await trips.book.history(for: identity, state: state, offset: offset, limit: limit)
            return try respond(
                [
                    "trips": .array(page.trips.map(TripJSON.summary)), "total": .number(Double(page.total)), "offset": .number(Double(offset)),
                    "limit": .number(Double(limit)),
                ], headers: [.cacheControl: "private, no-cache"], context)
        }
        api.get("/drivers/me/ride-offers") { _, context in
            let identity = try context.require(.driver)
            let offers = try await trips.requests.openOffers(driverID: identity.userID)
            return try respond(["offers": .array(offers.map { TripJSON.offeredRequest($0.0, $0.1) })], headers: [.cacheControl: "private, no-cache"], context)
        }
        api.post("/ride-requests/{id}/cancel") { request, context in
            let identity = try context.require(.customer, .operator, .service)
            let body = try await DispatchRoutes.optionalBody(request, context)
            var v = FieldValidator()
            for key in body.keys.sorted() where key != "reason" { v.fail(key, "is not a known field") }
            let reason = v.text(body, "reason", max: 500, required: false)
            try v.validate()
            let closed = try await trips.requests.cancelRequest(try context.parameters.require("id"), by: identity, reason: reason)
            return try respond(TripJSON.request(closed), context)
        }
        api.post("/drivers/ride-requests/{id}/accept") { request, context in
            let identity = try context.require(.driver)
            try await DispatchRoutes.emptyBody(request, context)
            let trip = try await trips.accepts.accept(try context.parameters.require("id"), driverID: identity.userID)
            var object = try await trips.book.tripJSON(trip, for: identity)
            if case .object(var fields) = object {
                fields["success"] = true
                object = .object(fields)
            }
            return try respond(object, context)
        }
        api.get("/drivers/me/vehicle") { _, context in
            let identity = try context.require(.driver)
            guard let vehicle = try await trips.vehicles.vehicle(identity.userID) else {
                throw APIError(status: 404, code: .notFound, message: "No vehicle yet (PUT /api/v1/drivers/me/vehicle).")
            }
            return try respond(TripJSON.vehicle(vehicle), context)
        }
        api.put("/drivers/me/vehicle") { request, context in
            let identity = try context.require(.driver)
            let input = try VehicleInput.parse(try await request.jsonObject(context: context), config: trips.config)
            return try respond(TripJSON.vehicle(try await trips.vehicles.save(identity.userID, input)), context)
        }
    }

    func addTripRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/trips/{id}") { request, context in
            let identity = try context.requireIdentity()
            let trip = try await trips.book.trip(try context.parameters.require("id"), for: identity)
            let etag = trip.etag
            // The rideshare design's REST fallback: a client that holds this version gets 304 and no body.
            if let match = request.headers[.ifNoneMatch],
                match.split(separator: ",").contains(where: {
                    let tag = $0.trimmingCharacters(in: .whitespaces)
                    return tag == etag || tag == "W/\(etag)" || tag == "*"
                })
            {
                return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: "private, no-cache"])
            }
            return try respond(try await trips.book.tripJSON(trip, for: identity), headers: [.eTag: etag, .cacheControl: "private, no-cache"], context)
        }
        api.post("/trips/{id}/transitions") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            var v = FieldValidator()
            for key in body.keys.sorted() where key != "to" && key != "context" { v.fail(key, "is not a known field") }
            let to = body["to"]?.stringValue
            v.check(to != nil, "to", "is required: ARRIVED, IN_PROGRESS, COMPLETED or CANCELLED")
            var tripContext: [String: JSONValue] = [:]
            switch body["context"] {
            case nil, .null?: break
            case .object(let object)?:
                tripContext = object
                if SocketPacketEncoder.json(.object(object)).utf8.count > 2_048 { v.fail("context", "must be at most 2048 bytes of JSON") }
                if let reason = object["reason"], reason.stringValue == nil { v.fail("context.reason", "must be a string") }
            default: v.fail("context", "must be an object")
            }
            try v.validate()
            if to == TripState.cancelled.rawValue { _ = try rateLimits.take(Self.cancelRoute, context) }
            let trip = try await trips.book.transition(try context.parameters.require("id"), to: to!, by: identity, context: tripContext)
            return try respond(try await trips.book.tripJSON(trip, for: identity), headers: [.eTag: trip.etag], context)
        }
        api.post("/trips/{id}/rating") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            var v = FieldValidator()
            for key in body.keys.sorted() where key != "rating" && key != "comment" { v.fail(key, "is not a known field") }
            var rating = 0
            switch body["rating"] {
            case .number(let value)? where value.rounded() == value && (1...5).contains(value): rating = Int(value)
            case nil, .null?: v.fail("rating", "is required: a whole number from 1 to 5")
            default: v.fail("rating", "must be a whole number from 1 to 5")
            }
            // A blank comment is no comment (the app's empty text box).
            let blank = body["comment"]?.stringValue.map { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty } ?? false
            let comment = blank ? nil : v.text(body, "comment", max: 500, required: false)
            try v.validate()
            let trip = try await trips.book.rate(try context.parameters.require("id"), by: identity, rating: rating, comment: comment)
            return try respond(try await trips.book.tripJSON(trip, for: identity), headers: [.eTag: trip.etag], context)
        }
        api.get("/trips/{id}/locations") { request, context in
            let identity = try context.requireIdentity()
            var v = FieldValidator()
            let after = Self.integer(request.uri.queryParameters["after"].map(String.init), "after", 0, 0...Int64.max, &v)
            let limit = Self.integer(request.uri.queryParameters["limit"].map(String.init), "limit", 100, 1...1000, &v)
            try v.validate()
            let trip = try await trips.book.trip(try context.parameters.require("id"), for: identity)
            let (rows, full) = try await trips.trail.locations(of: trip, for: identity, after: after, limit: Int(limit))
            return try respond(
                [
                    "locations": .array(rows.map { TripJSON.locationRow($0, full: full) }), "count": .number(Double(rows.count)),
                    "next_after": rows.last.map { .number(Double($0.ordinal)) } ?? .null,
                ], context)
        }
    }

    static func integer(_ text: String?, _ name: String, _ fallback: Int64, _ range: ClosedRange<Int64>, _ v: inout FieldValidator) -> Int64 {
        guard let text else { return fallback }
        guard let value = Int64(text), range.contains(value) else {
            v.fail(name, "must be a whole number from \(range.lowerBound)\(range.upperBound == .max ? "" : " to \(range.upperBound)")")
            return fallback
        }
        return value
    }
}
