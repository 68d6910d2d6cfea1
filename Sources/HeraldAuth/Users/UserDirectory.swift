import HeraldCore
import HeraldStorage
import SQLKit
import Synchronization

/// The users table as other modules see it: the record made on a user's first authenticated
/// call, and the reads and changes they compose into their own transactions (a profile, the
/// time zones quiet hours need). `UserStore` stays inside this module.
///
/// Why a cache of known ids: the insert is needed once per user, not once per request; the
/// set is bounded and simply cleared when full (a cleared id costs one no-op insert).
public final class UserDirectory: Sendable {
    private let database: any Database
    private let store = UserStore()
    private let clock: any HeraldClock
    private let known = Mutex<Set<String>>([])
    private let capacity: Int

    public init(database: any Database, clock: any HeraldClock, capacity: Int = 100_000) {
        self.database = database
        self.clock = clock
        self.capacity = capacity
    }

    public func ensureKnown(userID: String, role: String) async throws {
        if known.withLock({ $0.contains(userID) }) { return }
        let now = clock.now().epochMilliseconds
        _ = try await database.withConnection { [store] db in
            try await store.ensure(db, id: userID, role: role, now: now)
        }
        known.withLock { set in
            if set.count >= capacity { set.removeAll(keepingCapacity: true) }
            set.insert(userID)
        }
    }
}

extension UserDirectory {
    /// The user, if known.
    public static func find(_ db: any SQLDatabase, id: String) async throws -> UserRecord? {
        try await UserStore().find(db, id: id)
    }

    /// Creates the user if new; true when this call created them.
    @discardableResult
    public static func ensure(_ db: any SQLDatabase, id: String, role: String, now: Int64) async throws -> Bool {
        try await UserStore().ensure(db, id: id, role: role, now: now)
    }

    /// Applies `changes`; nil when the user does not exist.
    @discardableResult
    public static func update(_ db: any SQLDatabase, id: String, changes: UserChanges, now: Int64) async throws -> UserRecord? {
        try await UserStore().update(db, id: id, changes: changes, now: now)
    }

    /// The IANA time zone of each known user among `ids`.
    public static func timeZones(_ db: any SQLDatabase, ids: [String]) async throws -> [String: String] {
        try await UserStore().timeZones(db, ids: ids)
    }
}
