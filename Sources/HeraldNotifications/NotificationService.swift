import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// Sends notifications: persists them with their planned deliveries in one transaction (the
/// outbox), then delivers over the realtime gateway or leaves them to the push worker.
///
/// Routing (seed 004's "opportunistic fallforward", plus an ack): a `push` notification for
/// a user who is online goes to their sockets and waits for the app's ack; without one in
/// `ack_timeout_ms` (the app was backgrounded with its socket still open) the fallback
/// sweeper turns it into pushes. An offline user gets one push per active device. `in_app`
/// never pushes. Because the plan is written before anything is sent, a crash at any point
/// leaves rows that the worker or the sweeper finish after restart.
public final class NotificationService: Sendable {
    public let database: any Database
    public let catalog: NotificationTypeCatalog
    let hub: RealtimeHub
    let presence: PresenceService
    let config: NotificationsConfig
    let clock: any HeraldClock
    let logger: Logger
    /// Called after push deliveries were written (wakes the push worker).
    let pushQueued: @Sendable () -> Void
    /// Acks arriving together are written in one transaction: each was a commit of its own,
    /// a third of PostgreSQL's commits per notification (BENCHMARKS.md, issue 24 part 2).
    private let acks: GroupCommit<String, Void>

    public init(
        database: any Database, hub: RealtimeHub, presence: PresenceService, config: NotificationsConfig, clock: any HeraldClock,
        logger: Logger, pushQueued: @escaping @Sendable () -> Void
    ) {
        self.database = database
        self.hub = hub
        self.presence = presence
        self.config = config
        self.catalog = NotificationTypeCatalog(config: config)
        self.clock = clock
        self.logger = logger
        self.pushQueued = pushQueued
        acks = GroupCommit(maxBatch: 200) { [database, clock] deliveryIDs in
            let now = clock.now().epochMilliseconds
            try await database.transaction { db in
                let moved = try await DeliveryStore().acknowledge(db, ids: deliveryIDs, now: now)
                if !moved.isEmpty { try await NotificationStore().setSentVia(db, ids: moved, channel: "socket") }
            }
            return deliveryIDs.map { _ in () }
        }
        hub.onAcknowledge { [weak self] token in
            guard token.hasPrefix("dlv_") else { return }
            await self?.acknowledged(deliveryID: token)
        }
    }

    public static func userRoom(_ userID: String) -> String { "user:\(userID)" }

    /// The most recipients one send may name (`notifications.max_recipients`).
    public var maxRecipients: Int { config.maxRecipients }

    // MARK: Sending

    /// Validates the draft and sends it to each of its users (duplicates in the list once).
    ///
    /// Every recipient's notification and planned deliveries are written in ONE transaction:
    /// a crash leaves all of them or none (a retry with the same Idempotency-Key then runs
    /// the whole request again, never half of it), and PostgreSQL commits once, not once per
    /// user. Live delivery starts after the commit. Domain modules that must commit their own
    /// rows with the notifications use `prepare` and `write(_:in:)` in their `unitOfWork`.
    ///
    /// The outcomes are handed to `TransactionAnswer.record` inside the transaction, so a
    /// caller can commit its answer (an idempotent request's response) with the notifications.
    public func send(_ draft: NotificationDraft) async throws -> [SendOutcome] {
        let prepared = try await prepare(draft)
        let written = try await database.unitOfWork { work in
            let written = try await self.write(prepared, in: work)
            try await TransactionAnswer.record(written.outcomes, in: work.db)
            return written
        }
        return written.outcomes
    }

    /// A validated draft with each recipient's routing decided (preferences and presence are
    /// read here, outside any transaction). Write it with `write(_:_:)`.
    public struct PreparedSend: Sendable {
        let plans: [Plan]
        let pushUsers: [String]
        /// The recipients, without duplicates, in the draft's order.
        public var userIDs: [String] { plans.map(\.record.userID) }

        /// The notification id each recipient will get once written.
        public var notificationIDs: [String: String] {
            Dictionary(plans.map { ($0.record.userID, $0.record.id) }, uniquingKeysWith: { first, _ in first })
        }

