import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldStorage
import Hummingbird

/// The caller's own user record: display name, locale and the time zone that quiet hours
/// and schedules are computed in.
struct MeRoutes {
    let database: any Database
    let clock: any HeraldClock
    /// The zone shown for a user who never sent one (the one their quiet hours run in).
    let timeZones: DefaultTimeZone

    struct MeView: Encodable {
        let id: String
        let role: String
        let displayName: String?
        let locale: String?
        let timeZone: String
        let phone: String?
        let createdAt: String
        let updatedAt: String

        enum CodingKeys: String, CodingKey {
            case id, role, locale, phone
            case displayName = "display_name"
            case timeZone = "time_zone"
            case createdAt = "created_at"
            case updatedAt = "updated_at"
        }

        init(_ record: UserRecord, role: Role, timeZones: DefaultTimeZone) {
            id = record.id
            self.role = role.rawValue
            displayName = record.displayName
            locale = record.locale
            timeZone = timeZones.identifier(chosen: record.timeZoneChosen ? record.timeZone : nil)
            phone = record.phone
            createdAt = Timestamp.string(epochMilliseconds: record.createdAt)
            updatedAt = Timestamp.string(epochMilliseconds: record.updatedAt)
        }
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/me") { _, context in
            let identity = try context.requireIdentity()
            let record = try await database.withConnection { db in
                try await UserDirectory.find(db, id: identity.userID)
            }
            guard let record else { throw APIError.notFound("The user does not exist.") }
            return try Envelope.response(MeView(record, role: identity.role, timeZones: timeZones), context: context, clock: clock)
        }
        api.put("/me") { request, context in
            let identity = try context.requireIdentity()
            let changes = try Self.changes(from: try await request.jsonObject(context: context))
            let now = clock.now().epochMilliseconds
            let record = try await database.withConnection { db in
                try await UserDirectory.update(db, id: identity.userID, changes: changes, now: now)
            }
            guard let record else { throw APIError.notFound("The user does not exist.") }
            return try Envelope.response(MeView(record, role: identity.role, timeZones: timeZones), context: context, clock: clock)
        }
    }

    static let editableFields: Set<String> = ["display_name", "locale", "time_zone", "phone"]

    /// Validates a `PUT /me` body: absent fields stay, `null` clears display name and locale,
    /// unknown fields are refused so a typo (`timezone`) is not silently ignored.
    static func changes(from body: [String: JSONValue]) throws -> UserChanges {
        var validator = FieldValidator()
        var changes = UserChanges()
        for key in body.keys.sorted() where !editableFields.contains(key) {
            validator.fail(key, "is not a field of the user; editable fields are display_name, locale, time_zone, phone")
        }
        if let value = body["display_name"] {
            switch value {
            case .null: changes.displayName = .some(nil)
            case .string(let name):
                let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
                validator.check(!trimmed.isEmpty, "display_name", "must not be empty")
                // Counted as JSON Schema counts maxLength: code points, not grapheme clusters.
                validator.check(trimmed.unicodeScalars.count <= 100, "display_name", "must be at most 100 characters")
                validator.check(
                    !trimmed.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }),
                    "display_name", "must not contain control characters")
                changes.displayName = .some(trimmed)
            default: validator.fail("display_name", "must be a string or null, got \(value.typeName)")
            }
        }
        if let value = body["locale"] {
            switch value {
            case .null: changes.locale = .some(nil)
            case .string(let locale):
                validator.check(isLocale(locale), "locale", "must be a BCP 47 language tag such as en-AU")
                changes.locale = .some(locale)
            default: validator.fail("locale", "must be a string or null, got \(value.typeName)")
            }
        }
        if let value = body["time_zone"] {
            if case .string(let zone) = value {
                validator.check(
                    zone.count <= 64 && TimeZone(identifier: zone) != nil && zone.contains(where: { $0 == "/" }) || zone == "UTC",
                    "time_zone", "must be an IANA time zone such as Australia/Sydney")
                changes.timeZone = zone
            } else {
                validator.fail("time_zone", "must be a string, got \(value.typeName)")
            }
        }
        if let value = body["phone"] {
            switch value {
            case .null: changes.phone = .some(nil)
            case .string(let phone):
                validator.check(isPhone(phone), "phone", "must be an E.164 number such as +14155550123")
                changes.phone = .some(phone)
            default: validator.fail("phone", "must be a string or null, got \(value.typeName)")
            }
        }
        try validator.validate()
        return changes
    }

    /// E.164: `+`, a country code that does not start with 0, at most 15 digits in all.
    static func isPhone(_ text: String) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.utf8.first == UInt8(ascii: "+") && (8...15).contains(digits.count) && digits.first != UInt8(ascii: "0")
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// `en`, `en-AU`, `zh-Hant-TW`, `es-419`: a 2–3 letter language, then subtags of 2–8
    /// letters or digits.
    static func isLocale(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.count <= 35, let language = parts.first, (2...3).contains(language.count),
            language.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (2...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }

    static let meSchema = Schema.object(
        [
            "id": Schema.string("The token's sub"),
            "role": Schema.enumeration(Role.allCases.map(\.rawValue)),
            "display_name": Schema.string(nullable: true, maxLength: 100),
            "locale": Schema.string("BCP 47 tag", nullable: true),
            "time_zone": Schema.string("IANA time zone"),
            "phone": Schema.string("E.164; shown only to the driver of the user's active job", nullable: true),
            "created_at": Schema.string(format: "date-time"),
            "updated_at": Schema.string(format: "date-time"),
        ], required: ["id", "role", "time_zone", "created_at", "updated_at"])

    static let operations: [APIOperation] = [
        APIOperation(
            "GET", "/api/v1/me", summary: "The caller's user record", tag: "users",
            access: .authenticated(roles: []), response: meSchema),
        APIOperation(
            "PUT", "/api/v1/me", summary: "Change display name, locale, time zone or phone",
            description: "Absent fields are left unchanged; null clears display_name, locale or phone.",
            tag: "users", access: .authenticated(roles: []),
            requestBody: Schema.object([
                "display_name": Schema.string(nullable: true, maxLength: 100),
                "locale": Schema.string("BCP 47 tag", nullable: true),
                "time_zone": Schema.string("IANA time zone"),
                "phone": Schema.string(
                    "E.164 (null clears); shown only to the driver of the user's active job", nullable: true, pattern: "^\\+[1-9][0-9]{7,14}$"),
            ]),
            response: meSchema),
    ]
}
