import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldTransit
import Hummingbird

/// The transit app's `/user/settings` over Herald's notification preferences and favourites.
///
/// Why an alias and not a second store: the preferences (`/notifications/preferences`)
/// already hold the time zone, quiet hours, severity floor and time-sensitive permission
/// every module's pushes obey, and each favourite its own notification switch; a second
/// copy in the transit app's shape would drift from them. This route only renames:
///
/// | `/user/settings` | Herald |
/// |---|---|
/// | `tz` | `time_zone` |
/// | `quiet_hours_enabled`, `quiet_start`, `quiet_end` | `quiet_hours.enabled`, `.start`, `.end` |
/// | `severity_min`: `minor` / `major` / `cancelled` | `severity_floor`: `info` / `warning` / `alert` |
/// | `time_sensitive_ok` | `time_sensitive_allowed` |
/// | `per_favorite_overrides.{favorite id}.notifications_enabled` | that favourite's `notifications_enabled` |
///
/// `PUT` and `PATCH` both change only the fields sent (the transit app sends the whole
/// document; a partial one must not reset the rest). Errors name the transit app's fields.
extension TransitRoutes {
    static let severityNames: [(app: String, herald: Severity)] = [("minor", .info), ("major", .warning), ("cancelled", .alert)]

    func addSettingsRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/user/settings") { _, context in
            let identity = try context.requireIdentity()
            return try respond(try await settingsDocument(userID: identity.userID), headers: [.cacheControl: "private, no-cache"], context)
        }
        for method in [HTTPRequest.Method.put, .patch] {
            api.on("/user/settings", method: method) { request, context in
                let identity = try context.requireIdentity()
                let body = try await request.jsonObject(context: context)
                try await changeSettings(identity: identity, body: body)
                return try respond(try await settingsDocument(userID: identity.userID), context)
            }
        }
    }

    func settingsDocument(userID: String) async throws -> JSONValue {
        let preferences = try await preferences.document(userID: userID)
        let favorites = try await transit.favorites.list(userID: userID)
        let quiet = preferences["quiet_hours"]
        let floor = preferences["severity_floor"]?.stringValue.flatMap(Severity.init(rawValue:)) ?? .info
        var overrides: [String: JSONValue] = [:]
        for favorite in favorites {
            overrides[favorite.record.id] = ["notifications_enabled": .bool(favorite.record.notificationsEnabled)]
        }
        return .object([
            "tz": preferences["time_zone"] ?? "UTC",
            "quiet_hours_enabled": quiet?["enabled"] ?? false,
            "quiet_start": quiet?["start"] ?? .null,
            "quiet_end": quiet?["end"] ?? .null,
            "severity_min": .string(Self.severityNames.first { $0.herald == floor }?.app ?? "minor"),
            "time_sensitive_ok": preferences["time_sensitive_allowed"] ?? true,
            "per_favorite_overrides": .object(overrides),
        ])
    }

    private func changeSettings(identity: Identity, body: [String: JSONValue]) async throws {
        var r = FieldReader(body)
        r.refuseUnknown(["tz", "quiet_hours_enabled", "quiet_start", "quiet_end", "severity_min", "time_sensitive_ok", "per_favorite_overrides"])
        var translated: [String: JSONValue] = [:]
        if let tz = body["tz"] { translated["time_zone"] = tz }
        var quiet: [String: JSONValue] = [:]
        if let enabled = body["quiet_hours_enabled"] { quiet["enabled"] = enabled }
        if let start = body["quiet_start"] { quiet["start"] = Self.hoursAndMinutes(start) }
        if let end = body["quiet_end"] { quiet["end"] = Self.hoursAndMinutes(end) }
        if !quiet.isEmpty { translated["quiet_hours"] = .object(quiet) }
        if let text = r.string("severity_min", maxLength: 16) {
            if let severity = Self.severityNames.first(where: { $0.app == text })?.herald {
                translated["severity_floor"] = .string(severity.rawValue)
            } else {
                r.fail("severity_min", "must be minor, major or cancelled")
            }
        }
        if let allowed = body["time_sensitive_ok"] { translated["time_sensitive_allowed"] = allowed }
        var switches: [(id: String, enabled: Bool)] = []
        if let overrides = r.object("per_favorite_overrides") {
            let mine = Set(try await transit.favorites.list(userID: identity.userID).map(\.record.id))
            for id in overrides.keys.sorted() {
                let field = "per_favorite_overrides.\(id)"
                guard mine.contains(id) else {
                    r.fail(field, "is not one of your favourites")
                    continue
                }
                guard case .object(let entry)? = overrides[id], entry.keys.allSatisfy({ $0 == "notifications_enabled" }),
                    case .bool(let enabled)? = entry["notifications_enabled"]
                else {
                    r.fail(field, "must be {\"notifications_enabled\": true or false}")
                    continue
                }
                switches.append((id, enabled))
            }
        }
        try r.validate()
        if !translated.isEmpty {
            do {
                _ = try await preferences.update(userID: identity.userID, role: identity.role.rawValue, body: translated)
            } catch var error as APIError {
                error.renameFields(Self.appFieldNames)
                throw error
            }
        }
        for change in switches {
            _ = try await transit.favorites.update(userID: identity.userID, id: change.id, label: nil, notificationsEnabled: change.enabled, sortOrder: nil)
        }
    }

    /// Herald's field names in a preferences error → the transit app's.
    static let appFieldNames = [
        "time_zone": "tz", "quiet_hours": "quiet_start", "quiet_hours.enabled": "quiet_hours_enabled", "quiet_hours.start": "quiet_start",
        "quiet_hours.end": "quiet_end", "severity_floor": "severity_min", "time_sensitive_allowed": "time_sensitive_ok",
    ]

    /// The transit design's columns are SQL `TIME`s, which its Python serialises as `22:00:00`: read
    /// the hours and minutes of such a value (Herald keeps `HH:MM`).
    static func hoursAndMinutes(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value, text.utf8.count == 8, text.hasSuffix(":00"), text.dropFirst(2).first == ":" else { return value }
        return .string(String(text.prefix(5)))
    }
}
