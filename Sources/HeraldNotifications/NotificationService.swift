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
/// Routing (the notification design's "opportunistic fallforward", plus an ack): a `push` notification for
/// a user who is online goes to their sockets and waits for the app's ack; without one in
/// `ack_timeout_ms` (the app was backgrounded with its socket still open) the fallback
/// sweeper turns it into pushes. An offline user gets one push per active device. `in_app`
/// never pushes. Because the plan is written before anything is sent, a crash at any point
/// leaves rows that the worker or the sweeper finish after restart.
public final class NotificationService: Sendable {
    public let database: any Database
    public let catalog: NotificationTypeCatalog
    /// The zone of users who never sent theirs.
    public let timeZones: DefaultTimeZone
    let hub: RealtimeHub
    let presence: PresenceService
    let config: NotificationsConfig
    let clock: any HeraldClock
    let logger: Logger
    /// Called after push deliveries were written for the database path (wakes the push worker).
    let pushQueued: @Sendable () -> Void
    /// This node's delivery worker's in-memory queue: pushes written here already claimed are
    /// sent from it (nil: the worker does not run here, every push goes through the database).
    let handoff: PushHandoff?
    /// Concurrent sends written in one transaction (see `send`).
    private let sends: GroupCommit<GroupedSend, Result<WrittenSend, any Error>>
    /// Acks arriving together are written in one transaction: each was a commit of its own,
    /// a third of PostgreSQL's commits per notification (BENCHMARKS.md, issue 24 part 2).
    private let acks: GroupCommit<String, Void>

    public init(
        database: any Database, hub: RealtimeHub, presence: PresenceService, config: NotificationsConfig, clock: any HeraldClock,
        logger: Logger, handoff: PushHandoff? = nil, pushQueued: @escaping @Sendable () -> Void
    ) {
        self.database = database
        self.hub = hub
        self.presence = presence
        self.config = config
        self.catalog = NotificationTypeCatalog(config: config)
        self.timeZones = DefaultTimeZone(configured: config.defaultTimeZone)
        self.clock = clock
        self.logger = logger
        self.pushQueued = pushQueued
        self.handoff = handoff
        let this = WeakReference<NotificationService>()
        sends = GroupCommit(maxBatch: config.sendsPerTransaction) { members in
            guard let service = this.value else { return members.map { _ in .failure(CancellationError()) } }
            // In a task of its own, awaited at once: the request writing the group may be
            // cancelled (its client went away), which must not fail the others' sends. (The
            // task inherits the writer's task-local idempotency recorder; nothing in the write
            // reads it: each member's recorder is called explicitly. Clearing it with
            // `withValue(nil)` here crashed release builds in `swift_task_localValuePush`.)
            return await Task { await service.writeGrouped(members) }.value
        }
        acks = GroupCommit(maxBatch: 200) { [database, clock] deliveryIDs in
            let now = clock.now().epochMilliseconds
            try await database.transaction { db in
                let moved = try await DeliveryStore().acknowledge(db, ids: deliveryIDs, now: now)
                if !moved.isEmpty { try await NotificationStore().setSentVia(db, ids: moved, channel: "socket") }
            }
            return deliveryIDs.map { _ in () }
        }
        this.value = self
        hub.onAcknowledge { [weak self] token in
            guard token.hasPrefix("dlv_") else { return }
            await self?.acknowledged(deliveryID: token)
        }
    }

    /// The most recipients one send may name (`notifications.max_recipients`).
    public var maxRecipients: Int { config.maxRecipients }

    // MARK: Sending

    /// Validates the draft and sends it to each of its users (duplicates in the list once).
    ///
    /// Every recipient's notification and planned deliveries are written in ONE transaction:
    /// a crash leaves all of them or none (a retry with the same Idempotency-Key then runs
    /// the whole request again, never half of it). Live delivery starts after the commit.
    /// Domain modules that must commit their own rows with the notifications use `prepare`
    /// and `write(_:in:)` in their `unitOfWork`.
    ///
    /// Sends that arrive while another is being written share the next transaction (a group
    /// commit): their routing is read and their rows written with one set of statements and
    /// one commit, which was one of each per request (BENCHMARKS.md, issue 37). Each send's
    /// answer is still recorded with its own rows (`TransactionAnswer`), and a send that
    /// makes the shared transaction fail is written again alone, so it fails (or not) on its
    /// own and never takes the others with it.
    public func send(_ draft: NotificationDraft) async throws -> [SendOutcome] {
        // Checked before joining a group: a bad draft is answered without touching the others.
        try draft.validate(catalog: catalog, maxRecipients: config.maxRecipients)
        let written = try await sends.submit(GroupedSend(draft: draft, recorder: TransactionAnswer.recorder)).get()
        await deliver(written)
        return written.outcomes
    }

