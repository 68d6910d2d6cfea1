import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Hummingbird
import SQLKit
import Synchronization
import Testing

/// A POST route that counts how often its work really runs.
final class WorkCounter: Sendable {
    let runs = Mutex(0)
    var count: Int { runs.withLock { $0 } }

    func routes(delay: Duration = .zero) -> (RouterGroup<HeraldRequestContext>) -> Void {
        { api in
            api.post("/test/orders") { request, context in
                let identity = try context.requireIdentity()
                let body = try await request.decodeJSON([String: JSONValue].self, context: context)
                let run = self.runs.withLock { value -> Int in
                    value += 1
                    return value
                }
                if delay > .zero { try await CancellableSleep.sleep(for: delay) }
                if body["fail"] == "conflict" { throw APIError.conflict("Sold out.", code: "SOLD_OUT") }
                if body["fail"] == "crash" { throw CancellationError() }
                return try Envelope.response(
                    ["order": .string(Identifier.make("ord")), "run": .number(Double(run)), "user": .string(identity.userID), "item": body["item"] ?? .null],
                    status: .created, headers: [.location: "/api/v1/test/orders/1"], context: context)
            }
        }
    }
}

let idempotencyKey = HTTPField.Name("Idempotency-Key")!

@Suite struct IdempotencyTests {
    @Test(arguments: TestEngine.allCases)
    func aRetryWithTheSameKeyReplaysTheFirstResponse(engine: TestEngine) async throws {
        let counter = WorkCounter()
        try await TestServer.run(engine, extraRoutes: counter.routes()) { session in
            let token = try await session.token("ann")
            let first = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "k-1"], json: ["item": "sofa"])
            let retry = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "k-1"], json: ["item": "sofa"])
            #expect(first.status == 201)
            #expect(retry.status == 201)
            #expect(retry.body == first.body)
            #expect(retry.header("Location") == "/api/v1/test/orders/1")
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(first.header("Idempotent-Replayed") == nil)
            #expect(counter.count == 1)
            // Without a key, every POST runs.
            _ = try await session.request(.post, "/api/v1/test/orders", token: token, json: ["item": "sofa"])
            #expect(counter.count == 2)
        }
    }

    /// A request without credentials never reaches the store: 401 every time (not 422 for a
    /// reused key, not a stored 401 replayed to the next caller behind the same address),
    /// and no row is kept for it.
    @Test(arguments: TestEngine.allCases)
    func anonymousRequestsPassTheStoreByAndAreRefused(engine: TestEngine) async throws {
        let counter = WorkCounter()
        try await TestServer.run(engine, extraRoutes: counter.routes()) { session in
            let first = try await session.request(.post, "/api/v1/test/orders", headers: [idempotencyKey: "anon-1"], json: ["item": "sofa"])
            let other = try await session.request(.post, "/api/v1/test/orders", headers: [idempotencyKey: "anon-1"], json: ["item": "lamp"])
            #expect(first.status == 401)
            #expect(other.status == 401)
            #expect(other.header("Idempotent-Replayed") == nil)
            #expect(counter.count == 0)
            let rows = try await session.runtime.database.withConnection { db in
                try await db.raw("SELECT COUNT(*) AS n FROM idempotency_keys").first()?.decode(column: "n", as: Int.self)
            }
            #expect(rows == 0)
            // The same key with a token is the caller's own, and runs.
            let token = try await session.token("ann")
            let owned = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "anon-1"], json: ["item": "sofa"])
            #expect(owned.status == 201)
            #expect(counter.count == 1)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func theSameKeyWithADifferentBodyIsRefused(engine: TestEngine) async throws {
        let counter = WorkCounter()
        try await TestServer.run(engine, extraRoutes: counter.routes()) { session in
            let token = try await session.token("ann")
            _ = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "k-1"], json: ["item": "sofa"])
            let reused = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "k-1"], json: ["item": "bed"])
            #expect(reused.status == 422)
            #expect(reused.errorCode == "IDEMPOTENCY_KEY_REUSED")
            #expect(counter.count == 1)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func concurrentRequestsWithOneKeyRunTheWorkOnce(engine: TestEngine) async throws {
        let counter = WorkCounter()
        try await TestServer.run(engine, extraRoutes: counter.routes(delay: .milliseconds(300))) { session in
            let token = try await session.token("ann")
            let replies = try await withThrowingTaskGroup(of: TestReply.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "race"], json: ["item": "sofa"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(counter.count == 1)
            #expect(replies.allSatisfy { $0.status == 201 })
            #expect(Set(replies.map(\.body)).count == 1)
            #expect(replies.filter { $0.header("Idempotent-Replayed") == "true" }.count == 7)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aRefusalIsReplayedButAServerErrorLetsTheRetryRun(engine: TestEngine) async throws {
        let counter = WorkCounter()
        try await TestServer.run(engine, extraRoutes: counter.routes()) { session in
            let token = try await session.token("ann")
            let refused = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "r"], json: ["fail": "conflict"])
            let refusedAgain = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "r"], json: ["fail": "conflict"])
            #expect(refused.status == 409)
            #expect(refused.errorCode == "SOLD_OUT")
            #expect(refusedAgain.body == refused.body)
            #expect(counter.count == 1)

            let crashed = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "c"], json: ["fail": "crash"])
            #expect(crashed.status == 500)
            _ = try await session.request(.post, "/api/v1/test/orders", token: token, headers: [idempotencyKey: "c"], json: ["fail": "crash"])
            #expect(counter.count == 3)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func keysBelongToOneUserAndExpire(engine: TestEngine) async throws {
        let counter = WorkCounter()
        let clock = ManualClock()
        try await TestServer.run(engine, clock: clock, extraRoutes: counter.routes()) { session in
            let ann = try await session.token("ann", ttl: 10 * 86_400)
            let bob = try await session.token("bob", ttl: 10 * 86_400)
            let annReply = try await session.request(.post, "/api/v1/test/orders", token: ann, headers: [idempotencyKey: "same"], json: ["item": "x"])
            let bobReply = try await session.request(.post, "/api/v1/test/orders", token: bob, headers: [idempotencyKey: "same"], json: ["item": "x"])
            #expect(annReply.data?["user"] == "ann")
            #expect(bobReply.data?["user"] == "bob")
            #expect(counter.count == 2)

            clock.advance(by: 86_400 - 1)
            _ = try await session.request(.post, "/api/v1/test/orders", token: ann, headers: [idempotencyKey: "same"], json: ["item": "x"])
            #expect(counter.count == 2)
            clock.advance(by: 1)
            let afterExpiry = try await session.request(.post, "/api/v1/test/orders", token: ann, headers: [idempotencyKey: "same"], json: ["item": "x"])
            #expect(afterExpiry.header("Idempotent-Replayed") == nil)
            #expect(counter.count == 3)
        }
    }

    @Test(arguments: ["", String(repeating: "k", count: 256), "has space", "tab\tkey"])
    func badKeysAreNamedInA422(key: String) async throws {
        let counter = WorkCounter()
        try await TestServer.run(.sqlite, extraRoutes: counter.routes()) { session in
            let reply = try await session.request(
                .post, "/api/v1/test/orders", token: try await session.token("ann"), headers: [idempotencyKey: key], json: ["item": "x"])
            #expect(reply.status == 422)
            #expect(
                reply.json?["error"]?["details"]?["fields"] == [
                    ["field": "Idempotency-Key", "message": "must be 1 to 255 printable ASCII characters without spaces"]
                ])
            #expect(counter.count == 0)
        }
    }
}
