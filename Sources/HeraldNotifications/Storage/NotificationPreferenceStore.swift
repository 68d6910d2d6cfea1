import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// Notification preferences. Booleans are stored as 0/1 integers so one schema serves both
/// engines; a user without rows has the type defaults.
struct NotificationPreferenceStore: Sendable {
    init() {}

    func settings(_ db: any SQLDatabase, userID: String) async throws -> NotificationSettingsRecord? {
        guard let row = try await db.raw("SELECT * FROM notification_settings WHERE user_id = \(bind: userID)").first() else {
            return nil
        }
        return NotificationSettingsRecord(
            userID: userID,
            quietHoursEnabled: try row.decode(column: "quiet_hours_enabled", as: Int.self) != 0,
            quietStart: try row.decode(column: "quiet_start", as: String?.self),
            quietEnd: try row.decode(column: "quiet_end", as: String?.self),
            severityFloor: try row.decode(column: "severity_floor", as: String.self),
            timeSensitiveAllowed: try row.decode(column: "time_sensitive_allowed", as: Int.self) != 0,
            updatedAt: try row.decode(column: "updated_at", as: Int64.self))
    }

    func saveSettings(_ db: any SQLDatabase, _ s: NotificationSettingsRecord) async throws {
        try await db.raw(
            """
            INSERT INTO notification_settings (user_id, quiet_hours_enabled, quiet_start, quiet_end, severity_floor,
                time_sensitive_allowed, updated_at)
            VALUES (\(bind: s.userID), \(bind: s.quietHoursEnabled ? 1 : 0), \(bind: s.quietStart), \(bind: s.quietEnd),
                \(bind: s.severityFloor), \(bind: s.timeSensitiveAllowed ? 1 : 0), \(bind: s.updatedAt))
            ON CONFLICT (user_id) DO UPDATE SET quiet_hours_enabled = excluded.quiet_hours_enabled,
                quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end, severity_floor = excluded.severity_floor,
                time_sensitive_allowed = excluded.time_sensitive_allowed, updated_at = excluded.updated_at
            """
        ).run()
    }

    /// Settings of many users at once (users without a row are absent).
    func settings(_ db: any SQLDatabase, userIDs: [String]) async throws -> [String: NotificationSettingsRecord] {
        var result: [String: NotificationSettingsRecord] = [:]
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString("SELECT * FROM notification_settings WHERE user_id IN ")
            query.appendInList(Array(chunk))
            for row in try await db.raw(query).all() {
                let user = try row.decode(column: "user_id", as: String.self)
                result[user] = NotificationSettingsRecord(
                    userID: user,
                    quietHoursEnabled: try row.decode(column: "quiet_hours_enabled", as: Int.self) != 0,
                    quietStart: try row.decode(column: "quiet_start", as: String?.self),
                    quietEnd: try row.decode(column: "quiet_end", as: String?.self),
                    severityFloor: try row.decode(column: "severity_floor", as: String.self),
                    timeSensitiveAllowed: try row.decode(column: "time_sensitive_allowed", as: Int.self) != 0,
                    updatedAt: try row.decode(column: "updated_at", as: Int64.self))
            }
        }
        return result
    }

    /// Many users' choices for one type (users who never chose are absent).
    func typePreferences(_ db: any SQLDatabase, userIDs: [String], type: String) async throws -> [String: TypePreferenceRecord] {
        var result: [String: TypePreferenceRecord] = [:]
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString("SELECT * FROM notification_preferences WHERE type = \(bind: type) AND user_id IN ")
            query.appendInList(Array(chunk))
            for row in try await db.raw(query).all() {
                result[try row.decode(column: "user_id", as: String.self)] = try Self.typePreference(row, type: type)
            }
        }
        return result
    }

    func typePreferences(_ db: any SQLDatabase, userID: String) async throws -> [String: TypePreferenceRecord] {
        var result: [String: TypePreferenceRecord] = [:]
        for row in try await db.raw("SELECT * FROM notification_preferences WHERE user_id = \(bind: userID)").all() {
            let type = try row.decode(column: "type", as: String.self)
            result[type] = try Self.typePreference(row, type: type)
        }
        return result
    }

    static func typePreference(_ row: any SQLRow, type: String) throws -> TypePreferenceRecord {
        TypePreferenceRecord(
            type: type, inAppEnabled: try row.decode(column: "in_app_enabled", as: Int.self) != 0,
            pushEnabled: try row.decode(column: "push_enabled", as: Int.self) != 0,
            quietStart: try row.decode(column: "quiet_start", as: String?.self), quietEnd: try row.decode(column: "quiet_end", as: String?.self))
    }

    func saveTypePreference(_ db: any SQLDatabase, userID: String, _ p: TypePreferenceRecord, now: Int64) async throws {
        try await db.raw(
            """
            INSERT INTO notification_preferences (user_id, type, in_app_enabled, push_enabled, quiet_start, quiet_end, updated_at)
            VALUES (\(bind: userID), \(bind: p.type), \(bind: p.inAppEnabled ? 1 : 0), \(bind: p.pushEnabled ? 1 : 0),
                \(bind: p.quietStart), \(bind: p.quietEnd), \(bind: now))
            ON CONFLICT (user_id, type) DO UPDATE SET in_app_enabled = excluded.in_app_enabled,
                push_enabled = excluded.push_enabled, quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end,
                updated_at = excluded.updated_at
            """
        ).run()
    }
}
