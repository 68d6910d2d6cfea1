import AsyncHTTPClient
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1

/// Holds job payments as Stripe PaymentIntents with manual capture.
///
/// Why PaymentIntents with `capture_method=manual` and `confirm=true`: the booking needs an
/// authorisation now and a capture at the end of the job, and one create call both attaches
/// the saved card and authorises it, so there is no half-created intent to clean up.
/// Raising the amount uses incremental authorisation (requested at creation, because Stripe
/// only allows it on intents that asked for it); where the card or merchant is not eligible,
/// a new authorisation for the new amount replaces the old one, which is released. Lowering
/// it changes nothing on the card, since Stripe cannot shrink an authorisation but captures
/// less with `amount_to_capture`. Either way the intent's metadata gets `adjusted` and
/// `reason`, as the price-adjustment design keeps them.
///
/// Why a Stripe Customer per user: Stripe lets a card be used once unless it is attached to
/// a Customer ("previously used without being attached to a Customer … may not be used
/// again"), and refuses `off_session` payments without one. A re-authorisation after a refused
/// increment and a hold taken off session for a job booked ahead both use the card again, so
/// every PaymentIntent carries the user's `customer` (created once, kept in
/// `PaymentCustomerDirectory`), the card is attached to it before its first PaymentIntent, and
/// an authorisation the customer is present for also asks `setup_future_usage=off_session`,
/// so Stripe sets the card up (and takes any authentication) for the later charges then.
///
/// Errors never carry Stripe's own `message`: for a bad key Stripe echoes part of the key,
/// and for other errors the text is written for developers, not for Herald's clients. The
/// message is Herald's, with Stripe's code (sanitised) added where it helps support.
public struct StripeGateway: PaymentGateway {
    public var provider: String { "stripe" }

    private let baseURL: String
    private let secretKey: String
    private let apiVersion: String?
    private let timeout: Duration
    private let client: HTTPClient
    private let customers: any PaymentCustomerDirectory
    private let logger: Logger

    /// A PaymentIntent is a few KiB; anything near this is not Stripe talking.
    static let maxResponseBytes = 1024 * 1024

