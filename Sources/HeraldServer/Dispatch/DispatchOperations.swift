import HeraldCore
import HeraldDispatch

/// OpenAPI descriptions of the dispatch routes.
extension DispatchRoutes {
    static let jobSchema = Schema.object([
        "id": Schema.string(), "customer_id": Schema.string(), "driver_id": Schema.string(nullable: true),
        "status": Schema.enumeration(["pending", "accepted", "en_route", "arrived", "started", "completed", "cancelled", "expired"]),
        "address": Schema.string(), "lat": ["type": ["number", "null"]], "lng": ["type": ["number", "null"]],
        "items": ["type": "array", "items": Schema.object(["category": Schema.string(), "quantity": Schema.integer()])],
        "volume_estimate": ["type": ["number", "null"], "description": "cubic yards"],
        "price": Schema.object(["amount_minor": Schema.integer("minor units (cents)"), "currency": Schema.string(), "lines": ["type": "array"]]),
        "offer_round": Schema.integer(), "offer_expires_at": Schema.string(format: "date-time", nullable: true),
        "distance_m": ["type": "number", "description": "feeds and job:new only"],
        "driver": ["type": "object", "description": "when assigned: {id, name, truck_type, avg_rating, total_jobs}"],
        "created_at": Schema.string(format: "date-time"),
    ])
    static let driverSchema = Schema.object([
        "user_id": Schema.string(), "name": Schema.string(), "truck_type": Schema.string(),
        "approval_status": Schema.enumeration(["pending", "approved", "rejected", "suspended"]), "online": ["type": "boolean"],
        "avg_rating": ["type": ["number", "null"]], "total_jobs": Schema.integer(), "location": ["type": ["object", "null"]],
        "photo_url": ["type": ["string", "null"]],
    ])
    static let driverOnly = APIOperation.Access.authenticated(roles: ["driver"])
    static let operatorOnly = APIOperation.Access.authenticated(roles: ["operator", "service"])
    static let idParameter: [JSONValue] = [["name": "id", "in": "path", "required": true, "schema": ["type": "string"]]]
    static let pageParameters: [JSONValue] = [
        ["name": "offset", "in": "query", "schema": ["type": "integer", "minimum": 0, "maximum": 1_000_000, "default": 0]],
        ["name": "limit", "in": "query", "schema": ["type": "integer", "minimum": 1, "maximum": 100, "default": 20]],
    ]
    static let notApproved = "Driver not approved (`DRIVER_NOT_APPROVED`) or not a driver (`FORBIDDEN`)"

