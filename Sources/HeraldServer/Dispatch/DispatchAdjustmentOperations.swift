import HeraldCore

/// OpenAPI descriptions of the price adjustment routes.
extension DispatchRoutes {
    static let adjustmentSchema = Schema.object([
        "job_id": Schema.string(), "status": Schema.enumeration(["pending", "approved", "declined", "cancelled"]),
        "automatic": ["type": "boolean", "description": "approved without asking (the price did not go up)"],
        "original_volume": ["type": ["number", "null"]], "actual_volume": ["type": "number"],
        "original_price_minor": Schema.integer(), "new_price_minor": Schema.integer(), "currency": Schema.string(),
        "trip_fee_minor": ["type": ["integer", "null"]], "deadline_at": Schema.string(format: "date-time", nullable: true),
        "expired": ["type": "boolean", "description": "pending and past its deadline"], "extensions": Schema.integer(),
    ])
    static let paymentSchema = Schema.object([
        "provider": Schema.enumeration(["ledger", "stripe"]), "status": Schema.enumeration(["scheduled", "authorized", "captured", "cancelled"]),
        "authorized_minor": Schema.integer(), "amount_minor": Schema.integer("what a capture takes"), "captured_minor": Schema.integer(),
        "currency": Schema.string(), "pending_operation": Schema.string(nullable: true),
        "hold_at": Schema.string(
            "`scheduled`: when the hold is taken (a job booked past payments.authorization_lifetime_hours)", format: "date-time", nullable: true),
    ])
    static let adjustmentResult = Schema.object(["job": jobSchema, "adjustment": adjustmentSchema, "payment": paymentSchema])
    static let customerOnly = APIOperation.Access.authenticated(roles: ["customer"])
    static let notAssigned = "Not this driver's job (`JOB_NOT_FOUND`)"

    static let adjustmentOperations: [APIOperation] = [
        APIOperation(
            "POST", "/api/v1/drivers/jobs/{id}/volume", summary: "The measured volume, repriced",
            description:
                "By the assigned driver while the job is `arrived`; one per job. Not higher than the current price: approved at once, the hold lowered, the driver gets `volume:approved`. Higher: a proposal the customer answers within payments.adjustment_timeout_seconds — a `VOLUME_ADJUSTMENT` push (actions APPROVE_VOLUME, DECLINE_VOLUME) and `volume:proposed` on their user room; the driver gets `volume:proposed`. Work cannot start until it is answered.",
            tag: "dispatch", access: driverOnly,
            requestBody: Schema.object(
                [
                    "actual_volume": [
                        "type": "number", "exclusiveMinimum": 0, "maximum": 30, "multipleOf": 0.01,
                        "description":
                            "cubic yards, 0 < v ≤ dispatch.pricing.max_volume_yards (30 by default), at most two decimals; a numeric string is accepted too",
                    ]
                ], required: ["actual_volume"]),
            response: adjustmentResult, successStatus: 201,
            errors: [404: notAssigned, 409: "`JOB_NOT_ARRIVED` or `ADJUSTMENT_ALREADY_MADE`", 422: "Invalid volume"], parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/drivers/jobs/{id}/volume/extend", summary: "More time for the customer, and a reminder",
            description:
                "Moves the deadline by payments.adjustment_extension_seconds (at most payments.max_adjustment_extensions times) and pushes the proposal again.",
            tag: "dispatch", access: driverOnly, response: adjustmentResult,
            errors: [404: notAssigned, 409: "`NO_PENDING_ADJUSTMENT` or `EXTENSION_LIMIT_REACHED`"], parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/drivers/jobs/{id}/cancel-with-trip-fee", summary: "End an unanswered proposal; the driver is paid the trip fee",
            description:
                "After the proposal's deadline: the job is cancelled and payments.trip_fee_minor captured from the hold (the rest released). Repeats answer the same.",
            tag: "dispatch", access: driverOnly, response: adjustmentResult,
            errors: [404: notAssigned, 409: "`ADJUSTMENT_NOT_EXPIRED`, `NO_PENDING_ADJUSTMENT` or `ADJUSTMENT_ALREADY_DECIDED`"], parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/jobs/{id}/volume/approve", summary: "Approve the higher price",
            description:
                "The job's customer. The hold is raised first (a refusal is 402 and the proposal stays open); then the job's price and volume change and the driver gets `volume:approved`. Approving again answers the same; after a decline it is 409.",
            tag: "dispatch", access: customerOnly, response: adjustmentResult,
            errors: [
                402: "The card refused the new amount (`PAYMENT_DECLINED`)", 404: "`JOB_NOT_FOUND`",
                409: "`NO_PENDING_ADJUSTMENT` or `ADJUSTMENT_ALREADY_DECIDED`", 503: "`PAYMENT_UNAVAILABLE`",
            ],
            parameters: idParameter),
        APIOperation(
            "POST", "/api/v1/jobs/{id}/volume/decline", summary: "Decline the higher price: end the job with the trip fee, or proceed at the original price",
            description:
                "The job's customer. Without a body the job is cancelled, payments.trip_fee_minor is captured from the hold (the rest released) and the driver gets `volume:declined` {trip_fee}. With `{\"proceed_at_original_price\": true}` the job stays `arrived` at its booked price and hold, the driver gets `volume:declined` {proceed_at_original_price: true} and may start (one adjustment per job, so no new proposal). Declining again answers the same; after an approval it is 409.",
            tag: "dispatch", access: customerOnly,
            requestBody: Schema.object(["proceed_at_original_price": ["type": "boolean"]]),
            response: adjustmentResult,
            errors: [404: "`JOB_NOT_FOUND`", 409: "`NO_PENDING_ADJUSTMENT` or `ADJUSTMENT_ALREADY_DECIDED`", 422: "`VALIDATION_FAILED`"],
            parameters: idParameter),
        APIOperation(
            "GET", "/api/v1/operators/jobs/{id}/payment", summary: "A job's payment hold and every provider call made for it",
            tag: "dispatch", access: operatorOnly, response: Schema.object(["payment": paymentSchema, "events": ["type": "array"]]),
            errors: [404: "No hold (`JOB_NOT_FOUND`)"], parameters: idParameter),
    ]
}
