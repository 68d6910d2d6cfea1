import HeraldCore
import HeraldStorage
import SQLKit

/// `payment_customers`: the customer each user has at a card provider (Stripe `cus_…`).
///
/// Why insert-if-absent then read back, not read-then-write: two nodes booking for one new user
/// at once both find no row and both create a customer; the primary key (provider, user_id)
/// lets exactly one insert win, and the loser reads and uses the winner's, so all of the
/// user's cards end up on the one customer. (Stripe's side: the gateway creates customers with
/// an idempotency key derived from the user, so within Stripe's 24 hours of key retention the
/// racing creations are one customer anyway; later, the losing customer is an empty record
/// nothing refers to.)
package struct PaymentCustomerStore: PaymentCustomerDirectory {
    let database: any Database
    let clock: any HeraldClock

    package init(database: any Database, clock: any HeraldClock) {
        self.database = database
        self.clock = clock
    }

    package func customer(provider: String, userID: String) async throws -> String? {
        try await database.withConnection { db in try await Self.read(db, provider: provider, userID: userID) }
    }

    package func save(provider: String, userID: String, customerID: String) async throws -> String {
        let now = clock.now().epochMilliseconds
        return try await database.withConnection { db -> String in
            try await db.raw(
                """
                INSERT INTO payment_customers (provider, user_id, customer_id, created_at)
                VALUES (\(bind: provider), \(bind: userID), \(bind: customerID), \(bind: now))
                ON CONFLICT (provider, user_id) DO NOTHING
                """
            ).run()
            // Nothing deletes rows, so the row is there: this node's, or the one that won.
            guard let saved = try await Self.read(db, provider: provider, userID: userID) else { throw StoreError.noRowReturned }
            return saved
        }
    }

    static func read(_ db: any SQLDatabase, provider: String, userID: String) async throws -> String? {
        try await db.raw("SELECT customer_id FROM payment_customers WHERE provider = \(bind: provider) AND user_id = \(bind: userID)")
            .first()?.decode(column: "customer_id", as: String.self)
    }
}
