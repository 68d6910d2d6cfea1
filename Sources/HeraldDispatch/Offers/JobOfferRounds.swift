import Foundation
import HeraldCore
import HeraldGeo
import HeraldNotifications
import HeraldStorage
import Logging

/// A pending job's offer rounds: each round offers it to the matchable drivers within a
/// widening radius who have not had it yet (socket `job:new` and a push), and the job expires
/// after the last one.
///
/// Why rounds are due in the database: a round's end is `jobs.next_round_at`, so the
/// scheduler on any node makes the next round if this one dies; the conditional update on
/// `offer_round` lets exactly one node act. `OfferRounds` holds the pure rules (radii, timing,
/// who a round reaches), shared with the trips module's ride requests.
public final class JobOfferRounds: Sendable {
    let book: JobBook
    let transitions: JobTransitions
    let config: DispatchConfig
    let statistics: DispatchStatistics
    let logger: Logger
    /// The `job_offers` table.
    let offers = OfferStore()
    /// Wakes the offer scheduler (a round ends sooner than its next poll).
    let scheduleChanged: WakeSignal

    init(book: JobBook, transitions: JobTransitions, config: DispatchConfig, statistics: DispatchStatistics, logger: Logger, scheduleChanged: WakeSignal) {
        self.book = book
        self.transitions = transitions
        self.config = config
        self.statistics = statistics
        self.logger = logger
        self.scheduleChanged = scheduleChanged
    }

    var notifier: JobNotifier { transitions.notifier }

    /// A job's rounds: from `dispatch.radius_km` widening by `radius_step_km` to `max_radius_km`, each lasting
    /// `offer_timeout_seconds`.
    var rounds: OfferRounds {
        OfferRounds(radiiMeters: config.roundRadiiMeters, roundMilliseconds: Int64(config.offerTimeoutSeconds) * 1000)
    }

    /// Runs whatever is due for a pending job whose round has ended (or, at creation, not
    /// begun): the next, wider offer round, or expiry after the last one. Several nodes may
    /// try at once; the conditional update on `offer_round` lets one of them act.
    public func run(_ job: JobRecord) async {
        do {
            switch rounds.next(afterRound: job.offerRound, now: transitions.now) {
            case .offer(let round, let radius, let nextRoundAt):
                try await offer(job, round: round, radius: radius, nextRoundAt: nextRoundAt)
            case .waitUntil, .expire:  // a job has no deadline of its own: it expires after the last round
                try await expire(job)
            }
        } catch {
            logger.error("an offer round failed", metadata: ["job_id": "\(job.id)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Runs every round that is due now; returns how many jobs it looked at. The scheduler
    /// calls it; tests call it after moving their clock.
    @discardableResult
    public func runDue(limit: Int = 100) async throws -> Int {
        let now = transitions.now
        let due = try await book.database.withConnection { db in try await self.book.store.dueRounds(db, now: now, limit: limit) }
        for job in due { await run(job) }
        return due.count
    }

    /// The offers made for a job, every round.
    public func records(_ jobID: String) async throws -> [OfferRecord] {
        try await book.database.withConnection { db in
            guard try await self.book.store.find(db, id: jobID) != nil else { throw DispatchError.jobNotFound }
            return try await self.offers.offers(db, jobID: jobID)
        }
    }

    /// Offers the job to matchable drivers within `radius` who have not been offered it yet.
    /// A job without a position goes to every online approved driver (as the dispatch design does).
    func offer(_ job: JobRecord, round: Int, radius: Double, nextRoundAt: Int64) async throws {
        let now = transitions.now
        let center = job.point
        let drivers = book.drivers
        let (already, online) = try await book.database.withConnection { db in
            (Set(try await self.offers.driverIDs(db, jobID: job.id)), center == nil ? try await drivers.matchable(db) : [])
        }
        let candidates: [DriverMatch]
        if let center {
            candidates = drivers.nearby(center, radiusMeters: radius, limit: Int.max)
        } else {
            // As the dispatch design does: with no site to measure from, every online approved driver,
            // whether or not the app has sent a position yet.
            candidates = online.map { DriverMatch(driverID: $0.userID, distanceMeters: 0) }.sorted { $0.driverID < $1.driverID }
        }
        let matches = OfferRounds.select(
            candidates, offeredBefore: already, requester: job.customerID, limit: notifier.notifications.maxRecipients)
        let distances = Dictionary(matches.map { ($0.driverID, $0.distanceMeters) }, uniquingKeysWith: { first, _ in first })
        let prepared =
            matches.isEmpty
            ? nil
            : await notifier.prepare(
                NotificationDraft(
                    userIDs: matches.map(\.driverID), type: "job_new", title: "New Job Nearby",
                    body: "\(job.address) - \(DisplayFormat.money(job.priceMinor, currency: job.currency))",
                    data: ["job_id": .string(job.id), "type": "job:new"], collapseKey: "job-\(job.id)", ttlSeconds: config.offerTimeoutSeconds))
        var next = job
        next.offerRound = round
        next.offerRadiusM = center == nil ? nil : Int64(radius)
        next.nextRoundAt = nextRoundAt
        let offered = next
        let started = try await book.database.unitOfWork { work -> Bool in
            let db = work.db
            guard
                try await self.book.store.startRound(
                    db, id: job.id, round: round, radiusMeters: center == nil ? nil : Int64(radius), nextRoundAt: nextRoundAt, now: now)
            else {
                return false
            }
            work.afterCommit {
                self.scheduleChanged.signal()
                await self.notifier.publish(
                    batch: matches.map { match in
                        (
                            "job:new", DispatchJSON.job(offered, distanceMeters: center == nil ? nil : distances[match.driverID]),
                            DispatchService.driverRoom(match.driverID)
                        )
                    })
            }
            guard let prepared else { return true }
            // The offer rows follow the notification: they record the channel each driver got it on.
            let written = try await self.notifier.notifications.write(prepared, in: work)
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
        guard case .move(let transition) = JobLifecycle.decide(job, .expire) else { return }
        let now = transitions.now
        let prepared = await notifier.prepare(transitions.drafts(transition, job: job, driverName: nil))
        let expired = try await book.database.unitOfWork { work -> JobRecord? in
            try await self.transitions.commit(transition, jobID: job.id, actorID: nil, driver: nil, prepared: prepared, in: work, now: now) {
                try await self.book.store.expire(work.db, id: job.id, round: job.offerRound, now: now)
            }
        }
        guard expired != nil else { return }
        logger.info("job expired unclaimed", metadata: ["job_id": "\(job.id)", "rounds": "\(job.offerRound)"])
    }
}
