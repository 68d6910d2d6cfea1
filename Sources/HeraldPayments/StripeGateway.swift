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

    let baseURL: String
    let secretKey: String
    let apiVersion: String?
    let timeout: Duration
    let client: HTTPClient
    let customers: any PaymentCustomerDirectory
    let logger: Logger

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

    // MARK: - Holds

    /// A new authorisation's outcome: the hold, or why the card gave none.
    func authorization(_ intent: StripePaymentIntent, currency: String) throws -> HoldState {
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
    func holdState(_ intent: StripePaymentIntent, currency: String) throws -> HoldState {
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

    static func closed(_ code: String? = nil) -> PaymentError {
        PaymentError(.holdClosed, "The payment was already captured or cancelled.", providerCode: code)
    }

    /// `/v1/payment_intents/{reference}[/{action}]`, refusing references that could change the path.
    static func path(_ reference: String, _ action: String?) throws -> String {
        guard isStripeID(reference) else { throw PaymentError(.invalid, "The payment reference is not a Stripe PaymentIntent id.") }
        return "/v1/payment_intents/\(reference)" + (action.map { "/\($0)" } ?? "")
    }
}
