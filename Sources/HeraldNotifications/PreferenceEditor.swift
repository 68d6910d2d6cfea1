import Foundation
import HeraldAuth
import HeraldCore
import HeraldStorage

/// Reads and changes a user's notification preferences.
///
/// `PUT` takes any part of the document `GET` returns — `quiet_hours`, `severity_floor`,
/// `time_sensitive_allowed`, `time_zone` (the same field as `/me`) and `types` — or the
/// notification design's single-type form `{type, in_app_enabled, push_enabled}`. Fields left out keep
/// their values. Turning off a critical type is refused, so the app can say why.
public struct PreferenceEditor: Sendable {
    let service: NotificationService

    public init(service: NotificationService) {
        self.service = service
    }

    public func document(userID: String) async throws -> JSONValue {
        let (user, stored, choices) = try await service.database.withConnection { db in
            (
                try await UserDirectory.find(db, id: userID),
                try await NotificationPreferenceStore().settings(db, userID: userID),
                try await NotificationPreferenceStore().typePreferences(db, userID: userID)
            )
        }
        var types: [String: JSONValue] = [:]
        for name in service.catalog.names {
            guard let type = service.catalog[name] else { continue }
            let choice = choices[name]
            types[name] = .object([
                "in_app_enabled": .bool(type.critical || (choice?.inAppEnabled ?? type.defaultEnabled)),
                "push_enabled": .bool(type.critical || (choice?.pushEnabled ?? type.defaultEnabled)),
                "critical": .bool(type.critical),
                "default_enabled": .bool(type.defaultEnabled),
                "severity": .string(type.severity.rawValue),
                "delivery": .string(type.delivery.rawValue),
                "quiet_hours": choice.flatMap { c in
                    c.quietStart.flatMap { start in c.quietEnd.map { end in ["start": .string(start), "end": .string(end)] } }
                } ?? .null,
            ])
        }
        return .object([
            // The zone quiet hours run in: the user's, or the deployment's default until they send one.
            "time_zone": .string(service.timeZones.identifier(chosen: user.flatMap { $0.timeZoneChosen ? $0.timeZone : nil })),
            "quiet_hours": .object([
                "enabled": .bool(stored?.quietHoursEnabled ?? false),
                "start": stored?.quietStart.map(JSONValue.string) ?? .null,
                "end": stored?.quietEnd.map(JSONValue.string) ?? .null,
            ]),
            "severity_floor": .string(stored?.severityFloor ?? Severity.info.rawValue),
            "time_sensitive_allowed": .bool(stored?.timeSensitiveAllowed ?? true),
            "types": .object(types),
        ])
    }

