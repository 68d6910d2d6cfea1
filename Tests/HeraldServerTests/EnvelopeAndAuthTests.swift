import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

@Suite struct EnvelopeAndAuthTests {
    @Test func successAnswersCarryDataAndMetaWithTheRequestID() async throws {
        try await TestServer.run(.sqlite) { session in
            let reply = try await session.request(.get, "/api/v1/me", token: try await session.token("ann"))
            #expect(reply.status == 200)
            #expect(reply.data?["id"] == "ann")
            #expect(reply.data?["role"] == "customer")
            let requestID = try #require(reply.header("X-Request-ID"))
            #expect(requestID.hasPrefix("req_"))
            #expect(reply.json?["meta"]?["request_id"]?.stringValue == requestID)
            let timestamp = try #require(reply.json?["meta"]?["timestamp"]?.stringValue)
            #expect(Timestamp.parse(timestamp) != nil)
        }
    }

    @Test func echoesASaneRequestIDAndReplacesAnUnsafeOne() async throws {
        try await TestServer.run(.sqlite) { session in
            let echoed = try await session.request(.get, "/api/v1/me", headers: [HTTPField.Name("X-Request-ID")!: "abc-123.x:y_z"])
            #expect(echoed.header("X-Request-ID") == "abc-123.x:y_z")
            #expect(echoed.json?["meta"]?["request_id"] == "abc-123.x:y_z")

            for unsafe in ["has space", String(repeating: "a", count: 129), "<script>"] {
                let replaced = try await session.request(.get, "/api/v1/me", headers: [HTTPField.Name("X-Request-ID")!: unsafe])
                let id = try #require(replaced.header("X-Request-ID"))
                #expect(id.hasPrefix("req_"))
                #expect(replaced.json?["meta"]?["request_id"]?.stringValue == id)
            }
        }
    }

    @Test func errorsUseTheEnvelopeWithAStableCode() async throws {
        try await TestServer.run(.sqlite) { session in
            let reply = try await session.request(.get, "/api/v1/me")
            #expect(reply.status == 401)
            #expect(reply.errorCode == "UNAUTHORIZED")
            #expect(reply.json?["error"]?["message"] == "Authentication is required.")
            #expect(reply.header("WWW-Authenticate") == "Bearer")
            #expect(reply.json?["meta"]?["request_id"]?.stringValue == reply.header("X-Request-ID"))
            #expect(reply.json?["data"] == nil)
        }
    }

    @Test func unknownRoutesAre404InTheEnvelope() async throws {
        try await TestServer.run(.sqlite) { session in
            for path in ["/api/v1/nothing-here", "/nothing", "/api/v2/me"] {
                let reply = try await session.request(.get, path)
                #expect(reply.status == 404)
                #expect(reply.errorCode == "NOT_FOUND")
            }
        }
    }

    /// A lapsed token must not blank a transit app's stops and departures until it can
    /// refresh (issue 39): routes anyone may call serve it as anonymous and say so.
    @Test func aRefusedTokenIs401WithTheReasonAndPublicRoutesServeItAsAnonymous() async throws {
        let clock = ManualClock(sampleMorning)
        try await TestServer.run(.sqlite, clock: clock) { session in
            _ = try await session.importSample()
            let expiring = try await session.token("ann", ttl: 60)
            clock.advance(by: 120)
            let expired = try await session.request(.get, "/api/v1/me", token: expiring)
            #expect(expired.status == 401)
            #expect(expired.json?["error"]?["message"] == "The token has expired.")
            #expect(expired.header("Herald-Token-Ignored") == nil)
            #expect(try await session.request(.get, "/api/v1/favorites", token: expiring).status == 401)

            for uri in ["/api/v1/routes", "/api/v1/stops/STAGECOACH", "/api/v1/stops/STAGECOACH/departures", "/api/v1/alerts"] {
                let served = try await session.request(.get, uri, token: expiring)
                #expect(served.status == 200, "\(uri): \(served.text)")
                #expect(served.header("Herald-Token-Ignored") == "expired", "\(uri)")
            }
            // An error answer of a public route says it too (an unknown stop).
            let missing = try await session.request(.get, "/api/v1/stops/NOWHERE", token: "not.a.token")
            #expect(missing.status == 404 && missing.header("Herald-Token-Ignored") == "malformed")

            let garbage = try await session.request(.get, "/api/v1/openapi.json", token: "not.a.token")
            #expect(garbage.status == 200)
            #expect(garbage.header("Herald-Token-Ignored") == "malformed")
            // A valid token sets nothing aside.
            #expect(try await session.request(.get, "/api/v1/routes", token: try await session.token("ann")).header("Herald-Token-Ignored") == nil)

            let basic = try await session.request(.get, "/api/v1/me", headers: [.authorization: "Basic dXNlcjpwYXNz"])
            #expect(basic.status == 401)
            #expect(basic.json?["error"]?["message"] == "The token is malformed.")
        }
    }

    @Test func aUserIsCreatedOnTheirFirstAuthenticatedCall() async throws {
        try await TestServer.run(.sqlite) { session in
            let token = try await session.token("new-user", .driver)
            let first = try await session.request(.get, "/api/v1/me", token: token)
            let createdAt = try #require(first.data?["created_at"]?.stringValue)
            let again = try await session.request(.get, "/api/v1/me", token: token)
            #expect(again.data?["created_at"]?.stringValue == createdAt)
            #expect(again.data?["role"] == "driver")
            #expect(again.data?["time_zone"] == "UTC")
        }
    }

    @Test func rolesAreEnforcedPerRoute() async throws {
        try await TestServer.run(
            .sqlite,
            extraRoutes: { api in
                api.get("/test/operators-only") { _, context in
                    let identity = try context.require(.operator, .service)
                    return try Envelope.response(["user": identity.userID], context: context)
                }
            }
        ) { session in
            let refused = try await session.request(.get, "/api/v1/test/operators-only", token: try await session.token("c", .customer))
            #expect(refused.status == 403)
            #expect(refused.errorCode == "FORBIDDEN")
            let allowed = try await session.request(.get, "/api/v1/test/operators-only", token: try await session.token("op", .operator))
            #expect(allowed.status == 200)
            #expect(allowed.data?["user"] == "op")
            let anonymous = try await session.request(.get, "/api/v1/test/operators-only")
            #expect(anonymous.status == 401)
        }
    }
}