        /// The same send to only `users`: for a domain module that learns inside its
        /// transaction that the others were served already (an alert version's earlier batch).
        public func restricted(to users: Set<String>) -> PreparedSend {
            PreparedSend(plans: plans.filter { users.contains($0.record.userID) }, pushUsers: pushUsers.filter(users.contains))
        }
    }

    /// What `write(_:_:)` stored; hand it to `deliver(_:)` once the transaction committed.
    public struct WrittenSend: Sendable {
        let plans: [Plan]
        let written: [String: Written]

        /// How each recipient is reached: `socket`, `push`, `inbox` or `deduplicated`.
        public var channels: [String: String] {
            written.mapValues { written in
                switch written {
                case .duplicate: "deduplicated"
                case .created(_, let socket, let pushes): socket != nil ? "socket" : (pushes > 0 ? "push" : "inbox")
                }
            }
        }

        /// What each recipient got, in the draft's order: the same before and after delivery.
        public var outcomes: [SendOutcome] {
            plans.compactMap { plan in
                switch written[plan.record.userID] {
                case nil: nil
                case .duplicate(let existing):
                    SendOutcome(notification: existing, deduplicated: true, channel: "deduplicated", pushDeliveries: 0, pushSuppressed: nil)
                case .created(let record, let socket, let pushes):
                    SendOutcome(
                        notification: record, deduplicated: false, channel: socket != nil ? "socket" : (pushes > 0 ? "push" : "inbox"),
                        pushDeliveries: pushes, pushSuppressed: plan.pushSuppressed)
                }
            }
        }

        /// Recipients whose push quiet hours held back (the notification is in their inbox).
        public var heldByQuietHours: [String] {
            plans.filter { $0.pushSuppressed == "quiet_hours" && written[$0.record.userID] != nil }.map(\.record.userID)
        }

        /// The notification each recipient got (or the earlier one a dedupe key matched).
        public var notificationIDs: [String: String] {
            written.mapValues { written in
                switch written {
                case .duplicate(let record), .created(let record, _, _): record.id
                }
            }
        }
    }

    /// Validates `draft` and routes it for each recipient (duplicates in the list once).
    public func prepare(_ draft: NotificationDraft) async throws -> PreparedSend {
        try await prepare(draft, nil)
    }

    /// The same, reading preferences and presence through `db`: for a caller that routes
    /// only once its own conditional update inside a transaction has succeeded (a claim's
    /// winner), so the losers of a race do no routing work at all.
    public func prepare(_ draft: NotificationDraft, in db: any SQLDatabase) async throws -> PreparedSend {
        try await prepare(draft, .some(db))
    }

    private func prepare(_ draft: NotificationDraft, _ db: (any SQLDatabase)?) async throws -> PreparedSend {
        try draft.validate(catalog: catalog, maxRecipients: config.maxRecipients)
        guard let type = catalog[draft.type] else { throw APIError.validation([FieldError(field: "type", message: "is unknown")]) }
        var seen = Set<String>()
        let users = draft.userIDs.filter { seen.insert($0).inserted }
        let now = clock.now()
        // Preferences and presence for every recipient in a few queries, not a few per user.
        let settings = if let db { try await settings(for: users, type: type.name, db) } else { try await settings(for: users, type: type.name) }
        let online: Set<String>
        do {
            online = try await presence.onlineUsers(users, db)
        } catch {
            // Without presence, push is the side that still reaches the user.
            logger.warning("presence lookup failed; routing as offline", metadata: ["error": "\(String(reflecting: error))"])
            online = []
        }
        let plans = users.map { user in
            plan(draft, type: type, to: user, settings: settings[user] ?? Self.defaultSettings, online: online.contains(user), at: now)
        }
        return PreparedSend(plans: plans, pushUsers: plans.filter(\.pushNow).map(\.record.userID))
    }

