import HeraldStorage
import SQLKit

/// Where an alert version stands in the push pipeline.
public enum AlertVersionStatus: String, Sendable, Codable, CaseIterable {
    /// Waiting for its `due_at` (now, or when an upcoming alert comes into force).
    case pending
    /// Claimed by a node until `lease_until`; another node resumes it after that.
    case processing
    /// Every matched user was sent it (or held back by their settings).
    case done
    /// Its active periods were over before it was pushed.
    case ended
    /// A newer version of the same alert came in before this one was pushed.
    case superseded
}

/// One version of an alert: one row of `transit_alert_versions`.
public struct AlertVersionRecord: Sendable, Equatable, Codable {
    public var alertID: String
    public var fingerprint: String
    /// The alert as JSON (`ServiceAlert.json`).
    public var alert: String
    public var status: AlertVersionStatus
    public var dueAt: Int64
    public var claimedBy: String?
    public var leaseUntil: Int64?
    public var attempts: Int
    public var matchedUsers: Int?
    public var queuedUsers: Int?
    public var createdAt: Int64
    public var finishedAt: Int64?

    enum CodingKeys: String, CodingKey {
        case alert, status, fingerprint, attempts
        case alertID = "alert_id"
        case dueAt = "due_at"
        case claimedBy = "claimed_by"
        case leaseUntil = "lease_until"
        case matchedUsers = "matched_users"
        case queuedUsers = "queued_users"
        case createdAt = "created_at"
        case finishedAt = "finished_at"
    }

    public init(alertID: String, fingerprint: String, alert: String, status: AlertVersionStatus, dueAt: Int64, createdAt: Int64) {
        self.alertID = alertID
        self.fingerprint = fingerprint
        self.alert = alert
        self.status = status
        self.dueAt = dueAt
        self.attempts = 0
        self.createdAt = createdAt
    }
}

struct AlertVersionStore: Sendable {
    init() {}

    /// Records a version unless it is known: true when it is new.
    func insert(_ db: any SQLDatabase, _ v: AlertVersionRecord) async throws -> Bool {
        try await db.raw(
            """
            INSERT INTO transit_alert_versions (alert_id, fingerprint, alert, status, due_at, attempts, created_at)
            VALUES (\(bind: v.alertID), \(bind: v.fingerprint), \(bind: v.alert), \(bind: v.status.rawValue), \(bind: v.dueAt), 0, \(bind: v.createdAt))
            ON CONFLICT (alert_id, fingerprint) DO NOTHING
            RETURNING alert_id
            """
        ).first() != nil
    }

    func find(_ db: any SQLDatabase, alertID: String, fingerprint: String) async throws -> AlertVersionRecord? {
        try await db.raw("SELECT * FROM transit_alert_versions WHERE alert_id = \(bind: alertID) AND fingerprint = \(bind: fingerprint)")
            .first(decoding: AlertVersionRecord.self)
    }

    /// The newest version of an alert (what `POST /alerts/{id}/mute` reads).
    func latest(_ db: any SQLDatabase, alertID: String) async throws -> AlertVersionRecord? {
        try await db.raw("SELECT * FROM transit_alert_versions WHERE alert_id = \(bind: alertID) ORDER BY created_at DESC, fingerprint LIMIT 1")
            .first(decoding: AlertVersionRecord.self)
    }

    /// Versions that may be claimed now: pending and due, or processing with a lapsed lease.
    func claimable(_ db: any SQLDatabase, now: Int64, limit: Int) async throws -> [(alertID: String, fingerprint: String)] {
        try await db.raw(
            """
            SELECT alert_id, fingerprint FROM transit_alert_versions
            WHERE (status = 'pending' AND due_at <= \(bind: now)) OR (status = 'processing' AND lease_until < \(bind: now))
            ORDER BY due_at, created_at LIMIT \(bind: limit)
            """
        ).all().map { (try $0.decode(column: "alert_id", as: String.self), try $0.decode(column: "fingerprint", as: String.self)) }
    }

    /// Takes a version for `node` until `leaseUntil` when it is still claimable: one
    /// statement decides, so of several nodes exactly one gets it.
    func claim(_ db: any SQLDatabase, alertID: String, fingerprint: String, node: String, now: Int64, leaseUntil: Int64) async throws
        -> AlertVersionRecord?
    {
        try await db.raw(
            """
            UPDATE transit_alert_versions SET status = 'processing', claimed_by = \(bind: node), lease_until = \(bind: leaseUntil), attempts = attempts + 1
            WHERE alert_id = \(bind: alertID) AND fingerprint = \(bind: fingerprint)
                AND ((status = 'pending' AND due_at <= \(bind: now)) OR (status = 'processing' AND lease_until < \(bind: now)))
            RETURNING *
            """
        ).first(decoding: AlertVersionRecord.self)
    }

    /// Extends this node's lease; false when another node took the version meanwhile.
    func renew(_ db: any SQLDatabase, alertID: String, fingerprint: String, node: String, leaseUntil: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE transit_alert_versions SET lease_until = \(bind: leaseUntil)
            WHERE alert_id = \(bind: alertID) AND fingerprint = \(bind: fingerprint) AND status = 'processing' AND claimed_by = \(bind: node)
            RETURNING alert_id
            """
        ).first() != nil
    }

    /// Ends this node's processing of a version with `status`.
    func finish(
        _ db: any SQLDatabase, alertID: String, fingerprint: String, node: String, status: AlertVersionStatus, matched: Int?, queued: Int?, now: Int64
    ) async throws {
        try await db.raw(
            """
            UPDATE transit_alert_versions SET status = \(bind: status.rawValue), matched_users = \(bind: matched), queued_users = \(bind: queued),
                finished_at = \(bind: now), lease_until = NULL
            WHERE alert_id = \(bind: alertID) AND fingerprint = \(bind: fingerprint) AND claimed_by = \(bind: node) AND status = 'processing'
            """
        ).run()
    }

    /// Puts a claimed version back to wait until `dueAt` (an alert that comes into force later).
    func postpone(_ db: any SQLDatabase, alertID: String, fingerprint: String, node: String, dueAt: Int64) async throws {
        try await db.raw(
            """
            UPDATE transit_alert_versions SET status = 'pending', due_at = \(bind: dueAt), claimed_by = NULL, lease_until = NULL
            WHERE alert_id = \(bind: alertID) AND fingerprint = \(bind: fingerprint) AND claimed_by = \(bind: node) AND status = 'processing'
            """
        ).run()
    }

    /// Whether a newer version of the alert came in after `createdAt`.
    func hasNewer(_ db: any SQLDatabase, alertID: String, fingerprint: String, createdAt: Int64) async throws -> Bool {
        try await db.raw(
            """
            SELECT alert_id FROM transit_alert_versions
            WHERE alert_id = \(bind: alertID) AND fingerprint <> \(bind: fingerprint) AND created_at > \(bind: createdAt) LIMIT 1
            """
        ).first() != nil
    }
}
