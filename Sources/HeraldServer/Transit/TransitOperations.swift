import HeraldCore
import HeraldGTFS
import HeraldTransit

/// OpenAPI descriptions of the transit routes.
extension TransitRoutes {
    static let time = Schema.string("ISO 8601 in the agency's zone, with its offset", format: "date-time")
    static let nullableTime: JSONValue = ["type": ["string", "null"], "format": "date-time"]
    static let nullableString: JSONValue = ["type": ["string", "null"]]
    static let nullableNumber: JSONValue = ["type": ["number", "null"]]
    static let nullableInteger: JSONValue = ["type": ["integer", "null"]]
    static let stopSchema = Schema.object([
        "stop_id": Schema.string(), "stop_name": nullableString, "stop_code": nullableString, "stop_lat": nullableNumber, "stop_lon": nullableNumber,
        "location_type": Schema.integer("0 stop/platform, 1 station"), "wheelchair_boarding": Schema.integer("0 unknown, 1 possible, 2 not possible"),
        "parent_station": nullableString, "platform_code": nullableString, "distance_meters": ["type": "number"],
    ])
    static let nearbySchema: JSONValue = {
        guard case .object(var schema) = stopSchema, case .object(var properties)? = schema["properties"] else { return stopSchema }
        properties["platforms"] = ["type": "array", "items": stopSchema, "description": "a station's platforms, nearest first; empty for a stop"]
        schema["properties"] = .object(properties)
        return .object(schema)
    }()
    static let routeSchema = Schema.object([
        "route_id": Schema.string(), "route_short_name": nullableString, "route_long_name": nullableString,
        "route_type": Schema.integer("GTFS route_type: 0 tram, 1 metro, 2 rail, 3 bus, 4 ferry, …"), "route_color": nullableString,
        "route_text_color": nullableString, "agency_id": nullableString,
    ])
    static let departureSchema = Schema.object([
        "trip_id": Schema.string(), "route_id": nullableString, "route_short_name": nullableString, "route_color": nullableString, "headsign": nullableString,
        "direction_id": nullableInteger, "scheduled_time": time, "estimated_time": nullableTime, "delay_seconds": nullableInteger,
        "platform": nullableString, "stop_id": Schema.string("the platform the run leaves from"), "wheelchair_accessible": ["type": ["boolean", "null"]],
        "is_cancelled": ["type": "boolean"], "vehicle": ["type": ["object", "null"], "description": "{vehicle_id, occupancy_status}"],
        "service_date": Schema.string(format: "date"), "realtime": ["type": "boolean"],
        "schedule_relationship": Schema.enumeration(["SCHEDULED", "CANCELED", "ADDED"]), "headway_seconds": nullableInteger,
    ])
    static let alertSchema = Schema.object([
        "alert_id": Schema.string(), "severity": Schema.enumeration(["info", "warning", "critical"]), "header": nullableString,
        "description": nullableString, "affected_routes": ["type": ["array", "null"], "items": ["type": "string"]],
        "affected_stops": ["type": ["array", "null"], "items": ["type": "string"]], "cause": Schema.string(), "effect": Schema.string(),
        "active_period": ["type": ["object", "null"], "properties": ["start": nullableTime, "end": nullableTime]], "url": nullableString,
        "source": Schema.enumeration(["gtfs-rt", "backend"]),
    ])
    static let favoriteSchema = Schema.object([
        "id": Schema.string("fav_…"), "kind": Schema.enumeration(FavoriteKind.allCases.map(\.rawValue)), "stop_id": nullableString,
        "stop_name": nullableString, "route_id": nullableString, "route_name": nullableString,
        "route_ids": ["type": ["array", "null"], "items": ["type": "string"], "description": "a stop narrowed to these routes (null: every route)"],
        "label": nullableString, "created_at": time, "sort_order": Schema.integer(), "notifications_enabled": ["type": "boolean"],
    ])
    static let favoriteRoutes: JSONValue = [
        "type": ["array", "null"], "minItems": 1, "maxItems": 50, "items": Schema.string(maxLength: 200),
        "description": "only these routes' alerts at the stop (null: every route)",
    ]
    static let muteSchema = Schema.object([
        "kind": Schema.enumeration(AlertMuteKind.allCases.map(\.rawValue)), "id": Schema.string("the alert's, route's or stop's id"), "until": time,
    ])
    static let importSchema = Schema.object([
        "id": Schema.string("imp_…"), "feed": Schema.string(), "status": Schema.enumeration(["running", "succeeded", "unchanged", "failed"]),
        "source": Schema.string(), "version_id": nullableString, "error": nullableString,
        "report": [
            "type": ["object", "null"], "description": "{errors, warnings, notices: [{code, severity, count, samples: [{file, line, field, value, message}]}]}",
        ],
        "requested_by": nullableString, "created_at": Schema.string(format: "date-time"), "finished_at": nullableTime,
    ])
    static let versionSchema = Schema.object([
        "feed": Schema.string(), "version": Schema.string(), "version_id": Schema.string(), "generated_at": time,
        "download_url": Schema.string("the offline database (absolute with server.public_url)", nullable: true),
        "file_size_bytes": ["type": ["integer", "null"]], "checksum_sha256": nullableString, "schema_version": ["type": ["integer", "null"]],
        "gtfs_zip_url": Schema.string(), "gtfs_zip_size_bytes": Schema.integer(), "gtfs_zip_sha256": Schema.string(), "timezone": Schema.string(),
        "service_start_date": ["type": ["string", "null"], "format": "date"], "service_end_date": ["type": ["string", "null"], "format": "date"],
        "feeds": ["type": "array", "description": "every feed served, in this shape"],
    ])
    static let settingsSchema: JSONValue = {
        let localTime: JSONValue = ["type": ["string", "null"], "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9](:00)?$", "description": "HH:MM local time"]
        guard
            case .object(var schema) = Schema.object([
                "tz": Schema.string("IANA time zone; until set, notifications.default_time_zone or the feed's agency_timezone", minLength: 1, maxLength: 64),
                "quiet_hours_enabled": ["type": "boolean"], "quiet_start": localTime, "quiet_end": localTime,
                "severity_min": Schema.enumeration(["minor", "major", "cancelled"]), "time_sensitive_ok": ["type": "boolean"],
                "per_favorite_overrides": [
                    "type": "object", "description": "favourite id → its switch",
                    "additionalProperties": Schema.object(["notifications_enabled": ["type": "boolean"]], required: ["notifications_enabled"]),
                ],
            ])
        else { return [:] }
        schema["additionalProperties"] = false
        return .object(schema)
    }()
    static let anyone = APIOperation.Access.public_
    static let signedIn = APIOperation.Access.authenticated(roles: ["customer", "driver", "operator", "service"])
    static let backend = APIOperation.Access.authenticated(roles: ["service", "operator"])
    static let notLoaded = "No feed loaded yet (`TIMETABLE_NOT_LOADED`)"
    static let stopRate = "60 per minute per IP anonymous, 120 per user signed in."

