/// Where a job is in its life. `cancelled` and `expired` end it early; `completed` ends it well.
public enum JobStatus: String, Sendable, Codable, CaseIterable {
    case pending
    case accepted
    case enRoute = "en_route"
    case arrived
    case started
    case completed
    case cancelled
    case expired

    public var isFinal: Bool { self == .completed || self == .cancelled || self == .expired }
}

/// Who asks for a change; each transition belongs to one kind of party.
public enum JobActor: String, Sendable, Codable {
    case customer
    case driver
    case `operator`
    case system
}