    public func update(userID: String, role: String, body: [String: JSONValue]) async throws -> JSONValue {
        var r = FieldReader(body)
        r.refuseUnknown([
            "type", "in_app_enabled", "push_enabled", "quiet_hours_start", "quiet_hours_end", "quiet_hours", "severity_floor",
            "time_sensitive_allowed", "time_zone", "types",
        ])
        var typeChanges: [TypeChange] = []
        if let single = r.string("type", maxLength: 64) {
            let quiet = Self.typeQuietHours(start: body["quiet_hours_start"], end: body["quiet_hours_end"], field: "quiet_hours_start", &r)
            typeChanges.append(TypeChange(name: single, field: "type", inApp: r.bool("in_app_enabled"), push: r.bool("push_enabled"), quiet: quiet))
        } else if body["in_app_enabled"] != nil || body["push_enabled"] != nil || body["quiet_hours_start"] != nil || body["quiet_hours_end"] != nil {
            r.fail("type", "is required with in_app_enabled / push_enabled / quiet_hours_start / quiet_hours_end")
        }
        if let types = r.object("types") {
            for name in types.keys.sorted() {
                guard case .object(let entry)? = types[name] else {
                    r.fail("types.\(name)", "must be an object {in_app_enabled, push_enabled, quiet_hours}")
                    continue
                }
                let prefix = "types.\(name)."
                var e = FieldReader(entry)
                e.refuseUnknown(["in_app_enabled", "push_enabled", "quiet_hours"], prefix: prefix)
                var quiet: QuietChange?
                switch entry["quiet_hours"] {
                case nil: break
                case .null?: quiet = .clear
                case .object(let window)?:
                    for key in window.keys.sorted() where key != "start" && key != "end" { e.fail("\(prefix)quiet_hours.\(key)", "is not a known field") }
                    quiet = Self.typeQuietHours(start: window["start"] ?? .null, end: window["end"] ?? .null, field: "\(prefix)quiet_hours", &e)
                default: e.fail("\(prefix)quiet_hours", "must be {start, end} (HH:MM) or null")
                }
                typeChanges.append(
                    TypeChange(
                        name: name, field: "types.\(name)", inApp: e.bool("in_app_enabled", prefix: prefix), push: e.bool("push_enabled", prefix: prefix),
                        quiet: quiet))
                r.merge(e)
            }
        }
        for change in typeChanges {
            guard let type = service.catalog[change.name] else {
                r.fail(change.field, "is not a notification type; known types: \(service.catalog.names.joined(separator: ", "))")
                continue
            }
            if type.critical && (change.inApp == false || change.push == false) {
                r.fail(change.field, "\(change.name) is critical; it cannot be turned off")
            }
        }
        var quiet: (enabled: Bool?, start: String??, end: String??)?
        if let q = r.object("quiet_hours") {
            var e = FieldReader(q)
            e.refuseUnknown(["enabled", "start", "end"], prefix: "quiet_hours.")
            var start: String??
            var end: String??
            for key in ["start", "end"] {
                var value: String??
                if case .null? = q[key] {
                    value = .some(nil)
                } else if let text = e.string(key, maxLength: 5, prefix: "quiet_hours.") {
                    if LocalTime(parsing: text) == nil { e.fail("quiet_hours.\(key)", "must be a local time HH:MM, like 22:00") }
                    value = .some(text)
                }
                if key == "start" { start = value } else { end = value }
            }
            quiet = (e.bool("enabled", prefix: "quiet_hours."), start, end)
            r.merge(e)
        }
        var floor: Severity?
        if let text = r.string("severity_floor", maxLength: 16) {
            floor = Severity(rawValue: text)
            if floor == nil { r.fail("severity_floor", "must be info, warning or alert") }
        }
        let timeSensitive = r.bool("time_sensitive_allowed")
        let timeZone = r.string("time_zone", maxLength: 64)
        if let timeZone, TimeZone(identifier: timeZone) == nil {
            r.fail("time_zone", "must be an IANA time zone such as Australia/Sydney")
        }
        try r.validate()

        let now = service.clock.now().epochMilliseconds
        let nothingSettingWise = quiet == nil && floor == nil && timeSensitive == nil
        let (quietChange, floorChange, changes) = (quiet, floor, typeChanges)
        try await service.database.transaction { db in
            let prefs = NotificationPreferenceStore()
            if !nothingSettingWise {
                var s =
                    try await prefs.settings(db, userID: userID)
                    ?? NotificationSettingsRecord(
                        userID: userID, quietHoursEnabled: false, quietStart: nil, quietEnd: nil, severityFloor: Severity.info.rawValue,
                        timeSensitiveAllowed: true, updatedAt: now)
                if let quiet = quietChange {
                    if let enabled = quiet.enabled { s.quietHoursEnabled = enabled }
                    if let start = quiet.start { s.quietStart = start }
                    if let end = quiet.end { s.quietEnd = end }
                    if s.quietHoursEnabled && (s.quietStart == nil || s.quietEnd == nil) {
                        throw APIError.validation([FieldError(field: "quiet_hours", message: "start and end are required when quiet hours are enabled")])
                    }
                }
                if let floor = floorChange { s.severityFloor = floor.rawValue }
                if let timeSensitive { s.timeSensitiveAllowed = timeSensitive }
                s.updatedAt = now
                try await prefs.saveSettings(db, s)
            }
            let current = try await prefs.typePreferences(db, userID: userID)
            for change in changes {
                guard let type = service.catalog[change.name] else { continue }
                let existing = current[change.name]
                let record = TypePreferenceRecord(
                    type: change.name, inAppEnabled: change.inApp ?? existing?.inAppEnabled ?? type.defaultEnabled,
                    pushEnabled: change.push ?? existing?.pushEnabled ?? type.defaultEnabled,
                    quietStart: change.quiet.map(\.start) ?? existing?.quietStart, quietEnd: change.quiet.map(\.end) ?? existing?.quietEnd)
                try await prefs.saveTypePreference(db, userID: userID, record, now: now)
            }
            if let timeZone {
                try await UserDirectory.ensure(db, id: userID, role: role, now: now)
                try await UserDirectory.update(db, id: userID, changes: UserChanges(timeZone: timeZone), now: now)
            }
        }
        return try await document(userID: userID)
    }

    /// One type's requested changes (nil: left as it is).
    struct TypeChange {
        var name: String
        var field: String
        var inApp: Bool?
        var push: Bool?
        var quiet: QuietChange?
    }

    /// A type's quiet hours: set to a window, or cleared (the user's window applies again).
    enum QuietChange {
        case clear
        case set(start: String, end: String)

        var start: String? { if case .set(let start, _) = self { start } else { nil } }
        var end: String? { if case .set(_, let end) = self { end } else { nil } }
    }

    /// A type's quiet-hours window: both ends as `HH:MM`, or both null to clear; nil when
    /// neither was sent.
    static func typeQuietHours(start: JSONValue?, end: JSONValue?, field: String, _ r: inout FieldReader) -> QuietChange? {
        if start == nil && end == nil { return nil }
        if (start ?? .null) == .null && (end ?? .null) == .null { return .clear }
        guard case .string(let from)? = start, case .string(let to)? = end, LocalTime(parsing: from) != nil, LocalTime(parsing: to) != nil else {
            r.fail(field, "needs both start and end as local times HH:MM (like 22:00), or both null to clear")
            return nil
        }
        return .set(start: from, end: to)
    }

}