    static let operations: [APIOperation] = [
        APIOperation(
            "GET", "/api/v1/drivers/me", summary: "The driver's own profile", tag: "dispatch", access: driverOnly, response: driverSchema,
            errors: [404: "No profile yet (`DRIVER_NOT_FOUND`)"]),
        APIOperation(
            "PUT", "/api/v1/drivers/me", summary: "Create or update the driver's profile",
            description: "A new profile is `pending` until an operator approves it; only approved drivers are offered jobs.",
            tag: "dispatch", access: driverOnly,
            requestBody: Schema.object(
                [
                    "name": Schema.text(maxLength: 100), "truck_type": Schema.text(maxLength: 64), "phone": Schema.text(maxLength: 32),
                    "vehicle_description": Schema.text(maxLength: 200), "license_plate": Schema.text(maxLength: 20),
                    "photo_url": Schema.string(
                        "https URL of the driver's photo, shown to their riders and customers", maxLength: 2048,
                        pattern: "^https://[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*(/[A-Za-z0-9._~%/-]*)?$"),
                ],
                required: ["name", "truck_type"]),
            response: driverSchema, errors: [422: "Invalid fields"], otherSuccessStatus: 201),
        APIOperation(
            "POST", "/api/v1/drivers/online", summary: "Go online or offline", tag: "dispatch", access: driverOnly,
            requestBody: Schema.object(["online": ["type": "boolean"]], required: ["online"]), response: driverSchema,
            errors: [404: "No profile (`DRIVER_NOT_FOUND`)", 422: "Invalid fields"]),
        APIOperation(
            "POST", "/api/v1/drivers/location", summary: "Report the driver's position",
            description:
                "Also the socket event `location`. Coordinates are validated; a sequence at or below the last one is ignored (accepted: false). The position enters the matching index at once and is written to the database within dispatch.index_sync_interval_ms. The rideshare app's names (latitude, longitude, accuracy_meters, speed_mps) are accepted too; fields Herald does not know are ignored (a newer app's extras never make a sample fail); on a trip, is_mock_location keeps the sample from the rider and device_integrity: failed flags the trip.",
            tag: "dispatch", access: driverOnly,
            requestBody: Self.locationSchema,
            response: Schema.object(["accepted": ["type": "boolean"], "reason": Schema.string(nullable: true)]),
            errors: [404: "No profile (`DRIVER_NOT_FOUND`)", 422: "Invalid coordinates or fields"]),
        APIOperation(
            "GET", "/api/v1/drivers/jobs/available", summary: "Open jobs near the driver, nearest first",
            description: "Pending jobs within dispatch.feed_radius_km of the driver's last position; jobs without a position come last.",
            tag: "dispatch", access: driverOnly, response: Schema.object(["jobs": ["type": "array", "items": jobSchema], "count": Schema.integer()]),
            errors: [403: notApproved, 404: "No profile (`DRIVER_NOT_FOUND`)", 409: "No position yet (`LOCATION_REQUIRED`)"]),
        APIOperation(
            "POST", "/api/v1/drivers/jobs/{id}/accept", summary: "Claim a job (first come, first served)",
            description:
                "One conditional update decides. 200 with the job for the winner (again on repeats); everyone else 409 `JOB_ALREADY_ACCEPTED` \"Job already accepted by another driver\". Offered drivers get `job:status` (accepted) so their feeds drop it; the customer gets `job:driver-assigned`, a notification and a push.",
            tag: "dispatch", access: driverOnly, response: Schema.object(["success": ["type": "boolean"], "job": jobSchema]),
            errors: [
                403: notApproved, 404: "Unknown job (`JOB_NOT_FOUND`) or no profile (`DRIVER_NOT_FOUND`)",
                409: "`JOB_ALREADY_ACCEPTED`, or `JOB_NOT_AVAILABLE` (cancelled or expired)",
            ],
            parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/drivers/jobs/{id}/status", summary: "The assigned driver's next step",
            description:
                "accepted → en_route → arrived → started → completed, one step at a time. Emits `job:status` to the job room and notifies the customer.",
            tag: "dispatch", access: driverOnly,
            requestBody: Schema.object(["status": Schema.enumeration(["en_route", "arrived", "started", "completed"])], required: ["status"]),
            response: jobSchema,
            errors: [
                404: "Not this driver's job (`JOB_NOT_FOUND`)", 409: "Not the next step (`INVALID_TRANSITION`, with allowed_transitions)",
                422: "Unknown status",
            ],
            parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/jobs", summary: "Book a job",
            description:
                "Priced by the pricing engine (base fee, per-yard rate, item categories, surcharges; integer minor units). Offered at once to online approved drivers within dispatch.radius_km (socket `job:new` and a `job_new` notification, pushed when the app is not connected); unclaimed after offer_timeout_seconds it is offered again with a wider radius, and after the last round it expires.",
            tag: "dispatch", access: .authenticated(roles: ["customer"]),
            requestBody: Schema.object(
                [
                    "address": Schema.text(maxLength: 500), "lat": ["type": "number"], "lng": ["type": "number"],
                    "items": ["type": "array", "items": Schema.object(["category": Schema.string(), "quantity": Schema.integer()])],
                    "volume_estimate": ["type": "number", "description": "cubic yards, at most two decimals"],
                    "scheduled_at": Schema.string(format: "date-time"), "notes": Schema.text(maxLength: 2000),
                    "payment_method_id": ["type": "string", "description": "the provider's payment method for the hold (Stripe pm_…); the ledger needs none"],
                ],
                required: ["address"]),
            response: jobSchema, successStatus: 201, acceptsIdempotencyKey: true,
            errors: [
                402: "The card refused the hold (`PAYMENT_DECLINED`)", 422: "Invalid fields (coordinates, quantities, unknown categories, volume)",
                503: "`PAYMENT_UNAVAILABLE`",
            ]),
        APIOperation(
            "GET", "/api/v1/jobs", summary: "The caller's jobs, newest first",
            description: "Customers: the jobs they booked; drivers: the jobs assigned to them; operators and services: all.",
            tag: "dispatch", access: .authenticated(roles: ["customer", "driver", "operator", "service"]),
            response: Schema.object(["jobs": ["type": "array", "items": jobSchema], "total": Schema.integer()]), errors: [422: "Bad paging or status"],
            parameters: pageParameters + [
                [
                    "name": "status", "in": "query",
                    "schema": Schema.enumeration(["pending", "accepted", "en_route", "arrived", "started", "completed", "cancelled", "expired"]),
                ]
            ]),
        APIOperation(
            "GET", "/api/v1/jobs/{id}", summary: "One job",
            description: "Its customer, its driver, drivers it is offered to (while pending) and operators may read it; anyone else gets 404.",
            tag: "dispatch", access: .authenticated(roles: ["customer", "driver", "operator", "service"]), response: jobSchema,
            errors: [404: "`JOB_NOT_FOUND`"], parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/jobs/{id}/cancel", summary: "Cancel a job",
            description: "The customer, while pending, accepted or en_route; operators at any time before it ends. Repeats answer the cancelled job.",
            tag: "dispatch", access: .authenticated(roles: ["customer", "operator", "service"]),
            requestBody: Schema.object(["reason": Schema.text(maxLength: 500)]), response: jobSchema,
            errors: [404: "`JOB_NOT_FOUND`", 409: "Too late to cancel (`INVALID_TRANSITION`)"], parameters: idParameter),
        APIOperation(
            "GET", "/api/v1/operators/drivers", summary: "Drivers, for operators", tag: "dispatch", access: operatorOnly,
            response: Schema.object(["drivers": ["type": "array", "items": driverSchema], "total": Schema.integer()]),
            parameters: pageParameters + [
                ["name": "approval_status", "in": "query", "schema": Schema.enumeration(["pending", "approved", "rejected", "suspended"])],
                ["name": "online", "in": "query", "schema": ["type": "boolean"]],
            ]),
        APIOperation(
            "GET", "/api/v1/operators/drivers/{id}", summary: "One driver, for operators", tag: "dispatch", access: operatorOnly,
            response: driverSchema, errors: [404: "`DRIVER_NOT_FOUND`"], parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/operators/drivers/{id}/approval", summary: "Approve, reject or suspend a driver",
            tag: "dispatch", access: .authenticated(roles: ["operator"]),
            requestBody: Schema.object(
                ["status": Schema.enumeration(["pending", "approved", "rejected", "suspended"]), "reason": Schema.text(maxLength: 500)], required: ["status"]),
            response: driverSchema, errors: [404: "`DRIVER_NOT_FOUND`", 422: "Invalid status"], parameters: idParameter),
        APIOperation(
            "GET", "/api/v1/operators/jobs/{id}/offers", summary: "Who was offered a job, when, how far and by which channel; and its status history",
            tag: "dispatch", access: operatorOnly,
            response: Schema.object(["offers": ["type": "array"], "events": ["type": "array"]]), errors: [404: "`JOB_NOT_FOUND`"], parameters: idParameter),
    ]

