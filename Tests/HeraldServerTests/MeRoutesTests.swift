import Foundation
import HeraldCore
import HeraldServerTestSupport
import Testing

@Suite struct MeRoutesTests {
    @Test(arguments: TestEngine.allCases)
    func usersChangeTheirOwnSettingsOnly(engine: TestEngine) async throws {
        try await TestServer.run(engine) { session in
            let ann = try await session.token("ann")
            let bob = try await session.token("bob", .driver)
            let updated = try await session.request(
                .put, "/api/v1/me", token: ann, json: ["display_name": "  Ann  ", "locale": "en-AU", "time_zone": "Australia/Sydney"])
            #expect(updated.status == 200)
            #expect(updated.data?["display_name"] == "Ann")
            #expect(updated.data?["locale"] == "en-AU")
            #expect(updated.data?["time_zone"] == "Australia/Sydney")

            let partial = try await session.request(.put, "/api/v1/me", token: ann, json: ["locale": .null])
            #expect(partial.data?["locale"] == nil)
            #expect(partial.data?["display_name"] == "Ann")
            #expect(partial.data?["time_zone"] == "Australia/Sydney")

            let read = try await session.request(.get, "/api/v1/me", token: ann)
            #expect(read.data?["display_name"] == "Ann")
            let bobs = try await session.request(.get, "/api/v1/me", token: bob)
            #expect(bobs.data?["id"] == "bob")
            #expect(bobs.data?["display_name"] == nil)
            #expect(bobs.data?["time_zone"] == "UTC")
        }
    }

    @Test func invalidSettingsAreRefusedFieldByFieldAndNothingChanges() async throws {
        try await TestServer.run(.sqlite) { session in
            let ann = try await session.token("ann")
            let reply = try await session.request(
                .put, "/api/v1/me", token: ann,
                json: [
                    "display_name": .string(String(repeating: "x", count: 101)), "locale": "english please",
                    "time_zone": "Mars/Olympus_Mons", "timezone": "UTC",
                ])
            #expect(reply.status == 422)
            #expect(reply.errorCode == "VALIDATION_FAILED")
            let fields = reply.json?["error"]?["details"]?["fields"]
            guard case .array(let list)? = fields else {
                Issue.record("no field list")
                return
            }
            #expect(Set(list.compactMap { $0["field"]?.stringValue }) == ["display_name", "locale", "time_zone", "timezone"])
            let read = try await session.request(.get, "/api/v1/me", token: ann)
            #expect(read.data?["time_zone"] == "UTC")
            #expect(read.data?["display_name"] == nil)
        }
    }

    @Test func wrongTypesAndEmptyValuesAreRefused() async throws {
        try await TestServer.run(.sqlite) { session in
            let ann = try await session.token("ann")
            let cases: [(JSONValue, String)] = [
                (["time_zone": 10], "time_zone"), (["time_zone": .null], "time_zone"), (["display_name": "   "], "display_name"),
                (["display_name": "a\u{0007}b"], "display_name"), (["locale": true], "locale"),
                // 51 characters but 102 code points (a thumb and its skin tone): over the 100
                // the schema states, which counts code points (schemathesis sent one like it).
                (["display_name": .string(String(repeating: "\u{1F44D}\u{1F3FB}", count: 51))], "display_name"),
            ]
            for (body, field) in cases {
                let reply = try await session.request(.put, "/api/v1/me", token: ann, json: body)
                #expect(reply.status == 422, "\(body)")
                #expect(reply.json?["error"]?["details"]?["fields"]?.arrayFirstField == field, "\(body)")
            }
            let notAnObject = try await session.request(.put, "/api/v1/me", token: ann, json: ["a", "b"])
            #expect(notAnObject.status == 400)
            #expect(notAnObject.errorCode == "INVALID_JSON")
        }
    }

    @Test(arguments: ["en", "en-AU", "zh-Hant-TW", "es-419", "pt-BR"])
    func acceptsBCP47Locales(locale: String) async throws {
        try await TestServer.run(.sqlite) { session in
            let reply = try await session.request(.put, "/api/v1/me", token: try await session.token("ann"), json: ["locale": .string(locale)])
            #expect(reply.status == 200)
        }
    }
}

extension JSONValue {
    var arrayFirstField: String? {
        if case .array(let list) = self { return list.first?["field"]?.stringValue }
        return nil
    }
}
