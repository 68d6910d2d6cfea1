/// Where an on-site volume adjustment stands.
public enum AdjustmentStatus: String, Sendable, Codable, CaseIterable {
    /// A higher price waits for the customer (also after its deadline, until the driver ends it).
    case pending
    /// The new price holds: approved by the customer, or at once because it was not higher.
    case approved
    /// The customer said no: the job was cancelled with the trip fee, or (no trip fee) goes on
    /// at its booked price.
    case declined
    /// The driver ended an unanswered proposal with the trip fee, or an operator cancelled the job.
    case cancelled
}