    /// One send waiting for its group's transaction, with the idempotency recorder of its
    /// request (a task-local of the caller's task, which the writing task does not see).
    struct GroupedSend: Sendable {
        var draft: NotificationDraft
        var recorder: TransactionAnswer.Recorder?
    }

    /// Writes `members` in one transaction; when it fails, each member alone.
    private func writeGrouped(_ members: [GroupedSend]) async -> [Result<WrittenSend, any Error>] {
        do {
            let written = try await database.transaction { db in try await self.writeTogether(members, db) }
            return written.map { .success($0) }
        } catch  where members.count > 1 {
            logger.debug("a grouped send failed; writing its sends one by one", metadata: ["sends": "\(members.count)", "error": "\(error)"])
            var results: [Result<WrittenSend, any Error>] = []
            for member in members {
                do {
                    results.append(.success(try await database.transaction { db in try await self.writeTogether([member], db)[0] }))
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        } catch {
            return [.failure(error)]
        }
    }

    /// Routes and writes the members' sends through `db`: preferences and presence for all of
    /// their recipients in a few queries, then every row in a few multi-row statements, then
    /// each member's answer.
    private func writeTogether(_ members: [GroupedSend], _ db: any SQLDatabase) async throws -> [WrittenSend] {
        let prepared = try await prepare(members.map(\.draft), db)
        let written = try await write(prepared, db)
        for (member, written) in zip(members, written) {
            if let recorder = member.recorder { try await recorder(written.outcomes, db) }
        }
        return written
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
        /// Unread counts of the recipients reached live or by a handed-over push, read in the
        /// transaction after the rows were written (the badge the socket event carries).
        var unread: [String: Int] = [:]
        /// Pushes written already claimed, for this node's worker to send from memory.
        var handed: [PushHandoff.Item] = []
        /// Pushes written `pending`, for the worker's database path.
        var pendingPushes = false

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
        return try await prepare([draft], db)[0]
    }

    /// Routes several validated drafts with one read of each recipient's settings (per type)
    /// and presence.
    private func prepare(_ drafts: [NotificationDraft], _ db: (any SQLDatabase)?) async throws -> [PreparedSend] {
        let now = clock.now()
        var users: [[String]] = []
        var usersByType: [String: [String]] = [:]
        var everyone = Set<String>()
        for draft in drafts {
            guard let type = catalog[draft.type] else { throw APIError.validation([FieldError(field: "type", message: "is unknown")]) }
            var seen = Set<String>()
            let recipients = draft.userIDs.filter { seen.insert($0).inserted }
            users.append(recipients)
            everyone.formUnion(recipients)
            usersByType[type.name, default: []] += recipients
        }
        // Preferences and presence for every recipient in a few queries, not a few per user.
        var settings: [String: [String: UserNotificationSettings]] = [:]
        for (type, recipients) in usersByType {
            let unique = Array(Set(recipients))
            settings[type] = if let db { try await self.settings(for: unique, type: type, db) } else { try await self.settings(for: unique, type: type) }
        }
        let online: Set<String>
        do {
            online = try await presence.onlineUsers(Array(everyone), db)
        } catch {
            // Without presence, push is the side that still reaches the user.
            logger.warning("presence lookup failed; routing as offline", metadata: ["error": "\(String(reflecting: error))"])
            online = []
        }
        // Once per send, not per recipient: the default zone may be read from the served feed.
        let unseen = defaultSettings
        return zip(drafts, users).map { draft, users in
            let type = catalog[draft.type]!
            let plans = users.map { user in
                plan(draft, type: type, to: user, settings: settings[type.name]?[user] ?? unseen, online: online.contains(user), at: now)
            }
            return PreparedSend(plans: plans, pushUsers: plans.filter(\.pushNow).map(\.record.userID))
        }
    }

    /// Writes every recipient's notification and planned deliveries inside the caller's
    /// transaction, so a domain change (a job offered, a driver assigned) and the
    /// notifications about it commit together or not at all.
    ///
    /// Rows are written in user order, so concurrent sends lock dedupe rows in the same
    /// order and cannot deadlock.
    func write(_ prepared: PreparedSend, _ db: any SQLDatabase) async throws -> WrittenSend {
        try await write([prepared], db)[0]
    }

    /// Writes several sends' rows together (one transaction's group, see `send`).
    ///
    /// Recipients without a dedupe key need no decision per row: their notifications and
    /// deliveries go in a few multi-row statements (a send to thousands costs a handful of
    /// round trips, not three per user). The pushes are written already claimed for this
    /// node's worker when its hand-over queue has room (`PushHandoff`), else `pending`.
    func write(_ sends: [PreparedSend], _ db: any SQLDatabase) async throws -> [WrittenSend] {
        let pushUsers = Array(Set(sends.flatMap(\.pushUsers)))
        let devices = pushUsers.isEmpty ? [:] : try await DeviceStore().activeDevices(db, userIDs: pushUsers)
        var written = [[String: Written]](repeating: [:], count: sends.count)
        var notifications: [NotificationRecord] = []
        var deliveries: [(send: Int, record: DeliveryRecord)] = []
        // Every recipient of every send in user order (the same lock order in all transactions).
        let ordered = sends.indices.flatMap { index in sends[index].plans.map { (index, $0) } }.sorted { $0.1.record.userID < $1.1.record.userID }
        for (index, plan) in ordered {
            if plan.record.dedupeKey != nil, let existing = try await Self.writeDeduplicated(plan, db) {
                written[index][plan.record.userID] = .duplicate(existing)
                continue
            }
            let (socket, pushes) = Self.deliveries(plan, devices: devices[plan.record.userID] ?? [])
            if plan.record.dedupeKey == nil { notifications.append(plan.record) }
            deliveries += ((socket.map { [$0] } ?? []) + pushes).map { (index, $0) }
            written[index][plan.record.userID] = .created(plan.record, socket: socket, pushes: pushes.count)
        }
        let pushCount = deliveries.count(where: { $0.record.channel == .push })
        let handOver = handoff.map { $0.hasRoom(for: pushCount) } ?? false
        if handOver, let handoff {
            let leaseUntil = clock.now().epochMilliseconds + handoff.leaseMilliseconds
            for position in deliveries.indices where deliveries[position].record.channel == .push {
                deliveries[position].record.claim(leaseUntil: leaseUntil)
            }
        }
        try await db.insertRows(NotificationStore.bulkRows(notifications))
        try await db.insertRows(DeliveryStore.bulkRows(deliveries.map(\.record)))
        // The badge of everyone reached now, in one query after the rows are in.
        var badged = Set<String>()
        for (index, plan) in ordered {
            if case .created(_, let socket, let pushes) = written[index][plan.record.userID], socket != nil || (handOver && pushes > 0) {
                badged.insert(plan.record.userID)
            }
        }
        var unread = badged.isEmpty ? [:] : try await NotificationStore().unreadCounts(db, userIDs: Array(badged))
        for user in badged where unread[user] == nil { unread[user] = 0 }
        var handed = [[PushHandoff.Item]](repeating: [], count: sends.count)
        if handOver {
            handed = Self.handoffItems(
                deliveries, sendCount: sends.count, notifications: ordered.map(\.1.record), devices: devices, unread: unread, now: clock.now().epochMilliseconds
            )
        }
        return sends.indices.map { index in
            var send = WrittenSend(plans: sends[index].plans, written: written[index])
            send.unread = unread
            send.handed = handed[index]
            send.pendingPushes = !handOver && deliveries.contains { $0.send == index && $0.record.channel == .push }
            return send
        }
    }

    /// The messages of pushes written claimed, built from the rows just written (what the
    /// worker's database path reads back and builds the same way).
    static func handoffItems(
        _ deliveries: [(send: Int, record: DeliveryRecord)], sendCount: Int, notifications: [NotificationRecord], devices: [String: [DeviceRecord]],
        unread: [String: Int], now: Int64
    ) -> [[PushHandoff.Item]] {
        let byID = Dictionary(notifications.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var deviceByID: [String: DeviceRecord] = [:]
        for list in devices.values { for device in list { deviceByID[device.id] = device } }
        let pushed = Set(deliveries.lazy.filter { $0.record.channel == .push }.map(\.record.notificationID))
        let data = DeliveryWorker.pushData(for: byID.filter { pushed.contains($0.key) })
        var items = [[PushHandoff.Item]](repeating: [], count: sendCount)
        for (send, delivery) in deliveries where delivery.channel == .push {
            // A skip (which cannot happen for rows just written from active devices) leaves the
            // row claimed until its lease ends; the database path then decides it.
            if case .send(let message, _) = DeliveryWorker.prepare(
                delivery, notifications: byID, data: data, devices: deviceByID, unread: unread, now: now)
            {
                items[send].append(PushHandoff.Item(delivery: delivery, message: message))
            }
        }
        return items
    }

    /// Writes the notifications in `work`'s transaction and delivers them after its commit.
    @discardableResult
    public func write(_ prepared: PreparedSend, in work: UnitOfWork) async throws -> WrittenSend {
        try await write([prepared], in: work)[0]
    }

    /// Several sends in `work`'s transaction with one set of statements.
    @discardableResult
    public func write(_ sends: [PreparedSend], in work: UnitOfWork) async throws -> [WrittenSend] {
        guard !sends.isEmpty else { return [] }
        let written = try await write(sends, work.db)
        work.afterCommit { for send in written { await self.deliver(send) } }
        return written
    }

    /// After the commit: hands the claimed pushes to this node's worker (or wakes it for
    /// pending ones), then publishes to the recipients' sockets.
    ///
    /// Pushes first, and the socket events published together: one at a time, an offer to
    /// 1,000 drivers on PostgreSQL published 500 events one NOTIFY round trip after another
    /// (about a second) while its pushes waited behind them (issue 37, offer rounds). Published
    /// at once, the bus sends them in a few packed NOTIFYs.
    func deliver(_ sent: WrittenSend) async {
        if !sent.handed.isEmpty { handoff?.enqueue(sent.handed) }
        if sent.pendingPushes { pushQueued() }
        let live = sent.plans.compactMap { plan -> (NotificationRecord, DeliveryRecord)? in
            guard case .created(let record, let socket?, _) = sent.written[plan.record.userID] else { return nil }
            return (record, socket)
        }
        if live.count == 1 {
            await publishLive(live[0].0, delivery: live[0].1, unread: sent.unread[live[0].0.userID])
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, (record, socket)) in live.enumerated() {
                if index >= Self.publishesInFlight { await group.next() }
                group.addTask { await self.publishLive(record, delivery: socket, unread: sent.unread[record.userID]) }
            }
        }
    }

    /// Socket publishes of one send in flight at once at most.
    static let publishesInFlight = 256

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
        /// The apps whose devices it is pushed to (nil: all).
        var apps: Set<String>? = nil
    }

    /// The settings of a user Herald has not seen: the default zone, no quiet hours.
    var defaultSettings: UserNotificationSettings { UserNotificationSettings(timeZone: timeZones.zone) }

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
            draft.silent
            ? nil
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
            cooldownStart: nowMs - Int64(type.dedupeCooldownSeconds) * 1000, apps: type.apps)
    }

    /// A recipient whose notification carries a dedupe key: the earlier notification that
    /// still holds the key (nothing written), or nil once this one took the key and its
    /// notification row is written (its deliveries are the caller's to write).
    ///
    /// Written at once, not with the others' rows: a later send in the same transaction with
    /// the same key must find it.
    static func writeDeduplicated(_ plan: Plan, _ db: any SQLDatabase) async throws -> NotificationRecord? {
        let record = plan.record
        let store = NotificationStore()
        if let key = record.dedupeKey,
            let existingID = try await store.claimDedupe(
                db, userID: record.userID, key: key, notificationID: record.id, now: record.createdAt, heldSince: plan.cooldownStart),
            let existing = try await store.find(db, id: existingID, userID: nil)
        {
            return existing
        }
        try await store.insert(db, record)
        return nil
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
        let targets = plan.apps.map { apps in devices.filter { apps.contains($0.appID) } } ?? devices
        return (socket, pushDeliveries(notificationID: record.id, userID: record.userID, devices: targets, now: nowMs))
    }

    /// One pending push delivery per active device of the user; returns how many.
    static func planPushes(_ db: any SQLDatabase, notificationID: String, userID: String, type: NotificationType?, now: Int64) async throws -> Int {
        let devices = NotificationTypeCatalog.devices(try await DeviceStore().devices(db, userID: userID, activeOnly: true), for: type)
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
    /// `unread` is the count read with the rows, when the writer read it.
    func publishLive(_ record: NotificationRecord, delivery: DeliveryRecord, unread known: Int? = nil) async {
        do {
            let unread: Int
            if let known {
                unread = known
            } else {
                unread = try await database.withConnection { db in try await NotificationStore().unreadCount(db, userID: record.userID) }
            }
            guard case .object(var payload) = NotificationJSON.object(record) else { return }
            payload["unread_count"] = .number(Double(unread))
            try await hub.publish(
                "notification", payload: .object(payload), to: RoomName.user(record.userID),
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
                // The type matters only where some type is limited to apps (a read per delivery otherwise saved).
                let type =
                    self.catalog.limitsApps
                    ? try await NotificationStore().find(db, id: delivery.notificationID, userID: delivery.userID).flatMap { self.catalog[$0.type] } : nil
                return try await Self.planPushes(db, notificationID: delivery.notificationID, userID: delivery.userID, type: type, now: now)
            }
        }
        if planned > 0 { pushQueued() }
        return planned
    }

    // MARK: Settings

    /// Many users' settings for one type, in a few queries (a user who never sent a time
    /// zone gets `timeZones`' default; a user Herald has not seen, no quiet hours either).
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
                var settings = Self.settings(timeZone: timeZones.zone(chosen: zones[user]), stored: stored[user])
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

    static func settings(timeZone: TimeZone, stored: NotificationSettingsRecord?) -> UserNotificationSettings {
        var settings = UserNotificationSettings(timeZone: timeZone)
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
