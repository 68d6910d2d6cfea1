/// Where the client gets its access token: the app's sign-in layer.
///
/// Why a provider and not a token: tokens expire. The client asks for one before each request
/// and each connection, and asks again with `forceRefresh` once when the server says the token
/// is no longer good (401, or `TOKEN_EXPIRED` on the realtime connection), so the app refreshes
/// in one place.
public protocol HeraldTokenProvider: Sendable {
    func token(forceRefresh: Bool) async throws -> String
}

/// A provider from a closure: `TokenProvider { refresh in try await auth.accessToken(refresh: refresh) }`.
public struct TokenProvider: HeraldTokenProvider {
    let fetch: @Sendable (Bool) async throws -> String

    public init(_ fetch: @escaping @Sendable (_ forceRefresh: Bool) async throws -> String) {
        self.fetch = fetch
    }

    public func token(forceRefresh: Bool) async throws -> String {
        try await fetch(forceRefresh)
    }
}
