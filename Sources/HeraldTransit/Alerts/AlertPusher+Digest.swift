import Foundation
import HeraldCore
import HeraldNotifications
import HeraldStorage
import ServiceLifecycle

/// The morning digest (`transit.alerts.quiet_hours: digest`): alerts quiet hours held back
/// from a user are summed up in one push when the quiet hours end, if they are still in force.
extension AlertPusher {
    /// Sends due digests every 30 seconds; nil when quiet-hour pushes are dropped.
    public func digestLoop(ready: @escaping @Sendable () async -> Bool) -> (any Service)? {
        guard config.quietHours == .digest else { return nil }
        return DuePoller("transit alert digests", interval: .seconds(30), wake: WakeSignal(), logger: logger, ready: ready) { [self] in
            try await sendDueDigests()
        }
    }

    /// Sends every digest due now; returns how many users got one.
    @discardableResult
    public func sendDueDigests() async throws -> Int {
        let now = nowMs
        let users = try await transit.database.withConnection { [digests] db in try await digests.dueUsers(db, now: now, limit: 200) }
        var sent = 0
        for user in users where try await sendDigest(userID: user, now: now) { sent += 1 }
        return sent
    }

    /// One user's digest. Taking the entries (a delete that returns them) and writing the
    /// notification share one transaction: of several nodes, the one whose delete returned
    /// the rows sends it, once.
    func sendDigest(userID: String, now: Int64) async throws -> Bool {
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
        statistics.alertDigestSent()
        return true
    }
}
