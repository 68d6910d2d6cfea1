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
/// `reason`, as seed 001 keeps them.
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
    private let logger: Logger

    /// A PaymentIntent is a few KiB; anything near this is not Stripe talking.
    static let maxResponseBytes = 1024 * 1024

    /// - Parameters:
    ///   - baseURL: `https://api.stripe.com` in production (a fake's address in tests).
    ///   - apiVersion: pinned so a Stripe account upgrade cannot change the answers' shape;
    ///     nil uses the account's default version.
    ///   - timeout: for each request as a whole, answer body included.
    public init(
        baseURL: String, secretKey: String, apiVersion: String? = "2024-06-20", timeout: Duration = .seconds(10),
        client: HTTPClient = .shared, logger: Logger
    ) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.secretKey = secretKey
        self.apiVersion = apiVersion
        self.timeout = timeout
        self.client = client
        self.logger = logger
    }

    public func authorize(_ request: HoldRequest) async throws -> HoldState {
        guard let paymentMethod = request.paymentMethodID, !paymentMethod.isEmpty else {
            throw PaymentError(.invalid, "A payment method is required.")
        }
        guard request.amountMinor > 0 else { throw PaymentError(.invalid, "The amount must be positive.") }
        guard request.currency.count == 3, request.currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw PaymentError(.invalid, "The currency must be a three-letter ISO 4217 code.")
        }
        var form = StripeForm()
        form.add("amount", request.amountMinor)
        form.add("currency", request.currency.lowercased())
        form.add("capture_method", "manual")
        form.add("confirm", "true")
        if request.offSession { form.add("off_session", "true") }
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

    /// Writes the seed's `adjusted` and `reason` on the PaymentIntent (after the amount
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
        return try await send(request, operation: "retrieve")
    }

    /// A new authorisation for `amountMinor` on the same card, customer and metadata (plus
    /// `replaces`), then the old one released. Each call has its own key derived from the
    /// change's, so a retry after any failure replays what was done and finishes the rest.
    private func reauthorize(
        _ current: StripePaymentIntent, to amountMinor: Int64, reason: String, currency: String, idempotencyKey: String
    ) async throws -> HoldState {
        guard let paymentMethod = current.paymentMethod, !paymentMethod.isEmpty else {
            throw PaymentError(.invalid, "The card cannot take a higher amount and its payment method is unknown.")
        }
        var form = StripeForm()
        form.add("amount", amountMinor)
        form.add("currency", currency.lowercased())
        form.add("capture_method", "manual")
        form.add("confirm", "true")
        form.add("payment_method", paymentMethod)
        if let customer = current.customer, !customer.isEmpty { form.add("customer", customer) }
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
        logger.info("Stripe could not increment the authorisation; re-authorised and released the old one", metadata: [
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
        guard !reference.isEmpty, reference.count <= 255,
            reference.utf8.allSatisfy({ isWordByte($0, upperCase: true) })
        else { throw PaymentError(.invalid, "The payment reference is not a Stripe PaymentIntent id.") }
        return "/v1/payment_intents/\(reference)" + (action.map { "/\($0)" } ?? "")
    }

    // MARK: - HTTP

    private func post(_ path: String, _ form: StripeForm, idempotencyKey: String, operation: String) async throws -> StripePaymentIntent {
        // Stripe allows up to 255 characters; control characters would break the header.
        guard !idempotencyKey.isEmpty, idempotencyKey.utf8.count <= 255,
            idempotencyKey.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { throw PaymentError(.invalid, "The idempotency key is missing or malformed.") }
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Idempotency-Key", value: idempotencyKey)
        request.body = .bytes(ByteBuffer(string: form.encoded))
        return try await send(request, operation: operation)
    }

    private func send(_ request: HTTPClientRequest, operation: String) async throws -> StripePaymentIntent {
        var request = request
        request.headers.add(name: "Authorization", value: "Bearer \(secretKey)")
        request.headers.add(name: "Accept", value: "application/json")
        if let apiVersion { request.headers.add(name: "Stripe-Version", value: apiVersion) }
        var logger = self.logger
        logger[metadataKey: "stripe.operation"] = "\(operation)"

        let (status, headers, body) = try await exchange(request, logger: logger)
        if let requestID = headers.first(name: "request-id") { logger[metadataKey: "stripe.request_id"] = loggable(requestID) }

        if (200..<300).contains(status) {
            guard let intent = try? JSONDecoder().decode(StripePaymentIntent.self, from: body) else {
                logger.warning("Stripe answered success with a body that is not a PaymentIntent", metadata: ["stripe.http_status": "\(status)"])
                throw PaymentError(.unavailable, "The payment provider's answer could not be read.")
            }
            logger.debug("Stripe answered", metadata: ["stripe.intent": loggable(intent.id), "stripe.status": loggable(intent.status)])
            return intent
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
        throw error
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

/// The fields of a PaymentIntent that Herald reads.
struct StripePaymentIntent: Decodable, Sendable {
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
