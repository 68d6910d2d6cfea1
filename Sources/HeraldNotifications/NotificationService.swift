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
    let acks: GroupCommit<String, Void>

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
            // cancelled (its client went away), which must not fail the others' sends. Each
            // member carries its own answer slot, so no task-local of the writer matters here.
            return await Task { await service.writeGrouped(members) }.value
        }
        acks = GroupCommit(maxBatch: 200) { [database, clock] deliveryIDs in
            let now = clock.now().epochMilliseconds
            try await database.transaction { db in
                let moved = try await DeliveryStore().acknowledge(db, ids: deliveryIDs, now: now)
                if !moved.isEmpty { try await NotificationStore().setSentVia(db, ids: moved, channel: .socket) }
            }
            return deliveryIDs.map { _ in () }
        }
        this.value = self
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
    public func send(_ draft: NotificationDraft, answer: TransactionAnswer? = nil) async throws -> [SendOutcome] {
        // Checked before joining a group: a bad draft is answered without touching the others.
        try draft.validate(catalog: catalog, maxRecipients: config.maxRecipients)
        let written = try await sends.submit(GroupedSend(draft: draft, answer: answer)).get()
        await deliver(written)
        return written.outcomes
    }

    /// One send waiting for its group's transaction, with its request's answer slot.
    struct GroupedSend: Sendable {
        var draft: NotificationDraft
        var answer: TransactionAnswer?
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
            try await member.answer?.record(written.outcomes, in: db)
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
        public var channels: [String: SendChannel] {
            written.mapValues(\.channel)
        }

        /// What each recipient got, in the draft's order: the same before and after delivery.
        public var outcomes: [SendOutcome] {
            plans.compactMap { plan in
                guard let sent = written[plan.record.userID] else { return nil }
                switch sent {
                case .duplicate(let existing):
                    return SendOutcome(notification: existing, deduplicated: true, channel: .deduplicated, pushDeliveries: 0, pushSuppressed: nil)
                case .created(let record, _, let pushes):
                    return SendOutcome(
                        notification: record, deduplicated: false, channel: sent.channel, pushDeliveries: pushes, pushSuppressed: plan.pushSuppressed)
                }
            }
        }

        /// Recipients whose push quiet hours held back (the notification is in their inbox).
        public var heldByQuietHours: [String] {
            plans.filter { $0.pushSuppressed == .quietHours && written[$0.record.userID] != nil }.map(\.record.userID)
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
}
