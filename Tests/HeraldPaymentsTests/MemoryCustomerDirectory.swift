import HeraldPayments

/// Customers kept in memory, for gateway tests that are about the wire, not the database
/// (`PaymentCustomerStore` has its own tests on both engines). Keeps the first saved, as the
/// store does.
actor MemoryCustomerDirectory: PaymentCustomerDirectory {
    private var saved: [String: String] = [:]

    func customer(provider: String, userID: String) -> String? {
        saved[provider + "/" + userID]
    }

    func save(provider: String, userID: String, customerID: String) -> String {
        let key = provider + "/" + userID
        if let existing = saved[key] { return existing }
        saved[key] = customerID
        return customerID
    }
}