    /// - Parameters:
    ///   - baseURL: `https://api.stripe.com` in production (a fake's address in tests).
    ///   - apiVersion: pinned so a Stripe account upgrade cannot change the answers' shape;
    ///     nil uses the account's default version.
    ///   - timeout: for each request as a whole, answer body included.
    ///   - customers: where each user's Stripe Customer is kept; shared by every node (the
    ///     server gives `PaymentCustomerStore`), so a user has one customer owning their cards.
    public init(
        baseURL: String, secretKey: String, apiVersion: String? = "2024-06-20", timeout: Duration = .seconds(10),
        client: HTTPClient = .shared, customers: any PaymentCustomerDirectory, logger: Logger
    ) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.secretKey = secretKey
        self.apiVersion = apiVersion
        self.timeout = timeout
        self.client = client
        self.customers = customers
        self.logger = logger
    }

    public func authorize(_ request: HoldRequest) async throws -> HoldState {
        guard let requested = request.paymentMethodID, !requested.isEmpty else {
            throw PaymentError(.invalid, "A payment method is required.")
        }
        guard request.amountMinor > 0 else { throw PaymentError(.invalid, "The amount must be positive.") }
        guard request.currency.count == 3, request.currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw PaymentError(.invalid, "The currency must be a three-letter ISO 4217 code.")
        }
        // Checked before the customer and the card are prepared, not only at the last call.
        try Self.checkIdempotencyKey(request.idempotencyKey)
        let stripeCustomer = try await self.customer(for: request.customerID)
        let paymentMethod = try await attach(requested, to: stripeCustomer, idempotencyKey: request.idempotencyKey + ":attach")
        var form = StripeForm()
        form.add("amount", request.amountMinor)
        form.add("currency", request.currency.lowercased())
        form.add("capture_method", "manual")
        form.add("confirm", "true")
        form.add("customer", stripeCustomer)
        if request.offSession {
            form.add("off_session", "true")
        } else {
            // The customer is in the app now: Stripe sets the card up for the off-session
            // charges that may follow (a hold taken later, a re-authorisation), asking for any
            // authentication while it still can.
            form.add("setup_future_usage", "off_session")
        }
        form.add("payment_method", paymentMethod)
        // Cards only: with automatic payment methods Stripe would demand a return_url for
        // redirect-based methods that a dispatch booking cannot complete.
        form.add("payment_method_types[]", "card")
        form.add("payment_method_options[card][request_incremental_authorization]", "if_available")
        form.add("metadata[job_id]", request.jobID)
        form.add("metadata[customer_id]", request.customerID)

        let intent = try await post("/v1/payment_intents", form, idempotencyKey: request.idempotencyKey, operation: "authorize")
        return try authorization(intent, currency: request.currency.uppercased())
    }

    // MARK: - The customer and the card

    /// The user's Stripe Customer: the one saved, else one created now and saved.
    ///
    /// Created with an idempotency key derived from the user, so a retry, or another node
    /// creating the same user's customer at the same time, gets the same customer from Stripe
    /// (for as long as Stripe keeps keys, 24 hours); the directory keeps the first one saved
    /// whatever happens, so the user's cards always end up on one customer.
    private func customer(for userID: String) async throws -> String {
        guard !userID.isEmpty else { throw PaymentError(.invalid, "The payment has no customer to keep the card for.") }
        if let saved = try await directory({ try await customers.customer(provider: provider, userID: userID) }) { return saved }
        var form = StripeForm()
        form.add("metadata[herald_user_id]", userID)
        let request = try postRequest("/v1/customers", form, idempotencyKey: try Self.customerKey(userID))
        let created = try await send(request, operation: "create_customer", as: StripeCustomer.self)
        guard Self.isStripeID(created.id) else {
            throw PaymentError(.unavailable, "The payment provider's answer could not be read.")
        }
        return try await directory({ try await customers.save(provider: provider, userID: userID, customerID: created.id) })
    }

    /// `herald-customer:{user id}`, the same for every creation of one user's customer.
    static func customerKey(_ userID: String) throws -> String {
        let key = "herald-customer:" + StripeForm.percentEncode(userID)
        guard key.utf8.count <= 255 else { throw PaymentError(.invalid, "The customer's id is too long for the payment provider.") }
        return key
    }

    /// Runs a call to the customer directory (the database): a failure there is a payment that
    /// could not be made yet, retried like an unreachable provider; its detail goes to the log.
    private func directory<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PaymentError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.warning("reading or saving the payment customer failed", metadata: ["error": "\(String(reflecting: error))"])
            throw PaymentError(.unavailable, "The payment could not be prepared; try again shortly.")
        }
    }

    /// Makes sure the card is attached to `customer`; answers the PaymentMethod to charge.
    ///
    /// Why the card is read first: Stripe says whom it belongs to. One already on this customer
    /// is used as it is (Stripe refuses to attach a card twice, even to the same customer); one
    /// on nobody is attached now, before any PaymentIntent uses it, since a card used once
    /// without a customer can never be saved; one on another customer is refused here, as
    /// Stripe would refuse the payment. An attach Stripe refuses as a request is read again:
    /// another booking of the same user may have attached it meanwhile.
    ///
    /// The answer is the id Stripe gives the attached card: the same as asked for, except for
    /// Stripe's test-mode shorthands (`pm_card_visa`), which attach as a new PaymentMethod.
    private func attach(_ paymentMethod: String, to customer: String, idempotencyKey: String) async throws -> String {
        let path = try Self.paymentMethodPath(paymentMethod)
        let card = try await retrievePaymentMethod(path)
        if card.customer == customer { return card.id }
        if card.customer != nil { throw Self.savedElsewhere(nil) }
        var form = StripeForm()
        form.add("customer", customer)
        let request = try postRequest(path + "/attach", form, idempotencyKey: idempotencyKey)
        switch try await answer(request, operation: "attach_payment_method", as: StripePaymentMethod.self) {
        case .object(let attached):
            guard attached.customer == nil || attached.customer == customer else { throw Self.savedElsewhere(nil) }
            return attached.id
        case .refused(let error, let status, let detail):
            // A refusal about the customer (one deleted at Stripe) is passed on as it is.
            guard status == 400, detail?.type == "invalid_request_error", detail?.param != "customer" else { throw error }
            let now = try await retrievePaymentMethod(path)
            if now.customer == customer { return now.id }
            if now.customer != nil { throw Self.savedElsewhere(error.providerCode) }
            throw PaymentError(
                .declined, "The card was used before without being saved and cannot be used again; add it again.",
                providerCode: error.providerCode)
        }
    }

    private func retrievePaymentMethod(_ path: String) async throws -> StripePaymentMethod {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .GET
        return try await send(request, operation: "retrieve_payment_method", as: StripePaymentMethod.self)
    }

    private static func savedElsewhere(_ code: String?) -> PaymentError {
        PaymentError(.declined, "The card is saved to another customer's account; use a different card.", providerCode: code)
    }

    /// `/v1/payment_methods/{id}`, refusing ids that could change the path.
    private static func paymentMethodPath(_ id: String) throws -> String {
        guard isStripeID(id) else { throw PaymentError(.invalid, "The payment method is not a Stripe PaymentMethod id.") }
        return "/v1/payment_methods/\(id)"
    }

    /// A Stripe object id (`pm_…`, `cus_…`, `pi_…`): safe in a path and in a form.
    private static func isStripeID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 255 && id.utf8.allSatisfy({ isWordByte($0, upperCase: true) })
    }

    // MARK: - Holds

    /// A new authorisation's outcome: the hold, or why the card gave none.
    private func authorization(_ intent: StripePaymentIntent, currency: String) throws -> HoldState {
        switch intent.status {
        case "requires_capture", "succeeded", "canceled":
            return try holdState(intent, currency: currency)
        case "requires_action":
            throw PaymentError(.declined, "The card needs the customer's authentication.", providerCode: intent.status)
        case "requires_payment_method":
            throw PaymentError(.declined, "The card was declined.", providerCode: intent.status)
        default:
            throw PaymentError(.declined, "The card could not be authorised.", providerCode: safeCode(intent.status))
        }
    }

    public func changeAmount(_ hold: HoldState, to amountMinor: Int64, reason: String, idempotencyKey: String) async throws -> HoldState {
        guard hold.status == .authorized else { throw Self.closed() }
        guard amountMinor > 0 else { throw PaymentError(.invalid, "The amount must be positive.") }
        let path = try Self.path(hold.reference, nil)
        guard amountMinor > hold.authorizedMinor else {
            try await annotate(path, reason: reason, idempotencyKey: idempotencyKey)
            var lowered = hold
            lowered.amountMinor = amountMinor
            return lowered
        }
        var form = StripeForm()
        form.add("amount", amountMinor)
        let intent: StripePaymentIntent
        do {
            intent = try await post(path + "/increment_authorization", form, idempotencyKey: idempotencyKey, operation: "increment_authorization")
        } catch let error as PaymentError where error.kind == .invalid && error.providerCode != "idempotency_error" {
            // Not every card and merchant can be incremented; Stripe says which on the charge
            // (`incremental_authorization.status`). Where it cannot, Stripe's documented way is
            // a new authorisation for the whole new amount, then releasing the old one.
            // A cancelled intent here is one this change already replaced (a retry: the calls
            // below replay) or one that lapsed, which a new authorisation replaces as well.
            let current = try await retrieve(path)
            guard ["requires_capture", "canceled"].contains(current.status), current.incrementalAuthorization != "available" else { throw error }
            return try await reauthorize(current, to: amountMinor, reason: reason, currency: hold.currency, idempotencyKey: idempotencyKey)
        }
        var raised = try holdState(intent, currency: hold.currency)
        if raised.status == .authorized { raised.amountMinor = min(amountMinor, raised.authorizedMinor) }
        try await annotate(path, reason: reason, idempotencyKey: idempotencyKey)
        return raised
    }

    /// Writes the price-adjustment design's `adjusted` and `reason` on the PaymentIntent (after the amount
    /// changed, so the metadata never claims a change that did not happen).
    private func annotate(_ path: String, reason: String, idempotencyKey: String) async throws {
        var form = StripeForm()
        form.add("metadata[adjusted]", "true")
        form.add("metadata[reason]", reason)
        _ = try await post(path, form, idempotencyKey: idempotencyKey + ":metadata", operation: "update_metadata")
    }

    /// The PaymentIntent with its latest charge, whose card details say whether it can be
    /// incremented.
    private func retrieve(_ path: String) async throws -> StripePaymentIntent {
        var request = HTTPClientRequest(url: baseURL + path + "?expand%5B%5D=latest_charge")
        request.method = .GET
        return try await send(request, operation: "retrieve", as: StripePaymentIntent.self)
    }

    /// A new authorisation for `amountMinor` on the same card, customer and metadata (plus
    /// `replaces`), then the old one released. Each call has its own key derived from the
    /// change's, so a retry after any failure replays what was done and finishes the rest.
    ///
    /// The card is charged a second time, which Stripe allows only for a card attached to the
    /// intent's customer: `authorize` attached it. A hold authorised before Herald kept
    /// customers has none; its user's customer is found (or created) and the card attached now,
    /// which Stripe refuses if the card was already used without one (a clear decline).
    private func reauthorize(
        _ current: StripePaymentIntent, to amountMinor: Int64, reason: String, currency: String, idempotencyKey: String
    ) async throws -> HoldState {
        guard var paymentMethod = current.paymentMethod, !paymentMethod.isEmpty else {
            throw PaymentError(.invalid, "The card cannot take a higher amount and its payment method is unknown.")
        }
        var customer: String? = current.customer.flatMap { $0.isEmpty ? nil : $0 }
        if customer == nil, let userID = current.metadata?["customer_id"], !userID.isEmpty {
            let found = try await self.customer(for: userID)
            paymentMethod = try await attach(paymentMethod, to: found, idempotencyKey: idempotencyKey + ":attach")
            customer = found
        }
        var form = StripeForm()
        form.add("amount", amountMinor)
        form.add("currency", currency.lowercased())
        form.add("capture_method", "manual")
        form.add("confirm", "true")
        form.add("payment_method", paymentMethod)
        if let customer { form.add("customer", customer) }
        form.add("payment_method_types[]", "card")
        form.add("payment_method_options[card][request_incremental_authorization]", "if_available")
        let replaced: Set<String> = ["adjusted", "reason", "replaces"]
        for (key, value) in (current.metadata ?? [:]).sorted(by: { $0.key < $1.key }) where !replaced.contains(key) {
            form.add("metadata[\(key)]", value)
        }
        form.add("metadata[adjusted]", "true")
        form.add("metadata[reason]", reason)
        form.add("metadata[replaces]", current.id)
        let intent = try await post("/v1/payment_intents", form, idempotencyKey: idempotencyKey + ":reauthorize", operation: "reauthorize")
        let state = try authorization(intent, currency: currency)
        if current.status == "requires_capture" {
            _ = try await post(try Self.path(current.id, "cancel"), StripeForm(), idempotencyKey: idempotencyKey + ":release", operation: "cancel")
        }
        logger.info(
            "Stripe could not increment the authorisation; re-authorised and released the old one",
            metadata: [
                "stripe.intent": loggable(intent.id), "stripe.replaced": loggable(current.id),
            ])
        return state
    }

    public func capture(_ hold: HoldState, amountMinor: Int64, idempotencyKey: String) async throws -> HoldState {
        if hold.status == .captured, hold.capturedMinor == amountMinor { return hold }
        guard hold.status == .authorized else { throw Self.closed() }
        guard amountMinor >= 1, amountMinor <= hold.authorizedMinor else {
            throw PaymentError(.invalid, "The capture amount must be between 1 and the authorised amount.")
        }
        var form = StripeForm()
        form.add("amount_to_capture", amountMinor)
        let intent = try await post(
            try Self.path(hold.reference, "capture"), form, idempotencyKey: idempotencyKey, operation: "capture")
        return try holdState(intent, currency: hold.currency)
    }

    public func cancel(_ hold: HoldState, idempotencyKey: String) async throws -> HoldState {
        switch hold.status {
        case .cancelled: return hold
        case .captured: throw Self.closed()
        case .authorized: break
        }
        let intent = try await post(
            try Self.path(hold.reference, "cancel"), StripeForm(), idempotencyKey: idempotencyKey, operation: "cancel")
        return try holdState(intent, currency: hold.currency)
    }

    // MARK: - PaymentIntent to hold

    /// The hold as Stripe reports it. A cancelled hold will capture nothing, so its
    /// `amountMinor` is 0; `authorizedMinor` keeps what was last authorised, for the record.
    private func holdState(_ intent: StripePaymentIntent, currency: String) throws -> HoldState {
        let received = intent.amountReceived ?? 0
        switch intent.status {
        case "requires_capture":
            let capturable = intent.amountCapturable ?? 0
            let held = capturable > 0 ? capturable : intent.amount
            return HoldState(
                reference: intent.id, status: .authorized, authorizedMinor: held, amountMinor: held,
                capturedMinor: received, currency: currency)
        case "succeeded":
            return HoldState(
                reference: intent.id, status: .captured, authorizedMinor: intent.amount, amountMinor: received,
                capturedMinor: received, currency: currency)
        case "canceled":
            return HoldState(
                reference: intent.id, status: .cancelled, authorizedMinor: intent.amount, amountMinor: 0,
                capturedMinor: 0, currency: currency)
        default:
            logger.warning("Stripe answered with an unexpected PaymentIntent status", metadata: ["stripe.status": loggable(intent.status)])
            throw PaymentError(
                .unavailable, "The payment provider reported an unexpected payment state.",
                providerCode: safeCode(intent.status))
        }
    }

    private static func closed(_ code: String? = nil) -> PaymentError {
        PaymentError(.holdClosed, "The payment was already captured or cancelled.", providerCode: code)
    }

    /// `/v1/payment_intents/{reference}[/{action}]`, refusing references that could change the path.
    private static func path(_ reference: String, _ action: String?) throws -> String {
        guard isStripeID(reference) else { throw PaymentError(.invalid, "The payment reference is not a Stripe PaymentIntent id.") }
        return "/v1/payment_intents/\(reference)" + (action.map { "/\($0)" } ?? "")
    }

    // MARK: - HTTP

    private func post(_ path: String, _ form: StripeForm, idempotencyKey: String, operation: String) async throws -> StripePaymentIntent {
        try await send(try postRequest(path, form, idempotencyKey: idempotencyKey), operation: operation, as: StripePaymentIntent.self)
    }

    /// Stripe allows keys of up to 255 characters; control characters would break the header.
    private static func checkIdempotencyKey(_ key: String) throws {
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw PaymentError(.invalid, "The idempotency key is missing or malformed.")
        }
    }

    private func postRequest(_ path: String, _ form: StripeForm, idempotencyKey: String) throws -> HTTPClientRequest {
        try Self.checkIdempotencyKey(idempotencyKey)
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Idempotency-Key", value: idempotencyKey)
        request.body = .bytes(ByteBuffer(string: form.encoded))
        return request
    }

    /// Stripe's answer: the object, or the refusal as the error to throw (`classify`), with
    /// what Stripe said for the callers that look closer (`attach`).
    private enum Answer<Object> {
        case object(Object)
        case refused(PaymentError, status: Int, detail: StripeErrorEnvelope.Detail?)
    }

    private func send<Object: StripeObject>(_ request: HTTPClientRequest, operation: String, as type: Object.Type) async throws -> Object {
        switch try await answer(request, operation: operation, as: type) {
        case .object(let object): return object
        case .refused(let error, _, _): throw error
        }
    }

    private func answer<Object: StripeObject>(_ request: HTTPClientRequest, operation: String, as type: Object.Type) async throws -> Answer<Object> {
        var request = request
        request.headers.add(name: "Authorization", value: "Bearer \(secretKey)")
        request.headers.add(name: "Accept", value: "application/json")
        if let apiVersion { request.headers.add(name: "Stripe-Version", value: apiVersion) }
        var logger = self.logger
        logger[metadataKey: "stripe.operation"] = "\(operation)"

        let (status, headers, body) = try await exchange(request, logger: logger)
        if let requestID = headers.first(name: "request-id") { logger[metadataKey: "stripe.request_id"] = loggable(requestID) }

        if (200..<300).contains(status) {
            guard let object = try? JSONDecoder().decode(Object.self, from: body) else {
                logger.warning(
                    "Stripe answered success with a body that is not the object asked for",
                    metadata: ["stripe.http_status": "\(status)", "stripe.object": "\(Object.objectName)"])
                throw PaymentError(.unavailable, "The payment provider's answer could not be read.")
            }
            logger.debug("Stripe answered", metadata: ["stripe.id": loggable(object.id), "stripe.status": loggable(object.loggedStatus)])
            return .object(object)
        }

        let detail = (try? JSONDecoder().decode(StripeErrorEnvelope.self, from: body))?.error
        let error = classify(status: status, detail: detail)
        let metadata: Logger.Metadata = [
            "stripe.http_status": "\(status)",
            "stripe.error_type": loggable(detail?.type),
            "stripe.error_code": loggable(detail?.code),
            "stripe.decline_code": loggable(detail?.declineCode),
            "stripe.param": loggable(detail?.param),
            "payment.error": "\(error.kind.rawValue)",
        ]
        switch status {
        case 401, 403: logger.error("Stripe refused Herald's credentials; check the configured secret key", metadata: metadata)
        case _ where error.kind == .unavailable: logger.warning("Stripe is unavailable", metadata: metadata)
        default: logger.notice("Stripe refused the request", metadata: metadata)
        }
        return .refused(error, status: status, detail: detail)
    }

    /// Sends `request` and reads its answer, all within `timeout`.
    ///
    /// async-http-client's deadline ends when the response head arrives, so the body read
    /// gets the rest of the same deadline separately: a provider that sends headers and then
    /// stalls must still cost a bounded wait.
    private func exchange(_ request: HTTPClientRequest, logger: Logger) async throws -> (Int, HTTPHeaders, Data) {
        let deadline = NIODeadline.now() + .milliseconds(timeout.wholeMilliseconds)
        do {
            let response = try await client.execute(request, deadline: deadline)
            let remaining = deadline - NIODeadline.now()
            guard remaining.nanoseconds > 0 else { throw DeadlineExceeded() }
            let body = try await withDeadline(.nanoseconds(remaining.nanoseconds)) {
                try await response.body.collect(upTo: Self.maxResponseBytes)
            }
            return (Int(response.status.code), response.headers, Data(buffer: body))
        } catch {
            if Task.isCancelled { throw CancellationError() }
            let message: String
            switch error {
            case let error as HTTPClientError where error == .deadlineExceeded:
                message = "The payment provider did not answer in time."
            case is DeadlineExceeded:
                message = "The payment provider did not answer in time."
            case is NIOTooManyBytesError:
                message = "The payment provider's answer was too large."
            default:
                message = "The payment provider could not be reached."
            }
            logger.warning("Stripe request failed", metadata: ["error": "\(String(describing: error))"])
            throw PaymentError(.unavailable, message)
        }
    }

    // MARK: - Errors

    /// Sorts a Stripe error into final and retryable kinds.
    ///
    /// Order matters: credentials and overload come first whatever the body says (a proxy's
    /// 502 page has no Stripe body at all), then the one code that means "the hold moved on",
    /// then declines, then everything else the request got wrong.
    private func classify(status: Int, detail: StripeErrorEnvelope.Detail?) -> PaymentError {
        let code = safeCode(detail?.code)
        switch status {
        case 401, 403:
            return PaymentError(.invalid, "The payment provider rejected Herald's credentials.", providerCode: code)
        case 409, 429, 500...:
            return PaymentError(.unavailable, "The payment provider is temporarily unavailable.", providerCode: code ?? safeCode(detail?.type))
        default:
            break
        }
        if code == "payment_intent_unexpected_state" { return Self.closed(code) }
        if status == 402 || detail?.type == "card_error" {
            let reason = safeCode(detail?.declineCode) ?? code
            if reason == "authentication_required" {
                return PaymentError(.declined, "The card needs the customer's authentication.", providerCode: reason)
            }
            return PaymentError(.declined, reason.map { "The card was declined (\($0))." } ?? "The card was declined.", providerCode: reason)
        }
        if detail?.type == "idempotency_error" {
            return PaymentError(
                .invalid, "The idempotency key was already used for a different payment request.",
                providerCode: code ?? "idempotency_error")
        }
        return PaymentError(
            .invalid, code.map { "The payment request was refused by the provider (\($0))." } ?? "The payment request was refused by the provider.",
            providerCode: code)
    }

    /// Stripe's codes are short snake_case words; anything else is not echoed to clients, nor
    /// anything that could be a key (`sk_…`, `rk_…`, or ours), whatever a body calls a code.
    private func safeCode(_ code: String?) -> String? {
        guard let code, !code.isEmpty, code.utf8.count <= 64, !mayBeKey(code),
            code.utf8.allSatisfy({ Self.isWordByte($0, upperCase: false) })
        else { return nil }
        return code
    }

    /// What Stripe's answers say, for logs: ids, codes and parameter names pass, anything
    /// else (free text, a quoted key) is withheld.
    private func loggable(_ value: String?) -> Logger.MetadataValue {
        guard let value else { return "-" }
        guard !value.isEmpty, value.utf8.count <= 128, !mayBeKey(value),
            value.utf8.allSatisfy({ Self.isWordByte($0, upperCase: true) || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") })
        else { return "(withheld)" }
        return "\(value)"
    }

    private func mayBeKey(_ value: String) -> Bool {
        (!secretKey.isEmpty && value.contains(secretKey)) || ["sk_", "rk_", "pk_"].contains(where: { value.lowercased().hasPrefix($0) })
    }

    private static func isWordByte(_ byte: UInt8, upperCase: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): upperCase
        default: false
        }
    }
}

