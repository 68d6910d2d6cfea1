import Foundation
import HeraldCore
import HeraldServerTestSupport
import Testing

/// The transit app's `/user/settings` over Herald's preferences, and the time zone quiet hours
/// run in for a rider who never sent one.
@Suite struct UserSettingsTests {
    @Test func theTransitAppsSettingsDocumentReadsAndWritesThePreferences() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let rider = try await s.token("rider")
            let favorite = try #require(try await s.request(.post, "/api/v1/favorites", token: rider, json: ["stop_id": "STAGECOACH"]).data?["id"]?.stringValue)

            let initial = try #require(try await s.request(.get, "/api/v1/user/settings", token: rider).data)
            #expect(initial["tz"] == "America/Los_Angeles", "the feed's agency zone until the rider sends one")
            #expect(initial["quiet_hours_enabled"] == false && initial["quiet_start"] == .null && initial["severity_min"] == "minor")
            #expect(initial["time_sensitive_ok"] == true)
            #expect(initial["per_favorite_overrides"] == .object([favorite: ["notifications_enabled": true]]))

            // The transit app sends TIME columns as Python prints them (22:00:00).
            let changed = try await s.request(
                .put, "/api/v1/user/settings", token: rider,
                json: [
                    "tz": "Australia/Sydney", "quiet_hours_enabled": true, "quiet_start": "22:00:00", "quiet_end": "07:00",
                    "severity_min": "major", "time_sensitive_ok": false, "per_favorite_overrides": .object([favorite: ["notifications_enabled": false]]),
                ])
            #expect(changed.status == 200, "\(changed.text)")
            #expect(changed.data?["tz"] == "Australia/Sydney" && changed.data?["quiet_start"] == "22:00" && changed.data?["quiet_end"] == "07:00")
            #expect(changed.data?["severity_min"] == "major" && changed.data?["time_sensitive_ok"] == false)
            #expect(changed.data?["per_favorite_overrides"]?[favorite]?["notifications_enabled"] == false)
            // They are Herald's preferences and favourites, not a copy.
            let preferences = try #require(try await s.request(.get, "/api/v1/notifications/preferences", token: rider).data)
            #expect(preferences["time_zone"] == "Australia/Sydney" && preferences["severity_floor"] == "warning")
            #expect(preferences["quiet_hours"] == ["enabled": true, "start": "22:00", "end": "07:00"])
            #expect(preferences["time_sensitive_allowed"] == false)
            #expect(try await s.request(.get, "/api/v1/favorites", token: rider).data?["favorites"]?[0]?["notifications_enabled"] == false)

            // A partial PATCH leaves the rest.
            let patched = try await s.request(.patch, "/api/v1/user/settings", token: rider, json: ["severity_min": "cancelled"])
            #expect(patched.data?["severity_min"] == "cancelled" && patched.data?["tz"] == "Australia/Sydney" && patched.data?["quiet_hours_enabled"] == true)

            // Bad input is named by the transit app's field, and nothing of the request is applied.
            for (body, field) in [
                (["severity_min": "huge"], "severity_min"), (["tz": "Mars/Olympus_Mons"], "tz"), (["quiet_start": "25:00"], "quiet_start"),
                (["per_favorite_overrides": ["fav_nope": ["notifications_enabled": false]]], "per_favorite_overrides.fav_nope"),
                (["per_favorite_overrides": .object([favorite: ["notifications_enabled": "no"]])], "per_favorite_overrides.\(favorite)"),
                (["theme": "dark"], "theme"),
            ] as [(JSONValue, String)] {
                let refused = try await s.request(.put, "/api/v1/user/settings", token: rider, json: body)
                #expect(refused.status == 422 && refused.errorCode == "VALIDATION_FAILED", "\(body)")
                #expect(refused.json?["error"]?["details"]?["fields"]?[0]?["field"]?.stringValue == field, "\(refused.text)")
            }
            #expect(try await s.request(.get, "/api/v1/user/settings", token: rider).data == patched.data)
            #expect(try await s.request(.get, "/api/v1/user/settings").status == 401)
        }
    }

    @Test func quietHoursOfARiderWhoNeverSentATimeZoneRunInTheFeedsZoneOrTheConfiguredOne() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let service = s.runtime.notifications.service
            let quiet: JSONValue = ["quiet_hours": ["enabled": true, "start": "22:00", "end": "23:30"]]
            #expect(try await s.request(.put, "/api/v1/notifications/preferences", token: try await s.token("eve"), json: quiet).status == 200)
            let eve = try await service.settings(for: ["eve", "never-seen"], type: "service_alert")
            #expect(eve["eve"]?.timeZone.identifier == "America/Los_Angeles")
            // 2007-06-05 23:05 in Los Angeles is 06:05 UTC: inside the window only in the feed's zone.
            let night = sampleMorning.addingTimeInterval(15 * 3600)
            #expect(eve["eve"]?.quietHours?.contains(night, timeZone: eve["eve"]!.timeZone) == true)
            #expect(eve["eve"]?.quietHours?.contains(night, timeZone: .gmt) == false)
            #expect(eve["never-seen"]?.timeZone.identifier == "America/Los_Angeles")
            // A zone the rider sends is theirs, UTC included.
            #expect(try await s.request(.put, "/api/v1/me", token: try await s.token("eve"), json: ["time_zone": "UTC"]).status == 200)
            let chosen = try #require(try await service.settings(for: ["eve"], type: "service_alert")["eve"])
            #expect(chosen.timeZone.secondsFromGMT(for: night) == 0)
        }
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: { $0.notifications.defaultTimeZone = "Asia/Tokyo" }) { s in
            _ = try await s.importSample()
            #expect(try await s.request(.get, "/api/v1/me", token: try await s.token("kei")).data?["time_zone"] == "Asia/Tokyo")
            #expect(try await s.runtime.notifications.service.settings(for: ["kei"], type: "service_alert")["kei"]?.timeZone.identifier == "Asia/Tokyo")
        }
    }
}
