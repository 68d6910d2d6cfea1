import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Hummingbird
import Testing

/// A route with typed fields, to check how decoding errors name the field.
struct Pickup: Decodable {
    struct Location: Decodable {
        let latitude: Double
        let longitude: Double
    }
    let pickup: Location
    let passengers: Int
    let items: [String]
}

@Suite struct RequestValidationTests {
    static func typedRoute(_ api: RouterGroup<HeraldRequestContext>) {
        api.post("/test/pickups") { request, context in
            let pickup = try await request.decodeJSON(Pickup.self, context: context)
            return try Envelope.response(["passengers": pickup.passengers], context: context)
        }
    }

    static func post(_ session: TestSession, _ raw: String) async throws -> TestReply {
        try await session.request(.post, "/api/v1/test/pickups", rawBody: raw)
    }

    @Test func malformedJSONIs400() async throws {
        try await TestServer.run(.sqlite, extraRoutes: Self.typedRoute) { session in
            // RFC 8259 only: a trailing comma or a second value is not JSON (Foundation's
            // decoder, used before issue 37, let a trailing comma through).
            for raw in ["{", "{\"pickup\": }", "not json", "", "{\"pickup\": \"a\",}", "{} {}", "[1,]"] {
                let reply = try await Self.post(session, raw)
                #expect(reply.status == 400, "\(raw)")
                #expect(reply.errorCode == "INVALID_JSON", "\(raw)")
            }
        }
    }

    @Test func missingWrongTypedAndNullFieldsAre422NamingTheField() async throws {
        try await TestServer.run(.sqlite, extraRoutes: Self.typedRoute) { session in
            let cases: [(String, String, String)] = [
                (#"{"passengers": 1, "items": []}"#, "pickup", "is required"),
                (#"{"pickup": {"latitude": 1}, "passengers": 1, "items": []}"#, "pickup.longitude", "is required"),
                (#"{"pickup": {"latitude": "north", "longitude": 2}, "passengers": 1, "items": []}"#, "pickup.latitude", "must be a number"),
                (#"{"pickup": {"latitude": 1, "longitude": 2}, "passengers": 1.5, "items": []}"#, "passengers", "has an invalid value"),
                (#"{"pickup": {"latitude": 1, "longitude": 2}, "passengers": null, "items": []}"#, "passengers", "must not be null"),
                (#"{"pickup": {"latitude": 1, "longitude": 2}, "passengers": 1, "items": ["a", 7]}"#, "items[1]", "must be a string"),
            ]
            for (raw, field, message) in cases {
                let reply = try await Self.post(session, raw)
                #expect(reply.status == 422, "\(raw)")
                #expect(reply.errorCode == "VALIDATION_FAILED")
                #expect(reply.json?["error"]?["details"]?["fields"] == [["field": .string(field), "message": .string(message)]], "\(raw)")
            }
            let good = try await Self.post(session, #"{"pickup": {"latitude": 1, "longitude": 2}, "passengers": 3, "items": []}"#)
            #expect(good.status == 200)
            #expect(good.data?["passengers"] == 3)
        }
    }

    @Test func bodiesOverTheLimitAre413WithOrWithoutAContentLength() async throws {
        try await TestServer.run(.sqlite, configure: { $0.limits.maxBodyBytes = 2048 }, extraRoutes: Self.typedRoute) { session in
            let big = "{\"pad\": \"" + String(repeating: "x", count: 4096) + "\"}"
            let declared = try await session.request(
                .post, "/api/v1/test/pickups", headers: [.contentLength: String(big.utf8.count)], rawBody: big)
            #expect(declared.status == 413)
            #expect(declared.errorCode == "PAYLOAD_TOO_LARGE")
            #expect(declared.json?["error"]?["details"]?["limit_bytes"] == 2048)
            let undeclared = try await session.request(.post, "/api/v1/test/pickups", rawBody: big)
            #expect(undeclared.status == 413)
            #expect(undeclared.errorCode == "PAYLOAD_TOO_LARGE")
        }
    }

    @Test func nonJSONBodiesAre415() async throws {
        try await TestServer.run(.sqlite, extraRoutes: Self.typedRoute) { session in
            let reply = try await session.request(
                .post, "/api/v1/test/pickups", headers: [.contentType: "text/plain", .contentLength: "5"], rawBody: "hello")
            #expect(reply.status == 415)
            #expect(reply.errorCode == "UNSUPPORTED_MEDIA_TYPE")
            let vendorJSON = try await session.request(
                .post, "/api/v1/test/pickups", headers: [.contentType: "application/vnd.api+json; charset=utf-8"],
                rawBody: #"{"pickup": {"latitude": 1, "longitude": 2}, "passengers": 3, "items": []}"#)
            #expect(vendorJSON.status == 200)
        }
    }
}

private let appVersion = HTTPField.Name("X-App-Version")!
private let platform = HTTPField.Name("X-Platform")!

@Suite struct AppVersionGateTests {
    static func configure(_ config: inout HeraldConfig) {
        config.appVersions.platforms["ios"] = .init(minimumVersion: "1.2.0", appStoreUrl: "https://apps.apple.com/app/id1")
    }

    @Test func oldBuildsAreToldToUpdate() async throws {
        try await TestServer.run(.sqlite, configure: Self.configure) { session in
            let old = try await session.request(.get, "/api/v1/openapi.json", headers: [appVersion: "1.1.9", platform: "iOS"])
            #expect(old.status == 426)
            #expect(old.errorCode == "APP_UPDATE_REQUIRED")
            #expect(old.json?["error"]?["details"] == ["minimum_version": "1.2.0", "app_store_url": "https://apps.apple.com/app/id1"])
            // The gate applies to authenticated calls too, before anything else happens.
            let oldAuthed = try await session.request(.get, "/api/v1/me", token: try await session.token("ann"), headers: [appVersion: "1.0", platform: "ios"])
            #expect(oldAuthed.status == 426)
        }
    }

    @Test func currentUnknownAndUnversionedClientsPass() async throws {
        try await TestServer.run(.sqlite, configure: Self.configure) { session in
            let cases: [HTTPFields] = [
                [appVersion: "1.2.0", platform: "iOS"], [appVersion: "1.10", platform: "ios"],
                [appVersion: "0.1", platform: "android"], [appVersion: "garbage", platform: "ios"], [:],
            ]
            var statuses: [Int] = []
            for headers in cases { statuses.append(try await session.request(.get, "/api/v1/openapi.json", headers: headers).status) }
            #expect(statuses == [200, 200, 200, 200, 200])
        }
    }

    @Test func operationalRoutesAreNeverGated() async throws {
        try await TestServer.run(.sqlite, configure: Self.configure) { session in
            let reply = try await session.request(.get, "/healthz", headers: [appVersion: "0.0.1", platform: "ios"])
            #expect(reply.status == 200)
        }
    }
}