    /// A driver's location sample as `LocationUpdate.parse` reads it: open to other fields,
    /// which it ignores.
    static var locationSchema: JSONValue {
        let latitude: JSONValue = ["type": "number", "minimum": -90, "maximum": 90]
        let longitude: JSONValue = ["type": "number", "minimum": -180, "maximum": 180]
        let accuracy: JSONValue = ["type": "number", "minimum": 0, "maximum": 100_000]
        // iOS reports an unknown course or speed as -1 (any negative: unknown).
        let speed: JSONValue = ["type": "number", "maximum": 150, "description": "m/s; a negative value (iOS's -1) means unknown"]
        let heading: JSONValue = ["type": "number", "maximum": 360, "description": "degrees from north; a negative value (iOS's -1) means unknown"]
        let flag: JSONValue = ["type": "boolean"]
        guard
            case .object(var schema) = Schema.object(
                [
                    "lat": latitude, "lng": longitude, "latitude": latitude, "longitude": longitude,
                    "accuracy": accuracy, "accuracy_meters": accuracy, "heading": heading, "course": heading,
                    "speed": speed, "speed_mps": speed, "timestamp": Schema.string(format: "date-time"),
                    "sequence": Schema.integer(minimum: 0, maximum: 9_007_199_254_740_991),
                    "altitude_meters": ["type": "number", "minimum": -1_000, "maximum": 20_000],
                    "battery_percent": ["type": "number", "minimum": 0, "maximum": 100], "is_charging": flag,
                    "is_mock_location": flag, "is_from_mock_provider": flag,
                    "session_id": Schema.string(
                        "The app session the sequence counts in (a new one at each launch)", minLength: 1, maxLength: 64, pattern: "^[!-~]+$"),
                    "device_integrity": Schema.enumeration(LocationUpdate.DeviceIntegrity.allCases.map(\.rawValue)),
                ], required: ["lat", "lng"])
        else { return [:] }
        schema["additionalProperties"] = true
        return .object(schema)
    }
}
