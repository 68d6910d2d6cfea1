import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldStorage
import SQLKit
import Testing

/// The whole job payment flow through the real application with `payments.provider: stripe`,
/// against the fake Stripe: what reaches Stripe, in which order, with which amounts and keys.
@Suite(.timeLimit(.minutes(10)))
struct StripeFlowTests {
    static let key = "sk_test_51HeraldFLOWkey0123456789abcdef"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)  // a Friday morning: no surcharges

    static func driver(_ s: TestSession, _ id: String) async throws -> String {
        let token = try await s.token(id, .driver)
        #expect(try await s.request(.put, "/api/v1/drivers/me", token: token, json: ["name": "Dan", "truck_type": "box_truck"]).status == 201)
        let ops = try await s.token("ops", .operator)
        #expect(try await s.request(.post, "/api/v1/operators/drivers/\(id)/approval", token: ops, json: ["status": "approved"]).status == 200)
        #expect(try await s.request(.post, "/api/v1/drivers/online", token: token, json: ["online": true]).status == 200)
        #expect(try await s.request(.post, "/api/v1/drivers/location", token: token, json: ["lat": 37.8, "lng": -122.42, "sequence": 1]).status == 200)
        return token
    }

    static func book(_ s: TestSession, _ customer: String, card: String?) async throws -> TestReply {
        var body: [String: JSONValue] = [
            "address": "1 Market St", "lat": 37.7749, "lng": -122.4194, "volume_estimate": 4, "items": [["category": "furniture", "quantity": 1]],
        ]
        if let card { body["payment_method_id"] = .string(card) }
        return try await s.request(.post, "/api/v1/jobs", token: try await s.token(customer), json: .object(body))
    }

    static func arrive(_ s: TestSession, _ jobID: String, _ driver: String) async throws {
        #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(jobID)/accept", token: driver).status == 200)
        for step in ["en_route", "arrived"] {
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(jobID)/status", token: driver, json: ["status": .string(step)]).status == 200)
        }
    }

    /// The application with `payments.provider: stripe` against a fresh fake Stripe.
    ///
    /// Why the configuration is built here rather than through `TestServer.run`'s `configure`
    /// closure: three runs of the debug test build crashed (a bad pointer reading the
    /// configuration's arrays in its validation) right after such a closure, capturing the fake,
    /// ran behind an `await`; plain mutations of a local value leave nothing for that to touch.
    static func withStripe(clock: ManualClock = ManualClock(start), _ body: @Sendable @escaping (FakeStripe, TestSession) async throws -> Void) async throws {
        try await FakeStripe.run(secretKey: Self.key) { fake in
            var config = try await TestServer.config(.sqlite)
            config.payments.provider = .stripe
            config.payments.stripe.baseURL = fake.baseURL
            config.payments.stripe.secretKey = Self.key
            config.payments.stripe.timeoutSeconds = 120  // the maximum: a loaded machine answers late, not never
            try await TestServer.run(config: config, clock: clock) { s in try await body(fake, s) }
        }
    }

    /// `payment_customers` as the server saved it: user to Stripe customer.
    static func savedCustomers(_ s: TestSession) async throws -> [String: String] {
        try await s.runtime.database.withConnection { db in
            try await db.raw("SELECT user_id, customer_id FROM payment_customers WHERE provider = 'stripe'").all()
                .reduce(into: [String: String]()) { out, row in
                    let user = try row.decode(column: "user_id", as: String.self)
                    out[user] = try row.decode(column: "customer_id", as: String.self)
                }
        }
    }

    @Test func stripeSeesTheHoldItsRaiseAndTheCapturesOfTheWholeFlow() async throws {
        try await Self.withStripe { fake, s in
            let driver = try await Self.driver(s, "dan")
            // No card, or a card that is refused: no job.
            let noCard = try await Self.book(s, "ann", card: nil)
            #expect(noCard.status == 422 && noCard.json?["error"]?["details"]?["fields"]?[0]?["field"] == "payment_method_id")
            let refused = try await Self.book(s, "ann", card: "pm_card_chargeDeclinedInsufficientFunds")
            #expect(refused.status == 402 && refused.errorCode == "PAYMENT_DECLINED")
            #expect(try await s.request(.get, "/api/v1/jobs", token: try await s.token("ann")).data?["total"] == 0)

            // 1. Booked (23400 held), raised to 32150 on approval (a first refusal keeps the proposal open), captured at completion.
            let booked = try await Self.book(s, "ann", card: "pm_card_visa")
            #expect(booked.status == 201)
            let jobID = try #require(booked.data?["id"]?.stringValue)
            try await Self.arrive(s, jobID, driver)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(jobID)/volume", token: driver, json: ["actual_volume": 6.5]).status == 201)
            await fake.state.declineIncrements(above: 30_000)
            let ann = try await s.token("ann")
            let declinedRaise = try await s.request(.post, "/api/v1/jobs/\(jobID)/volume/approve", token: ann)
            #expect(declinedRaise.status == 402 && declinedRaise.errorCode == "PAYMENT_DECLINED")
            #expect(try await s.request(.get, "/api/v1/jobs/\(jobID)", token: ann).data?["adjustment"]?["status"] == "pending")
            await fake.state.declineIncrements(above: 1_000_000)
            let approved = try await s.request(.post, "/api/v1/jobs/\(jobID)/volume/approve", token: ann)
            #expect(approved.status == 200 && approved.data?["payment"]?["authorized_minor"] == 32_150)
            for step in ["started", "completed"] {
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(jobID)/status", token: driver, json: ["status": .string(step)]).status == 200)
            }
            let reference = try #require(
                approved.data?["payment"]?["provider"] == "stripe" ? await s.runtime.dispatch.service.payments.hold(jobID)?.reference : nil)
            let (_, intent) = try await fake.retrieve(reference, secretKey: Self.key)
            #expect(intent?["status"] == "succeeded" && intent?["amount_received"] == 32_150)

            // 2. Declined: only the trip fee is taken.
            let second = try await Self.book(s, "ann", card: "pm_card_visa")
            let secondID = try #require(second.data?["id"]?.stringValue)
            try await Self.arrive(s, secondID, driver)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(secondID)/volume", token: driver, json: ["actual_volume": 8]).status == 201)
            let declined = try await s.request(.post, "/api/v1/jobs/\(secondID)/volume/decline", token: ann)
            #expect(declined.status == 200 && declined.data?["payment"]?["captured_minor"] == 5_000)
            let secondReference = try #require(await s.runtime.dispatch.service.payments.hold(secondID)?.reference)
            let (_, declinedIntent) = try await fake.retrieve(secondReference, secretKey: Self.key)
            #expect(declinedIntent?["status"] == "succeeded" && declinedIntent?["amount_received"] == 5_000)

            // What Stripe saw, call by call.
            let posts = await fake.state.posts
            let calls = posts.map { post in
                post.path.replacingOccurrences(of: reference, with: "{1}").replacingOccurrences(of: secondReference, with: "{2}")
            }
            #expect(
                calls == [
                    "/v1/customers",  // ann's, once
                    "/v1/payment_methods/pm_card_chargeDeclinedInsufficientFunds/attach", "/v1/payment_intents",  // the refused card
                    "/v1/payment_methods/pm_card_visa/attach",
                    "/v1/payment_intents", "/v1/payment_intents/{1}/increment_authorization", "/v1/payment_intents/{1}/increment_authorization",
                    "/v1/payment_intents/{1}",  // adjusted=true, reason=volume_increase
                    "/v1/payment_intents/{1}/capture",
                    "/v1/payment_intents", "/v1/payment_intents/{2}/capture",  // the card is ann's already: no attach
                ])
            #expect(posts.allSatisfy { $0.header("Idempotency-Key") != nil && $0.header("Authorization") == "Bearer \(Self.key)" })
            try #require(posts.count == 11)
            let customer = try #require(await fake.state.customers.values.first?.id)
            #expect(posts[0].field("metadata[herald_user_id]") == "ann" && posts[3].field("customer") == customer)
            #expect(posts[4].field("capture_method") == "manual" && posts[4].field("amount") == "23400" && posts[4].field("currency") == "usd")
            #expect(posts[4].field("metadata[job_id]") == jobID && posts[4].field("payment_method") == "pm_card_visa")
            #expect(posts[4].field("customer") == customer && posts[9].field("customer") == customer)
            #expect(posts[4].field("setup_future_usage") == "off_session")
            #expect(posts[6].field("amount") == "32150" && posts[8].field("amount_to_capture") == "32150")
            #expect(posts[7].field("metadata[adjusted]") == "true" && posts[7].field("metadata[reason]") == "volume_increase")
            #expect(posts[10].field("amount_to_capture") == "5000")
            // The raise tried again after the card's refusal carried a new key (Stripe would
            // replay the refusal for the old one).
            #expect(posts[5].header("Idempotency-Key") != posts[6].header("Idempotency-Key"))
            #expect(try await Self.savedCustomers(s) == ["ann": customer])
            #expect(await fake.state.violations.isEmpty)
        }
    }

    /// A card that cannot be incremented: approving the higher price authorises it anew and
    /// releases the booking's hold; the job's payment follows the new PaymentIntent to the end.
    @Test func anIneligibleCardIsReauthorisedAndTheJobCapturesTheNewHold() async throws {
        try await Self.withStripe { fake, s in
            let driver = try await Self.driver(s, "dan")
            let booked = try await Self.book(s, "ann", card: FakeStripeState.noIncrementCard)
            let jobID = try #require(booked.data?["id"]?.stringValue)
            let first = try #require(await s.runtime.dispatch.service.payments.hold(jobID)?.reference)
            try await Self.arrive(s, jobID, driver)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(jobID)/volume", token: driver, json: ["actual_volume": 6.5]).status == 201)
            let approved = try await s.request(.post, "/api/v1/jobs/\(jobID)/volume/approve", token: try await s.token("ann"))
            #expect(approved.status == 200 && approved.data?["payment"]?["authorized_minor"] == 32_150)
            let second = try #require(await s.runtime.dispatch.service.payments.hold(jobID)?.reference)
            #expect(second != first)
            #expect(await fake.state.intents[first]?.status == "canceled")
            #expect(await fake.state.intents[second]?.metadata["replaces"] == first)
            // Charged a second time: possible only because the card was saved to ann's customer.
            let customer = try #require(await fake.state.intents[first]?.customer)
            #expect(await fake.state.intents[second]?.customer == customer)
            #expect(await fake.state.paymentMethods[FakeStripeState.noIncrementCard]?.customer == customer)
            for step in ["started", "completed"] {
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(jobID)/status", token: driver, json: ["status": .string(step)]).status == 200)
            }
            let (_, intent) = try await fake.retrieve(second, secretKey: Self.key)
            #expect(intent?["status"] == "succeeded" && intent?["amount_received"] == 32_150)
            #expect(await fake.state.violations.isEmpty)
        }
    }

    /// Jobs booked ten days ahead: nothing reaches Stripe at booking; four days later (when a
    /// hold covers the job) each is authorised off session. The card that refuses cancels its
    /// job, and its customer and driver are told.
    @Test func aJobBookedAheadIsAuthorisedOffSessionWhenDueAndCancelledIfTheCardRefuses() async throws {
        let clock = ManualClock(Self.start)
        try await Self.withStripe(clock: clock) { fake, s in
            let dan = try await Self.driver(s, "dan")
            let eve = try await Self.driver(s, "eve")
            let scheduled = Timestamp.string(epochMilliseconds: Self.start.addingTimeInterval(10 * 86_400).epochMilliseconds)
            var ids: [String] = []
            for (customer, card) in [("ann", "pm_card_visa"), ("bob", FakeStripeState.authenticationCard)] {
                let body: JSONValue = [
                    "address": "1 Market St", "lat": 37.7749, "lng": -122.4194, "volume_estimate": 4, "items": [["category": "furniture", "quantity": 1]],
                    "payment_method_id": .string(card), "scheduled_at": .string(scheduled),
                ]
                let booked = try await s.request(.post, "/api/v1/jobs", token: try await s.token(customer), json: body)
                #expect(booked.status == 201)
                ids.append(try #require(booked.data?["id"]?.stringValue))
            }
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(ids[0])/accept", token: dan).status == 200)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(ids[1])/accept", token: eve).status == 200)
            #expect(await fake.state.posts.isEmpty)

            clock.advance(by: 4 * 86_400)
            var statuses: [String?] = []
            try await waitUntil("the due payments were taken", every: .milliseconds(50)) {
                _ = try await s.runtime.dispatch.service.transitions.runDuePayments()
                statuses = [
                    try await s.runtime.dispatch.service.payments.hold(ids[0])?.status.rawValue,
                    try await s.request(.get, "/api/v1/jobs/\(ids[1])", token: try await s.token("bob")).data?["status"]?.stringValue,
                ]
                return statuses == ["authorized", "cancelled"]
            }
            #expect(statuses == ["authorized", "cancelled"])
            // Per customer: their Stripe customer, their card saved to it, the hold off session
            // on that customer (Stripe refuses off-session payments without one).
            let posts = await fake.state.posts
            let intents = posts.filter { $0.path == "/v1/payment_intents" }
            #expect(posts.count == 6 && intents.count == 2)
            #expect(intents.allSatisfy { $0.field("off_session") == "true" && $0.field("capture_method") == "manual" })
            #expect(intents.allSatisfy { $0.field("setup_future_usage") == nil })
            #expect(Set(intents.compactMap { $0.field("metadata[job_id]") }) == Set(ids))
            let saved = try await Self.savedCustomers(s)
            #expect(saved.keys.sorted() == ["ann", "bob"])
            for intent in intents {
                #expect(intent.field("customer") == intent.field("metadata[customer_id]").flatMap { saved[$0] })
            }
            #expect(await fake.state.paymentMethods["pm_card_visa"]?.customer == saved["ann"])

            // The refused job: cancelled by the system, its hold never taken, both parties told.
            let eveNow = try await s.token("eve", .driver)  // the first expired in the four days
            let refused = try await s.request(.get, "/api/v1/jobs/\(ids[1])", token: try await s.token("bob"))
            #expect(refused.data?["cancelled_by"] == "system" && refused.data?["payment"]?["status"] == "cancelled")
            let toBob = try await s.request(.get, "/api/v1/notifications?limit=20", token: try await s.token("bob")).data?["notifications"]?[0]
            #expect(toBob?["title"] == "Booking cancelled" && toBob?["data"]?["reason"] == "payment_declined" && toBob?["data"]?["job_id"] == .string(ids[1]))
            let toEve = try await s.request(.get, "/api/v1/notifications?limit=20", token: eveNow).data?["notifications"]?[0]
            #expect(toEve?["title"] == "Job cancelled" && toEve?["data"]?["status"] == "cancelled")
            let events = try await s.runtime.dispatch.service.payments.events(ids[1]).map { "\($0.operation):\($0.outcome):\($0.errorCode ?? "")" }
            #expect(events == ["authorize:failed:authentication_required"])
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(ids[1])/status", token: eveNow, json: ["status": "en_route"]).status == 409)
            #expect(await fake.state.violations.isEmpty)
        }
    }
}
