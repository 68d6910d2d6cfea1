/// Where a card gateway keeps the customer each Herald user has at its provider.
///
/// Why the gateway needs one: Stripe lets a card be charged more than once only while it is
/// attached to a Customer. A hold re-authorised after a refused increment, and a hold taken
/// off session days after a booking, both charge the card again, so every user gets one
/// Stripe Customer, kept for good, that their cards are attached to.
///
/// Why a protocol: the gateway speaks HTTP and has no database of its own; the composition
/// root gives it `PaymentCustomerStore` (the `payment_customers` table), tests may give it a
/// map. An implementation must keep the first customer saved for a user (nodes can race to
/// create one) and must not lose it: a new customer would not own the cards already attached.
public protocol PaymentCustomerDirectory: Sendable {
    /// The customer saved for `userID` at `provider`, or nil.
    func customer(provider: String, userID: String) async throws -> String?

    /// Saves `customerID` for `userID` unless one is already saved, and answers the one saved
    /// (the other node's, when two created one at once).
    func save(provider: String, userID: String, customerID: String) async throws -> String
}
