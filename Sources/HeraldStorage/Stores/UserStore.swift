import Foundation
import HeraldCore
import SQLKit

/// A user as Herald knows them: created on their first authenticated call, with the
/// settings other modules need (the time zone for quiet hours, the locale for pushes).
public struct UserRecord: Sendable, Equatable, Codable {
    public var id: String
    public var role: String
    public var displayName: String?
    public var locale: String?
    public var timeZone: String
    /// E.164 (`+14155550123`), only shown to the driver of the user's active job.
    public var phone: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: String, role: String, displayName: String?, locale: String?, timeZone: String, phone: String? = nil, createdAt: Int64, updatedAt: Int64
    ) {
        self.phone = phone
        self.id = id
        self.role = role
        self.displayName = displayName
        self.locale = locale
        self.timeZone = timeZone
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, role, locale, phone
        case displayName = "display_name"
        case timeZone = "time_zone"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// A change to a user's settings; `nil` leaves a field as it is, `.some(nil)` clears it.
public struct UserChanges: Sendable, Equatable {
    public var displayName: String??
    public var locale: String??
    public var timeZone: String?
    public var phone: String??

    public init(displayName: String?? = nil, locale: String?? = nil, timeZone: String? = nil, phone: String?? = nil) {
        self.phone = phone
        self.displayName = displayName
        self.locale = locale
        self.timeZone = timeZone
    }
}

public struct UserStore: Sendable {
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

    /// Time zones of many users (users Herald has not seen are absent).
    public func timeZones(_ db: any SQLDatabase, ids: [String]) async throws -> [String: String] {
        var result: [String: String] = [:]
        for chunk in ids.chunked(500) {
            var query = SQLQueryString("SELECT id, time_zone FROM users WHERE id IN ")
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
        if let displayName = changes.displayName { query.appendInterpolation(unsafeRaw: ", display_name = "); query.appendInterpolation(bind: displayName) }
        if let locale = changes.locale { query.appendInterpolation(unsafeRaw: ", locale = "); query.appendInterpolation(bind: locale) }
        if let timeZone = changes.timeZone { query.appendInterpolation(unsafeRaw: ", time_zone = "); query.appendInterpolation(bind: timeZone) }
        if let phone = changes.phone { query.appendInterpolation(unsafeRaw: ", phone = "); query.appendInterpolation(bind: phone) }
        query.appendInterpolation(unsafeRaw: " WHERE id = ")
        query.appendInterpolation(bind: id)
        query.appendInterpolation(unsafeRaw: " RETURNING *")
        return try await db.raw(query).first(decoding: UserRecord.self)
    }
}
