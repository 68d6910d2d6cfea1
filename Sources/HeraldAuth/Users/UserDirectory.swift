import HeraldAuth
import HeraldCore
import HeraldStorage
import Synchronization

/// Creates a user record on a user's first authenticated call.
///
/// Why a cache of known ids: the insert is needed once per user, not once per request; the
/// set is bounded and simply cleared when full (a cleared id costs one no-op insert).
final class UserDirectory: Sendable {
    private let database: any Database
    private let store = UserStore()
    private let clock: any HeraldClock
    private let known = Mutex<Set<String>>([])
    private let capacity: Int

    init(database: any Database, clock: any HeraldClock, capacity: Int = 100_000) {
        self.database = database
        self.clock = clock
        self.capacity = capacity
    }

    func ensureKnown(userID: String, role: String) async throws {
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
