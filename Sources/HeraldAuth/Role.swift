/// Who a caller is to Herald; every route decides what each role may do.
public enum Role: String, Sendable, Codable, CaseIterable {
    /// Books jobs and rides, reads their own inbox.
    case customer
    /// Receives offers, claims jobs, streams locations.
    case driver
    /// A person at the marketplace operator: approves drivers, reads delivery logs.
    case `operator`
    /// Another backend calling Herald (sends notifications on behalf of users).
    case service
}

/// The caller of a request or a socket, established from a verified token.
public struct Identity: Sendable, Equatable {
    /// The token's `sub`.
    public let userID: String
    public let role: Role
    /// When the token stops being valid; sockets use it to end sessions on time.
    public let expiresAt: Double

    public init(userID: String, role: Role, expiresAt: Double) {
        self.userID = userID
        self.role = role
        self.expiresAt = expiresAt
    }
}