    /// Writes every recipient's notification and planned deliveries inside the caller's
    /// transaction, so a domain change (a job offered, a driver assigned) and the
    /// notifications about it commit together or not at all.
    ///
    /// Rows are written in user order, so concurrent sends lock dedupe rows in the same
    /// order and cannot deadlock.
    func write(_ prepared: PreparedSend, _ db: any SQLDatabase) async throws -> WrittenSend {
        let ordered = prepared.plans.sorted { $0.record.userID < $1.record.userID }
        let devices = prepared.pushUsers.isEmpty ? [:] : try await DeviceStore().activeDevices(db, userIDs: prepared.pushUsers)
        var written: [String: Written] = [:]
        // Recipients without a dedupe key need no decision per row: their notifications and
        // deliveries go in a few multi-row statements (a send to thousands costs a handful of
        // round trips, not three per user).
        var notifications: [NotificationRecord] = []
        var deliveries: [DeliveryRecord] = []
        for plan in ordered {
            let userDevices = devices[plan.record.userID] ?? []
            guard plan.record.dedupeKey == nil else {
                written[plan.record.userID] = try await Self.write(plan, devices: userDevices, db)
                continue
            }
            let (socket, pushes) = Self.deliveries(plan, devices: userDevices)
            notifications.append(plan.record)
            deliveries += (socket.map { [$0] } ?? []) + pushes
            written[plan.record.userID] = .created(plan.record, socket: socket, pushes: pushes.count)
        }
        try await db.insertRows(NotificationStore.bulkRows(notifications))
        try await db.insertRows(DeliveryStore.bulkRows(deliveries))
        return WrittenSend(plans: prepared.plans, written: written)
    }

    /// Writes the notifications in `work`'s transaction and delivers them after its commit.
    @discardableResult
    public func write(_ prepared: PreparedSend, in work: UnitOfWork) async throws -> WrittenSend {
        let written = try await write(prepared, work.db)
        work.afterCommit { await self.deliver(written) }
        return written
    }

    /// After the commit: publishes to the recipients' sockets and wakes the push worker.
    func deliver(_ sent: WrittenSend) async {
        var queuedPushes = false
        for plan in sent.plans {
            guard case .created(let record, let socket, let pushes) = sent.written[plan.record.userID] else { continue }
            if let socket { await publishLive(record, delivery: socket) }
            if pushes > 0 { queuedPushes = true }
        }
        if queuedPushes { pushQueued() }
    }

    enum Written: Sendable {
        case created(NotificationRecord, socket: DeliveryRecord?, pushes: Int)
        case duplicate(NotificationRecord)
    }

    /// What to write for one recipient, decided before the transaction (preferences and
    /// presence are read outside it).
    struct Plan: Sendable {
        var record: NotificationRecord
        var socketStatus: DeliveryStatus?
        var pushNow: Bool
        var pushSuppressed: String?
        var ackDeadline: Int64
        var cooldownStart: Int64
    }

    static let defaultSettings = UserNotificationSettings(timeZone: .gmt)

    func plan(
        _ draft: NotificationDraft, type: NotificationType, to userID: String, settings: UserNotificationSettings, online: Bool,
        at now: Date
    ) -> Plan {
        let nowMs = now.epochMilliseconds
        let severity = draft.severity ?? type.severity
        let delivery = draft.delivery ?? type.delivery
        let decision = DeliveryPolicy.decide(
            type: type, severity: severity, delivery: delivery, settings: settings, at: now, interruptionLevel: draft.interruptionLevel)
        // An online user's socket gets it first and the push waits for the ack, unless the
        // type pushes while online (then both go now).
        let pushAlongside = decision.push && type.pushWhileOnline
        let socketStatus: DeliveryStatus? =
            draft.silent ? nil
            : decision.push && !pushAlongside
            ? (online && decision.inApp ? .awaitingAck : nil) : (decision.inApp && online ? .published : nil)
        let record = NotificationRecord(
            id: Identifier.make("ntf"), userID: userID, type: type.name, severity: severity.rawValue, delivery: delivery.rawValue,
            title: draft.title, body: draft.body, data: SocketPacketEncoder.json(.object(draft.data)),
            category: draft.category ?? type.category, threadID: draft.threadID, collapseKey: draft.collapseKey,
            dedupeKey: draft.dedupeKey, interruptionLevel: decision.interruptionLevel,
            expiresAt: draft.ttlSeconds.map { nowMs + Int64($0) * 1000 }, createdAt: nowMs,
            sentVia: socketStatus == .published ? "socket" : nil, pushSuppressed: decision.pushSuppressed, silent: draft.silent)
        return Plan(
            record: record, socketStatus: socketStatus, pushNow: decision.push && (socketStatus == nil || pushAlongside),
            pushSuppressed: decision.pushSuppressed, ackDeadline: nowMs + Int64(config.ackTimeoutMs),
            cooldownStart: nowMs - Int64(type.dedupeCooldownSeconds) * 1000)
    }