    static func query(_ name: String, _ schema: JSONValue, required: Bool = false, _ description: String? = nil) -> JSONValue {
        var parameter: [String: JSONValue] = ["name": .string(name), "in": "query", "required": .bool(required), "schema": schema]
        if let description { parameter["description"] = .string(description) }
        return .object(parameter)
    }

    static let operations: [APIOperation] = [
        APIOperation(
            "GET", "/api/v1/stops/nearby", summary: "Stations (with their platforms inside) and stops outside any station near a point, nearest first",
            description: "A station counts once, as near as its nearest platform, and lists all its platforms with their distances. " + stopRate,
            tag: "transit", access: anyone,
            response: Schema.object(["stops": ["type": "array", "items": nearbySchema], "count": Schema.integer()]),
            errors: [422: "A bad parameter (`VALIDATION_FAILED`)", 503: notLoaded],
            parameters: [
                query("lat", ["type": "number", "minimum": -90, "maximum": 90], required: true),
                query("lon", ["type": "number", "minimum": -180, "maximum": 180], required: true),
                query("radius", ["type": "integer", "minimum": 50, "maximum": 2000, "default": 500], "metres"),
                query("limit", ["type": "integer", "minimum": 1, "maximum": 50, "default": 20]),
            ]),
        APIOperation(
            "GET", "/api/v1/stops/{id}", summary: "A stop with the routes that serve it", description: "Weak ETag; If-None-Match → 304. " + stopRate,
            tag: "transit", access: anyone,
            response: Schema.object(["routes": ["type": "array", "items": routeSchema], "platforms": ["type": "array", "items": stopSchema]]),
            errors: [304: "Not modified", 404: "No such stop (`STOP_NOT_FOUND`)", 503: notLoaded]),
        APIOperation(
            "GET", "/api/v1/stops/{id}/departures", summary: "Next departures at a stop (a station: its platforms), realtime over the timetable",
            description:
                "Scheduled and estimated times, delay, platform, cancellations, vehicle and occupancy. Realtime older than transit.stale_after_seconds: stale true and meta {stale, cached_at, message}. "
                + stopRate,
            tag: "transit", access: anyone,
            response: Schema.object([
                "stop": Schema.object(["stop_id": Schema.string(), "stop_name": nullableString]), "departures": ["type": "array", "items": departureSchema],
                "last_updated": nullableTime, "stale": ["type": "boolean"],
            ]),
            errors: [404: "No such stop (`STOP_NOT_FOUND`)", 422: "A bad parameter (`VALIDATION_FAILED`)", 503: notLoaded],
            parameters: [
                query("limit", ["type": "integer", "minimum": 1, "maximum": 50, "default": 10]), query("route_id", Schema.asciiText(maxBytes: 200)),
                query("direction_id", ["type": "integer", "enum": [0, 1]]),
                query("at", Schema.string(format: "date-time"), "a time other than now, ISO 8601 with its offset"),
            ]),
        APIOperation(
            "GET", "/api/v1/routes", summary: "Routes, paged", description: "Weak ETag; If-None-Match → 304.", tag: "transit", access: anyone,
            response: Schema.object([
                "routes": ["type": "array", "items": routeSchema], "total": Schema.integer(), "limit": Schema.integer(), "offset": Schema.integer(),
            ]),
            errors: [304: "Not modified", 422: "A bad parameter (`VALIDATION_FAILED`)", 503: notLoaded],
            parameters: [
                query(
                    "route_type",
                    [
                        "anyOf": [
                            Schema.enumeration(TransitMode.queryWords),
                            ["type": "string", "pattern": "^(1[0-6][0-9]{2}|170[0-2]|[0-9]{1,3})$"],
                        ],
                        "description":
                            "a mode (bus, subway or metro, rail or train, tram or light_rail, ferry, …) or a GTFS route type, basic or extended (700 = every bus route)",
                    ]),
                query("limit", ["type": "integer", "minimum": 1, "maximum": 500, "default": 100]),
                query("offset", ["type": "integer", "minimum": 0, "maximum": 2_147_483_647, "default": 0]),
            ]),
        APIOperation(
            "GET", "/api/v1/routes/{id}/trips", summary: "A route's trips under way, with vehicle positions and next stops", tag: "transit", access: anyone,
            response: Schema.object([
                "route": routeSchema, "active_trips": ["type": "array", "description": "{trip_id, headsign, direction_id, service_date, vehicle, next_stops}"],
                "last_updated": nullableTime, "stale": ["type": "boolean"],
            ]),
            errors: [404: "No such route (`ROUTE_NOT_FOUND`)", 422: "A bad parameter (`VALIDATION_FAILED`)", 503: notLoaded],
            parameters: [query("direction_id", ["type": "integer", "enum": [0, 1]])]),
        APIOperation(
            "GET", "/api/v1/alerts", summary: "Service alerts in force (GTFS-RT and backends')", tag: "transit", access: anyone,
            response: Schema.object(["alerts": ["type": "array", "items": alertSchema], "count": Schema.integer(), "last_updated": nullableTime]),
            errors: [422: "A bad parameter (`VALIDATION_FAILED`)"],
            parameters: [
                query("route_id", Schema.asciiText(maxBytes: 200)), query("stop_id", Schema.asciiText(maxBytes: 200)),
                query("severity", Schema.enumeration(["info", "warning", "critical"])),
            ]),
        APIOperation(
            "POST", "/api/v1/alerts", summary: "Post (or replace, by alert_id) a service alert", tag: "transit", access: backend,
            requestBody: Schema.object(
                [
                    "alert_id": Schema.string(maxLength: 128), "severity": Schema.enumeration(["info", "warning", "critical"]),
                    "header": Schema.string(maxLength: 200),
                    "description": Schema.string(maxLength: 4000), "affected_routes": ["type": "array", "items": ["type": "string"]],
                    "affected_stops": ["type": "array", "items": ["type": "string"]], "cause": Schema.string(), "effect": Schema.string(),
                    "active_period": Schema.object(["start": Schema.string(format: "date-time"), "end": Schema.string(format: "date-time")]),
                    "url": Schema.string(maxLength: 2000, pattern: "^https?://[!-~]+$"),
                ], required: ["severity", "header"]),
            response: alertSchema, successStatus: 201, acceptsIdempotencyKey: true,
            errors: [422: "Invalid fields (`VALIDATION_FAILED`)"], otherSuccessStatus: 200),
        APIOperation(
            "POST", "/api/v1/alerts/{id}/opened", summary: "The caller opened an alert (read receipt; its pushes' notifications are marked read)",
            description: "Also for an alert opened from the in-app list or a digest, which has nothing to mark.",
            tag: "transit", access: signedIn, successStatus: 204, errors: [404: "No such alert (`ALERT_NOT_FOUND`)"]),
        APIOperation(
            "POST", "/api/v1/alerts/{id}/mute", summary: "MUTE_24H: silence this alert (and its later versions) for the caller, or its routes",
            description:
                "scope alert (the default): this alert and its later versions. scope routes: the routes the alert names (a trip counts as its route); else the stops it names; else the routes through which it reaches the caller's favourites; alerts reaching a favourite only through muted routes, or at a muted stop, are not pushed until the mute ends, except critical ones (cancellations).",
            tag: "transit", access: signedIn,
            requestBody: Schema.object([
                "hours": ["type": "integer", "minimum": 1, "maximum": 720, "default": 24],
                "scope": Schema.enumeration(AlertMuteScope.allCases.map(\.rawValue)),
            ]),
            response: Schema.object(["alert_id": Schema.string(), "muted": ["type": "array", "items": muteSchema]]), successStatus: 201,
            errors: [404: "No alert has this id (`ALERT_NOT_FOUND`)", 422: "Invalid fields (`VALIDATION_FAILED`)"]),
        APIOperation(
            "DELETE", "/api/v1/alerts/{id}/mute", summary: "End the mutes this alert set for the caller", tag: "transit", access: signedIn,
            successStatus: 204, errors: [404: "No mute of this alert (`ALERT_NOT_FOUND`)"]),
        APIOperation(
            "GET", "/api/v1/alerts/mutes", summary: "The caller's mutes in force", tag: "transit", access: signedIn,
            response: Schema.object(["mutes": ["type": "array", "items": muteSchema]])),
        APIOperation(
            "GET", "/api/v1/favorites", summary: "The caller's favourite stops, in order", tag: "transit", access: signedIn,
            response: Schema.object(["favorites": ["type": "array", "items": favoriteSchema]])),
        APIOperation(
            "POST", "/api/v1/favorites", summary: "Add a stop (optionally narrowed to routes) or a whole route to the caller's favourites (at the end)",
            tag: "transit", access: signedIn,
            requestBody: Schema.object([
                "stop_id": Schema.string(maxLength: 200), "route_id": Schema.string(maxLength: 200), "route_ids": favoriteRoutes,
                "label": Schema.string(maxLength: 100), "notifications_enabled": ["type": "boolean", "default": true],
            ]),
            response: favoriteSchema, successStatus: 201, acceptsIdempotencyKey: true,
            errors: [
                404: "No such stop or route (`STOP_NOT_FOUND`, `ROUTE_NOT_FOUND`)",
                409: "Already a favourite (`FAVORITE_EXISTS`) or 100 already (`FAVORITES_LIMIT_REACHED`)",
                422: "Invalid fields (`VALIDATION_FAILED`)", 503: notLoaded,
            ]),
        APIOperation(
            "PATCH", "/api/v1/favorites/{id}", summary: "Change a favourite's label, notification switch or place in the list", tag: "transit",
            access: signedIn,
            requestBody: Schema.notEmpty(
                Schema.object([
                    "label": Schema.string(nullable: true, maxLength: 100), "notifications_enabled": ["type": "boolean"],
                    "sort_order": ["type": "integer", "minimum": 0, "maximum": 99, "description": "moves it there; the others shift"],
                    "route_ids": favoriteRoutes,
                ])),
            response: favoriteSchema, errors: [404: "Not the caller's favourite (`FAVORITE_NOT_FOUND`)", 422: "Invalid fields (`VALIDATION_FAILED`)"]),
        APIOperation(
            "DELETE", "/api/v1/favorites/{id}", summary: "Remove a favourite", tag: "transit", access: signedIn, successStatus: 204,
            errors: [404: "Not the caller's favourite (`FAVORITE_NOT_FOUND`)"]),
        APIOperation(
            "GET", "/api/v1/user/settings",
            summary: "The caller's alert settings in the transit app's shape (its notification preferences and favourite switches)",
            tag: "transit", access: signedIn, response: settingsSchema),
        APIOperation(
            "PUT", "/api/v1/user/settings", summary: "Change the caller's alert settings (only the fields sent)", tag: "transit", access: signedIn,
            requestBody: settingsSchema, response: settingsSchema, errors: [422: "Invalid fields, named as sent (`VALIDATION_FAILED`)"]),
        APIOperation(
            "PATCH", "/api/v1/user/settings", summary: "Change the caller's alert settings (only the fields sent)", tag: "transit", access: signedIn,
            requestBody: settingsSchema, response: settingsSchema, errors: [422: "Invalid fields, named as sent (`VALIDATION_FAILED`)"]),
        APIOperation(
            "POST", "/api/v1/user/device", summary: "Register an iPhone for push (the transit app's alias of /push/register)", tag: "transit", access: signedIn,
            requestBody: Schema.object(
                [
                    "apns_token": Schema.string("hex APNs device token, 32 to 100 bytes", pattern: "^([0-9a-fA-F]{2}){32,100}$"),
                    "device_id": Schema.string(maxLength: 200), "platform": Schema.enumeration(["ios"]),
                    "app_version": Schema.string(maxLength: 64), "os_version": Schema.string(maxLength: 64), "locale": Schema.string(maxLength: 35),
                ], required: ["apns_token"]),
            response: Schema.object(["device_id": Schema.string("dev_…"), "registered_at": Schema.string(format: "date-time"), "platform": Schema.string()]),
            successStatus: 201, acceptsIdempotencyKey: true, errors: [422: "Invalid fields (`VALIDATION_FAILED`)"]),
        APIOperation(
            "GET", "/api/v1/gtfs/version", summary: "The feed version served (for apps that cache the timetable)",
            description: "Weak ETag; If-None-Match → 304.", tag: "transit", access: anyone, response: versionSchema,
            errors: [304: "Not modified", 503: notLoaded]),
        APIOperation(
            "GET", "/api/v1/gtfs/feeds/{name}/offline.db", summary: "The app's offline SQLite database of the version a feed serves",
            tag: "transit", access: anyone, response: Schema.string("application/vnd.sqlite3"), enveloped: false,
            errors: [304: "Not modified (ETag is the sha256)", 404: "No such feed, or no offline database (`FEED_NOT_FOUND`)"],
            contentType: "application/vnd.sqlite3"),
        APIOperation(
            "GET", "/api/v1/gtfs/feeds/{name}/download", summary: "The GTFS zip of the version a feed serves", tag: "transit", access: anyone,
            response: Schema.string("application/zip"), enveloped: false,
            errors: [304: "Not modified (ETag is the sha256)", 404: "No such feed (`FEED_NOT_FOUND`)"], contentType: "application/zip"),
        APIOperation(
            "POST", "/api/v1/transit/realtime", summary: "Take in a GTFS-Realtime FeedMessage (TripUpdates, VehiclePositions, Alerts)",
            description:
                "Body: the protobuf, Content-Type application/x-protobuf. Query: feed (default: the first configured), source (default push-{feed}); a message replaces the source's previous one.",
            tag: "transit", access: backend,
            response: Schema.object([
                "source": Schema.string(), "feed": Schema.string(), "trip_updates": Schema.integer(), "vehicles": Schema.integer(), "alerts": Schema.integer(),
                "feed_timestamp": nullableTime, "unmatched": nullableInteger,
            ]),
            errors: [
                400: "Not a FeedMessage (`INVALID_FEED_MESSAGE`)", 413: "Larger than transit.max_realtime_bytes", 422: "A bad parameter (`VALIDATION_FAILED`)",
            ],
            parameters: [query("feed", Schema.string(pattern: "^[a-z0-9_-]{1,64}$")), query("source", Schema.string(pattern: "^[a-z0-9_-]{1,64}$"))]),
        APIOperation(
            "POST", "/api/v1/transit/feeds/{name}/import", summary: "Import a GTFS feed (a URL, the configured one, or an uploaded zip)",
            description: "Answers 202 with the import; read its status and report at /api/v1/transit/imports/{id}.", tag: "transit",
            access: .authenticated(roles: ["operator"]),
            requestBody: Schema.object([
                "url": Schema.string(maxLength: 2000, pattern: "^https?://[!-~]+$"),
                "force": [
                    "type": "boolean", "description": "Replace the version in service even with one that serves nothing or less than half of its stop times",
                ],
            ]), response: importSchema,
            successStatus: 202, errors: [413: "Larger than transit.max_feed_bytes", 422: "Invalid fields (`VALIDATION_FAILED`)"],
            parameters: [query("force", Schema.enumeration(["true", "false"], description: "For an uploaded zip: as `force` in a JSON body"))]),
        APIOperation(
            "GET", "/api/v1/transit/imports/{id}", summary: "An import's status and report", tag: "transit", access: backend, response: importSchema,
            errors: [404: "No such import (`IMPORT_NOT_FOUND`)"]),
    ]
}
