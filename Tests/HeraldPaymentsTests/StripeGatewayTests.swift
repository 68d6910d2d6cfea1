import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldPayments
import HeraldTestSupport
import Logging
import NIOCore
import Synchronization
import Testing

/// `StripeGateway` against `FakeStripe` over a real loopback socket.
@Suite(.timeLimit(.minutes(10)))
struct StripeGatewayTests {
    static let secretKey = "sk_test_51HeraldSECRETkey0123456789abcdef"

    static func gateway(
        // Generous: the whole suite runs in parallel on two cores (tests of the timeout itself pass their own).
        _ fake: FakeStripe, key: String = secretKey, timeout: Duration = Patience.limit, logs: LogCapture = LogCapture(),
        customers: any PaymentCustomerDirectory = MemoryCustomerDirectory()
    ) -> StripeGateway {
        StripeGateway(baseURL: fake.baseURL, secretKey: key, timeout: timeout, customers: customers, logger: logs.logger)
    }

    static func booking(
        _ amount: Int64 = 1500, key: String = "authorize-job-1", paymentMethod: String? = "pm_card_visa",
        jobID: String = "job_1", customerID: String = "cust_1"
    ) -> HoldRequest {
        HoldRequest(jobID: jobID, customerID: customerID, amountMinor: amount, currency: "USD", paymentMethodID: paymentMethod, idempotencyKey: key)
    }

    // MARK: The hold's life