    /// Writes one recipient's notification and deliveries (inside the caller's transaction).
    static func write(_ plan: Plan, devices: [DeviceRecord], _ db: any SQLDatabase) async throws -> Written {
        let record = plan.record
        let store = NotificationStore()
        if let key = record.dedupeKey,
            let existingID = try await store.claimDedupe(
                db, userID: record.userID, key: key, notificationID: record.id, now: record.createdAt, heldSince: plan.cooldownStart),
            let existing = try await store.find(db, id: existingID, userID: nil)
        {
            return .duplicate(existing)
        }
        try await store.insert(db, record)
        let (socket, pushes) = deliveries(plan, devices: devices)
        try await db.insertRows(DeliveryStore.bulkRows((socket.map { [$0] } ?? []) + pushes))
        return .created(record, socket: socket, pushes: pushes.count)
    }

    /// The deliveries a plan writes: the socket one (when the user is online) and one push
    /// per active device when it pushes now.
    static func deliveries(_ plan: Plan, devices: [DeviceRecord]) -> (socket: DeliveryRecord?, pushes: [DeliveryRecord]) {
        let record = plan.record
        let nowMs = record.createdAt
        let socket = plan.socketStatus.map { status in
            DeliveryRecord(
                id: Identifier.make("dlv"), notificationID: record.id, userID: record.userID, channel: .socket, status: status,
                nextAttemptAt: status == .awaitingAck ? plan.ackDeadline : nowMs, createdAt: nowMs, updatedAt: nowMs,
                completedAt: status == .published ? nowMs : nil)
        }
        guard plan.pushNow else { return (socket, []) }
        return (socket, pushDeliveries(notificationID: record.id, userID: record.userID, devices: devices, now: nowMs))
    }

    /// One pending push delivery per active device of the user; returns how many.
    static func planPushes(_ db: any SQLDatabase, notificationID: String, userID: String, now: Int64) async throws -> Int {
        let devices = try await DeviceStore().devices(db, userID: userID, activeOnly: true)
        try await insertPushes(db, notificationID: notificationID, userID: userID, devices: devices, now: now)
        return devices.count
    }

    /// One pending push delivery for each of `devices`, due now.
    static func insertPushes(_ db: any SQLDatabase, notificationID: String, userID: String, devices: [DeviceRecord], now: Int64) async throws {
        try await db.insertRows(DeliveryStore.bulkRows(pushDeliveries(notificationID: notificationID, userID: userID, devices: devices, now: now)))
    }

    static func pushDeliveries(notificationID: String, userID: String, devices: [DeviceRecord], now: Int64) -> [DeliveryRecord] {
        devices.map { device in
            DeliveryRecord(
                id: Identifier.make("dlv"), notificationID: notificationID, userID: userID, channel: .push, deviceID: device.id,
                provider: device.provider, status: .pending, nextAttemptAt: now, createdAt: now, updatedAt: now)
        }
    }

