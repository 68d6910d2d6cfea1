import Foundation
import HeraldCore
import HeraldNotifications
import HeraldStorage
import Logging
import ServiceLifecycle

/// The morning digest (`transit.alerts.quiet_hours: digest`): alerts quiet hours held back
/// from a user are summed up in one push when the quiet hours end, if they are still in force.
///
/// Why an owner of its own: the digest table is written inside the pusher's batch (the held
/// users are known only there) but read by a loop of its own, per user rather than per alert.
public final class AlertDigest: Sendable {
    let transit: TransitService
    let notifications: NotificationService
    let config: TransitConfig.AlertsConfig
    let policy: AlertPushPolicy
    let logger: Logger
    let versions = AlertVersionStore()
    let digests = AlertDigestStore()

    init(transit: TransitService, notifications: NotificationService, policy: AlertPushPolicy, logger: Logger) {
        self.transit = transit
        self.notifications = notifications
        self.config = transit.config.alerts
        self.policy = policy
        self.logger = logger
    }

    var nowMs: Int64 { transit.clock.now().epochMilliseconds }

    /// Sends due digests every 30 seconds; nil when quiet-hour pushes are dropped.
    public func loop(ready: @escaping @Sendable () async -> Bool) -> (any Service)? {
        guard config.quietHours == .digest else { return nil }
        return DuePoller("transit alert digests", interval: .seconds(30), wake: WakeSignal(), logger: logger, ready: ready) { [self] in
            try await sendDue()
        }
    }

    /// Adds the alert version to the digest of each of `users` whose quiet hours held its push,
    /// due when those quiet hours end; in the push's unit of work, so a rolled-back batch holds
    /// nothing back.
    func hold(_ users: [String], type: String, alertID: String, fingerprint: String, now: Int64, in work: UnitOfWork) async throws {
        let db = work.db
        let settings = try await notifications.settings(for: users, type: type, db)
        let instant = Date(timeIntervalSince1970: Double(now) / 1000)
        for user in users {
            guard let setting = settings[user], let end = setting.quietHours?.nextEnd(after: instant, timeZone: setting.timeZone) else { continue }
            try await digests.add(db, userID: user, alertID: alertID, fingerprint: fingerprint, dueAt: end.epochMilliseconds, now: now)
        }
    }

    /// Sends every digest due now; returns how many users got one.
    @discardableResult
    public func sendDue() async throws -> Int {
        let now = nowMs
        let users = try await transit.database.withConnection { [digests] db in try await digests.dueUsers(db, now: now, limit: 200) }
        var sent = 0
        for user in users where try await send(userID: user, now: now) { sent += 1 }
        return sent
    }

    /// One user's digest. Taking the entries (a delete that returns them) and writing the
    /// notification share one transaction: of several nodes, the one whose delete returned
    /// the rows sends it, once.
    func send(userID: String, now: Int64) async throws -> Bool {
        let sent = try await transit.database.unitOfWork { [digests, versions, notifications, policy] work -> Bool in
            let db = work.db
            let entries = try await digests.take(db, userID: userID, now: now)
            var alerts: [ServiceAlert] = []
            for entry in entries {
                guard let version = try await versions.find(db, alertID: entry.alertID, fingerprint: entry.fingerprint),
                    let json = try? JSONDecoder().decode(JSONValue.self, from: Data(version.alert.utf8)), let alert = ServiceAlert(json: json),
                    alert.isInForce(at: now / 1000)
                else { continue }
                alerts.append(alert)
            }
            guard !alerts.isEmpty else { return false }
            let prepared = try await notifications.prepare(policy.digest(alerts.sorted { $0.id < $1.id }, userID: userID), in: db)
            try await notifications.write(prepared, in: work)
            return true
        }
        guard sent else { return false }
        transit.statistics.alertDigestSent()
        return true
    }
}