    @Test func authorizeRaiseAndCapturePartOfTheHold() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking(1500))
            #expect(hold.reference.hasPrefix("pi_"))
            #expect(hold.status == .authorized)
            #expect(hold.authorizedMinor == 1500 && hold.amountMinor == 1500 && hold.capturedMinor == 0)
            #expect(hold.currency == "USD")

            let raised = try await gateway.changeAmount(hold, to: 2000, reason: "volume_increase", idempotencyKey: "raise-1")
            #expect(
                raised == HoldState(reference: hold.reference, status: .authorized, authorizedMinor: 2000, amountMinor: 2000, capturedMinor: 0, currency: "USD")
            )

            let captured = try await gateway.capture(raised, amountMinor: 1800, idempotencyKey: "capture-1")
            #expect(captured.status == .captured)
            #expect(captured.capturedMinor == 1800 && captured.amountMinor == 1800)

            let (status, intent) = try await fake.retrieve(hold.reference, secretKey: Self.secretKey)
            #expect(status == 200)
            #expect(intent?["status"] == "succeeded")
            #expect(intent?["amount"] == 2000)
            #expect(intent?["amount_received"] == 1800)
            #expect(intent?["amount_capturable"] == 0)

            let posts = await fake.state.posts
            #expect(
                posts.map(\.path) == [
                    // The user's customer, the card saved to it, then the hold.
                    "/v1/customers",
                    "/v1/payment_methods/pm_card_visa/attach",
                    "/v1/payment_intents",
                    "/v1/payment_intents/\(hold.reference)/increment_authorization",
                    "/v1/payment_intents/\(hold.reference)",
                    "/v1/payment_intents/\(hold.reference)/capture",
                ])
            #expect(posts.count == 6)
            if posts.count == 6 {
                #expect(posts[3].field("amount") == "2000")
                // The price-adjustment design's metadata, written once the raise went through.
                #expect(posts[4].form?.map(\.name) == ["metadata[adjusted]", "metadata[reason]"])
                #expect(posts[4].field("metadata[adjusted]") == "true" && posts[4].field("metadata[reason]") == "volume_increase")
                #expect(posts[5].field("amount_to_capture") == "1800")
            }
            #expect(intent?["metadata"]?["adjusted"] == "true" && intent?["metadata"]?["reason"] == "volume_increase")
        }
    }

    @Test func loweringOnlyRecordsWhyAndCaptureTakesTheLowerAmount() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking(2000))
            let lowered = try await gateway.changeAmount(hold, to: 1200, reason: "volume_decrease", idempotencyKey: "lower-1")
            #expect(lowered.authorizedMinor == 2000)
            #expect(lowered.amountMinor == 1200)
            #expect(lowered.status == .authorized)
            // Nothing on the card changes: the one call writes the metadata (after the customer,
            // the card read and attached, and the hold).
            let requests = await fake.state.requests
            #expect(requests.count == 5 && requests.last?.path == "/v1/payment_intents/\(hold.reference)")
            #expect(await fake.state.intents[hold.reference]?.metadata["reason"] == "volume_decrease")
            #expect(await fake.state.intents[hold.reference]?.amount == 2000)

            let captured = try await gateway.capture(lowered, amountMinor: lowered.amountMinor, idempotencyKey: "capture-1")
            #expect(captured.capturedMinor == 1200)
            #expect(await fake.state.posts.last?.field("amount_to_capture") == "1200")
            let (_, intent) = try await fake.retrieve(hold.reference, secretKey: Self.secretKey)
            #expect(intent?["amount_received"] == 1200)
            #expect(intent?["status"] == "succeeded")
        }
    }

    @Test func cancelReleasesTheHoldOnce() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking())
            let cancelled = try await gateway.cancel(hold, idempotencyKey: "cancel-1")
            #expect(cancelled.status == .cancelled)
            #expect(cancelled.capturedMinor == 0 && cancelled.amountMinor == 0)
            let (_, intent) = try await fake.retrieve(hold.reference, secretKey: Self.secretKey)
            #expect(intent?["status"] == "canceled")

            let postsBefore = await fake.state.posts.count
            #expect(try await gateway.cancel(cancelled, idempotencyKey: "cancel-2") == cancelled)
            #expect(await fake.state.posts.count == postsBefore)

            // Herald's stale copy of the hold: Stripe refuses, and that is final.
            let error = await #expect(throws: PaymentError.self) {
                try await gateway.capture(hold, amountMinor: 1000, idempotencyKey: "capture-after-cancel")
            }
            #expect(error?.kind == .holdClosed)
            #expect(error?.providerCode == "payment_intent_unexpected_state")
        }
    }

    @Test func changesAfterCaptureAreHoldClosed() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking(1500))
            let captured = try await gateway.capture(hold, amountMinor: 1500, idempotencyKey: "capture-1")

            // From a stale authorised copy, Stripe answers payment_intent_unexpected_state.
            let raise = await #expect(throws: PaymentError.self) {
                try await gateway.changeAmount(hold, to: 1900, idempotencyKey: "raise-late")
            }
            #expect(raise?.kind == .holdClosed)
            #expect(raise?.message == "The payment was already captured or cancelled.")
            let recapture = await #expect(throws: PaymentError.self) {
                try await gateway.capture(hold, amountMinor: 1000, idempotencyKey: "capture-2")
            }
            #expect(recapture?.kind == .holdClosed)
            #expect(recapture?.isRetryable == false)

            // From the captured copy, the gateway knows without asking.
            let posts = await fake.state.posts.count
            let change = await #expect(throws: PaymentError.self) {
                try await gateway.changeAmount(captured, to: 1900, idempotencyKey: "raise-later")
            }
            #expect(change?.kind == .holdClosed)
            let cancel = await #expect(throws: PaymentError.self) { try await gateway.cancel(captured, idempotencyKey: "cancel-late") }
            #expect(cancel?.kind == .holdClosed)
            #expect(try await gateway.capture(captured, amountMinor: 1500, idempotencyKey: "capture-again") == captured)
            #expect(await fake.state.posts.count == posts)
        }
    }

    // MARK: Declines

    @Test func aDeclinedCardIsDeclinedWithItsDeclineCode() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let error = await #expect(throws: PaymentError.self) {
                try await Self.gateway(fake).authorize(Self.booking(paymentMethod: FakeStripeState.declinedCard))
            }
            #expect(error?.kind == .declined)
            #expect(error?.providerCode == "insufficient_funds")
            #expect(error?.message == "The card was declined (insufficient_funds).")
            #expect(error?.isRetryable == false)
        }
    }

    @Test func aCardNeedingAuthenticationIsDeclined() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let error = await #expect(throws: PaymentError.self) {
                try await Self.gateway(fake).authorize(Self.booking(paymentMethod: FakeStripeState.authenticationCard))
            }
            #expect(error?.kind == .declined)
            #expect(error?.providerCode == "requires_action")
            #expect(error?.message.contains("authentication") == true)
        }
    }

    @Test func aDeclinedRaiseKeepsTheHoldCapturable() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            await fake.state.declineIncrements(above: 2500)
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking(2000))
            let error = await #expect(throws: PaymentError.self) {
                try await gateway.changeAmount(hold, to: 3000, idempotencyKey: "raise-1")
            }
            #expect(error?.kind == .declined)
            let (_, intent) = try await fake.retrieve(hold.reference, secretKey: Self.secretKey)
            #expect(intent?["amount_capturable"] == 2000)
            #expect(try await gateway.capture(hold, amountMinor: 2000, idempotencyKey: "capture-1").capturedMinor == 2000)
        }
    }

    /// A card or merchant without incremental authorisation: Stripe refuses the increment, the
    /// charge says `unavailable`, so a new authorisation for the whole new amount replaces the
    /// old one (same card, customer and metadata), which is released. A retry replays it all.
    @Test func anIneligibleCardIsAuthorisedAgainAndTheOldHoldReleased() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking(2000, paymentMethod: FakeStripeState.noIncrementCard))
            let raised = try await gateway.changeAmount(hold, to: 3100, reason: "volume_increase", idempotencyKey: "raise-1")
            #expect(raised.reference != hold.reference && raised.reference.hasPrefix("pi_"))
            #expect(raised.status == .authorized && raised.authorizedMinor == 3100 && raised.amountMinor == 3100)
            let old = await fake.state.intents[hold.reference]
            let new = try #require(await fake.state.intents[raised.reference])
            #expect(old?.status == "canceled" && old?.amountCapturable == 0)
            #expect(new.status == "requires_capture" && new.amountCapturable == 3100 && new.captureMethod == "manual")
            #expect(new.paymentMethod == FakeStripeState.noIncrementCard)
            // The card is charged again: on the same customer, to which it was saved at booking.
            #expect(new.customer != nil && new.customer == old?.customer)
            #expect(await fake.state.paymentMethods[FakeStripeState.noIncrementCard]?.customer == new.customer)
            #expect(new.metadata == ["job_id": "job_1", "customer_id": "cust_1", "adjusted": "true", "reason": "volume_increase", "replaces": hold.reference])
            let requests = await fake.state.requests
            #expect(
                requests.map { "\($0.method) \($0.path)" } == [
                    "POST /v1/customers",
                    "GET /v1/payment_methods/\(FakeStripeState.noIncrementCard)",
                    "POST /v1/payment_methods/\(FakeStripeState.noIncrementCard)/attach",
                    "POST /v1/payment_intents",
                    "POST /v1/payment_intents/\(hold.reference)/increment_authorization",
                    "GET /v1/payment_intents/\(hold.reference)",
                    "POST /v1/payment_intents",
                    "POST /v1/payment_intents/\(hold.reference)/cancel",
                ])
            #expect(requests.count == 8 && requests[5].expands("latest_charge"))
            // The same change again (a retry after a lost answer) is the same new hold.
            let again = try await gateway.changeAmount(hold, to: 3100, reason: "volume_increase", idempotencyKey: "raise-1")
            #expect(again == raised)
            #expect(await fake.state.intentCount == 2)
            #expect(await fake.state.violations.isEmpty)
            // The new hold captures as any other.
            #expect(try await gateway.capture(raised, amountMinor: 3000, idempotencyKey: "capture-1").capturedMinor == 3000)
        }
    }

    /// An eligible card whose increment is refused by its bank is a decline, never a second
    /// authorisation.
    @Test func aRefusedIncrementOnAnEligibleCardIsNotRetriedAsANewHold() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            await fake.state.declineIncrements(above: 2500)
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking(2000))
            await #expect(throws: PaymentError.self) { try await gateway.changeAmount(hold, to: 3000, idempotencyKey: "raise-1") }
            #expect(await fake.state.intentCount == 1)
            // The intent was never read back to decide on a new authorisation.
            #expect(await fake.state.requests.allSatisfy { $0.method == "POST" || !$0.path.hasPrefix("/v1/payment_intents") })
        }
    }

    @Test func aMissingPaymentMethodFailsWithoutCallingStripe() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let error = await #expect(throws: PaymentError.self) {
                try await Self.gateway(fake).authorize(Self.booking(paymentMethod: nil))
            }
            #expect(error == PaymentError(.invalid, "A payment method is required."))
            #expect(await fake.state.requests.isEmpty)
        }
    }

    @Test func badAmountsAndReferencesAreRefusedWithoutACall() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let hold = try await gateway.authorize(Self.booking(1500))
            for attempt in [
                { try await gateway.capture(hold, amountMinor: 0, idempotencyKey: "c0") },
                { try await gateway.capture(hold, amountMinor: 1501, idempotencyKey: "c1") },
                { try await gateway.changeAmount(hold, to: 0, idempotencyKey: "z0") },
                { try await gateway.changeAmount(hold, to: -5, idempotencyKey: "z1") },
                { try await gateway.capture(hold, amountMinor: 100, idempotencyKey: "") },
                {
                    var forged = hold
                    forged.reference = "pi_1/../../v1/customers"
                    return try await gateway.cancel(forged, idempotencyKey: "x1")
                },
            ] as [@Sendable () async throws -> HoldState] {
                let error = await #expect(throws: PaymentError.self) { try await attempt() }
                #expect(error?.kind == .invalid)
            }
            #expect(await fake.state.requests.count == 4)  // the booking's: customer, card read and attached, hold
        }
    }

    @Test func anUnknownIntentIsInvalid() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let ghost = HoldState(reference: "pi_missing", status: .authorized, authorizedMinor: 900, amountMinor: 900, capturedMinor: 0, currency: "USD")
            let error = await #expect(throws: PaymentError.self) {
                try await Self.gateway(fake).capture(ghost, amountMinor: 900, idempotencyKey: "capture-ghost")
            }
            #expect(error?.kind == .invalid)
            #expect(error?.providerCode == "resource_missing")
            #expect(error?.message.contains("No such") == false)
        }
    }

    // MARK: Idempotency and retries

    @Test func aRetriedAuthorizeReplaysTheSameIntent() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let first = try await gateway.authorize(Self.booking(1500, key: "authorize-job-7"))
            let again = try await gateway.authorize(Self.booking(1500, key: "authorize-job-7"))
            #expect(again == first)
            // The first: customer, attach, intent; the retry finds the card saved and replays the intent.
            #expect(await fake.state.posts.count == 4)
            #expect(await fake.state.intentCount == 1)

            // The same key for a different booking is a bug in the caller, not a new hold.
            let reused = await #expect(throws: PaymentError.self) {
                try await gateway.authorize(Self.booking(9900, key: "authorize-job-7"))
            }
            #expect(reused?.kind == .invalid)
            #expect(reused?.providerCode == "idempotency_error")
            #expect(await fake.state.intentCount == 1)
        }
    }

    @Test func serverErrorsRateLimitsAndConflictsAreRetryable() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            await fake.state.failNext(status: 500)
            await fake.state.failNext(status: 429)
            await fake.state.failNext(status: 502, body: "<html><body>Bad gateway</body></html>", contentType: "text/html")
            await fake.state.failNext(
                status: 409, body: #"{"error":{"type":"idempotency_error","code":"idempotency_key_in_use"}}"#)
            await fake.state.failNext(status: 503, body: "")
            for _ in 0..<5 {
                let error = await #expect(throws: PaymentError.self) { try await gateway.authorize(Self.booking(key: "authorize-retry")) }
                #expect(error?.kind == .unavailable)
                #expect(error?.isRetryable == true)
            }
            let hold = try await gateway.authorize(Self.booking(key: "authorize-retry"))
            #expect(hold.status == .authorized)
            #expect(await fake.state.intentCount == 1)
            // Each refusal met the first call (creating the customer); then customer, attach, intent.
            #expect(await fake.state.posts.count == 8)
        }
    }

    @Test func anUnreadableSuccessIsRetryable() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            await fake.state.failNext(status: 200, body: "not json", contentType: "text/plain")
            await fake.state.failNext(status: 200, body: String(repeating: "x", count: 2 * 1024 * 1024), contentType: "text/plain")
            for _ in 0..<2 {
                let error = await #expect(throws: PaymentError.self) { try await gateway.authorize(Self.booking()) }
                #expect(error?.kind == .unavailable)
            }
        }
    }

    @Test func aStalledStripeCostsOnlyTheTimeout() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake, timeout: .seconds(1))
            // The request (the booking's first: creating the user's customer) is held until
            // released below, after the gateway gave up: only the gateway's timeout can end the
            // call (no bound on the elapsed time: a loaded machine delays the timer by seconds).
            await fake.state.stallNextUntilReleased()
            let error = await #expect(throws: PaymentError.self) { try await gateway.authorize(Self.booking(key: "authorize-stalled")) }
            #expect(error?.kind == .unavailable)
            #expect(error?.message == "The payment provider did not answer in time.")

            // Stripe finishes the stalled request; the retry with the same keys then gets its
            // answer rather than a second customer, and one hold.
            // (Under a loaded machine the stalled request can reach the fake after the client
            // gave up on it: wait for it to arrive, then to finish.)
            fake.state.releaseStalls()
            try await waitUntil("the stalled request arrived and finished", every: .milliseconds(100)) {
                await fake.state.pendingStalls + fake.state.stalledInFlight == 0
            }
            // (A gateway with a roomier timeout: this part is about the key, not the timeout.)
            let hold = try await Self.gateway(fake).authorize(Self.booking(key: "authorize-stalled"))
            #expect(hold.status == .authorized)
            #expect(await fake.state.intentCount == 1)
            #expect(await fake.state.customers.count == 1)
        }
    }

    @Test func anAnswerThatStallsAfterItsHeadersStillTimesOut() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake, timeout: .seconds(1))
            // The rest of the answer comes only once the fake stops (it releases its stalls):
            // only the gateway's timeout can end the call.
            await fake.state.stallBodyOfNextUntilReleased()
            let error = await #expect(throws: PaymentError.self) { try await gateway.authorize(Self.booking()) }
            #expect(error?.kind == .unavailable)
        }
    }

    @Test func anUnreachableStripeIsUnavailable() async throws {
        let gateway = StripeGateway(
            baseURL: "http://127.0.0.1:1", secretKey: Self.secretKey, timeout: .seconds(2), customers: MemoryCustomerDirectory(),
            logger: LogCapture().logger)
        let error = await #expect(throws: PaymentError.self) { try await gateway.authorize(Self.booking()) }
        #expect(error?.kind == .unavailable)
    }

    // MARK: Credentials and the wire

    @Test func aWrongKeyIsAFinalConfigurationError() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let logs = LogCapture()
            let wrongKey = "sk_test_WRONGkey_9876543210zyxwv"
            let error = await #expect(throws: PaymentError.self) {
                try await Self.gateway(fake, key: wrongKey, logs: logs).authorize(Self.booking())
            }
            #expect(error?.kind == .invalid)
            #expect(error?.message == "The payment provider rejected Herald's credentials.")
            #expect(error.map { "\($0)".contains(wrongKey) } == false)
            #expect(logs.levels.contains(.error))
            #expect(logs.lines.allSatisfy { !$0.contains(wrongKey) })

            await fake.state.failNext(status: 403, body: #"{"error":{"type":"invalid_request_error","message":"restricted key"}}"#)
            let forbidden = await #expect(throws: PaymentError.self) { try await Self.gateway(fake).authorize(Self.booking()) }
            #expect(forbidden?.kind == .invalid)
            #expect(forbidden?.message == "The payment provider rejected Herald's credentials.")
        }
    }

    @Test func everyPostCarriesKeyVersionFormAndIdempotencyKey() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let gateway = Self.gateway(fake)
            let awkwardJob = "job 7&total=1+1 ü [x] %20/#?"
            let first = try await gateway.authorize(Self.booking(1500, key: "authorize-a", jobID: awkwardJob, customerID: "cust/42=b"))
            let raised = try await gateway.changeAmount(first, to: 1700, idempotencyKey: "raise-a")
            _ = try await gateway.capture(raised, amountMinor: 1600, idempotencyKey: "capture-a")
            // Another user, so another card (a card saved to one customer is refused for another).
            let second = try await gateway.authorize(Self.booking(800, key: "authorize-b", paymentMethod: "pm_card_mastercard"))
            _ = try await gateway.cancel(second, idempotencyKey: "cancel-b")

            let state = fake.state
            #expect(await state.violations.isEmpty)
            let posts = await state.posts
            #expect(
                posts.map { $0.header("Idempotency-Key") } == [
                    "herald-customer:cust%2F42%3Db", "authorize-a:attach", "authorize-a", "raise-a", "raise-a:metadata", "capture-a",
                    "herald-customer:cust_1", "authorize-b:attach", "authorize-b", "cancel-b",
                ])
            for post in posts {
                #expect(post.header("Authorization") == "Bearer \(Self.secretKey)")
                #expect(post.header("Stripe-Version") == "2024-06-20")
                #expect(post.header("Content-Type") == "application/x-www-form-urlencoded")
                #expect(post.form != nil)
            }
            let newCustomer = try #require(posts.first)
            #expect(newCustomer.path == "/v1/customers" && newCustomer.field("metadata[herald_user_id]") == "cust/42=b")
            let customers = await state.customers
            let customer = try #require(customers.values.first(where: { $0.metadata["herald_user_id"] == "cust/42=b" })?.id)
            #expect(posts[1].path == "/v1/payment_methods/pm_card_visa/attach" && posts[1].form?.map(\.name) == ["customer"])
            #expect(posts[1].field("customer") == customer)
            let create = try #require(posts.first(where: { $0.path == "/v1/payment_intents" }))
            #expect(create.field("customer") == customer)
            #expect(create.field("setup_future_usage") == "off_session" && create.field("off_session") == nil)
            #expect(create.field("amount") == "1500")
            #expect(create.field("currency") == "usd")
            #expect(create.field("capture_method") == "manual")
            #expect(create.field("confirm") == "true")
            #expect(create.field("payment_method") == "pm_card_visa")
            #expect(create.fields("payment_method_types[]") == ["card"])
            #expect(create.field("payment_method_options[card][request_incremental_authorization]") == "if_available")
            #expect(create.field("metadata[job_id]") == awkwardJob)
            #expect(create.field("metadata[customer_id]") == "cust/42=b")
            #expect(!create.body.contains(" ") && !create.body.contains("+") && create.body.allSatisfy(\.isASCII))
            #expect(posts.last?.form?.isEmpty == true)
            #expect(await state.intents[first.reference]?.metadata["job_id"] == awkwardJob)
        }
    }

    /// A raw POST to the fake's create endpoint; its HTTP status.
    static func post(_ fake: FakeStripe, _ headers: [(String, String)], _ body: String) async throws -> Int {
        var request = HTTPClientRequest(url: "\(fake.baseURL)/v1/payment_intents")
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        return Int(try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(Patience.seconds))).status.code)
    }

    /// The wire checks above are only as good as the fake's refusals.
    @Test func theFakeRefusesMalformedPosts() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let auth = ("Authorization", "Bearer \(Self.secretKey)")
            let version = ("Stripe-Version", "2024-06-20")
            let form = ("Content-Type", "application/x-www-form-urlencoded")
            let valid = "amount=100&currency=usd&confirm=true&capture_method=manual&payment_method=pm_card_visa"
            let missingKey = try await Self.post(fake, [version, form, ("Idempotency-Key", "a")], valid)
            #expect(missingKey == 401)
            #expect(try await Self.post(fake, [auth, form, ("Idempotency-Key", "b")], valid) == 400)
            #expect(try await Self.post(fake, [auth, version, form], valid) == 400)
            #expect(try await Self.post(fake, [auth, version, ("Content-Type", "application/json"), ("Idempotency-Key", "c")], #"{"amount":100}"#) == 400)
            #expect(try await Self.post(fake, [auth, version, form, ("Idempotency-Key", "d")], "amount=100&currency=usd&metadata[job_id]=a b") == 400)
            #expect(try await Self.post(fake, [auth, version, form, ("Idempotency-Key", "e")], valid.replacingOccurrences(of: "usd", with: "USD")) == 400)
            #expect(await fake.state.violations.count == 5)
            #expect(await fake.state.intentCount == 0)
            #expect(try await Self.post(fake, [auth, version, form, ("Idempotency-Key", "f")], valid) == 200)
        }
    }

    @Test func theSecretKeyNeverReachesErrorsOrLogs() async throws {
        try await FakeStripe.run(secretKey: Self.secretKey) { fake in
            let logs = LogCapture()
            // Generous: under the full parallel suite a first request can take seconds, and a
            // late answer would read as `unavailable`. Only the stall below times out, through a
            // gateway (same key, same log) with a short timeout.
            let customers = MemoryCustomerDirectory()
            let gateway = Self.gateway(fake, logs: logs, customers: customers)
            let impatient = Self.gateway(fake, timeout: .seconds(1), logs: logs, customers: customers)
            // The user's customer first, so the refusals below meet the calls for one booking
            // each, never a creation still held by the stall.
            _ = try await gateway.authorize(Self.booking(key: "k0"))
            var errors: [PaymentError] = []
            func record(_ operation: () async throws -> HoldState) async {
                do { _ = try await operation() } catch let error as PaymentError { errors.append(error) } catch {
                    Issue.record("not a PaymentError: \(error)")
                }
            }
            // Stripe's own bodies that quote the key must not be passed on.
            await fake.state.failNext(
                status: 400, body: #"{"error":{"type":"invalid_request_error","code":"parameter_invalid","message":"bad key \#(Self.secretKey)"}}"#)
            await record { try await gateway.authorize(Self.booking(key: "k1")) }
            await fake.state.failNext(status: 500, body: "internal error for \(Self.secretKey)", contentType: "text/plain")
            await record { try await gateway.authorize(Self.booking(key: "k2")) }
            await fake.state.failNext(
                status: 402, body: #"{"error":{"type":"card_error","code":"card_declined","decline_code":"\#(Self.secretKey)"}}"#)
            await record { try await gateway.authorize(Self.booking(key: "k3")) }
            await fake.state.stallNextUntilReleased()
            await record { try await impatient.authorize(Self.booking(key: "k4")) }
            fake.state.releaseStalls()
            await record { try await gateway.authorize(Self.booking(key: "k5", paymentMethod: FakeStripeState.declinedCard)) }
            let ghost = HoldState(reference: "pi_ghost", status: .authorized, authorizedMinor: 5, amountMinor: 5, capturedMinor: 0, currency: "USD")
            await record { try await gateway.cancel(ghost, idempotencyKey: "k6") }

            #expect(errors.count == 6)
            #expect(errors.map(\.kind) == [.invalid, .unavailable, .declined, .unavailable, .declined, .invalid])
            for error in errors {
                #expect(!error.message.contains(Self.secretKey))
                #expect(!"\(error)".contains(Self.secretKey))
            }
            #expect(!logs.lines.isEmpty)
            #expect(logs.lines.filter { $0.contains(Self.secretKey) } == [])
        }
    }
}

/// Collects what the gateway logs, to prove what never reaches the log.
final class LogCapture: Sendable {
    private let records = Mutex<[(level: Logger.Level, line: String)]>([])

    var logger: Logger {
        var logger = Logger(label: "stripe-test") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    var lines: [String] { records.withLock { $0.map(\.line) } }
    var levels: [Logger.Level] { records.withLock { $0.map(\.level) } }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            let rendered = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.records.withLock { $0.append((event.level, "\(event.level) \(event.message) \(rendered)")) }
        }
    }
}
