import Foundation
import HeraldCore
import HeraldServerTestSupport
import Hummingbird
import Testing

@Suite struct ConsoleTests {
    struct Boom: Error {}

    @Test func thePageIsStaticAndTheFiguresNeedAnOperator() async throws {
        try await TestServer.run(.sqlite, extraRoutes: { api in api.get("/explode") { _, _ -> String in throw Boom() } }) { session in
            let page = try await session.request(.get, "/console")
            #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.text.contains("/console/console.js") && page.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
            #expect(try await session.request(.get, "/console/console.js").header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(try await session.request(.get, "/console/console.css").status == 200)

            #expect(try await session.request(.get, "/api/v1/operators/console").status == 401)
            #expect(try await session.request(.get, "/api/v1/operators/console", token: try await session.token("ann")).errorCode == "FORBIDDEN")

            // A 5xx is listed for operators with its route, code and request id, not its detail.
            let exploded = try await session.request(.get, "/api/v1/explode", token: try await session.token("ann"))
            #expect(exploded.status == 500)
            let view = try await session.request(.get, "/api/v1/operators/console", token: try await session.token("ops", .operator))
            #expect(view.status == 200)
            let errors = try #require(view.data?["errors"]?.arrayValue)
            #expect(errors.count == 1)
            #expect(errors.first?["path"] == "/api/v1/explode" && errors.first?["status"] == 500 && errors.first?["code"] == "INTERNAL_SERVER_ERROR")
            #expect(errors.first?["request_id"]?.stringValue == exploded.header("X-Request-ID"))
            #expect(!view.text.contains("Boom"))
            #expect(view.data?["push_queue_depth"] == 0 && view.data?["jobs"] == [] && view.data?["nodes"]?.arrayValue?.count == 1)
        }
    }
}
