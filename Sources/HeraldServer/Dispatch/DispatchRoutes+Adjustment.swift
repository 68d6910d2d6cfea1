import Foundation
import HeraldCore
import HeraldDispatch
import Hummingbird

/// The on-site price adjustment over REST, and the operators' view of a job's
/// payment.
extension DispatchRoutes {
    func addAdjustmentRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/drivers/jobs/{id}/volume") { request, context in
            let identity = try context.require(.driver)
            let hundredths = try Self.actualVolume(try await request.jsonObject(context: context), maxYards: dispatch.config.pricing.maxVolumeYards)
            let outcome = try await dispatch.adjustments.proposeVolume(
                try context.parameters.require("id"), driverID: identity.userID, actualHundredths: hundredths)
            return try respond(adjustmentResponse(outcome), status: .created, context)
        }
        api.post("/drivers/jobs/{id}/volume/extend") { request, context in
            let identity = try context.require(.driver)
            try await Self.emptyBody(request, context)
            return try respond(
                adjustmentResponse(try await dispatch.adjustmentEndings.extendProposal(try context.parameters.require("id"), driverID: identity.userID)),
                context)
        }
        api.post("/drivers/jobs/{id}/cancel-with-trip-fee") { request, context in
            let identity = try context.require(.driver)
            try await Self.emptyBody(request, context)
            return try respond(
                adjustmentResponse(try await dispatch.adjustmentEndings.cancelWithTripFee(try context.parameters.require("id"), driverID: identity.userID)),
                context)
        }
        api.post("/jobs/{id}/volume/approve") { request, context in
            let identity = try context.require(.customer)
            try await Self.emptyBody(request, context)
            return try respond(
                adjustmentResponse(try await dispatch.adjustments.approveVolume(try context.parameters.require("id"), customerID: identity.userID)), context)
        }
        api.post("/jobs/{id}/volume/decline") { request, context in
            let identity = try context.require(.customer)
            let proceed = try Self.declineChoice(try await Self.optionalBody(request, context))
            return try respond(
                adjustmentResponse(
                    try await dispatch.adjustmentEndings.declineVolume(try context.parameters.require("id"), customerID: identity.userID, proceed: proceed)),
                context)
        }
        api.get("/operators/jobs/{id}/payment") { _, context in
            _ = try context.require(.operator, .service)
            let id = try context.parameters.require("id")
            guard let hold = try await dispatch.payments.hold(id) else {
                throw APIError(status: 404, code: .jobNotFound, message: "No payment hold for this job.")
            }
            let events = try await dispatch.payments.events(id)
            return try respond(
                [
                    "job_id": .string(id), "payment": DispatchJSON.payment(hold),
                    "events": .array(
                        events.map { event in
                            [
                                "operation": .string(event.operation), "amount_minor": event.amountMinor.map { .number(Double($0)) } ?? .null,
                                "outcome": .string(event.outcome.rawValue), "error_code": event.errorCode.map(JSONValue.string) ?? .null,
                                "at": .string(Timestamp.string(epochMilliseconds: event.createdAt)),
                            ]
                        }),
                ], context)
        }
    }

    func adjustmentResponse(_ outcome: AdjustmentOutcome) -> JSONValue {
        [
            "job": DispatchJSON.job(outcome.job), "adjustment": DispatchJSON.adjustment(outcome.adjustment, now: clock.now().epochMilliseconds),
            "payment": outcome.hold.map(DispatchJSON.payment) ?? .null,
        ]
    }

    /// `{actual_volume}`: cubic yards as a JSON number or a decimal string ("4.25"), more than
    /// 0, at most `maxYards`, at most two decimals.
    static func actualVolume(_ body: [String: JSONValue], maxYards: Double) throws -> Int {
        var v = FieldValidator()
        for key in body.keys.sorted() where key != "actual_volume" { v.fail(key, "is not a known field") }
        let problem = "must be more than 0 and at most \(DispatchJSONNumber.text(maxYards)) cubic yards, with at most two decimals"
        var hundredths: Int?
        switch body["actual_volume"] {
        case nil, .null?: v.fail("actual_volume", "is required: the measured volume in cubic yards")
        case .number(let yards)?:
            hundredths = JobDraft.volumeHundredths(yards, max: maxYards)
            if hundredths == nil { v.fail("actual_volume", problem) }
        case .string(let text)?:
            if text.utf8.count <= 12, text.wholeMatch(of: /[0-9]+(\.[0-9]{1,2})?/) != nil, let yards = Double(text) {
                hundredths = JobDraft.volumeHundredths(yards, max: maxYards)
                if hundredths == nil { v.fail("actual_volume", problem) }
            } else {
                v.fail("actual_volume", "must be a number of cubic yards")
            }
        default: v.fail("actual_volume", "must be a number of cubic yards")
        }
        try v.validate()
        return hundredths!
    }

    /// These actions take no fields: an empty body or `{}`; anything else is named.
    /// `{"proceed_at_original_price": true}` keeps the job at its booked price (the other
    /// outcome the price-adjustment design allows); no body, or `false`, ends it with the trip fee.
    static func declineChoice(_ body: [String: JSONValue]) throws -> Bool {
        var v = FieldValidator()
        var proceed = false
        for key in body.keys.sorted() where key != "proceed_at_original_price" { v.fail(key, "is not a known field") }
        switch body["proceed_at_original_price"] {
        case nil, .null: break
        case .bool(let value): proceed = value
        default: v.fail("proceed_at_original_price", "must be true or false")
        }
        try v.validate()
        return proceed
    }

    static func emptyBody(_ request: Request, _ context: HeraldRequestContext) async throws {
        var v = FieldValidator()
        for key in try await optionalBody(request, context).keys.sorted() { v.fail(key, "is not a known field") }
        try v.validate()
    }

    /// The JSON object of a body that may be absent (no length, no content type): `[:]` then.
    static func optionalBody(_ request: Request, _ context: HeraldRequestContext) async throws -> [String: JSONValue] {
        guard request.headers[.contentLength].map({ $0 != "0" }) ?? false || request.headers[.contentType] != nil else { return [:] }
        return try await request.jsonObject(context: context)
    }
}

/// A config number as an operator wrote it (30, not 30.0).
enum DispatchJSONNumber {
    static func text(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
