import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// Users as Herald keeps them, created on first sight of a token.
///
/// Why in the auth module: a user is the identity a token names; every module that needs a
/// user's settings (quiet hours' time zone, the customer's phone for a driver) reads them
/// here instead of keeping its own copy.
struct UserStore: Sendable {
    public init() {}

    /// Creates the user if they are new; an existing user is left untouched.
    /// Returns true when this call created the record.
    @discardableResult
    public func ensure(_ db: any SQLDatabase, id: String, role: String, now: Int64) async throws -> Bool {
        let row = try await db.raw(
            """
            INSERT INTO users (id, role, time_zone, created_at, updated_at)
            VALUES (\(bind: id), \(bind: role), 'UTC', \(bind: now), \(bind: now))
            ON CONFLICT (id) DO NOTHING
            RETURNING id
            """
        ).first()
        return row != nil
    }

    public func find(_ db: any SQLDatabase, id: String) async throws -> UserRecord? {
        try await db.raw("SELECT * FROM users WHERE id = \(bind: id)").first(decoding: UserRecord.self)
    }

    /// The time zones many users chose (users who never sent one, and users Herald has not
    /// seen, are absent: the caller's default applies).
    public func timeZones(_ db: any SQLDatabase, ids: [String]) async throws -> [String: String] {
        var result: [String: String] = [:]
        for chunk in ids.chunked(500) {
            var query = SQLQueryString("SELECT id, time_zone FROM users WHERE time_zone_chosen = 1 AND id IN ")
            query.appendInList(Array(chunk))
            for row in try await db.raw(query).all() {
                result[try row.decode(column: "id", as: String.self)] = try row.decode(column: "time_zone", as: String.self)
            }
        }
        return result
    }

    /// Applies `changes` and returns the updated user, or nil when there is no such user.
    public func update(_ db: any SQLDatabase, id: String, changes: UserChanges, now: Int64) async throws -> UserRecord? {
        var query = SQLQueryString("UPDATE users SET updated_at = \(bind: now)")
        if let displayName = changes.displayName {
            query.appendInterpolation(unsafeRaw: ", display_name = ")
            query.appendInterpolation(bind: displayName)
        }
        if let locale = changes.locale {
            query.appendInterpolation(unsafeRaw: ", locale = ")
            query.appendInterpolation(bind: locale)
        }
        if let timeZone = changes.timeZone {
            query.appendInterpolation(unsafeRaw: ", time_zone_chosen = 1, time_zone = ")
            query.appendInterpolation(bind: timeZone)
        }
        if let phone = changes.phone {
            query.appendInterpolation(unsafeRaw: ", phone = ")
            query.appendInterpolation(bind: phone)
        }
        query.appendInterpolation(unsafeRaw: " WHERE id = ")
        query.appendInterpolation(bind: id)
        query.appendInterpolation(unsafeRaw: " RETURNING *")
        return try await db.raw(query).first(decoding: UserRecord.self)
    }
}
