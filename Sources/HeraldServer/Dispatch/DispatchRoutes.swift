import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import Hummingbird

/// Dispatch over REST: drivers, jobs, the claim, and the operators' views.
struct DispatchRoutes {
    let dispatch: DispatchService
    let clock: any HeraldClock

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        addDriverRoutes(to: api)
        addJobRoutes(to: api)
        addOperatorRoutes(to: api)
        addAdjustmentRoutes(to: api)
    }

    func respond(_ value: JSONValue, status: HTTPResponse.Status = .ok, _ context: HeraldRequestContext) throws -> Response {
        try Envelope.response(value, status: status, context: context, clock: clock)
    }

    // MARK: Drivers

    func addDriverRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/drivers/me") { _, context in
            let identity = try context.require(.driver)
            guard let driver = try await dispatch.drivers.profile(identity.userID) else {
                throw APIError(status: 404, code: .driverNotFound, message: "No driver profile yet (PUT /api/v1/drivers/me).")
            }
            return try respond(DispatchJSON.driver(driver), context)
        }
        api.put("/drivers/me") { request, context in
            let identity = try context.require(.driver)
            let profile = try DriverProfile.parse(try await request.jsonObject(context: context))
            let existed = try await dispatch.drivers.profile(identity.userID) != nil
            let driver = try await dispatch.drivers.saveProfile(identity.userID, profile)
            return try respond(DispatchJSON.driver(driver), status: existed ? .ok : .created, context)
        }
        api.post("/drivers/online") { request, context in
            let identity = try context.require(.driver)
            let body = try await request.jsonObject(context: context)
            var v = FieldValidator()
            for key in body.keys.sorted() where key != "online" { v.fail(key, "is not a known field") }
            let online = body["online"]?.boolValue
            v.check(online != nil, "online", "is required: true or false")
            try v.validate()
            return try respond(DispatchJSON.driver(try await dispatch.drivers.setOnline(identity.userID, online!)), context)
        }
        api.post("/drivers/location") { request, context in
            let identity = try context.require(.driver)
            let update = try LocationUpdate.parse(try await request.jsonObject(context: context))
            switch try await dispatch.drivers.reportLocation(identity.userID, update) {
            case .accepted:
                return try respond(["accepted": true, "sequence": update.sequence.map { .number(Double($0)) } ?? .null], context)
            case .stale(let last):
                return try respond(["accepted": false, "reason": "stale_sequence", "last_sequence": .number(Double(last))], context)
            case .unknownDriver:
                throw APIError(status: 404, code: .driverNotFound, message: "Create your driver profile first.")
            case .throttled(let throttle):
                let seconds = max(1, (throttle.retryAfterMs + 999) / 1000)
                throw APIError(
                    status: 429, code: .rateLimitExceeded, message: "Too many location updates; slow down.",
                    details: ["retry_after_ms": .number(Double(throttle.retryAfterMs)), "limit": .string(throttle.limit)],
                    headers: ["Retry-After": String(seconds)])
            }
        }
        api.get("/drivers/jobs/available") { _, context in
            let identity = try context.require(.driver)
            let jobs = try await dispatch.jobs.availableJobs(for: identity.userID)
            return try respond(
                ["jobs": .array(jobs.map { DispatchJSON.job($0.job, distanceMeters: $0.distance) }), "count": .number(Double(jobs.count))], context)
        }
        api.post("/drivers/jobs/{id}/accept") { _, context in
            let identity = try context.require(.driver)
            let (job, driver) = try await dispatch.claims.accept(try context.parameters.require("id"), driverID: identity.userID)
            return try respond(["success": true, "job": DispatchJSON.job(job, driver: driver)], context)
        }
        api.post("/drivers/jobs/{id}/status") { request, context in
            let identity = try context.require(.driver)
            let body = try await request.jsonObject(context: context)
            var v = FieldValidator()
            for key in body.keys.sorted() where key != "status" { v.fail(key, "is not a known field") }
            let status = body["status"]?.stringValue
            v.check(status != nil, "status", "is required: en_route, arrived, started or completed")
            try v.validate()
            let job = try await dispatch.steps.advance(try context.parameters.require("id"), driverID: identity.userID, to: status!)
            return try respond(DispatchJSON.job(job), context)
        }
    }

    // MARK: Jobs

    func addJobRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/jobs") { request, context in
            let identity = try context.require(.customer)
            let draft = try JobDraft.parse(try await request.jsonObject(context: context), pricing: dispatch.config.pricing, now: clock.now())
            // With an Idempotency-Key the answer commits with the job (a retry after a crash
            // replays it); it shows the job as booked, before its first offer round.
            return try await IdempotentAnswer.answer(
                JobRecord.self,
                respond: { job in
                    try respond(DispatchJSON.job(job), status: .created, context)
                }
            ) { answer in
                try await dispatch.booking.create(customerID: identity.userID, draft, answer: answer)
            }
        }
        api.get("/jobs") { request, context in
            let identity = try context.requireIdentity()
            let (offset, limit, status) = try Self.page(request)
            let page = try await dispatch.jobs.list(for: identity, status: status, offset: offset, limit: limit)
            return try respond(
                [
                    "jobs": .array(page.jobs.map { DispatchJSON.job($0) }), "total": .number(Double(page.total)), "offset": .number(Double(offset)),
                    "limit": .number(Double(limit)),
                ],
                context)
        }
        api.get("/jobs/{id}") { _, context in
            let identity = try context.requireIdentity()
            let (job, driver) = try await dispatch.jobs.job(try context.parameters.require("id"), for: identity)
            guard case .object(var object) = DispatchJSON.job(job, driver: driver) else { return try respond(DispatchJSON.job(job, driver: driver), context) }
            // The parties of an assigned job see its price adjustment and its payment hold.
            let (adjustment, hold) = try await dispatch.adjustments.adjustmentAndHold(job.id)
            if job.driverID != nil || identity.role == .operator || identity.role == .service {
                object["adjustment"] = adjustment.map { DispatchJSON.adjustment($0, now: clock.now().epochMilliseconds) } ?? .null
            }
            if identity.role != .driver {
                object["payment"] = hold.map(DispatchJSON.payment) ?? .null
            }
            if let contact = try await dispatch.jobs.customerContact(job, for: identity) { object["customer"] = contact }
            return try respond(.object(object), context)
        }
        api.post("/jobs/{id}/cancel") { request, context in
            let identity = try context.require(.customer, .operator, .service)
            let body = try await Self.optionalBody(request, context)
            var v = FieldValidator()
            for key in body.keys.sorted() where key != "reason" { v.fail(key, "is not a known field") }
            let reason = v.reason(body)
            try v.validate()
            let job = try await dispatch.steps.cancel(try context.parameters.require("id"), by: identity, reason: reason)
            return try respond(DispatchJSON.job(job), context)
        }
    }

    static func page(_ request: Request) throws -> (offset: Int, limit: Int, status: JobStatus?) {
        var v = FieldValidator()
        var status: JobStatus?
        if let text = request.uri.queryParameters["status"] {
            if let value = JobStatus(rawValue: String(text)) {
                status = value
            } else {
                v.fail("status", "must be one of \(JobStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        try v.validate()
        let (offset, limit) = try offsetLimit(request)
        return (offset, limit, status)
    }

    static func offsetLimit(_ request: Request) throws -> (offset: Int, limit: Int) {
        let query = request.uri.queryParameters
        var v = FieldValidator()
        var offset = 0
        var limit = 20
        if let text = query["offset"] {
            if let value = Int(String(text)), (0...1_000_000).contains(value) {
                offset = value
            } else {
                v.fail("offset", "must be an integer from 0 to 1000000")
            }
        }
        if let text = query["limit"] {
            if let value = Int(String(text)), (1...100).contains(value) { limit = value } else { v.fail("limit", "must be an integer from 1 to 100") }
        }
        try v.validate()
        return (offset, limit)
    }

    // MARK: Operators

    func addOperatorRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/operators/drivers") { request, context in
            _ = try context.require(.operator, .service)
            let query = request.uri.queryParameters
            var v = FieldValidator()
            var approval: DriverApproval?
            var online: Bool?
            if let text = query["approval_status"] {
                approval = DriverApproval(rawValue: String(text))
                if approval == nil { v.fail("approval_status", "must be pending, approved, rejected or suspended") }
            }
            if let text = query["online"] {
                switch String(text) {
                case "true", "1": online = true
                case "false", "0": online = false
                default: v.fail("online", "must be true or false")
                }
            }
            try v.validate()
            let (offset, limit) = try Self.offsetLimit(request)
            let page = try await dispatch.drivers.list(approval: approval, online: online, offset: offset, limit: limit)
            return try respond(["drivers": .array(page.drivers.map(DispatchJSON.driver)), "total": .number(Double(page.total))], context)
        }
        api.get("/operators/drivers/{id}") { _, context in
            _ = try context.require(.operator, .service)
            guard let driver = try await dispatch.drivers.profile(try context.parameters.require("id")) else {
                throw APIError(status: 404, code: .driverNotFound, message: "No such driver.")
            }
            return try respond(DispatchJSON.driver(driver), context)
        }
        api.post("/operators/drivers/{id}/approval") { request, context in
            let identity = try context.require(.operator)
            let body = try await request.jsonObject(context: context)
            var v = FieldValidator()
            for key in body.keys.sorted() where key != "status" && key != "reason" { v.fail(key, "is not a known field") }
            let status = body["status"]?.stringValue.flatMap(DriverApproval.init(rawValue:))
            v.check(status != nil, "status", "must be pending, approved, rejected or suspended")
            let reason = v.reason(body)
            try v.validate()
            let driver = try await dispatch.drivers.setApproval(try context.parameters.require("id"), status!, reason: reason, by: identity.userID)
            return try respond(DispatchJSON.driver(driver), context)
        }
        api.get("/operators/jobs/{id}/offers") { _, context in
            _ = try context.require(.operator, .service)
            let id = try context.parameters.require("id")
            let offers = try await dispatch.offers.records(id)
            let events = try await dispatch.jobs.events(id)
            return try respond(
                [
                    "job_id": .string(id), "offers": .array(offers.map(DispatchJSON.offer)),
                    "events": .array(
                        events.map { event in
                            [
                                "from_status": event.fromStatus.map { .string($0.rawValue) } ?? .null, "to_status": .string(event.toStatus.rawValue),
                                "actor_id": event.actorID.map(JSONValue.string) ?? .null, "actor_role": .string(event.actorRole.rawValue),
                                "reason": event.reason.map(JSONValue.string) ?? .null, "at": .string(Timestamp.string(epochMilliseconds: event.createdAt)),
                            ]
                        }),
                ], context)
        }
    }
}
