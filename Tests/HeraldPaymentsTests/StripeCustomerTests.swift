import Foundation
import HeraldCore
import HeraldPayments
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

/// Stripe Customers: one per user, kept in `payment_customers` and shared by every node, with
/// each card attached to it before its first PaymentIntent, so the card can be charged again
/// (a re-authorisation after a refused increment, an off-session hold for a job booked ahead).
/// And the fake's rules that make those paths fail without a customer, as Stripe does.
@Suite(.timeLimit(.minutes(10)))
struct StripeCustomerTests {
    static let key = StripeGatewayTests.secretKey

    /// A gateway as a node runs it: its customers in the shared database.
    static func node(_ fake: FakeStripe, _ database: any Database) -> StripeGateway {
        StripeGatewayTests.gateway(fake, customers: PaymentCustomerStore(database: database, clock: SystemClock()))
    }

    static func booking(
        _ user: String, key: String, card: String = "pm_card_visa", amount: Int64 = 2000, offSession: Bool = false
    ) -> HoldRequest {
        HoldRequest(
            jobID: "job_" + key, customerID: user, amountMinor: amount, currency: "USD", paymentMethodID: card, idempotencyKey: key,
            offSession: offSession)
    }

    /// `payment_customers` for `provider`: user to customer.
    static func saved(_ database: any Database, provider: String = "stripe") async throws -> [String: String] {
        try await database.withConnection { db in
            try await db.raw("SELECT user_id, customer_id FROM payment_customers WHERE provider = \(bind: provider)").all()
                .reduce(into: [String: String]()) { out, row in
                    let user = try row.decode(column: "user_id", as: String.self)
                    out[user] = try row.decode(column: "customer_id", as: String.self)
                }
        }
    }

    // MARK: The store

