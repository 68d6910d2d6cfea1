import Foundation
import HeraldAuth
import HeraldCore
import HeraldGeo
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import SQLKit

extension DispatchService {
    /// Books a job: prices it, stores it as `pending`, puts the customer's open sockets in its
    /// room and makes the first offer round at once. The round is also due in the database,
    /// so if this node dies before broadcasting, the scheduler on any node makes it.
    public func createJob(customerID: String, _ draft: JobDraft) async throws -> JobRecord {
        if payments.gateway.provider != "ledger" && draft.paymentMethodID == nil {
            throw APIError.validation(field: "payment_method_id", "is required: the card to hold the price on")
        }
        let nowDate = clock.now()
        let now = nowDate.epochMilliseconds
        let quote = pricing.quote(
            PricingRequest(items: draft.items, volumeHundredths: draft.volumeHundredths, scheduledAt: draft.scheduledAt, bookedAt: nowDate))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let job = JobRecord(
            id: Identifier.make("job"), customerID: customerID, driverID: nil, status: .pending, address: draft.address,
            latitude: draft.point?.latitude, longitude: draft.point?.longitude,
            items: String(decoding: try encoder.encode(draft.items), as: UTF8.self),
            volumeHundredths: draft.volumeHundredths.map(Int64.init), scheduledAt: draft.scheduledAt?.epochMilliseconds, notes: draft.notes,
            priceMinor: Int64(quote.totalMinor), currency: quote.currency, priceLines: String(decoding: try encoder.encode(quote.lines), as: UTF8.self),
            offerRound: 0, offerRadiusM: nil, nextRoundAt: now, version: 1, createdAt: now, updatedAt: now)
        if let holdAt = payments.timing.holdAt(scheduledAt: job.scheduledAt, now: now) {
            return try await bookAhead(job, paymentMethodID: draft.paymentMethodID, holdAt: holdAt)
        }
        // No hold, no job: the card is authorised first; if storing the job then fails, the
        // hold is released.
        let hold = try await payments.authorize(
            jobID: job.id, customerID: customerID, amountMinor: job.priceMinor, currency: job.currency, paymentMethodID: draft.paymentMethodID)
        do {
            try await database.transaction { db in
                try await self.jobs.insert(db, job)
                try await self.jobs.recordEvent(db, jobID: job.id, from: nil, to: .pending, actorID: customerID, actor: .customer, now: now)
                try await self.holds.insert(db, jobID: job.id, provider: self.payments.gateway.provider, hold, now: now)
                // An idempotent booking's answer commits with the job (the job as booked).
                try await TransactionAnswer.record(job, in: db)
            }
        } catch {
            await payments.release(hold, jobID: job.id)
            throw error
        }
        await addToRoom([customerID], RoomName.job(job.id))
        await runRound(job)
        return try await database.withConnection { db in try await self.jobs.find(db, id: job.id) } ?? job
    }

    /// Books a job scheduled past an authorisation's lifetime: stored with a scheduled hold
    /// the payment scheduler takes at `holdAt` (or when the driver sets off, if sooner).
    private func bookAhead(_ job: JobRecord, paymentMethodID: String?, holdAt: Int64) async throws -> JobRecord {
        let now = job.createdAt
        try await database.transaction { db in
            try await self.jobs.insert(db, job)
            try await self.jobs.recordEvent(db, jobID: job.id, from: nil, to: .pending, actorID: job.customerID, actor: .customer, now: now)
            try await self.holds.insertScheduled(
                db, jobID: job.id, provider: self.payments.gateway.provider, amountMinor: job.priceMinor, currency: job.currency,
                paymentMethod: paymentMethodID, customerID: job.customerID, holdAt: holdAt, now: now)
            try await TransactionAnswer.record(job, in: db)
        }
        adjustmentsChanged.signal()
        await addToRoom([job.customerID], RoomName.job(job.id))
        await runRound(job)
        return try await database.withConnection { db in try await self.jobs.find(db, id: job.id) } ?? job
    }

