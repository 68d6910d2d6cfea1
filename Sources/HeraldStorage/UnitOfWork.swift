import SQLKit
import Synchronization

/// One transaction and the effects that must follow its commit (socket publishes,
/// notification delivery, worker wake-ups).
///
/// Why effects are registered rather than run by the caller: an effect run before the
/// commit tells clients of a change that may still roll back, and one the caller must
/// remember to run after it is easy to forget on one path. Here the transaction's code
/// registers them next to the rows they follow; `Database.unitOfWork` runs them in order
/// once the commit succeeded and drops them when it threw.
public final class UnitOfWork: Sendable {
    /// The transaction's executor, for stores.
    public let db: any SQLDatabase
    private let effects = Mutex<[@Sendable () async -> Void]>([])

    init(db: any SQLDatabase) {
        self.db = db
    }

    /// Runs `effect` after the commit (never on rollback), after the ones registered before it.
    public func afterCommit(_ effect: @escaping @Sendable () async -> Void) {
        effects.withLock { $0.append(effect) }
    }

    func takeEffects() -> [@Sendable () async -> Void] {
        effects.withLock { effects in
            defer { effects.removeAll() }
            return effects
        }
    }
}

extension Database {
    /// Runs `body` in one transaction, then — only if it committed — the effects it
    /// registered. An effect cannot undo the commit; it handles its own failures.
    public func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        let (result, effects) = try await transaction { db in
            let work = UnitOfWork(db: db)
            let result = try await body(work)
            return (result, work.takeEffects())
        }
        for effect in effects { await effect() }
        return result
    }
}
