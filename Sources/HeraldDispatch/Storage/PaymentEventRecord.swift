/// One call to the payment provider about a job's hold (`payment_events`), kept for support.
public struct PaymentEventRecord: Sendable, Codable, Equatable {
    public var operation: String
    public var amountMinor: Int64?
    public var outcome: PaymentCallOutcome
    public var errorCode: String?
    public var createdAt: Int64

    enum CodingKeys: String, CodingKey {
        case operation, outcome
        case amountMinor = "amount_minor"
        case errorCode = "error_code"
        case createdAt = "created_at"
    }
}
