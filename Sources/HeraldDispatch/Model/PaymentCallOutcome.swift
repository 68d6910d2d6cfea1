/// How one call to the payment provider ended (`payment_events.outcome`).
public enum PaymentCallOutcome: String, Sendable, Codable, CaseIterable {
    case ok
    /// Refused for a reason that may pass: the same idempotency key is used again.
    case retry
    /// Refused for good.
    case failed
}
