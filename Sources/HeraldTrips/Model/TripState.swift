/// A trip's state (the rideshare design's machine): `REQUESTED → ACCEPTED → ARRIVED → IN_PROGRESS → COMPLETED`,
/// and any state that is not final → `CANCELLED`.
///
/// Why `REQUESTED` exists although trips are made at the accept: it is the state the rider
/// was in while searching, so the first `trip_state_changed` says `REQUESTED → ACCEPTED`.
public enum TripState: String, Sendable, Codable, CaseIterable {
    case requested = "REQUESTED"
    case accepted = "ACCEPTED"
    case arrived = "ARRIVED"
    case inProgress = "IN_PROGRESS"
    case completed = "COMPLETED"
    case cancelled = "CANCELLED"

    public var isFinal: Bool { self == .completed || self == .cancelled }

    /// Whether the driver is committed to the rider (on the way, waiting or driving).
    public var isActive: Bool { self == .accepted || self == .arrived || self == .inProgress }

    public var allowedTransitions: [TripState] {
        switch self {
        case .requested: [.accepted, .cancelled]
        case .accepted: [.arrived, .cancelled]
        case .arrived: [.inProgress, .cancelled]
        case .inProgress: [.completed, .cancelled]
        case .completed, .cancelled: []
        }
    }

    public func canBecome(_ next: TripState) -> Bool { allowedTransitions.contains(next) }
}

/// Who caused a change (the event's `triggered_by`).
public enum TripActor: String, Sendable, Codable {
    case rider = "RIDER"
    case driver = "DRIVER"
    case system = "SYSTEM"
    case `operator` = "OPERATOR"

    /// Which targets each party may move a trip to: the driver drives the trip forward, the
    /// rider can only cancel, operators and the system may do anything the machine allows.
    public func mayMove(to state: TripState) -> Bool {
        switch self {
        case .driver: state == .arrived || state == .inProgress || state == .completed || state == .cancelled
        case .rider: state == .cancelled
        case .system, .operator: true
        }
    }
}

/// A ride request's state: searching until matched, cancelled or expired.
public enum RideRequestState: String, Sendable, Codable {
    case searching = "SEARCHING"
    case matched = "MATCHED"
    case cancelled = "CANCELLED"
    case expired = "EXPIRED"

    public var allowedTransitions: [String] {
        self == .searching ? ["CANCELLED"] : []
    }
}
