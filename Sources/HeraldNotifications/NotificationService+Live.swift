import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// After the commit: the socket publish, its ack, and the fallback to push when none came.
extension NotificationService {
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

    /// Sends `notification` to the user's sockets; when the delivery waits for an ack, the
    /// delivery id is the ack token. A failure here is not fatal: the sweeper falls back.
    /// `unread` is the count read with the rows, when the writer read it.
    func publishLive(_ record: NotificationRecord, delivery: DeliveryRecord, unread known: Int? = nil) async {
        // A span of the sender's trace: the bus carries it to the node holding the user's
        // sockets (`PostgresBus`), whose delivery span follows it.
        await HeraldTracing.withSpan(
            "publish notification", continuing: record.traceParent, ofKind: .producer,
            attributes: ["herald.notification.id": record.id, "herald.delivery.id": delivery.id]
        ) { _ in
            await publishLiveUntraced(record, delivery: delivery, unread: known)
        }
    }

    private func publishLiveUntraced(_ record: NotificationRecord, delivery: DeliveryRecord, unread known: Int?) async {
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
                ackToken: delivery.status == .awaitingAck ? AckToken(.delivery, id: delivery.id) : nil)
        } catch {
            logger.error("publishing a notification failed", metadata: ["notification_id": "\(record.id)", "error": "\(String(reflecting: error))"])
        }
    }

    /// The app acknowledged the socket delivery: it was shown in the app, no push needed.
    /// The owner of `.delivery` acknowledgements (the composition root registers it with the hub).
    public func acknowledged(deliveryID: String) async {
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
}
