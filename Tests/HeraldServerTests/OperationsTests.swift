import Foundation
import HeraldCore
import HeraldServerTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldServer

@Suite struct OperationsTests {
    @Test(arguments: TestEngine.allCases)
    func healthAndReadinessAnswer(engine: TestEngine) async throws {
        try await TestServer.run(engine) { session in
            let health = try await session.request(.get, "/healthz")
            #expect(health.status == 200)
            #expect(health.json == ["status": "ok"])
            let ready = try await session.request(.get, "/readyz")
            #expect(ready.status == 200)
            #expect(ready.json?["status"] == "ready" && ready.json?["database"] == .string(engine.rawValue))
            // The node that answered, as whoami names it to a socket (the node id's shape).
            guard case .string(let node)? = ready.json?["node"] else {
                Issue.record("no node in \(String(describing: ready.json))")
                return
            }
            #expect(node.hasPrefix("node_") && node.count > 10)
        }
    }

    @Test func metricsCountRequestsByRouteTemplateAndStatus() async throws {
        try await TestServer.run(.sqlite) { session in
            let token = try await session.token("ann")
            for _ in 0..<3 { _ = try await session.request(.get, "/api/v1/me", token: token) }
            _ = try await session.request(.get, "/api/v1/me")
            _ = try await session.request(.get, "/no/such/path")
            let metrics = try await session.request(.get, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
            let text = metrics.text
            #expect(text.contains(#"herald_http_requests_total{method="GET",route="/api/v1/me",status="200"} 3"#))
            #expect(text.contains(#"herald_http_requests_total{method="GET",route="/api/v1/me",status="401"} 1"#))
            #expect(text.contains(#"herald_http_requests_total{method="GET",route="NotFound",status="404"} 1"#))
            #expect(text.contains(#"herald_http_request_duration_seconds_count{method="GET",route="/api/v1/me"} 4"#))
        }
    }

    @Test func everyRegisteredRouteIsInTheOpenAPIDocumentAndNothingElse() async throws {
        try await TestServer.run(.sqlite) { session in
            let reply = try await session.request(.get, "/api/v1/openapi.json")
            #expect(reply.status == 200)
            let document = try #require(reply.json)
            #expect(document["openapi"] == "3.1.0")
            guard case .object(let paths)? = document["paths"] else {
                Issue.record("no paths")
                return
            }
            var documented: Set<String> = []
            for (path, item) in paths {
                for method in item.objectValue?.keys ?? [:].keys { documented.insert("\(method.uppercased()) \(path)") }
            }
            let registered = Set(session.runtime.routes)
            #expect(!registered.isEmpty)
            #expect(registered.subtracting(documented).isEmpty, "routes missing from the OpenAPI document: \(registered.subtracting(documented).sorted())")
            #expect(documented.subtracting(registered).isEmpty, "documented routes that do not exist: \(documented.subtracting(registered).sorted())")
            // Each operation answers something and names its security.
            let me = paths["/api/v1/me"]?["get"]
            #expect(me?["responses"]?["200"] != nil)
            #expect(me?["responses"]?["401"] != nil)
            #expect(me?["security"] == [["bearerAuth": []]])
        }
    }

    @Test func aRouteAddedWithoutDocumentationIsCaught() async throws {
        try await TestServer.run(.sqlite, extraRoutes: { api in api.get("/undocumented") { _, _ in "x" } }) { session in
            let document = try #require(try await session.request(.get, "/api/v1/openapi.json").json)
            let documentedPaths = Set(document["paths"]?.objectValue?.keys.map { $0 } ?? [])
            let missing = session.runtime.routes.filter { !documentedPaths.contains(String($0.split(separator: " ")[1])) }
            #expect(missing == ["GET /api/v1/undocumented"])
        }
    }

    @Test func theDocsPageListsEveryOperation() async throws {
        try await TestServer.run(.sqlite) { session in
            let page = try await session.request(.get, "/api/v1/docs/operations")
            #expect(page.status == 200)
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            for operation in session.runtime.operations {
                #expect(page.text.contains("<code>\(operation.path)</code>"), "\(operation.path)")
            }
        }
    }

    /// ReDoc over the OpenAPI document, its script served from the binary's resources.
    @Test func theDocsPageIsReDocFromTheBinarysOwnScript() async throws {
        try await TestServer.run(.sqlite) { session in
            let page = try await session.request(.get, "/api/v1/docs")
            #expect(page.status == 200 && page.text.contains("<redoc spec-url=\"/api/v1/openapi.json\""))
            #expect(page.text.contains("<script src=\"/api/v1/docs/redoc.standalone.js\"></script>") && !page.text.contains("https://"))
            let script = try await session.request(.get, "/api/v1/docs/redoc.standalone.js")
            #expect(script.status == 200 && script.header("Content-Type")?.hasPrefix("text/javascript") == true)
            #expect(script.body.count > 500_000 && script.text.hasPrefix("/*! For license information please see redoc.standalone.js.LICENSE.txt */"))
            let tag = try #require(script.header("ETag"))
            #expect(try await session.request(.get, "/api/v1/docs/redoc.standalone.js", headers: [.ifNoneMatch: tag]).status == 304)
        }
    }

    @Test func realSocketsCarryTheSameConventions() async throws {
        // A clock that stands still: a loaded machine's half minute must not refill the bucket.
        try await TestServer.run(
            .sqlite, setup: .live, clock: ManualClock(), configure: { $0.rateLimits.anonymous = RateLimitRule(limit: 2, windowSeconds: 60) }
        ) { session in
            #expect(try await session.request(.get, "/healthz").status == 200)
            let token = try await session.token("ann")
            let me = try await session.request(.get, "/api/v1/me", token: token)
            #expect(me.status == 200)
            #expect(me.data?["id"] == "ann")
            // The peer address (127.0.0.1) keys the anonymous bucket.
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await session.request(.get, "/api/v1/openapi.json").status) }
            #expect(statuses == [200, 200, 429])
        }
    }
}

