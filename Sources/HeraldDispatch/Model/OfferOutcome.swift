/// How an offer ended for the driver it reached (`job_offers.outcome`, `ride_offers.outcome`;
/// nil while the job or ride request is still open).
public enum OfferOutcome: String, Sendable, Codable, CaseIterable {
    /// This driver took it.
    case won
    /// Another driver took it.
    case lost
    /// The customer or rider cancelled it.
    case cancelled
    /// Nobody took it in time.
    case expired
}