    /// The job if `identity` may see it: its customer, its driver, a driver it was offered
    /// to, or an operator/service. Anyone else gets the same 404 as for a missing job.
    public func job(_ id: String, for identity: Identity) async throws -> (job: JobRecord, driver: DriverRecord?) {
        let found = try await database.withConnection { db -> (JobRecord, DriverRecord?, Bool)? in
            guard let job = try await self.jobs.find(db, id: id) else { return nil }
            let driver = try await job.driverID.asyncMap { try await self.drivers.record(db, userID: $0) } ?? nil
            let offered =
                identity.role == .driver && job.driverID != identity.userID
                ? try await self.offers.wasOffered(db, jobID: id, driverID: identity.userID) : false
            return (job, driver, offered)
        }
        guard let (job, driver, offered) = found else { throw DispatchError.jobNotFound }
        let allowed: Bool =
            switch identity.role {
            case .operator, .service: true
            case .customer: job.customerID == identity.userID
            case .driver: job.driverID == identity.userID || (offered && job.status == .pending)
            }
        guard allowed else { throw DispatchError.jobNotFound }
        return (job, driver)
    }

    /// The customer's name and phone for the driver assigned to the job while it is active
    /// (an unanswered price proposal leaves the driver the option to call); nil for
    /// anyone else and once the job is over, so a driver keeps no customer's number.
    public func customerContact(_ job: JobRecord, for identity: Identity) async throws -> JSONValue? {
        let active: Set<JobStatus> = [.accepted, .enRoute, .arrived, .started]
        guard identity.role == .driver, job.driverID == identity.userID, active.contains(job.status) else { return nil }
        let user = try await database.withConnection { db in try await UserDirectory.find(db, id: job.customerID) }
        return [
            "id": .string(job.customerID), "name": user?.displayName.map(JSONValue.string) ?? .null,
            "phone": user?.phone.map(JSONValue.string) ?? .null,
        ]
    }

    public func listJobs(for identity: Identity, status: JobStatus?, offset: Int, limit: Int) async throws -> (jobs: [JobRecord], total: Int) {
        let owner: JobStore.Owner =
            switch identity.role {
            case .customer: .customer(identity.userID)
            case .driver: .driver(identity.userID)
            case .operator, .service: .anyone
            }
        return try await database.withConnection { db in try await self.jobs.list(db, owner: owner, status: status, offset: offset, limit: limit) }
    }

    /// Cancels a job: its customer before the driver arrives, an operator at any time before
    /// it ends. Offered drivers' feeds drop it; the assigned driver is told.
    public func cancelJob(_ id: String, by identity: Identity, reason: String?) async throws -> JobRecord {
        let actor: JobActor = identity.role == .customer ? .customer : .operator
        guard identity.role == .customer || identity.role == .operator || identity.role == .service else {
            throw APIError.forbidden("Drivers cannot cancel jobs here.")
        }
        let (job, driver) = try await self.job(id, for: identity)
        let current = job.status
        if current == .cancelled { return job }
        guard case .allowed = JobStateMachine.check(from: current, to: .cancelled, by: actor) else {
            throw DispatchError.invalidTransition(from: current, to: "cancelled", allowed: JobStateMachine.allowedTransitions(from: current, by: actor))
        }
        let now = self.now
        // The other party hears of it: the assigned driver when the customer cancels, else the customer.
        var notify: NotificationDraft?
        if actor == .customer, let driverID = job.driverID {
            notify = NotificationDraft(
                userIDs: [driverID], type: "job_update", title: "Job cancelled", body: "The customer cancelled the job at \(job.address).",
                data: Self.jobUpdateData(id, .cancelled))
        } else if actor != .customer, let message = Self.customerMessage(.cancelled, driverName: nil) {
            notify = NotificationDraft(
                userIDs: [job.customerID], type: message.type, title: message.title, body: message.body, data: Self.jobUpdateData(id, .cancelled))
        }
        let prepared = await notify.asyncMap { await self.prepareNotification($0) } ?? nil
        let result = try await commitCancel(
            id, from: current, actor: actor, actorID: identity.userID, reason: reason, driver: driver, notify: prepared.map { [$0] } ?? [], now: now)
        guard let updated = result else {
            // Changed under us: answer from the new state.
            let (fresh, _) = try await self.job(id, for: identity)
            if fresh.status == .cancelled { return fresh }
            throw DispatchError.invalidTransition(
                from: fresh.status, to: "cancelled", allowed: JobStateMachine.allowedTransitions(from: fresh.status, by: actor))
        }
        return updated
    }

