/// An operator's verdict on a driver; only `approved` drivers are offered jobs or may claim one.
public enum DriverApproval: String, Sendable, Codable, CaseIterable {
    case pending
    case approved
    case rejected
    case suspended
}
