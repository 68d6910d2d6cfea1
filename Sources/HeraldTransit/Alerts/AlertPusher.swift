import Foundation
import HeraldCore
import HeraldGTFS
import HeraldNotifications
import HeraldStorage
import Logging
import ServiceLifecycle
import Synchronization

/// Service alerts matched to the users whose favourites they touch, and pushed once per user
/// per alert version (the transit design's alert pushes, without Celery or Redis).
///
/// Every node runs the same loop: it records a version row for each alert in force (or
/// coming into force) that the database does not know yet, then claims due versions with a
/// conditional update and a lease, so each version is processed by one node. Processing
/// reads the favourites at the stops the alert reaches (the `transit_favorites (stop_id)`
/// index is the reverse index, current the moment a favourite changes, on every node),
/// leaves out users whose touched favourites are all muted, and writes the notifications
/// through the notification outbox in batches; each batch's transaction also writes a
/// (alert, version, user) row whose key makes every user's push happen once, so a node that
/// dies mid-way is resumed by another after its lease, without a second push to anyone.
public final class AlertPusher: Sendable {
    public let transit: TransitService
    public let notifications: NotificationService
    let config: TransitConfig.AlertsConfig
    let policy: AlertPushPolicy
    let nodeID: String
    let logger: Logger
    /// Intake (a realtime message, a posted alert) wakes the loop at once.
    public let wake = WakeSignal()
    let versions = AlertVersionStore()
    let pushes = AlertPushStore()
    let matcher: AlertMatcher
    /// The morning digest: the batches add to it what quiet hours held back.
    public let digest: AlertDigest
    /// Versions this node knows are recorded (so a loop does not write them again).
    private let recorded = Mutex<Set<String>>([])

    public init(transit: TransitService, notifications: NotificationService, nodeID: String, logger: Logger) {
        self.transit = transit
        self.notifications = notifications
        self.config = transit.config.alerts
        let policy = AlertPushPolicy(deepLink: transit.config.alerts.deepLink, localized: transit.config.alerts.localized)
        self.policy = policy
        self.nodeID = nodeID
        self.logger = logger
        self.matcher = AlertMatcher(transit: transit)
        self.digest = AlertDigest(transit: transit, notifications: notifications, policy: policy, logger: logger)
        transit.alertIntake.onIntake { [wake] in wake.signal() }
    }

    var nowMs: Int64 { transit.clock.now().epochMilliseconds }
    var statistics: TransitStatistics { transit.statistics }

    // MARK: Loop

    /// Records new versions and processes the due ones, every `interval_seconds` and at once
    /// after intake on this node.
    public func loop(ready: @escaping @Sendable () async -> Bool) -> any Service {
        DuePoller("transit alert pushes", interval: .seconds(config.intervalSeconds), wake: wake, logger: logger, ready: ready) { [self] in
            guard transit.loader.isStarted else { return }
            try await recordVersions()
            try await processDue()
        }
    }

    /// Every alert in force or still to come, from the feeds this node serves and from
    /// backends, as a version row (an unchanged alert is the row it already has).
    @discardableResult
    public func recordVersions() async throws -> Int {
        let now = nowMs
        var alerts: [ServiceAlert] = []
        for feed in transit.snapshot.feeds {
            alerts += feed.overlay.alerts.map { ServiceAlert(realtime: $0, feed: feed.name) }
        }
        alerts += try await transit.alerts.posted(now: now).map(ServiceAlert.init(posted:))
        var added = 0
        for alert in alerts where !alert.hasEnded(at: now / 1000) {
            let fingerprint = alert.fingerprint
            let key = alert.id + "\u{0}" + fingerprint
            if recorded.withLock({ $0.contains(key) }) { continue }
            let due = alert.nextStart(after: now / 1000).map { $0 * 1000 } ?? now
            var writer = JSONWriter()
            writer.write(alert.json)
            let record = AlertVersionRecord(alertID: alert.id, fingerprint: fingerprint, alert: writer.string, status: .pending, dueAt: due, createdAt: now)
            let isNew = try await transit.database.withConnection { [versions] db in try await versions.insert(db, record) }
            if isNew {
                added += 1
                statistics.alertVersionSeen()
            }
            recorded.withLock { set in
                if set.count > 100_000 { set.removeAll() }
                set.insert(key)
            }
        }
        return added
    }