/// An object Stripe answers with.
protocol StripeObject: Decodable, Sendable {
    var id: String { get }
    /// Its state, for the debug log (a PaymentIntent's status).
    var loggedStatus: String? { get }
    /// What it is, for the log when an answer is not one.
    static var objectName: String { get }
}

/// The fields of a PaymentIntent that Herald reads.
struct StripePaymentIntent: StripeObject {
    var id: String
    var status: String
    var amount: Int64
    var amountCapturable: Int64?
    var amountReceived: Int64?
    var paymentMethod: String?
    var customer: String?
    var metadata: [String: String]?
    /// `available` or `unavailable` when `latest_charge` was expanded, else nil.
    var incrementalAuthorization: String?

    var loggedStatus: String? { status }
    static var objectName: String { "payment_intent" }

    enum CodingKeys: String, CodingKey {
        case id, status, amount, customer, metadata
        case amountCapturable = "amount_capturable"
        case amountReceived = "amount_received"
        case paymentMethod = "payment_method"
        case latestCharge = "latest_charge"
    }

    /// `latest_charge.payment_method_details.card.incremental_authorization.status`.
    struct Charge: Decodable {
        struct Details: Decodable {
            struct Card: Decodable {
                struct Incremental: Decodable { var status: String? }
                var incrementalAuthorization: Incremental?
                enum CodingKeys: String, CodingKey { case incrementalAuthorization = "incremental_authorization" }
            }
            var card: Card?
        }
        var paymentMethodDetails: Details?
        enum CodingKeys: String, CodingKey { case paymentMethodDetails = "payment_method_details" }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        status = try container.decode(String.self, forKey: .status)
        amount = try container.decode(Int64.self, forKey: .amount)
        amountCapturable = try container.decodeIfPresent(Int64.self, forKey: .amountCapturable)
        amountReceived = try container.decodeIfPresent(Int64.self, forKey: .amountReceived)
        // Ids unless expanded; Herald expands only the charge, so anything else is ignored.
        paymentMethod = try? container.decodeIfPresent(String.self, forKey: .paymentMethod)
        customer = try? container.decodeIfPresent(String.self, forKey: .customer)
        metadata = try? container.decodeIfPresent([String: String].self, forKey: .metadata)
        let charge = try? container.decodeIfPresent(Charge.self, forKey: .latestCharge)
        incrementalAuthorization = charge?.paymentMethodDetails?.card?.incrementalAuthorization?.status
    }
}

/// The Customer Herald creates for a user (`cus_…`); only its id is read.
struct StripeCustomer: StripeObject {
    var id: String
    var loggedStatus: String? { nil }
    static var objectName: String { "customer" }
}

/// A PaymentMethod (`pm_…`) and the customer it is attached to, if any.
struct StripePaymentMethod: StripeObject {
    var id: String
    var customer: String?

    var loggedStatus: String? { nil }
    static var objectName: String { "payment_method" }

    enum CodingKeys: String, CodingKey { case id, customer }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        // An id unless expanded, which Herald never asks for.
        customer = try? container.decodeIfPresent(String.self, forKey: .customer)
    }
}

/// `{"error": {...}}`, Stripe's error body.
struct StripeErrorEnvelope: Decodable, Sendable {
    struct Detail: Decodable, Sendable {
        var type: String?
        var code: String?
        var declineCode: String?
        var param: String?

        enum CodingKeys: String, CodingKey {
            case type, code, param
            case declineCode = "decline_code"
        }
    }

    var error: Detail
}