    /// Cancels `id` from `current` in one unit of work — the job and its event, its offers and
    /// any price proposal closed, its hold's release owed, the notifications written — and,
    /// after the commit, tells the job room and the feeds and makes the release. Nil when the
    /// job changed meanwhile.
    func commitCancel(
        _ id: String, from current: JobStatus, actor: JobActor, actorID: String?, reason: String?, driver: DriverRecord?,
        notify prepared: [NotificationService.PreparedSend], now: Int64
    ) async throws -> JobRecord? {
        try await database.unitOfWork { work -> JobRecord? in
            let db = work.db
            guard
                let updated = try await self.jobs.transition(
                    db, id: id, from: current, to: .cancelled, driverID: nil, now: now, cancelledBy: actor.rawValue, reason: reason)
            else { return nil }
            try await self.jobs.recordEvent(db, jobID: id, from: current, to: .cancelled, actorID: actorID, actor: actor, reason: reason, now: now)
            try await self.offers.decide(db, jobID: id, winner: nil, outcome: .cancelled)
            // A cancel during a price proposal closes it; the hold is released.
            _ = try await self.adjustments.decide(db, jobID: id, to: .cancelled, by: actorID ?? actor.rawValue, tripFeeMinor: nil, now: now)
            try await self.holds.plan(db, jobID: id, .cancel, now: now)
            let offered = try await self.offers.driverIDs(db, jobID: id)
            work.afterCommit {
                await self.announce(updated, previous: current, driver: driver, offeredDrivers: offered)
                await self.settlePayment(id)
            }
            try await self.notifications.write(prepared, in: work)
            try await self.publishActivity(JobActivity.change(updated, driverName: nil), in: work)
            return updated
        }
    }

    /// The assigned driver's next step (`en_route`, `arrived`, `started`, `completed`).
    public func advanceJob(_ id: String, driverID: String, to target: String) async throws -> JobRecord {
        guard let to = JobStatus(rawValue: target), [.enRoute, .arrived, .started, .completed].contains(to) else {
            throw APIError.validation(field: "status", "must be en_route, arrived, started or completed")
        }
        let (job, driver) = try await self.job(id, for: Identity(userID: driverID, role: .driver, expiresAt: .infinity))
        guard job.driverID == driverID else { throw DispatchError.jobNotFound }
        let current = job.status
        if current == to { return job }
        guard case .allowed = JobStateMachine.check(from: current, to: to, by: .driver) else {
            throw DispatchError.invalidTransition(from: current, to: to.rawValue, allowed: JobStateMachine.allowedTransitions(from: current, by: .driver))
        }
        let now = self.now
        let message = Self.customerMessage(to, driverName: driver?.name)
        let prepared =
            await message.asyncMap {
                await self.prepareNotification(
                    NotificationDraft(
                        userIDs: [job.customerID], type: $0.type, title: $0.title, body: $0.body,
                        data: Self.jobUpdateData(id, to), collapseKey: "job-\(id)"))
            } ?? nil
        let result = try await database.unitOfWork { work -> JobRecord? in
            let db = work.db
            // Lock first, then decide in a new statement: `started` must see a proposal committed
            // while this waited (on PostgreSQL the UPDATE's subquery would not).
            if to == .started { try await self.jobs.lock(db, id: id) }
            guard let updated = try await self.jobs.transition(db, id: id, from: current, to: to, driverID: driverID, now: now) else { return nil }
            try await self.jobs.recordEvent(db, jobID: id, from: current, to: to, actorID: driverID, actor: .driver, now: now)
            if to == .completed {
                try await self.drivers.recordCompletion(db, userID: driverID, now: now)
                // Completion captures the final amount (manual capture: the price may change on site).
                try await self.holds.plan(db, jobID: id, .capture(updated.priceMinor), now: now)
            }
            work.afterCommit {
                await self.announce(updated, previous: current, driver: driver, offeredDrivers: [])
                if to == .completed { await self.settlePayment(id) }
            }
            try await self.write(prepared, in: work)
            try await self.publishActivity(JobActivity.change(updated, driverName: to == .arrived ? driver?.name : nil), in: work)
            return updated
        }
        guard let updated = result else {
            let (fresh, _) = try await self.job(id, for: Identity(userID: driverID, role: .driver, expiresAt: .infinity))
            if fresh.status == to { return fresh }
            if to == .started, fresh.status == .arrived, try await adjustment(id)?.status == .pending { throw DispatchError.adjustmentPending }
            throw DispatchError.invalidTransition(
                from: fresh.status, to: to.rawValue, allowed: JobStateMachine.allowedTransitions(from: fresh.status, by: .driver))
        }
        // A job booked ahead whose driver sets off before its hold's time takes it now: the
        // work is about to be done and must be payable.
        if to == .enRoute, case .holdRefused(let error) = await payments.takeScheduledNow(id) {
            await cancelUnpaid(id, error)
            return try await self.job(id, for: Identity(userID: driverID, role: .driver, expiresAt: .infinity)).job
        }
        return updated
    }