    /// Claims and processes versions until none is due.
    public func processDue() async throws {
        while true {
            let now = nowMs
            let candidates = try await transit.database.withConnection { [versions] db in try await versions.claimable(db, now: now, limit: 20) }
            if candidates.isEmpty { return }
            var claimedAny = false
            for candidate in candidates {
                let leaseUntil = nowMs + Int64(config.leaseSeconds) * 1000
                guard
                    let version = try await transit.database.withConnection({ [versions, nodeID] db in
                        try await versions.claim(
                            db, alertID: candidate.alertID, fingerprint: candidate.fingerprint, node: nodeID, now: now, leaseUntil: leaseUntil)
                    })
                else { continue }
                claimedAny = true
                // One trace per alert version (no request started it): its notifications'
                // deliveries continue this span, so an alert to 20,000 riders is one trace,
                // not 20,000 (docs/tracing.md).
                try await HeraldTracing.withSpan(
                    "transit alert", continuing: nil, ofKind: .internal,
                    attributes: ["herald.alert.id": version.alertID, "herald.alert.fingerprint": version.fingerprint]
                ) { span in
                    let outcome = try await process(version)
                    span?.set("herald.alert.status", outcome?.status.rawValue)
                    span?.set("herald.alert.matched", outcome?.matched ?? 0)
                    span?.set("herald.alert.queued", outcome?.queued ?? 0)
                }
            }
            if !claimedAny { return }
        }
    }

    // MARK: One version

    /// What processing one version did.
    public struct Outcome: Sendable, Equatable {
        public var status: AlertVersionStatus
        public var matched: Int
        public var queued: Int
    }

    @discardableResult
    func process(_ version: AlertVersionRecord) async throws -> Outcome? {
        let db = transit.database
        let now = nowMs
        func finish(_ status: AlertVersionStatus, matched: Int? = nil, queued: Int? = nil) async throws -> Outcome {
            try await db.withConnection { [versions, nodeID] db in
                try await versions.finish(
                    db, alertID: version.alertID, fingerprint: version.fingerprint, node: nodeID, status: status, matched: matched, queued: queued, now: now)
            }
            return Outcome(status: status, matched: matched ?? 0, queued: queued ?? 0)
        }
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(version.alert.utf8)), let alert = ServiceAlert(json: json) else {
            logger.error("a stored alert version does not decode", metadata: ["alert_id": "\(version.alertID)"])
            return try await finish(.ended)
        }
        if alert.hasEnded(at: now / 1000) { return try await finish(.ended) }
        if let start = alert.nextStart(after: now / 1000) {
            try await db.withConnection { [versions, nodeID] db in
                try await versions.postpone(db, alertID: version.alertID, fingerprint: version.fingerprint, node: nodeID, dueAt: start * 1000)
            }
            return nil
        }
        let newer = try await db.withConnection { [versions] db in
            try await versions.hasNewer(db, alertID: version.alertID, fingerprint: version.fingerprint, createdAt: version.createdAt)
        }
        if newer { return try await finish(.superseded) }

