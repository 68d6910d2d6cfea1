import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

@Suite struct RateLimitTests {
    @Test func anonymousCallersAreLimitedPerIPWithRetryAfter() async throws {
        let clock = ManualClock()
        try await TestServer.run(.sqlite, clock: clock, configure: { $0.rateLimits.anonymous = RateLimitRule(limit: 3, windowSeconds: 60) }) { session in
            for _ in 0..<3 {
                let ok = try await session.request(.get, "/api/v1/openapi.json")
                #expect(ok.status == 200)
            }
            let limited = try await session.request(.get, "/api/v1/openapi.json")
            #expect(limited.status == 429)
            #expect(limited.errorCode == "RATE_LIMIT_EXCEEDED")
            #expect(limited.header("Retry-After") == "20")
            #expect(limited.json?["error"]?["details"] == ["limit": 3, "window": "1 minute", "retry_after": 20])

            clock.advance(by: 20)
            let refilled = try await session.request(.get, "/api/v1/openapi.json")
            #expect(refilled.status == 200)
            #expect(refilled.header("X-RateLimit-Limit") == "3")
            #expect(refilled.header("X-RateLimit-Remaining") == "0")
        }
    }

    @Test func authenticatedCallersHaveTheirOwnBuckets() async throws {
        // A clock that stands still: on a loaded machine five seconds between two requests
        // would refill a token.
        try await TestServer.run(.sqlite, clock: ManualClock(), configure: { $0.rateLimits.authenticated = RateLimitRule(limit: 2, windowSeconds: 10) }) {
            session in
            let ann = try await session.token("ann")
            let bob = try await session.token("bob")
            #expect(try await session.request(.get, "/api/v1/me", token: ann).status == 200)
            #expect(try await session.request(.get, "/api/v1/me", token: ann).status == 200)
            let limited = try await session.request(.get, "/api/v1/me", token: ann)
            #expect(limited.status == 429)
            #expect(limited.json?["error"]?["details"]?["window"] == "10 seconds")
            #expect(try await session.request(.get, "/api/v1/me", token: bob).status == 200)
            // Anonymous callers are counted apart from users.
            #expect(try await session.request(.get, "/api/v1/openapi.json").status == 200)
        }
    }

    /// Issue 37: a backend retrying 600 notifications after sending them got 429s under the
    /// per-user default. A service token has its own, larger default, and the riders'
    /// built-in route rules do not hold it.
    @Test func serviceCallersHaveABackendSizedLimitOfTheirOwn() async throws {
        try await TestServer.run(
            .sqlite, clock: ManualClock(),
            configure: { config in
                config.rateLimits.authenticated = RateLimitRule(limit: 2, windowSeconds: 60)
                config.rateLimits.service = RateLimitRule(limit: 5, windowSeconds: 60)
            }
        ) { session in
            let backend = try await session.token("billing", .service)
            let person = try await session.token("ann")
            for _ in 0..<5 {
                let ok = try await session.request(.get, "/api/v1/me", token: backend)
                #expect(ok.status == 200 && ok.header("X-RateLimit-Limit") == "5")
            }
            let limited = try await session.request(.get, "/api/v1/me", token: backend)
            #expect(limited.status == 429 && limited.json?["error"]?["details"]?["limit"] == 5)
            // A person keeps the per-user default, counted apart.
            #expect(try await session.request(.get, "/api/v1/me", token: person).header("X-RateLimit-Limit") == "2")
        }
        // The built-in stops rule (120 a minute for users) holds a person, not a backend (a
        // clock that stands still: a slow machine's minute must not refill the buckets).
        try await TestServer.run(.sqlite, clock: ManualClock()) { session in
            let backend = try await session.token("feeds", .service)
            let person = try await session.token("ann")
            var limited = (backend: 0, person: 0)
            for _ in 0..<125 {
                let path = "/api/v1/stops/nearby?lat=44.6&lon=-63.6"
                if try await session.request(.get, path, token: backend).status == 429 { limited.backend += 1 }
                if try await session.request(.get, path, token: person).status == 429 { limited.person += 1 }
            }
            #expect(limited.backend == 0 && limited.person == 5)
        }
        // The default is sized for a backend: 1,000 a second.
        #expect(RateLimitConfig().service == RateLimitRule(limit: 60_000, windowSeconds: 60))
    }

