import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// Users' notification settings, as routing reads them.
extension NotificationService {
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
