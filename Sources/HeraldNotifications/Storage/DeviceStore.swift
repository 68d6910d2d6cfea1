import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// The device registry.
///
/// Why a token moves on re-registration: a token identifies an app install, not a person;
/// when another user signs in on the same phone, the token must follow the new user or the
/// old one keeps receiving their pushes.
@_spi(Storage) public struct DeviceStore: Sendable {
    public init() {}

    /// Registers `device` (its id and timestamps are used only when the token is new) and
    /// returns the stored device and whether it was new. Re-registering moves the token to
    /// `device.userID` and reactivates it. Older tokens of the same user's same `device_id`,
    /// provider and app are deactivated as `replaced` (the app got a new token; another app of
    /// the same vendor shares the `device_id` and keeps its own). Run in a transaction.
    public func register(_ db: any SQLDatabase, _ device: DeviceRecord, now: Int64) async throws -> (device: DeviceRecord, created: Bool) {
        let existing = try await db.raw(
            "SELECT id FROM push_devices WHERE provider = \(bind: device.provider.rawValue) AND token = \(bind: device.token)"
        ).first()
        guard
            let stored = try await db.raw(
                """
                INSERT INTO push_devices (id, user_id, provider, token, platform, device_id, app_version, os_version, locale,
                    user_agent, webpush_p256dh, webpush_auth, created_at, last_used_at, deactivated_at, deactivation_reason, app_id,
                    apns_environment)
                VALUES (\(bind: device.id), \(bind: device.userID), \(bind: device.provider.rawValue), \(bind: device.token),
                    \(bind: device.platform.rawValue), \(bind: device.deviceID), \(bind: device.appVersion), \(bind: device.osVersion),
                    \(bind: device.locale), \(bind: device.userAgent), \(bind: device.webpushP256dh), \(bind: device.webpushAuth),
                    \(bind: now), \(bind: now), NULL, NULL, \(bind: device.appID), \(bind: device.apnsEnvironment?.rawValue))
                ON CONFLICT (provider, token) DO UPDATE SET
                    user_id = excluded.user_id, platform = excluded.platform, device_id = excluded.device_id,
                    app_id = excluded.app_id, apns_environment = excluded.apns_environment,
                    app_version = excluded.app_version, os_version = excluded.os_version, locale = excluded.locale,
                    user_agent = excluded.user_agent, webpush_p256dh = excluded.webpush_p256dh,
                    webpush_auth = excluded.webpush_auth, last_used_at = excluded.last_used_at,
                    deactivated_at = NULL, deactivation_reason = NULL
                RETURNING *
                """
            ).first(decoding: DeviceRecord.self)
        else { throw StoreError.noRowReturned }
        if let deviceID = stored.deviceID {
            try await db.raw(
                """
                UPDATE push_devices SET deactivated_at = \(bind: now), deactivation_reason = 'replaced'
                WHERE user_id = \(bind: stored.userID) AND device_id = \(bind: deviceID) AND provider = \(bind: stored.provider.rawValue)
                AND app_id = \(bind: stored.appID) AND id <> \(bind: stored.id) AND deactivated_at IS NULL
                """
            ).run()
        }
        return (stored, existing == nil)
    }

    /// Deactivates the user's device with `token` (any provider) as `unregistered`; nil when the
    /// user has no such token (another user's token is never touched).
    public func unregister(_ db: any SQLDatabase, userID: String, token: String, now: Int64) async throws -> DeviceRecord? {
        try await db.raw(
            """
            UPDATE push_devices SET deactivated_at = COALESCE(deactivated_at, \(bind: now)),
                deactivation_reason = COALESCE(deactivation_reason, 'unregistered')
            WHERE user_id = \(bind: userID) AND token = \(bind: token) RETURNING *
            """
        ).first(decoding: DeviceRecord.self)
    }

    public func devices(_ db: any SQLDatabase, userID: String, activeOnly: Bool) async throws -> [DeviceRecord] {
        var query = SQLQueryString("SELECT * FROM push_devices WHERE user_id = \(bind: userID)")
        if activeOnly { query.appendInterpolation(unsafeRaw: " AND deactivated_at IS NULL") }
        query.appendInterpolation(unsafeRaw: " ORDER BY created_at, id")
        return try await db.raw(query).all(decoding: DeviceRecord.self)
    }

    /// Active devices of many users, by user.
    public func activeDevices(_ db: any SQLDatabase, userIDs: [String]) async throws -> [String: [DeviceRecord]] {
        var result: [String: [DeviceRecord]] = [:]
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString("SELECT * FROM push_devices WHERE deactivated_at IS NULL AND user_id IN ")
            query.appendInList(Array(chunk))
            query.appendInterpolation(unsafeRaw: " ORDER BY created_at, id")
            for device in try await db.raw(query).all(decoding: DeviceRecord.self) { result[device.userID, default: []].append(device) }
        }
        return result
    }

    public func find(_ db: any SQLDatabase, id: String) async throws -> DeviceRecord? {
        try await db.raw("SELECT * FROM push_devices WHERE id = \(bind: id)").first(decoding: DeviceRecord.self)
    }

    /// The devices with these ids, by id.
    public func find(_ db: any SQLDatabase, ids: [String]) async throws -> [String: DeviceRecord] {
        Dictionary(try await db.rows(DeviceRecord.self, from: "push_devices", where: "id", in: ids).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// Stops sending to a device (the provider said the token is gone); true when it was active.
    @discardableResult
    public func deactivate(_ db: any SQLDatabase, id: String, reason: String, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE push_devices SET deactivated_at = \(bind: now), deactivation_reason = \(bind: reason)
            WHERE id = \(bind: id) AND deactivated_at IS NULL RETURNING id
            """
        ).first() != nil
    }

    public func touch(_ db: any SQLDatabase, id: String, now: Int64) async throws {
        try await db.raw("UPDATE push_devices SET last_used_at = \(bind: now) WHERE id = \(bind: id)").run()
    }
}
