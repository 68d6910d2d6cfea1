import HeraldCore
import HeraldTrips

/// OpenAPI descriptions of the trips routes.
extension TripRoutes {
    static let place = Schema.object([
        "latitude": ["type": "number", "minimum": -90, "maximum": 90], "longitude": ["type": "number", "minimum": -180, "maximum": 180],
        "address": Schema.text(maxLength: 500), "place_id": Schema.text(maxLength: 200),
    ])
    static let requestBody = Schema.object([
        "pickup": place, "dropoff": place, "ride_type": Schema.string(), "passenger_count": Schema.integer(),
        "payment_method_id": Schema.text(maxLength: 255),
        "surge_multiplier": ["type": "number", "description": "the multiplier the rider was quoted and confirmed; required when it is above 1.0"],
    ])
    static let fare = Schema.object([
        "min_amount_minor": Schema.integer(), "max_amount_minor": Schema.integer(), "currency": Schema.string(), "surge_multiplier": ["type": "number"],
    ])
    static let requestSchema = Schema.object([
        "request_id": Schema.string(), "state": Schema.enumeration(["SEARCHING", "MATCHED", "CANCELLED", "EXPIRED"]),
        "allowed_transitions": ["type": "array", "items": Schema.string()], "fare_estimate": fare,
        "estimated_pickup_seconds": ["type": ["integer", "null"]], "search_radius_meters": Schema.integer(),
        "created_at": Schema.string(format: "date-time"), "expires_at": Schema.string(format: "date-time"), "trip_id": Schema.string(nullable: true),
    ])
    static let tripSchema = Schema.object([
        "trip_id": Schema.string(), "state": Schema.enumeration(["ACCEPTED", "ARRIVED", "IN_PROGRESS", "COMPLETED", "CANCELLED"]),
        "allowed_transitions": ["type": "array", "items": Schema.string()],
        "rider": ["type": "object", "description": "{id, first_name, rating}"],
        "driver": ["type": "object", "description": "{id, first_name, rating, photo_url, vehicle {make, model, color, license_plate}}"],
        "pickup": place, "dropoff": place,
        "route": Schema.object(["polyline": Schema.string(), "distance_meters": Schema.integer(), "duration_seconds": Schema.integer()]),
        "fare": Schema.object([
            "estimate_min_minor": Schema.integer(), "estimate_max_minor": Schema.integer(), "currency": Schema.string(),
            "final_amount_minor": Schema.integer(), "distance_meters": Schema.integer(), "duration_seconds": Schema.integer(),
        ]),
        "ratings": Schema.object(["by_rider": ["type": ["integer", "null"]], "by_driver": ["type": ["integer", "null"]]]),
        "created_at": Schema.string(format: "date-time"), "etag": Schema.string(),
    ])
    static let vehicleSchema = Schema.object([
        "make": Schema.text(maxLength: 60), "model": Schema.text(maxLength: 60), "color": Schema.text(maxLength: 40),
        "license_plate": Schema.text(maxLength: 20), "capacity": Schema.integer(), "ride_types": ["type": "array", "items": Schema.string()],
    ])
    static let rider = APIOperation.Access.authenticated(roles: ["customer"])
    static let riderOrOperator = APIOperation.Access.authenticated(roles: ["customer", "operator", "service"])
    static let tripSummarySchema = Schema.object([
        "trip_id": Schema.string(), "request_id": Schema.string(), "state": Schema.enumeration(TripState.allCases.map(\.rawValue)),
        "pickup": ["type": "object"], "dropoff": ["type": "object"], "ride_type": Schema.string(), "fare": ["type": "object"],
        "created_at": Schema.string(format: "date-time"), "completed_at": ["type": ["string", "null"], "format": "date-time"],
        "cancelled_at": ["type": ["string", "null"], "format": "date-time"],
    ])
    static let offeredRequestSchema = Schema.object([
        "request_id": Schema.string(), "state": Schema.enumeration(["SEARCHING", "MATCHED", "CANCELLED", "EXPIRED"]),
        "ride_type": Schema.string(), "passenger_count": Schema.integer(), "pickup": ["type": "object"], "dropoff": ["type": "object"],
        "fare_estimate": ["type": "object"], "route": ["type": "object"], "distance_meters": ["type": ["integer", "null"]],
        "expires_at": Schema.string(format: "date-time"), "trip_id": ["type": ["string", "null"]],
        "offer": Schema.object([
            "round": Schema.integer(), "offered_at": Schema.string(format: "date-time"),
            "outcome": Schema.string("open, won, or why it closed for you (lost, cancelled, expired)"),
        ]),
    ])
    static let driverOnly = APIOperation.Access.authenticated(roles: ["driver"])
    static let parties = APIOperation.Access.authenticated(roles: ["customer", "driver", "operator", "service"])
    static let id: [JSONValue] = [["name": "id", "in": "path", "required": true, "schema": ["type": "string"]]]
    static let notFound = "Not the caller's trip, or no such trip (`TRIP_NOT_FOUND`)"