    @Test(arguments: TestEngine.allCases)
    func theStoreKeepsTheFirstCustomerSavedForAUser(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { db in
            let node1 = PaymentCustomerStore(database: db, clock: SystemClock())
            let node2 = PaymentCustomerStore(database: db, clock: SystemClock())
            #expect(try await node1.customer(provider: "stripe", userID: "ann") == nil)
            #expect(try await node1.save(provider: "stripe", userID: "ann", customerID: "cus_first") == "cus_first")
            // Another node that created one too gets the first back, and so does everyone after.
            #expect(try await node2.save(provider: "stripe", userID: "ann", customerID: "cus_second") == "cus_first")
            #expect(try await node2.customer(provider: "stripe", userID: "ann") == "cus_first")
            // Per provider.
            #expect(try await node2.save(provider: "other", userID: "ann", customerID: "c_other") == "c_other")

            // Many saves at once for one new user: one row, and every caller is told the same.
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<8 {
                    let store = index % 2 == 0 ? node1 : node2
                    group.addTask { try await store.save(provider: "stripe", userID: "bob", customerID: "cus_bob\(index)") }
                }
                var all: [String] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.count == 8 && Set(answers).count == 1)
            #expect(try await Self.saved(db) == ["ann": "cus_first", "bob": answers[0]])
        }
    }

    // MARK: One customer per user

    /// Two holds on one node, then one on another node sharing the database: one Stripe
    /// customer, created once, the card attached once, and every PaymentIntent on it.
    @Test(arguments: TestEngine.allCases)
    func aUserHasOneCustomerAcrossHoldsAndNodes(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { db in
            try await FakeStripe.run(secretKey: Self.key) { fake in
                let nodeA = Self.node(fake, db)
                let nodeB = Self.node(fake, db)
                var holds: [HoldState] = []
                holds.append(try await nodeA.authorize(Self.booking("ann", key: "a1")))
                holds.append(try await nodeA.authorize(Self.booking("ann", key: "a2")))
                holds.append(try await nodeB.authorize(Self.booking("ann", key: "b1")))
                #expect(holds.allSatisfy { $0.status == .authorized })

                let customers = await fake.state.customers
                #expect(customers.count == 1)
                let customer = try #require(customers.values.first)
                #expect(customer.metadata == ["herald_user_id": "ann"])
                #expect(try await Self.saved(db) == ["ann": customer.id])
                let intents = await fake.state.intents
                #expect(holds.map { intents[$0.reference]?.customer } == [customer.id, customer.id, customer.id])
                #expect(await fake.state.paymentMethods["pm_card_visa"]?.customer == customer.id)

                let posts = await fake.state.posts.map(\.path)
                #expect(posts.filter { $0 == "/v1/customers" }.count == 1)
                #expect(posts.filter { $0.hasSuffix("/attach") }.count == 1)
                #expect(await fake.state.violations.isEmpty)
            }
        }
    }

    /// Two nodes booking for one new user at the same moment: both create the customer (with
    /// the same idempotency key, so Stripe answers both with one), both attach the card (one
    /// is refused and finds it already on the customer), and the database keeps one row.
    @Test(arguments: TestEngine.allCases)
    func twoNodesPreparingOneNewUserAtOnceEndWithOneCustomer(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { db in
            try await FakeStripe.run(secretKey: Self.key) { fake in
                let nodeA = Self.node(fake, db)
                let nodeB = Self.node(fake, db)
                async let first = nodeA.authorize(Self.booking("bob", key: "race-a"))
                async let second = nodeB.authorize(Self.booking("bob", key: "race-b"))
                let holds = try await [first, second]
                #expect(holds.allSatisfy { $0.status == .authorized })

                let customers = await fake.state.customers
                #expect(customers.count == 1)
                let customer = try #require(customers.values.first?.id)
                #expect(try await Self.saved(db) == ["bob": customer])
                let intents = await fake.state.intents
                #expect(holds.map { intents[$0.reference]?.customer } == [customer, customer])
                #expect(await fake.state.paymentMethods["pm_card_visa"]?.customer == customer)
                #expect(await fake.state.violations.isEmpty)
            }
        }
    }

    // MARK: The card charged again

    /// The card cannot be incremented: the raise is a new authorisation on the same card,
    /// which Stripe allows only because the card was saved to the user's customer at booking.
    @Test func aReauthorisationAfterARefusedIncrementChargesTheSavedCard() async throws {
        try await TestDatabase.with(.sqlite) { db in
            try await FakeStripe.run(secretKey: Self.key) { fake in
                let gateway = Self.node(fake, db)
                let hold = try await gateway.authorize(Self.booking("ann", key: "book", card: FakeStripeState.noIncrementCard))
                let raised = try await gateway.changeAmount(hold, to: 3100, reason: "volume_increase", idempotencyKey: "raise")
                #expect(raised.reference != hold.reference)
                #expect(raised.status == .authorized && raised.authorizedMinor == 3100)

                let customer = try #require(try await Self.saved(db)["ann"])
                let old = await fake.state.intents[hold.reference]
                let new = await fake.state.intents[raised.reference]
                #expect(old?.customer == customer && new?.customer == customer)
                #expect(old?.status == "canceled" && new?.paymentMethod == FakeStripeState.noIncrementCard)
                let create = try #require(await fake.state.posts.last(where: { $0.path == "/v1/payment_intents" }))
                #expect(create.field("customer") == customer && create.field("payment_method") == FakeStripeState.noIncrementCard)
                #expect(await fake.state.violations.isEmpty)
            }
        }
    }

    /// A hold authorised before Herald kept customers (its card used without one): the
    /// re-authorisation finds the user's customer and tries to save the card to it; Stripe
    /// refuses a card already used without a customer, and the customer is told plainly.
    @Test func aCardSpentWithoutACustomerIsDeclinedClearlyOnReauthorisation() async throws {
        try await TestDatabase.with(.sqlite) { db in
            try await FakeStripe.run(secretKey: Self.key) { fake in
                let legacy = try await fake.post(
                    "/v1/payment_intents",
                    "amount=2000&currency=usd&confirm=true&capture_method=manual&payment_method=\(FakeStripeState.noIncrementCard)"
                        + "&payment_method_options%5Bcard%5D%5Brequest_incremental_authorization%5D=if_available&metadata%5Bcustomer_id%5D=ann",
                    secretKey: Self.key)
                #expect(legacy.status == 200)
                let reference = try #require(legacy.json?["id"]?.stringValue)
                let hold = HoldState(reference: reference, status: .authorized, authorizedMinor: 2000, amountMinor: 2000, capturedMinor: 0, currency: "USD")

                let error = await #expect(throws: PaymentError.self) {
                    try await Self.node(fake, db).changeAmount(hold, to: 3100, reason: "volume_increase", idempotencyKey: "raise")
                }
                #expect(error?.kind == .declined)
                #expect(error?.message == "The card was used before without being saved and cannot be used again; add it again.")
                // The customer was found for the user and kept; the old hold is untouched.
                #expect(try await Self.saved(db).keys.sorted() == ["ann"])
                #expect(await fake.state.intents[reference]?.status == "requires_capture")
                #expect(await fake.state.intentCount == 1)
            }
        }
    }

    /// A job booked ahead: its hold is taken days later with nobody in the app, on the
    /// customer the card is saved to. A second one for the same user reuses both.
    @Test func anOffSessionHoldChargesTheCardOnTheUsersCustomer() async throws {
        try await TestDatabase.with(.sqlite) { db in
            try await FakeStripe.run(secretKey: Self.key) { fake in
                let gateway = Self.node(fake, db)
                let first = try await gateway.authorize(Self.booking("ann", key: "ahead-1", offSession: true))
                let second = try await gateway.authorize(Self.booking("ann", key: "ahead-2", amount: 2500, offSession: true))
                #expect(first.status == .authorized && second.status == .authorized && second.authorizedMinor == 2500)

                let customer = try #require(try await Self.saved(db)["ann"])
                let posts = await fake.state.posts
                #expect(
                    posts.map(\.path) == [
                        "/v1/customers", "/v1/payment_methods/pm_card_visa/attach", "/v1/payment_intents", "/v1/payment_intents",
                    ])
                for create in posts.filter({ $0.path == "/v1/payment_intents" }) {
                    #expect(create.field("off_session") == "true" && create.field("customer") == customer)
                    // Setting the card up for later is for when the customer is present.
                    #expect(create.field("setup_future_usage") == nil)
                }
                #expect(await fake.state.violations.isEmpty)
            }
        }
    }

    /// A card saved to another user's customer is refused before any PaymentIntent, with a
    /// message the app can show.
    @Test func aCardSavedToAnotherUsersCustomerIsDeclined() async throws {
        try await TestDatabase.with(.sqlite) { db in
            try await FakeStripe.run(secretKey: Self.key) { fake in
                let gateway = Self.node(fake, db)
                _ = try await gateway.authorize(Self.booking("ann", key: "ann-1", card: "pm_card_shared"))
                let postsBefore = await fake.state.posts.count
                let error = await #expect(throws: PaymentError.self) {
                    try await gateway.authorize(Self.booking("bob", key: "bob-1", card: "pm_card_shared"))
                }
                #expect(error?.kind == .declined)
                #expect(error?.message == "The card is saved to another customer's account; use a different card.")
                // Bob's customer was created; no attach, no PaymentIntent.
                #expect(await fake.state.posts.dropFirst(postsBefore).map(\.path) == ["/v1/customers"])
                #expect(await fake.state.intentCount == 1)
                let saved = try await Self.saved(db)
                #expect(await fake.state.paymentMethods["pm_card_shared"]?.customer == saved["ann"])
            }
        }
    }

    // MARK: The fake refuses what Stripe refuses

    @Test func theFakeRefusesACardUsedTwiceWithoutACustomer() async throws {
        try await FakeStripe.run(secretKey: Self.key) { fake in
            let pay = "amount=100&currency=usd&confirm=true&capture_method=manual&payment_method=pm_card_once"
            #expect(try await fake.post("/v1/payment_intents", pay, secretKey: Self.key).status == 200)
            let again = try await fake.post("/v1/payment_intents", pay, secretKey: Self.key)
            #expect(again.status == 400)
            #expect(again.json?["error"]?["type"] == "invalid_request_error" && again.json?["error"]?["param"] == "payment_method")
            #expect(again.json?["error"]?["message"]?.stringValue == FakeStripeState.spentCardMessage)
            // Nor can it be saved any more.
            let customer = try #require(try await fake.post("/v1/customers", "metadata%5Bherald_user_id%5D=ann", secretKey: Self.key).json?["id"]?.stringValue)
            let attach = try await fake.post("/v1/payment_methods/pm_card_once/attach", "customer=\(customer)", secretKey: Self.key)
            #expect(attach.status == 400 && attach.json?["error"]?["message"]?.stringValue == FakeStripeState.spentCardMessage)
            #expect(await fake.state.intentCount == 1)
        }
    }

    @Test func theFakeRefusesOffSessionWithoutACustomer() async throws {
        try await FakeStripe.run(secretKey: Self.key) { fake in
            let pay = "amount=100&currency=usd&confirm=true&capture_method=manual&off_session=true&payment_method=pm_card_visa"
            let refused = try await fake.post("/v1/payment_intents", pay, secretKey: Self.key)
            #expect(refused.status == 400)
            #expect(refused.json?["error"]?["type"] == "invalid_request_error" && refused.json?["error"]?["param"] == "customer")
            #expect(await fake.state.intentCount == 0)
            // With the customer the card is saved to, it goes through.
            let customer = try #require(try await fake.post("/v1/customers", "", secretKey: Self.key).json?["id"]?.stringValue)
            #expect(try await fake.post("/v1/payment_methods/pm_card_visa/attach", "customer=\(customer)", secretKey: Self.key).status == 200)
            let taken = try await fake.post("/v1/payment_intents", pay + "&customer=\(customer)", secretKey: Self.key)
            #expect(taken.status == 200 && taken.json?["status"] == "requires_capture" && taken.json?["customer"]?.stringValue == customer)
        }
    }

    @Test func theFakeRefusesACardSavedToOneCustomerForAnother() async throws {
        try await FakeStripe.run(secretKey: Self.key) { fake in
            let ann = try #require(try await fake.post("/v1/customers", "", secretKey: Self.key).json?["id"]?.stringValue)
            let bob = try #require(try await fake.post("/v1/customers", "", secretKey: Self.key).json?["id"]?.stringValue)
            let attached = try await fake.post("/v1/payment_methods/pm_card_ann/attach", "customer=\(ann)", secretKey: Self.key)
            #expect(attached.status == 200 && attached.json?["customer"]?.stringValue == ann)
            let pay = "amount=100&currency=usd&confirm=true&capture_method=manual&payment_method=pm_card_ann"
            for customer in ["&customer=\(bob)", ""] {
                let refused = try await fake.post("/v1/payment_intents", pay + customer, secretKey: Self.key)
                #expect(refused.status == 400 && refused.json?["error"]?["param"] == "payment_method")
            }
            // Attached once: attaching again is refused, to another customer or the same.
            for customer in [bob, ann] {
                let again = try await fake.post("/v1/payment_methods/pm_card_ann/attach", "customer=\(customer)", secretKey: Self.key)
                #expect(again.status == 400 && again.json?["error"]?["type"] == "invalid_request_error")
            }
            #expect(await fake.state.paymentMethods["pm_card_ann"]?.customer == ann)
            #expect(await fake.state.intentCount == 0)
            #expect(try await fake.post("/v1/payment_intents", pay + "&customer=\(ann)", secretKey: Self.key).status == 200)
        }
    }
}
