import HeraldPayments

/// A job's payment hold as Herald knows it: one row of `payment_holds`. Money in minor units.
public struct HoldRecord: Sendable, Equatable, Codable {
    public var jobID: String
    public var provider: String
    public var reference: String
    public var status: Status
    public var authorizedMinor: Int64
    public var amountMinor: Int64
    public var capturedMinor: Int64
    public var currency: String
    /// The provider call Herald decided on but the provider has not confirmed yet.
    public var pendingOp: String?
    public var pendingAmountMinor: Int64?
    public var attempts: Int
    public var nextAttemptAt: Int64?
    public var lastError: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The card a scheduled hold is taken from (nil once taken or for holds taken at booking).
    public var paymentMethod: String?
    public var customerID: String?

    /// A hold's status as stored (`payment_holds.status`): the provider's `HoldStatus`, or
    /// `scheduled`, Herald's own for a hold not taken yet (see `HoldTiming`): there is no
    /// provider record, so nothing to change, capture or release until it is taken.
    public enum Status: String, Sendable, Codable, CaseIterable {
        case scheduled, authorized, captured, cancelled

        public init(_ provider: HoldStatus) {
            switch provider {
            case .authorized: self = .authorized
            case .captured: self = .captured
            case .cancelled: self = .cancelled
            }
        }
    }

    public var isScheduled: Bool { status == .scheduled }

    /// The hold as the provider would report it. A scheduled hold has no live authorisation
    /// at the provider, so it reads as `cancelled`: nothing to change, capture or release.
    public var state: HoldState {
        let provider: HoldStatus =
            switch status {
            case .authorized: .authorized
            case .captured: .captured
            case .cancelled, .scheduled: .cancelled
            }
        return HoldState(
            reference: reference, status: provider, authorizedMinor: authorizedMinor, amountMinor: amountMinor,
            capturedMinor: capturedMinor, currency: currency)
    }

    enum CodingKeys: String, CodingKey {
        case provider, reference, status, currency, attempts
        case jobID = "job_id"
        case authorizedMinor = "authorized_minor"
        case amountMinor = "amount_minor"
        case capturedMinor = "captured_minor"
        case pendingOp = "pending_op"
        case pendingAmountMinor = "pending_amount_minor"
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case paymentMethod = "payment_method"
        case customerID = "customer_id"
    }
}

/// A provider call Herald owes a hold.
public enum HoldOperation: Sendable, Equatable {
    /// Taking a scheduled hold for this amount.
    case authorize(Int64)
    case change(Int64)
    case capture(Int64)
    case cancel

    var name: String {
        switch self {
        case .authorize: "authorize"
        case .change: "change"
        case .capture: "capture"
        case .cancel: "cancel"
        }
    }

    var amount: Int64? {
        switch self {
        case .authorize(let amount), .change(let amount), .capture(let amount): amount
        case .cancel: nil
        }
    }

    init?(name: String?, amount: Int64?) {
        switch (name, amount) {
        case ("authorize", let amount?): self = .authorize(amount)
        case ("change", let amount?): self = .change(amount)
        case ("capture", let amount?): self = .capture(amount)
        case ("cancel", _): self = .cancel
        default: return nil
        }
    }

    /// The same decision always gets the same key, so a retry is never applied twice. Taking
    /// a hold has the booking's key: a job has one first authorisation, whenever it is made.
    func idempotencyKey(jobID: String) -> String {
        if case .authorize = self { return "\(jobID):authorize" }
        return amount.map { "\(jobID):\(name):\($0)" } ?? "\(jobID):\(name)"
    }
}