    static let operations: [APIOperation] = [
        APIOperation(
            "POST", "/api/v1/ride-requests/estimate", summary: "Quote a ride: fare range at the current surge, route, pickup time",
            description: "Send the quoted surge_multiplier back when booking; a changed surge is 409 SURGE_CHANGED.",
            tag: "trips", access: rider, requestBody: requestBody,
            response: Schema.object(["fare_estimate": fare, "route": ["type": "object"], "estimated_pickup_seconds": ["type": ["integer", "null"]]]),
            errors: [422: "Invalid fields (`VALIDATION_FAILED`)"]),
        {
            var booking = APIOperation(
                "POST", "/api/v1/ride-requests", summary: "Request a ride",
                description:
                    "Idempotency-Key is required. The request searches (offer rounds to nearby drivers, `ride:new`) until a driver accepts or `expires_at`; the rider hears `ride_request_updated` on user:{id}. 3 per minute per rider.",
                tag: "trips", access: rider, requestBody: requestBody, response: requestSchema, successStatus: 201, acceptsIdempotencyKey: true,
                errors: [
                    400: "No Idempotency-Key (`IDEMPOTENCY_KEY_REQUIRED`)",
                    409: "The surge changed (`SURGE_CHANGED`, details: surge_multiplier, fare_estimate)",
                    422: "Invalid fields (`VALIDATION_FAILED`)", 429: "More than 3 requests a minute (`RATE_LIMIT_EXCEEDED`)",
                ])
            booking.requiresIdempotencyKey = true
            return booking
        }(),
        APIOperation(
            "GET", "/api/v1/ride-requests/{id}", summary: "A ride request (a driver sees the offer made to them)",
            description:
                "A driver it was offered to gets the offer's view: pickup, dropoff, fare estimate, its state and `offer.outcome` (open, won, lost, cancelled, expired); nothing of the rider.",
            tag: "trips", access: .authenticated(roles: ["customer", "operator", "service", "driver"]),
            response: ["anyOf": [requestSchema, offeredRequestSchema]],
            errors: [404: "No such request of yours, or never offered to you (`RIDE_REQUEST_NOT_FOUND`)"], parameters: id),
        APIOperation(
            "GET", "/api/v1/ride-requests", summary: "The caller's ride requests, newest first (everyone's for operators)", tag: "trips",
            access: riderOrOperator,
            response: Schema.object([
                "ride_requests": ["type": "array", "items": requestSchema], "total": Schema.integer(), "offset": Schema.integer(), "limit": Schema.integer(),
            ]),
            errors: [422: "A bad parameter (`VALIDATION_FAILED`)"], parameters: DispatchRoutes.pageParameters),
        APIOperation(
            "GET", "/api/v1/trips", summary: "The caller's trips, newest first: a rider's rides, a driver's drives (everyone's for operators)", tag: "trips",
            access: .authenticated(roles: ["customer", "driver", "operator", "service"]),
            response: Schema.object([
                "trips": ["type": "array", "items": tripSummarySchema], "total": Schema.integer(), "offset": Schema.integer(), "limit": Schema.integer(),
            ]),
            errors: [422: "A bad parameter (`VALIDATION_FAILED`)"],
            parameters: DispatchRoutes.pageParameters + [
                ["name": "state", "in": "query", "schema": Schema.enumeration(TripState.allCases.map(\.rawValue))]
            ]),
        APIOperation(
            "GET", "/api/v1/drivers/me/ride-offers", summary: "The ride requests offered to the caller that they may still accept, newest first",
            tag: "trips", access: driverOnly, response: Schema.object(["offers": ["type": "array", "items": offeredRequestSchema]])),
        APIOperation(
            "POST", "/api/v1/ride-requests/{id}/cancel", summary: "Cancel a ride request (a matched one cancels its trip)", tag: "trips",
            access: riderOrOperator, requestBody: Schema.object(["reason": Schema.text(maxLength: 500)]), response: requestSchema,
            errors: [404: "No such request of yours (`RIDE_REQUEST_NOT_FOUND`)", 409: "It expired (`DRIVER_UNAVAILABLE`)"], parameters: id),
        APIOperation(
            "POST", "/api/v1/drivers/ride-requests/{id}/accept", summary: "Accept a ride: the first driver makes the trip",
            tag: "trips", access: driverOnly, response: tripSchema,
            errors: [
                403: "Driver not approved (`DRIVER_NOT_APPROVED`)", 404: "No such request (`RIDE_REQUEST_NOT_FOUND`)",
                409:
                    "Taken (`RIDE_ALREADY_ACCEPTED`), closed (`RIDE_REQUEST_CLOSED`), already on a trip (`DRIVER_BUSY`) or the vehicle does not fit (`VEHICLE_NOT_ELIGIBLE`)",
            ], parameters: id),
        APIOperation(
            "GET", "/api/v1/drivers/me/vehicle", summary: "The driver's vehicle", tag: "trips", access: driverOnly, response: vehicleSchema,
            errors: [404: "No vehicle yet (`NOT_FOUND`)"]),
        APIOperation(
            "PUT", "/api/v1/drivers/me/vehicle", summary: "Register or update the driver's vehicle", tag: "trips", access: driverOnly,
            requestBody: vehicleSchema, response: vehicleSchema,
            errors: [404: "No driver profile (`DRIVER_NOT_FOUND`)", 422: "Invalid fields (`VALIDATION_FAILED`)"]),
        APIOperation(
            "GET", "/api/v1/trips/{id}", summary: "The whole trip (REST fallback), with ETag",
            description: "Send If-None-Match with the ETag to get 304 when nothing changed. 30 per minute.",
            tag: "trips", access: parties, response: tripSchema, errors: [304: "Not modified", 404: notFound], parameters: id),
        APIOperation(
            "POST", "/api/v1/trips/{id}/transitions", summary: "Move a trip to its next state",
            description:
                "Drivers: ARRIVED (needs a fresh location: LOCATION_REQUIRED), IN_PROGRESS, COMPLETED, CANCELLED; riders: CANCELLED. Every change is trip_state_changed on trip:{id}.",
            tag: "trips", access: parties,
            requestBody: Schema.object(
                ["to": Schema.enumeration(["ARRIVED", "IN_PROGRESS", "COMPLETED", "CANCELLED"]), "context": ["type": "object"]], required: ["to"]),
            response: tripSchema,
            errors: [
                403: "Not this party's move (`FORBIDDEN`)", 404: notFound,
                409:
                    "Not allowed from this state (`INVALID_TRANSITION`, details.allowed_transitions), already cancelled (`TRIP_ALREADY_CANCELLED`), no driver location (`LOCATION_REQUIRED`)",
            ], parameters: id),
        APIOperation(
            "POST", "/api/v1/trips/{id}/rating", summary: "Rate the other side of a completed trip",
            description:
                "The rider rates the driver, the driver the rider: once each, after COMPLETED; the rating joins the other's average (`driver.rating`, `rider.rating`). The same rating again answers with the trip.",
            tag: "trips", access: parties,
            requestBody: Schema.object(["rating": Schema.integer(minimum: 1, maximum: 5), "comment": Schema.string(maxLength: 500)], required: ["rating"]),
            response: tripSchema,
            errors: [
                403: "Not the trip's rider or driver (`FORBIDDEN`)", 404: notFound,
                409: "Not completed (`TRIP_NOT_COMPLETED`) or already rated differently (`TRIP_ALREADY_RATED`)", 422: "`VALIDATION_FAILED`",
            ], parameters: id),
        APIOperation(
            "GET", "/api/v1/trips/{id}/locations", summary: "The trip's location audit trail",
            description: "Drivers and operators see every sample with its accuracy and warning; riders the shared ones.",
            tag: "trips", access: parties,
            response: Schema.object(["locations": ["type": "array"], "count": Schema.integer(), "next_after": ["type": ["integer", "null"]]]),
            errors: [404: notFound],
            parameters: id + [
                ["name": "after", "in": "query", "schema": ["type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_991]],
                ["name": "limit", "in": "query", "schema": ["type": "integer", "minimum": 1, "maximum": 1000, "default": 100]],
            ]),
    ]
}