/// The document states request bodies as the validators apply them (what schemathesis's
/// `positive_data_acceptance` holds the server to in `test_schema_fuzzing.py`).
@Suite struct RequestSchemaTests {
    @Test func objectsAreClosedAndBoundedTextIsNeverEmptyNorControl() {
        let body = Schema.object([
            "label": Schema.string(maxLength: 100),
            "place": Schema.object(["address": Schema.string(nullable: true, maxLength: 500)]),
            "room": Schema.token(maxBytes: 200),
            "kind": Schema.enumeration(["a", "b"]),
            "data": ["type": "object", "additionalProperties": true],
            "tags": Schema.array(Schema.string(maxLength: 20)),
        ])
        let schema = OpenAPIDocument.requestSchema(body)
        #expect(schema["additionalProperties"] == false)
        #expect(schema["properties"]?["label"]?["minLength"] == 1)
        #expect(schema["properties"]?["label"]?["not"]?["pattern"] == .string(Schema.controlCharacter))
        #expect(schema["properties"]?["place"]?["additionalProperties"] == false)
        #expect(schema["properties"]?["place"]?["properties"]?["address"]?["minLength"] == 1)
        #expect(schema["properties"]?["tags"]?["items"]?["minLength"] == 1)
        // Rules of their own are kept.
        #expect(schema["properties"]?["room"] == Schema.token(maxBytes: 200))
        #expect(schema["properties"]?["kind"] == Schema.enumeration(["a", "b"]))
        #expect(schema["properties"]?["data"]?["additionalProperties"] == true)
    }

    @Test func theControlCharacterPatternRefusesWhatTheValidatorsRefuse() throws {
        // The pattern as a JSON Schema consumer (ICU, ECMA-262, Python re) reads it.
        let regex = try NSRegularExpression(pattern: Schema.controlCharacter)
        func refused(_ text: String) -> Bool {
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        for text in ["a\u{7}b", "tab\there", "new\nline", "end\n", "\u{7F}", "c1\u{85}"] { #expect(refused(text), "\(text.debugDescription)") }
        for text in ["Work", "Café ☕", "line with spaces", "日本語", ""] { #expect(!refused(text), "\(text.debugDescription)") }
    }
}
