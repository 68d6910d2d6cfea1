import Foundation
import HeraldCore
import HeraldGeo
import HeraldNotifications
import HeraldStorage

extension DispatchService {
    /// Runs whatever is due for a pending job whose round has ended (or, at creation, not
    /// begun): the next, wider offer round, or expiry after the last one. Several nodes may
    /// try at once; the conditional update on `offer_round` lets one of them act.
    public func runRound(_ job: JobRecord) async {
        do {
            switch offerRounds.next(afterRound: job.offerRound, now: now) {
            case .offer(let round, let radius, let nextRoundAt):
                try await offer(job, round: round, radius: radius, nextRoundAt: nextRoundAt)
            case .waitUntil, .expire:  // a job has no deadline of its own: it expires after the last round
                try await expire(job)
            }
        } catch {
            logger.error("an offer round failed", metadata: ["job_id": "\(job.id)", "error": "\(String(reflecting: error))"])
        }
    }

    /// A job's rounds: from `dispatch.radius_km` widening by `radius_step_km` to `max_radius_km`, each lasting
    /// `offer_timeout_seconds`.
    var offerRounds: OfferRounds {
        OfferRounds(radiiMeters: config.roundRadiiMeters, roundMilliseconds: Int64(config.offerTimeoutSeconds) * 1000)
    }

    /// Offers the job to matchable drivers within `radius` who have not been offered it yet.
    /// A job without a position goes to every online approved driver (as the dispatch design does).
    func offer(_ job: JobRecord, round: Int, radius: Double, nextRoundAt: Int64) async throws {
        let now = self.now
        let center = job.point
        let (already, online) = try await database.withConnection { db in
            (Set(try await self.offers.driverIDs(db, jobID: job.id)), center == nil ? try await self.drivers.matchable(db) : [])
        }
        let candidates: [DriverMatch]
        if let center {
            candidates = drivers.nearby(center, radiusMeters: radius, limit: Int.max)
        } else {
            // As the dispatch design does: with no site to measure from, every online approved driver,
            // whether or not the app has sent a position yet.
            candidates = online.map { DriverMatch(driverID: $0.userID, distanceMeters: 0) }.sorted { $0.driverID < $1.driverID }
        }
        let matches = OfferRounds.select(candidates, offeredBefore: already, requester: job.customerID, limit: notifications.maxRecipients)
        let distances = Dictionary(matches.map { ($0.driverID, $0.distanceMeters) }, uniquingKeysWith: { first, _ in first })
        let prepared =
            matches.isEmpty
            ? nil
            : await prepareNotification(
                NotificationDraft(
                    userIDs: matches.map(\.driverID), type: "job_new", title: "New Job Nearby",
                    body: "\(job.address) - \(Self.money(job.priceMinor, job.currency))",
                    data: ["job_id": .string(job.id), "type": "job:new"], collapseKey: "job-\(job.id)", ttlSeconds: config.offerTimeoutSeconds))
        var next = job
        next.offerRound = round
        next.offerRadiusM = center == nil ? nil : Int64(radius)
        next.nextRoundAt = nextRoundAt
        let offered = next
        let started = try await database.unitOfWork { work -> Bool in
            let db = work.db
            guard
                try await self.jobs.startRound(
                    db, id: job.id, round: round, radiusMeters: center == nil ? nil : Int64(radius), nextRoundAt: nextRoundAt, now: now)
            else {
                return false
            }
            work.afterCommit {
                self.scheduleChanged.signal()
                await self.publish(
                    batch: matches.map { match in
                        ("job:new", DispatchJSON.job(offered, distanceMeters: center == nil ? nil : distances[match.driverID]), Self.driverRoom(match.driverID))
                    })
            }
            guard let prepared else { return true }
            let written = try await self.notifications.write(prepared, in: work)
            let channels = written.channels
            let notificationIDs = written.notificationIDs
            try await self.offers.insert(
                db,
                matches.map { match in
                    OfferRecord(
                        jobID: job.id, driverID: match.driverID, round: round, distanceM: center == nil ? nil : Int64(match.distanceMeters.rounded()),
                        channel: channels[match.driverID] ?? .inbox, notificationID: notificationIDs[match.driverID], offeredAt: now)
                })
            return true
        }
        guard started else { return }  // another node made this round
        statistics.offered(matches.count)
        logger.info("job offered", metadata: ["job_id": "\(job.id)", "round": "\(round)", "radius_m": "\(Int(radius))", "drivers": "\(matches.count)"])
    }

    /// The last round ended unclaimed: the job expires, the customer is told, feeds drop it.
    func expire(_ job: JobRecord) async throws {
        let now = self.now
        let message = Self.customerMessage(.expired, driverName: nil)!
        let prepared = await prepareNotification(
            NotificationDraft(
                userIDs: [job.customerID], type: message.type, title: message.title, body: message.body,
                data: Self.jobUpdateData(job.id, .expired), collapseKey: "job-\(job.id)"))
        let expired = try await database.unitOfWork { work -> Bool in
            let db = work.db
            guard let expired = try await self.jobs.expire(db, id: job.id, round: job.offerRound, now: now) else { return false }
            try await self.jobs.recordEvent(db, jobID: job.id, from: .pending, to: .expired, actorID: nil, actor: .system, now: now)
            try await self.offers.decide(db, jobID: job.id, winner: nil, outcome: .expired)
            try await self.holds.plan(db, jobID: job.id, .cancel, now: now)
            let offered = try await self.offers.driverIDs(db, jobID: job.id)
            work.afterCommit {
                await self.announce(expired, previous: .pending, driver: nil, offeredDrivers: offered)
                await self.settlePayment(job.id)
            }
            try await self.write(prepared, in: work)
            try await self.publishActivity(JobActivity.change(expired, driverName: nil), in: work)
            return true
        }
        guard expired else { return }
        logger.info("job expired unclaimed", metadata: ["job_id": "\(job.id)", "rounds": "\(job.offerRound)"])
    }

    /// Runs every round that is due now; returns how many jobs it looked at. The scheduler
    /// calls it; tests call it after moving their clock.
    @discardableResult
    public func runDueRounds(limit: Int = 100) async throws -> Int {
        let due = try await database.withConnection { db in try await self.jobs.dueRounds(db, now: self.now, limit: limit) }
        for job in due { await runRound(job) }
        return due.count
    }

    static func money(_ minor: Int64, _ currency: String) -> String {
        let symbol = currency == "USD" ? "$" : currency == "EUR" ? "€" : currency == "GBP" ? "£" : "\(currency) "
        return "\(symbol)\(minor / 100).\(String(format: "%02d", Int(minor % 100)))"
    }
}
