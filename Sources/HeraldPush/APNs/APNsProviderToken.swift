import Foundation
import HeraldCore
import JWTKit
import Synchronization

/// The APNs provider token: an ES256 JWT (`kid` = key id, `iss` = team id, `iat`) signed with
/// the team's .p8 key, shared by every request.
///
/// Why cached with a floor and a ceiling: APNs refuses tokens older than an hour
/// (`ExpiredProviderToken`) and throttles a provider that changes its token more often than
/// every 20 minutes (`TooManyProviderTokenUpdates`). The token is renewed once it is 50
/// minutes old, and at once when APNs calls the current one expired — once per rejected
/// token, however many requests saw the rejection.
public actor APNsProviderToken {
    public static let renewAfter: TimeInterval = 50 * 60
    public static let minimumAge: TimeInterval = 20 * 60

    private let keys: JWTKeyCollection
    private let keyID: String
    private let teamID: String
    private let clock: any HeraldClock
    private var current: (token: String, issuedAt: Date)? {
        didSet { published.withLock { $0 = current } }
    }
    /// The current token for readers that must not hop onto the actor for it: every push
    /// needs the token, and an actor hop per send was a measurable share of its cost.
    private nonisolated let published = Mutex<(token: String, issuedAt: Date)?>(nil)
    /// How many tokens were signed (tests check the renewal rules with it).
    public private(set) var signed = 0

    public init(privateKeyPEM: String, keyID: String, teamID: String, clock: any HeraldClock) async throws {
        let key = try ES256PrivateKey(pem: privateKeyPEM)
        keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
    }

    struct Claims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The current token while it is younger than `renewAfter`, without entering the actor;
    /// nil when it must be signed (then call `token()`).
    public nonisolated func fresh() -> String? {
        let now = clock.now()
        return published.withLock { current in
            guard let current, now.timeIntervalSince(current.issuedAt) < Self.renewAfter else { return nil }
            return current.token
        }
    }

    /// The token to send now.
    public func token() async throws -> String {
        let now = clock.now()
        if let current, now.timeIntervalSince(current.issuedAt) < Self.renewAfter { return current.token }
        return try await sign(at: now)
    }

    /// APNs answered `ExpiredProviderToken` for `rejected`: renew, unless another request
    /// already did (then the newer token is returned).
    public func renew(rejected: String) async throws -> String {
        if let current, current.token != rejected { return current.token }
        return try await sign(at: clock.now())
    }

    private func sign(at now: Date) async throws -> String {
        // Whole seconds: `iat` is an integer in the token.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token = try await keys.sign(Claims(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: issuedAt)), kid: JWKIdentifier(string: keyID))
        current = (token, issuedAt)
        signed += 1
        return token
    }
}
