import HTTPTypes
import HeraldCore
import HeraldGTFS
import HeraldTransit
import Hummingbird

/// `POST /trips/plan` (the transit API contract): journeys planned on Herald's own timetable.
extension TransitRoutes {
    func addPlanRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/trips/plan") { request, context in
            let body = try await request.jsonObject(context: context)
            let input = try TripPlanRequest.parse(body, config: transit.config.planner, now: Int64(clock.now().timeIntervalSince1970))
            // The planner's fair share goes by who asks: the user, else the address.
            let client = context.identity.map { "user:\($0.userID)" } ?? "ip:\(context.clientIP)"
            return try respond(try await transit.planning.plan(input, client: client), headers: [.cacheControl: "no-store"], context)
        }
    }

    static let placeSchema: JSONValue = [
        "type": "object",
        "description": "{type: coordinates, lat, lon, name?} or {type: stop_id, stop_id} (a station means its platforms)",
        "properties": [
            "type": Schema.enumeration(["coordinates", "stop_id"]), "lat": ["type": "number", "minimum": -90, "maximum": 90],
            "lon": ["type": "number", "minimum": -180, "maximum": 180],
            "name": Schema.string(minLength: 1, maxLength: 200, pattern: "^[^\\u0000-\\u001F\\u007F]*$"),
            "stop_id": Schema.token(maxBytes: 255),
        ],
    ]
    static let legPlace = Schema.object([
        "name": nullableString, "stop_id": Schema.string(), "stop_name": nullableString, "lat": nullableNumber, "lon": nullableNumber,
        "platform": nullableString, "departure_time": time, "scheduled_departure_time": time, "departure_delay_seconds": nullableInteger,
        "arrival_time": time, "scheduled_arrival_time": time, "arrival_delay_seconds": nullableInteger, "skipped": ["type": "boolean"],
    ])
    static let legSchema = Schema.object([
        "mode": Schema.string("WALK, or the vehicle: BUS, RAIL, SUBWAY, TRAM, FERRY, CABLE_CAR, GONDOLA, FUNICULAR, TROLLEYBUS, MONORAIL"),
        "duration_minutes": Schema.integer(), "duration_seconds": Schema.integer(), "distance_meters": ["type": "number"],
        "from": legPlace, "to": legPlace, "departure_time": time, "arrival_time": time, "polyline": Schema.string("Google encoded polyline"),
        "route_id": Schema.string(), "route_short_name": nullableString, "route_long_name": nullableString, "route_color": nullableString,
        "route_text_color": nullableString, "trip_id": Schema.string(), "headsign": nullableString, "direction_id": nullableInteger,
        "stops_between": Schema.integer(), "intermediate_stops": ["type": "array", "items": legPlace], "realtime": ["type": "boolean"],
        "wheelchair_accessible": ["type": "boolean"],
        "fare_products": [
            "type": "array",
            "description":
                "GTFS Fares v2 feeds only: the fare products charged on this ride (its leg's, and a transfer's on the ride after it); they add up to fare_cents",
            "items": Schema.object([
                "fare_product_id": Schema.string(), "fare_product_name": nullableString, "amount_cents": Schema.integer(), "currency": Schema.string(),
                "fare_media_id": nullableString, "transfer": ["type": "boolean"],
            ]),
        ],
    ])
    static let itinerarySchema = Schema.object([
        "itinerary_id": ["type": ["string", "null"], "description": "follow it on the realtime channel itinerary:{id} (itinerary_update)"],
        "duration_minutes": Schema.integer(), "duration_seconds": Schema.integer(), "walking_distance_meters": ["type": "number"],
        "transfers": Schema.integer(), "fare_cents": nullableInteger, "fare_currency": nullableString, "departure_time": time, "arrival_time": time,
        "legs": ["type": "array", "items": legSchema], "realtime_data_available": ["type": "boolean"], "wheelchair_accessible": ["type": "boolean"],
    ])

    static let planOperation = APIOperation(
        "POST", "/api/v1/trips/plan", summary: "Plan a journey on the served timetable (RAPTOR), realtime applied",
        description:
            "From and to a stop or coordinates; `depart_at` (optionally with `depart_until`: every itinerary no other leaves later, arrives earlier and changes less), `arrive_by`, or neither (now). Walks to and from stops within `preferences.max_walking_distance` (metres of walking: straight line × transit.planner.detour_factor). 10 per minute per IP anonymous, 30 per user signed in.",
        tag: "transit", access: anyone,
        requestBody: Schema.object(
            [
                "origin": placeSchema, "destination": placeSchema, "depart_at": Schema.string(format: "date-time"),
                "depart_until": Schema.string(format: "date-time"), "arrive_by": Schema.string(format: "date-time"),
                "preferences": Schema.object([
                    "max_walking_distance": ["type": "integer", "minimum": 0, "description": "metres; at most transit.planner.max_walking_meters_limit"],
                    "wheelchair_accessible": ["type": "boolean"],
                    "modes": [
                        "type": "array", "minItems": 1, "maxItems": 10,
                        "items": [
                            "type": ["string", "integer"],
                            "description": .string(
                                "a mode (" + TransitMode.allCases.map(\.rawValue).joined(separator: ", ")
                                    + "), a synonym (metro, train, light_rail, streetcar, coach, boat) or a GTFS route type (700)"),
                        ],
                    ],
                    "max_transfers": ["type": "integer", "minimum": 0],
                ]),
                "max_itineraries": ["type": "integer", "minimum": 1],
            ], required: ["origin", "destination"]),
        response: Schema.object([
            "itineraries": ["type": "array", "items": itinerarySchema], "requested_time": time,
            "search": Schema.enumeration(["depart_at", "depart_between", "arrive_by"]), "feed": Schema.string(),
        ]),
        errors: [
            404: "A stop id no feed has (`STOP_NOT_FOUND`), or no itinerary (`NO_ROUTE_FOUND`)",
            422:
                "A bad field (`VALIDATION_FAILED`), a place with no stop within walking distance (`OUTSIDE_SERVICE_AREA`), a time outside the timetable's dates (`OUTSIDE_SERVICE_DATES`)",
            503: notLoaded + "; or the planner has more work than it takes (`PLANNER_BUSY`, `Retry-After`)",
        ])
}
