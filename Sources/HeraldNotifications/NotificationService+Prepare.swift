import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// Routing drafts and writing their rows: also inside a domain module's own transaction.
extension NotificationService {
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
    func prepare(_ drafts: [NotificationDraft], _ db: (any SQLDatabase)?) async throws -> [PreparedSend] {
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
        // Read here, in the sender's task: the rows may be written by another send's
        // transaction (grouped commits) and delivered by a worker, outside this trace.
        let traceParent = HeraldTracing.currentTraceParent()
        return zip(drafts, users).map { draft, users in
            let type = catalog[draft.type]!
            let plans = users.map { user in
                var plan = plan(draft, type: type, to: user, settings: settings[type.name]?[user] ?? unseen, online: online.contains(user), at: now)
                plan.record.traceParent = traceParent
                return plan
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
}
