import HeraldCore

/// Where a job's money is held: a card authorisation taken at booking and captured when the
/// job ends (manual capture, so the amount can still change on site).
///
/// Why a protocol with the hold passed in: providers differ in what they can do to an
/// authorisation (Stripe can raise one but lowers it only by capturing less), so each
/// gateway gets the hold as Herald last saw it and answers with the hold as it is now.
/// Every mutating call carries an idempotency key, so a retry after a timeout or a crash
/// never charges twice.
public protocol PaymentGateway: Sendable {
    /// `ledger` or `stripe`, stored with each hold.
    var provider: String { get }

    /// Authorises `amountMinor` for later capture.
    func authorize(_ request: HoldRequest) async throws -> HoldState

    /// Makes `amountMinor` the amount a later capture takes (raising or lowering the hold).
    /// `reason` is kept on the provider's record (Stripe metadata `adjusted`, `reason`), so
    /// whoever reads the payment there sees why its amount differs from the booking. The
    /// answer may name a new `reference` when the provider could only re-authorise.
    func changeAmount(_ hold: HoldState, to amountMinor: Int64, reason: String, idempotencyKey: String) async throws -> HoldState

    /// Captures `amountMinor` (at most the hold's amount) and releases the rest.
    func capture(_ hold: HoldState, amountMinor: Int64, idempotencyKey: String) async throws -> HoldState

    /// Releases the whole hold.
    func cancel(_ hold: HoldState, idempotencyKey: String) async throws -> HoldState
}

extension PaymentGateway {
    /// A change with the generic reason `amount_changed`.
    public func changeAmount(_ hold: HoldState, to amountMinor: Int64, idempotencyKey: String) async throws -> HoldState {
        try await changeAmount(hold, to: amountMinor, reason: "amount_changed", idempotencyKey: idempotencyKey)
    }
}

/// What to authorise at booking.
public struct HoldRequest: Sendable, Equatable {
    public var jobID: String
    /// The Herald user who pays (the job's customer). Stripe charges the card on that user's
    /// Stripe Customer, which it needs to charge a card more than once.
    public var customerID: String
    public var amountMinor: Int64
    /// ISO 4217, upper case (`USD`).
    public var currency: String
    /// The provider's payment method (Stripe `pm_…`); the ledger ignores it.
    public var paymentMethodID: String?
    public var idempotencyKey: String
    /// The customer is not in the app while this is authorised (a scheduled hold taken days
    /// after booking): the provider must not ask for authentication it cannot get (Stripe
    /// `off_session`), and refuses instead.
    public var offSession: Bool

    public init(
        jobID: String, customerID: String, amountMinor: Int64, currency: String, paymentMethodID: String?, idempotencyKey: String,
        offSession: Bool = false
    ) {
        self.jobID = jobID
        self.customerID = customerID
        self.amountMinor = amountMinor
        self.currency = currency
        self.paymentMethodID = paymentMethodID
        self.idempotencyKey = idempotencyKey
        self.offSession = offSession
    }
}

public enum HoldStatus: String, Sendable, Codable, Equatable {
    /// Money held, nothing taken yet.
    case authorized
    /// Taken (`capturedMinor`); the rest was released.
    case captured
    /// Released without taking anything.
    case cancelled
}

/// A hold as the provider reports it. Money in minor units of `currency`.
public struct HoldState: Sendable, Equatable, Codable {
    /// The provider's id for the hold (`pi_…` for Stripe, `hold_…` for the ledger).
    public var reference: String
    public var status: HoldStatus
    /// What the provider has authorised on the card.
    public var authorizedMinor: Int64
    /// What a capture will take (at most `authorizedMinor`).
    public var amountMinor: Int64
    public var capturedMinor: Int64
    public var currency: String

    public init(reference: String, status: HoldStatus, authorizedMinor: Int64, amountMinor: Int64, capturedMinor: Int64, currency: String) {
        self.reference = reference
        self.status = status
        self.authorizedMinor = authorizedMinor
        self.amountMinor = amountMinor
        self.capturedMinor = capturedMinor
        self.currency = currency
    }
}

/// A gateway's refusal or failure, classified so callers know whether to retry.
public struct PaymentError: Error, Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// The card or bank said no (insufficient funds, authentication required, …): final.
        case declined
        /// The hold was already captured or cancelled, so it cannot change: final.
        case holdClosed = "hold_closed"
        /// The request itself was wrong (unknown hold, amount over the authorisation): final.
        case invalid
        /// The provider could not be reached, timed out, rate limited or failed: retry later
        /// with the same idempotency key.
        case unavailable
    }

    public var kind: Kind
    /// Safe to show to a client (never a provider secret or raw body).
    public var message: String
    /// The provider's own code (`card_declined`, `payment_intent_unexpected_state`), for logs.
    public var providerCode: String?

    public init(_ kind: Kind, _ message: String, providerCode: String? = nil) {
        self.kind = kind
        self.message = message
        self.providerCode = providerCode
    }

    public var isRetryable: Bool { kind == .unavailable }

    /// What the error is recorded under: the provider's code, else Herald's kind.
    public var code: String { providerCode ?? kind.rawValue }
}