    /// `job:status` to the job's room and, when the job leaves the market (it was pending and is
    /// now accepted, cancelled or expired), to every driver who was offered it or whose feed
    /// could show it (a job left in a feed costs a tap and a 409).
    func announce(_ job: JobRecord, previous: JobStatus?, driver: DriverRecord?, offeredDrivers: [String]) async {
        let payload = statusPayload(job, previous: previous, driver: driver)
        var drivers = Set(offeredDrivers)
        if previous == .pending { drivers.formUnion(await feedAudience(job)) }
        if let winner = job.driverID { drivers.remove(winner) }
        await publish(batch: [("job:status", payload, RoomName.job(job.id))] + drivers.sorted().map { ("job:status", payload, Self.driverRoom($0)) })
    }

    /// The approved drivers whose feed (`availableJobs`) shows `job` now: within the feed
    /// radius of their last position (the live index, else the stored one), or every
    /// approved driver with a position for a job without one.
    func feedAudience(_ job: JobRecord) async -> Set<String> {
        let radius = feedRadiusMeters
        let center = job.point
        do {
            let band = center.map { (min: $0.latitude - radius / 111_000, max: $0.latitude + radius / 111_000) }
            let stored = try await database.withConnection { db in try await self.drivers.approvedPositions(db, latitudeBand: band) }
            var audience = Set<String>()
            for candidate in stored {
                guard let position = drivers.tracker.index.position(of: candidate.userID)?.point ?? candidate.point else { continue }
                if let center, Haversine.distanceMeters(center, position) > radius { continue }
                audience.insert(candidate.userID)
            }
            if let center {
                for match in self.drivers.tracker.index.nearest(to: center, radiusMeters: radius, limit: Int.max, freshSince: 0) {
                    audience.insert(match.driverID)
                }
            }
            return audience
        } catch {
            logger.error("finding the drivers whose feeds show a job failed", metadata: ["job_id": "\(job.id)", "error": "\(String(reflecting: error))"])
            return []
        }
    }

    public func offerRecords(_ jobID: String) async throws -> [OfferRecord] {
        try await database.withConnection { db in
            guard try await self.jobs.find(db, id: jobID) != nil else { throw DispatchError.jobNotFound }
            return try await self.offers.offers(db, jobID: jobID)
        }
    }

    public func jobEvents(_ jobID: String) async throws -> [JobEventRecord] {
        try await database.withConnection { db in try await self.jobs.events(db, jobID: jobID) }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
