import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

/// Browsers on other origins, over real HTTP: preflights answered before routing (the
/// Socket.IO polling path included) and the headers on answers and errors. (WebSocket
/// upgrades against the same list: Tests/e2e/test_websocket_wire.py, over raw sockets.)
@Suite struct CrossOriginTests {
    static let app = "https://app.example.com"
    static let evil = "https://evil.example"

    static func run(_ body: @Sendable @escaping (TestSession) async throws -> Void) async throws {
        try await TestServer.run(.sqlite, setup: .live, configure: { $0.cors.allowedOrigins = [app] }, body)
    }

    static func preflight(_ method: String, headers: String) -> (String) -> HTTPFields {
        { origin in
            [.origin: origin, HTTPField.Name("Access-Control-Request-Method")!: method, HTTPField.Name("Access-Control-Request-Headers")!: headers]
        }
    }

    @Test func preflightsOfAllowedPagesAreAnsweredOnEveryPath() async throws {
        try await Self.run { session in
            for path in ["/api/v1/notifications", "/socket.io/?EIO=4&transport=polling", "/api/v1/no-such-route"] {
                let allowed = try await session.request(.options, path, headers: Self.preflight("POST", headers: "authorization, content-type")(Self.app))
                #expect(allowed.status == 204, "\(path)")
                #expect(allowed.header("Access-Control-Allow-Origin") == Self.app)
                #expect(allowed.header("Access-Control-Allow-Headers") == "authorization, content-type")
                #expect(allowed.header("Access-Control-Allow-Methods")?.contains("POST") == true)
                let refused = try await session.request(.options, path, headers: Self.preflight("POST", headers: "authorization")(Self.evil))
                #expect(refused.status == 403)
                #expect(refused.errorCode == "ORIGIN_NOT_ALLOWED")
                #expect(refused.header("Access-Control-Allow-Origin") == nil)
            }
        }
    }

    @Test func answersAndErrorsCarryTheHeadersForAllowedPagesOnly() async throws {
        try await Self.run { session in
            let token = try await session.token("ann")
            let me = try await session.request(.get, "/api/v1/me", token: token, headers: [.origin: Self.app])
            #expect(me.status == 200)
            #expect(me.header("Access-Control-Allow-Origin") == Self.app)
            #expect(me.header("Vary")?.contains("Origin") == true)
            #expect(me.header("Access-Control-Expose-Headers")?.contains("X-Request-ID") == true)
            let unauthorized = try await session.request(.get, "/api/v1/me", headers: [.origin: Self.app])
            #expect(unauthorized.status == 401)
            #expect(unauthorized.header("Access-Control-Allow-Origin") == Self.app, "a page must be able to read its errors")
            let polling = try await session.request(.get, "/socket.io/?EIO=4&transport=polling", headers: [.origin: Self.app])
            #expect(polling.status == 200 && polling.text.hasPrefix("0{"))
            #expect(polling.header("Access-Control-Allow-Origin") == Self.app)
            // Another site's page gets the answer a server without CORS gives: nothing that
            // lets its script read it (the request itself is the same as any client's).
            let other = try await session.request(.get, "/api/v1/me", token: token, headers: [.origin: Self.evil])
            #expect(other.status == 200 && other.header("Access-Control-Allow-Origin") == nil)
            let plain = try await session.request(.get, "/api/v1/me", token: token)
            #expect(plain.header("Access-Control-Allow-Origin") == nil)
        }
    }
}
