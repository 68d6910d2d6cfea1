import HeraldCore

/// Where job payments are held, and the on-site price adjustment's rules.
public struct PaymentsConfig: ConfigSection, Sendable, Equatable {
    /// `ledger` (holds recorded in Herald's own database; no external service) or `stripe`.
    public var provider = PaymentProvider.ledger
    public var stripe = StripeConfig()
    /// What a customer pays when they decline a price adjustment after the driver arrived
    /// (a fixed fee, as the price-adjustment design recommends). Minor units of the job's currency.
    public var tripFeeMinor = 5_000
    /// How long the customer has to answer a higher price before the driver is told.
    public var adjustmentTimeoutSeconds = 300
    /// How much time each `volume/extend` adds…
    public var adjustmentExtensionSeconds = 300
    /// …and how many times a driver may extend one proposal.
    public var maxAdjustmentExtensions = 2
    /// How long a card authorisation can still be captured (Stripe: 7 days for online card
    /// payments). A job scheduled further out than this (plus `job_allowance_hours`) takes
    /// its hold later, as late as still covers the work, instead of at booking.
    public var authorizationLifetimeHours = 168
    /// How long after its `scheduled_at` a job may still be completed and captured.
    public var jobAllowanceHours = 24

    public init() {}

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("payments")
        checks.check((0...10_000_000).contains(tripFeeMinor), "trip_fee_minor", "must be between 0 and 10000000")
        checks.check((10...86_400).contains(adjustmentTimeoutSeconds), "adjustment_timeout_seconds", "must be between 10 and 86400")
        checks.check((10...86_400).contains(adjustmentExtensionSeconds), "adjustment_extension_seconds", "must be between 10 and 86400")
        checks.check((0...20).contains(maxAdjustmentExtensions), "max_adjustment_extensions", "must be between 0 and 20")
        checks.check((2...8_760).contains(authorizationLifetimeHours), "authorization_lifetime_hours", "must be between 2 and 8760")
        checks.check(
            jobAllowanceHours >= 1 && jobAllowanceHours < authorizationLifetimeHours, "job_allowance_hours",
            "must be at least 1 and less than authorization_lifetime_hours")
        if provider == .stripe {
            checks.check(
                stripe.secretKey.map { !$0.isEmpty } ?? false, "stripe.secret_key", "is required with provider stripe (or set HERALD_STRIPE_SECRET_KEY)")
            checks.check(stripe.baseURL.hasPrefix("https://") || stripe.baseURL.hasPrefix("http://"), "stripe.base_url", "must be an http(s) URL")
            checks.check((1...120).contains(stripe.timeoutSeconds), "stripe.timeout_seconds", "must be between 1 and 120")
        }
        return checks.errors
    }
}

/// Where a job's payment hold is kept (`payments.provider`).
public enum PaymentProvider: String, ConfigChoice, Equatable {
    /// Holds recorded in Herald's own database; no external service.
    case ledger
    /// Stripe's PaymentIntents (manual capture).
    case stripe
}

/// Stripe's PaymentIntents API.
public struct StripeConfig: ConfigSection, Sendable, Equatable {
    /// Point it at a test double in tests; `https://api.stripe.com` otherwise.
    public var baseURL = "https://api.stripe.com"
    /// `sk_live_…`/`sk_test_…`; better given as `HERALD_STRIPE_SECRET_KEY` than in a file.
    public var secretKey: String?
    /// The `Stripe-Version` Herald was written against.
    public var apiVersion = "2024-06-20"
    /// Every call's deadline.
    public var timeoutSeconds = 10

    public init() {}
}