    @Test func perRouteRulesReplaceTheDefaults() async throws {
        try await TestServer.run(
            .sqlite, clock: ManualClock(),
            configure: { config in
                config.rateLimits.routes["PUT /api/v1/me"] = RateLimitRule(limit: 1, windowSeconds: 3600)
            }
        ) { session in
            let token = try await session.token("ann")
            #expect(try await session.request(.put, "/api/v1/me", token: token, json: ["display_name": "A"]).status == 200)
            let limited = try await session.request(.put, "/api/v1/me", token: token, json: ["display_name": "B"])
            #expect(limited.status == 429)
            #expect(limited.json?["error"]?["details"]?["window"] == "1 hour")
            // A full hour (the clock stands still between the two calls).
            let retryAfter = Int(limited.header("Retry-After") ?? "") ?? 0
            #expect((3540...3600).contains(retryAfter), "Retry-After \(retryAfter)")
            // Other routes still use the (untouched) default bucket.
            #expect(try await session.request(.get, "/api/v1/me", token: token).status == 200)
        }
    }

    /// The rideshare design's 5 cancels a minute hold whichever route cancels: a cancel through
    /// `/trips/{id}/transitions` spends the same allowance; other transitions do not.
    @Test func aCancelThroughTransitionsSpendsTheCancelAllowance() async throws {
        // A clock that stands still: a loaded machine's minute must not refill the allowance.
        try await TestServer.run(.sqlite, clock: ManualClock()) { session in
            let rider = try await session.token("rider")
            #expect(try await session.request(.post, "/api/v1/ride-requests/req_nope/cancel", token: rider).status == 404)
            for _ in 0..<4 {
                let missing = try await session.request(.post, "/api/v1/trips/trp_nope/transitions", token: rider, json: ["to": "CANCELLED"])
                #expect(missing.status == 404)
            }
            let limited = try await session.request(.post, "/api/v1/trips/trp_nope/transitions", token: rider, json: ["to": "CANCELLED"])
            #expect(limited.status == 429 && limited.json?["error"]?["details"]?["limit"] == 5)
            #expect(try await session.request(.post, "/api/v1/ride-requests/req_nope/cancel", token: rider).status == 429)
            #expect(try await session.request(.post, "/api/v1/trips/trp_nope/transitions", token: rider, json: ["to": "ARRIVED"]).status != 429)
        }
    }

    @Test func failedAuthenticationIsRateLimitedByIP() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(), configure: { $0.rateLimits.anonymous = RateLimitRule(limit: 2, windowSeconds: 60) }) {
            session in
            var statuses: [Int] = []
            for guess in ["guess-1", "guess-2", "guess-3"] {
                statuses.append(try await session.request(.get, "/api/v1/me", token: guess).status)
            }
            #expect(statuses == [401, 401, 429])
        }
    }

    @Test func disabledLimitsLetEverythingThrough() async throws {
        try await TestServer.run(
            .sqlite,
            configure: { config in
                config.rateLimits.enabled = false
                config.rateLimits.anonymous = RateLimitRule(limit: 1, windowSeconds: 60)
            }
        ) { session in
            var statuses: [Int] = []
            for _ in 0..<5 { statuses.append(try await session.request(.get, "/api/v1/openapi.json").status) }
            #expect(statuses == [200, 200, 200, 200, 200])
        }
    }

    @Test func forwardedForIsOnlyTrustedWhenConfigured() async throws {
        let forwarded = HTTPField.Name("X-Forwarded-For")!
        for trusted in [true, false] {
            try await TestServer.run(
                .sqlite, clock: ManualClock(),
                configure: { config in
                    config.rateLimits.anonymous = RateLimitRule(limit: 1, windowSeconds: 60)
                    config.server.trustForwardedFor = trusted
                }
            ) { session in
                #expect(try await session.request(.get, "/api/v1/openapi.json", headers: [forwarded: "203.0.113.1"]).status == 200)
                let other = try await session.request(.get, "/api/v1/openapi.json", headers: [forwarded: "203.0.113.2, 10.0.0.1"])
                #expect(other.status == (trusted ? 200 : 429))
            }
        }
    }
}