    /// Sends `notification` to the user's sockets; when the delivery waits for an ack, the
    /// delivery id is the ack token. A failure here is not fatal: the sweeper falls back.
    func publishLive(_ record: NotificationRecord, delivery: DeliveryRecord) async {
        do {
            let unread = try await database.withConnection { db in try await NotificationStore().unreadCount(db, userID: record.userID) }
            guard case .object(var payload) = NotificationJSON.object(record) else { return }
            payload["unread_count"] = .number(Double(unread))
            try await hub.publish(
                "notification", payload: .object(payload), to: Self.userRoom(record.userID),
                ackToken: delivery.status == .awaitingAck ? delivery.id : nil)
        } catch {
            logger.error("publishing a notification failed", metadata: ["notification_id": "\(record.id)", "error": "\(String(reflecting: error))"])
        }
    }

    /// The app acknowledged the socket delivery: it was shown in the app, no push needed.
    func acknowledged(deliveryID: String) async {
        do {
            try await acks.submit(deliveryID)
        } catch {
            logger.error("recording an ack failed", metadata: ["delivery_id": "\(deliveryID)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Turns socket deliveries whose ack did not come in time into pushes; returns how many.
    /// Several nodes may run this at once: the conditional update lets one of them win each.
    @discardableResult
    public func fallBackOverdueAcks(limit: Int = 200) async throws -> Int {
        let now = clock.now().epochMilliseconds
        let overdue = try await database.withConnection { db in try await DeliveryStore().overdueAcks(db, now: now, limit: limit) }
        var planned = 0
        for delivery in overdue {
            planned += try await database.transaction { db -> Int in
                guard try await DeliveryStore().markUnacknowledged(db, id: delivery.id, now: now) else { return 0 }
                return try await Self.planPushes(db, notificationID: delivery.notificationID, userID: delivery.userID, now: now)
            }
        }
        if planned > 0 { pushQueued() }
        return planned
    }

    // MARK: Settings

    /// The user's settings with defaults filled in (UTC and no quiet hours for a user Herald
    /// has not seen yet).
    /// Many users' settings for one type, in a few queries (users Herald has not seen get the
    /// defaults: UTC, no quiet hours).
    public func settings(for userIDs: [String], type: String) async throws -> [String: UserNotificationSettings] {
        try await database.withConnection { db in try await self.settings(for: userIDs, type: type, db) }
    }

    /// The same, read through `db` (inside a caller's transaction).
    public func settings(for userIDs: [String], type: String, _ db: any SQLDatabase) async throws -> [String: UserNotificationSettings] {
        do {
            let zones = try await UserDirectory.timeZones(db, ids: userIDs)
            let stored = try await NotificationPreferenceStore().settings(db, userIDs: userIDs)
            let choices = try await NotificationPreferenceStore().typePreferences(db, userIDs: userIDs, type: type)
            var result: [String: UserNotificationSettings] = [:]
            for user in userIDs {
                var settings = Self.settings(timeZone: zones[user], stored: stored[user])
                if let choice = choices[user] {
                    settings.types[type] = (inApp: choice.inAppEnabled, push: choice.pushEnabled)
                    if let start = choice.quietStart.flatMap(LocalTime.init(parsing:)), let end = choice.quietEnd.flatMap(LocalTime.init(parsing:)) {
                        settings.typeQuietHours[type] = QuietHours(start: start, end: end)
                    }
                }
                result[user] = settings
            }
            return result
        }
    }

    static func settings(timeZone: String?, stored: NotificationSettingsRecord?) -> UserNotificationSettings {
        var settings = UserNotificationSettings(timeZone: TimeZone(identifier: timeZone ?? "UTC") ?? .gmt)
        if let stored {
            if stored.quietHoursEnabled, let start = stored.quietStart.flatMap(LocalTime.init(parsing:)),
                let end = stored.quietEnd.flatMap(LocalTime.init(parsing:))
            {
                settings.quietHours = QuietHours(start: start, end: end)
            }
            settings.severityFloor = Severity(rawValue: stored.severityFloor) ?? .info
            settings.timeSensitiveAllowed = stored.timeSensitiveAllowed
        }
        return settings
    }
}