        let started = ContinuousClock.now
        let target = try await matcher.audience(alert, now: now)
        statistics.alertMatched(users: target.users.count, duration: ContinuousClock.now - started)
        var queued = 0
        let users = target.users.keys.sorted()
        // A batch is one send: it may not name more users than the notification service takes.
        // Up to `batches_in_flight` are written at once; each renews the lease first, and a
        // lease lost stops the rest (what was written stays: its once-only rows keep the node
        // that took over from sending it again).
        let batches = users.chunked(max(1, min(config.batchSize, notifications.maxRecipients))).map(Array.init)
        let inFlight = max(1, config.batchesInFlight)
        let lostLease = try await withThrowingTaskGroup(of: Int?.self) { group -> Bool in
            var lost = false
            for (index, batch) in batches.enumerated() {
                if index >= inFlight, let done = try await group.next() {
                    guard let count = done else {
                        lost = true
                        break
                    }
                    queued += count
                }
                group.addTask {
                    guard try await self.renewLease(version) else { return nil }
                    return try await self.send(alert, version: version, users: batch, target: target, now: now)
                }
            }
            for try await done in group {
                if let count = done { queued += count } else { lost = true }
            }
            return lost
        }
        if lostLease {
            logger.warning("another node took over an alert version", metadata: ["alert_id": "\(version.alertID)"])
            return nil
        }
        statistics.alertPushesQueued(queued)
        return try await finish(.done, matched: target.users.count, queued: queued)
    }

    func renewLease(_ version: AlertVersionRecord) async throws -> Bool {
        let leaseUntil = nowMs + Int64(config.leaseSeconds) * 1000
        return try await transit.database.withConnection { [versions, nodeID] db in
            try await versions.renew(db, alertID: version.alertID, fingerprint: version.fingerprint, node: nodeID, leaseUntil: leaseUntil)
        }
    }

    /// One batch: the users it has not reached yet, split by the cooldown into those whose
    /// phone sounds and those whose shown notification is replaced quietly.
    func send(_ alert: ServiceAlert, version: AlertVersionRecord, users: [String], target: AlertMatcher.Target, now: Int64) async throws -> Int {
        let db = transit.database
        let already = try await db.withConnection { [pushes] db in
            try await pushes.alreadySent(db, alertID: version.alertID, fingerprint: version.fingerprint, userIDs: users)
        }
        let remaining = users.filter { !already.contains($0) }
        guard !remaining.isEmpty else { return 0 }
        var loud = remaining
        var quiet: [String] = []
        if config.cooldownSeconds > 0 {
            let cooldown = AlertCooldown(seconds: config.cooldownSeconds)
            let since = now - Int64(cooldown.seconds) * 1000
            let earlier = try await db.withConnection { [pushes] db in
                try await pushes.sounded(db, alertID: version.alertID, userIDs: remaining, since: since)
            }
            loud = []
            for user in remaining {
                if cooldown.sounds(alert.severity, after: earlier[user] ?? [], now: now) { loud.append(user) } else { quiet.append(user) }
            }
        }
        var written = 0
        if !loud.isEmpty { written += try await write(alert, version: version, users: loud, target: target, sounds: true, now: now) }
        if !quiet.isEmpty { written += try await write(alert, version: version, users: quiet, target: target, sounds: false, now: now) }
        return written
    }

    /// The notifications and the once-only rows commit together.
    func write(_ alert: ServiceAlert, version: AlertVersionRecord, users: [String], target: AlertMatcher.Target, sounds: Bool, now: Int64) async throws -> Int {
        let db = transit.database
        let draft = policy.draft(
            alert, users: users, line: target.line, routeID: target.routeID, stopIDs: target.stopIDs, delayMinutes: target.delayMinutes, sounds: sounds)
        let prepared = try await notifications.prepare(draft)
        let ids = prepared.notificationIDs
        let digesting = config.quietHours == .digest
        let written = try await db.unitOfWork { [pushes, digest, notifications] work -> NotificationService.WrittenSend in
            let db = work.db
            let fresh = try await pushes.record(
                db, alertID: version.alertID, fingerprint: version.fingerprint,
                notifications: users.compactMap { user in ids[user].map { (user, $0) } }, sounded: sounds, severity: alert.severity, now: now)
            let written = try await notifications.write(prepared.restricted(to: fresh), in: work)
            if sounds {
                // Held by quiet hours or the user's settings, the push never played: the next
                // version inside the cooldown may still sound.
                let unheard = written.channels.filter { $0.value == .inbox }.map(\.key)
                if !unheard.isEmpty {
                    try await pushes.markQuiet(db, alertID: version.alertID, fingerprint: version.fingerprint, userIDs: unheard)
                }
            }
            if digesting, !written.heldByQuietHours.isEmpty {
                try await digest.hold(
                    written.heldByQuietHours, type: draft.type, alertID: version.alertID, fingerprint: version.fingerprint, now: now, in: work)
            }
            return written
        }
        return written.notificationIDs.count
    }
}
