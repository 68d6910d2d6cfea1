import HeraldNotifications
import HeraldStorage
import SQLKit

/// One driver's offer of one job.
public struct OfferRecord: Sendable, Equatable, Codable {
    public var jobID: String
    public var driverID: String
    public var round: Int
    public var distanceM: Int64?
    /// How the driver was reached: `socket` (app open), `push`, `inbox` (no device, push off).
    public var channel: SendChannel
    public var notificationID: String?
    public var offeredAt: Int64
    /// Nil until the job is decided.
    public var outcome: OfferOutcome?

    public init(
        jobID: String, driverID: String, round: Int, distanceM: Int64?, channel: SendChannel, notificationID: String?, offeredAt: Int64,
        outcome: OfferOutcome? = nil
    ) {
        self.jobID = jobID
        self.driverID = driverID
        self.round = round
        self.distanceM = distanceM
        self.channel = channel
        self.notificationID = notificationID
        self.offeredAt = offeredAt
        self.outcome = outcome
    }

    enum CodingKeys: String, CodingKey {
        case round, channel, outcome
        case jobID = "job_id"
        case driverID = "driver_id"
        case distanceM = "distance_m"
        case notificationID = "notification_id"
        case offeredAt = "offered_at"
    }
}

/// Who was offered what: the operators' record, and the list of feeds to update.
struct OfferStore: Sendable {
    init() {}

    func insert(_ db: any SQLDatabase, _ offers: [OfferRecord]) async throws {
        for chunk in offers.chunked(200) {
            var query = SQLQueryString("INSERT INTO job_offers (job_id, driver_id, round, distance_m, channel, notification_id, offered_at) VALUES ")
            for (index, offer) in chunk.enumerated() {
                if index > 0 { query.appendInterpolation(unsafeRaw: ", ") }
                query.appendInterpolation(
                    "(\(bind: offer.jobID), \(bind: offer.driverID), \(bind: offer.round), \(bind: offer.distanceM), \(bind: offer.channel.rawValue), \(bind: offer.notificationID), \(bind: offer.offeredAt))"
                        as SQLQueryString)
            }
            query.appendInterpolation(unsafeRaw: " ON CONFLICT (job_id, driver_id) DO NOTHING")
            try await db.raw(query).run()
        }
    }

    func offers(_ db: any SQLDatabase, jobID: String) async throws -> [OfferRecord] {
        try await db.raw("SELECT * FROM job_offers WHERE job_id = \(bind: jobID) ORDER BY round, distance_m, driver_id").all(decoding: OfferRecord.self)
    }

    func driverIDs(_ db: any SQLDatabase, jobID: String) async throws -> [String] {
        try await db.raw("SELECT driver_id FROM job_offers WHERE job_id = \(bind: jobID)").all().map { try $0.decode(column: "driver_id", as: String.self) }
    }

    func wasOffered(_ db: any SQLDatabase, jobID: String, driverID: String) async throws -> Bool {
        try await db.raw("SELECT 1 AS one FROM job_offers WHERE job_id = \(bind: jobID) AND driver_id = \(bind: driverID)").first() != nil
    }

    /// Records how the job was decided for every driver who was offered it.
    func decide(_ db: any SQLDatabase, jobID: String, winner: String?, outcome: OfferOutcome) async throws {
        try await db.raw(
            """
            UPDATE job_offers SET outcome = CASE WHEN driver_id = \(bind: winner ?? "") THEN \(bind: OfferOutcome.won.rawValue) ELSE \(bind: outcome.rawValue) END
            WHERE job_id = \(bind: jobID) AND outcome IS NULL
            """
        ).run()
    }
}
