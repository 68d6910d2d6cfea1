import Foundation
import HeraldCore
import HeraldPush
import HeraldStorage
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

extension DeliveryWorker {
    enum Prepared: Sendable {
        case send(PushMessage, createdAt: Int64)
        /// Not sent, and why; the notification's type when it is known (for `/metrics`).
        case skip(String, type: String?)
    }

    /// Reads what each push says from its notification and device, as they are now, with three
    /// queries for the whole batch.
    func prepare(_ deliveries: [DeliveryRecord]) async throws -> [(DeliveryRecord, Prepared)] {
        let now = clock.now().epochMilliseconds
        return try await database.withConnection { db in
            let notifications = try await NotificationStore().find(db, ids: Array(Set(deliveries.map(\.notificationID))))
            let devices = try await DeviceStore().find(db, ids: Array(Set(deliveries.compactMap(\.deviceID))))
            let users = Array(Set(notifications.values.map(\.userID)))
            let unread = try await NotificationStore().unreadCounts(db, userIDs: users)
            let data = Self.pushData(for: notifications)
            return deliveries.map { delivery in
                (delivery, Self.prepare(delivery, notifications: notifications, data: data, devices: devices, unread: unread, now: now))
            }
        }
    }

    /// Each notification's push data, by id. Each notification's data is decoded once, however
    /// many devices it goes to, and notifications with the same data (one alert fanned out to
    /// thousands) share one decode.
    static func pushData(for notifications: [String: NotificationRecord]) -> [String: JSONValue] {
        var decoded: [String: [String: JSONValue]] = [:]
        return notifications.mapValues { notification in
            if decoded[notification.data] == nil { decoded[notification.data] = dataObject(notification.data) }
            return pushData(notification, object: decoded[notification.data]!)
        }
    }

    /// The notification's data object as its sender wrote it, plus Herald's keys for the app
    /// (see `PushDataKeys`).
    static func pushData(_ notification: NotificationRecord) -> JSONValue {
        pushData(notification, object: dataObject(notification.data))
    }

    /// A notification's stored data (a JSON object), or an empty object.
    static func dataObject(_ text: String) -> [String: JSONValue] {
        if case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) { return object }
        return [:]
    }

    static func pushData(_ notification: NotificationRecord, object: [String: JSONValue]) -> JSONValue {
        .object(PushDataKeys.adding(to: object, notificationID: notification.id, type: notification.type))
    }

    static func prepare(
        _ delivery: DeliveryRecord, notifications: [String: NotificationRecord], data: [String: JSONValue], devices: [String: DeviceRecord],
        unread: [String: Int], now: Int64
    ) -> Prepared {
        guard let notification = notifications[delivery.notificationID] else { return .skip("notification_missing", type: nil) }
        let type = notification.type
        if notification.deletedAt != nil { return .skip("notification_deleted", type: type) }
        if notification.readAt != nil { return .skip("already_read", type: type) }
        if let expiresAt = notification.expiresAt, expiresAt <= now { return .skip("expired", type: type) }
        guard let deviceID = delivery.deviceID, let device = devices[deviceID] else { return .skip("device_missing", type: type) }
        guard device.isActive, device.userID == notification.userID else { return .skip("device_inactive", type: type) }
        var message = PushMessage(
            deliveryID: delivery.id, notificationID: notification.id, userID: notification.userID, deviceID: device.id,
            type: notification.type, severity: notification.severity, provider: device.provider, platform: device.platform,
            token: device.token, webpushP256dh: device.webpushP256dh, webpushAuth: device.webpushAuth, title: notification.title,
            body: notification.body, data: data[notification.id] ?? pushData(notification), category: notification.category, threadID: notification.threadID,
            collapseKey: notification.collapseKey, interruptionLevel: notification.interruptionLevel,
            badge: unread[notification.userID] ?? 0, expiresAt: notification.expiresAt, attempt: delivery.attempts,
            silent: notification.silent != 0, deviceUpdatedAt: device.lastUsedAt)
        message.app = device.appID
        message.apnsEnvironment = device.apnsEnvironment
        message.traceParent = notification.traceParent
        return .send(message, createdAt: delivery.createdAt)
    }
}
