import Foundation
import HeraldAuth
import HeraldCore
import JWTKit
import Logging
import Synchronization
import Testing

/// A provider's JWKS as `RemoteJWKS` sees it: a set that rotates, fails, and is counted.
final class FakeProvider: Sendable {
    struct State {
        var keys: [(kid: String, key: ES256PrivateKey)] = []
        var down = false
        var fetches = 0
        var maxAge: Int? = 3600
    }

    let state = Mutex(State())

    func add(_ kid: String) -> ES256PrivateKey {
        let key = ES256PrivateKey()
        state.withLock { $0.keys.append((kid, key)) }
        return key
    }

    func remove(_ kid: String) {
        state.withLock { $0.keys.removeAll { $0.kid == kid } }
    }

    var fetches: Int { state.withLock { $0.fetches } }

    func fetch() throws -> RemoteJWKS.Document {
        let (keys, down, maxAge) = state.withLock { state in
            state.fetches += 1
            return (state.keys, state.down, state.maxAge)
        }
        struct Down: Error {}
        if down { throw Down() }
        let entries: [JSONValue] = keys.map { entry in
            let parameters = entry.key.parameters!
            return [
                "kty": "EC", "crv": "P-256", "kid": .string(entry.kid), "use": "sig", "alg": "ES256", "x": .string(parameters.x), "y": .string(parameters.y),
            ]
        }
        let json = String(decoding: try JSONEncoder().encode(JSONValue.object(["keys": .array(entries)])), as: UTF8.self)
        return .init(json: json, cacheControl: CacheControl(maxAgeSeconds: maxAge))
    }
}

@Suite struct RemoteJWKSTests {
    let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))

    func token(_ key: ES256PrivateKey, kid: String, sub: String = "u1") async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        let claims: [String: JSONValue] = ["sub": .string(sub), "role": "customer", "exp": .number(clock.now().timeIntervalSince1970 + 600)]
        return try await keys.sign(RawClaims(claims), kid: JWKIdentifier(string: kid))
    }

    func verifier(_ provider: FakeProvider, minRefetch: Duration) async throws -> (TokenVerifier, RemoteJWKS) {
        let remote = RemoteJWKS(minRefetch: minRefetch, logger: Logger(label: "test")) { try provider.fetch() }
        await remote.refresh()
        return (try await TokenVerifier(hmacSecret: nil, jwks: nil, remoteKeys: remote, settings: .init(), clock: clock), remote)
    }

    @Test func aRotatedKeyIsFetchedWhenATokenNamesItAndAWithdrawnOneStopsVouching() async throws {
        let provider = FakeProvider()
        let first = provider.add("k1")
        // A minimum interval of zero: every unknown kid may fetch (the rate limit has its own test).
        let (verifier, remote) = try await verifier(provider, minRefetch: .zero)
        #expect(provider.fetches == 1 && remote.keyCount == 1)
        let old = try await token(first, kid: "k1", sub: "old")
        #expect(try await verifier.verify(old).userID == "old")

        let second = provider.add("k2")
        #expect(try await verifier.verify(try await token(second, kid: "k2", sub: "new")).userID == "new")
        #expect(provider.fetches == 2, "one fetch for the unknown kid")
        // A known kid costs nothing.
        #expect(try await verifier.verify(try await token(second, kid: "k2", sub: "again")).userID == "again")
        #expect(provider.fetches == 2)

        provider.remove("k1")
        await remote.refresh()
        // The token k1 signed was accepted and remembered; the withdrawal makes it checked again, and refused.
        await #expect(throws: AuthFailure.self) { try await verifier.verify(old) }
    }

    @Test func unknownKidsFetchAtMostOncePerInterval() async throws {
        let provider = FakeProvider()
        _ = provider.add("k1")
        let (verifier, _) = try await verifier(provider, minRefetch: .seconds(3600))
        let stranger = ES256PrivateKey()
        for index in 0..<25 {
            await #expect(throws: AuthFailure.self) { try await verifier.verify(try await token(stranger, kid: "made-up-\(index)")) }
        }
        // The start-up fetch began the interval: none of the 25 fetched again.
        #expect(provider.fetches == 1)
    }

    @Test func theLastGoodSetStaysWhenTheProviderFailsOrAnswersNonsense() async throws {
        let provider = FakeProvider()
        let key = provider.add("k1")
        let (verifier, remote) = try await verifier(provider, minRefetch: .zero)
        provider.state.withLock { $0.down = true }
        #expect(await remote.refresh() == false)
        #expect(try await verifier.verify(try await token(key, kid: "k1")).userID == "u1")
        // An empty set is not a usable JWKS either: the keys stay.
        provider.state.withLock { $0.down = false }
        provider.remove("k1")
        #expect(await remote.refresh() == false)
        #expect(remote.keyCount == 1)
    }

    @Test func aNodeThatStartedWhileTheProviderWasDownVerifiesOnceItAnswers() async throws {
        let provider = FakeProvider()
        provider.state.withLock { $0.down = true }
        let (verifier, remote) = try await verifier(provider, minRefetch: .zero)
        #expect(remote.keyCount == nil)
        let key = provider.add("k1")
        let token = try await token(key, kid: "k1")
        await #expect(throws: AuthFailure.self) { try await verifier.verify(token) }
        provider.state.withLock { $0.down = false }
        #expect(try await verifier.verify(token).userID == "u1")
    }
}
