import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// Each recipient's plan: socket, push now, or held, decided before the transaction.
extension NotificationService {
    enum Written: Sendable {
        case created(NotificationRecord, socket: DeliveryRecord?, pushes: Int)
        case duplicate(NotificationRecord)

        /// Where it went first: the socket when the user was online, else push when any was planned.
        var channel: SendChannel {
            switch self {
            case .duplicate: .deduplicated
            case .created(_, let socket, let pushes): socket != nil ? .socket : (pushes > 0 ? .push : .inbox)
            }
        }
    }

    /// What to write for one recipient, decided before the transaction (preferences and
    /// presence are read outside it).
    struct Plan: Sendable {
        var record: NotificationRecord
        var socketStatus: DeliveryStatus?
        var pushNow: Bool
        var pushSuppressed: PushSuppression?
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
            id: Identifier.make("ntf"), userID: userID, type: type.name, severity: severity, delivery: delivery,
            title: draft.title, body: draft.body, data: SocketPacketEncoder.json(.object(draft.data)),
            category: draft.category ?? type.category, threadID: draft.threadID, collapseKey: draft.collapseKey,
            dedupeKey: draft.dedupeKey, interruptionLevel: decision.interruptionLevel,
            expiresAt: draft.ttlSeconds.map { nowMs + Int64($0) * 1000 }, createdAt: nowMs,
            sentVia: socketStatus == .published ? .socket : nil, pushSuppressed: decision.pushSuppressed, silent: draft.silent)
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
}
