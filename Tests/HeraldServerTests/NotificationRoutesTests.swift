import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldStorage
import Testing

@Suite struct NotificationRoutesTests {
    static let apnsToken = String(repeating: "0a1b2c3d", count: 8)

    func send(_ s: TestSession, to user: String, title: String = "Driver assigned", extra: [String: JSONValue] = [:]) async throws -> TestReply {
        var body: [String: JSONValue] = ["user_id": .string(user), "type": "driver_assigned", "title": .string(title), "data": ["job_id": "j1"]]
        for (key, value) in extra { body[key] = value }
        return try await s.request(.post, "/api/v1/notifications", token: try await s.token("backend", .service), json: .object(body))
    }

    @Test func onlyServicesAndOperatorsSendAndUsersSeeOnlyTheirOwn() async throws {
        try await TestServer.run(.sqlite) { s in
            let ann = try await s.token("ann")
            let bob = try await s.token("bob")
            let refused = try await s.request(.post, "/api/v1/notifications", token: ann, json: ["user_id": "bob", "type": "job_new", "title": "x"])
            #expect(refused.status == 403)
            let sent = try await send(s, to: "ann")
            #expect(sent.status == 201)
            let id = try #require(sent.data?["results"]?[0]?["notification"]?["id"]?.stringValue)
            #expect(try await s.request(.post, "/api/v1/notifications/\(id)/read", token: bob).status == 404)
            #expect(try await s.request(.delete, "/api/v1/notifications/\(id)", token: bob).status == 404)
            #expect(try await s.request(.get, "/api/v1/notifications", token: bob).data?["total"] == 0)
            #expect(try await s.request(.get, "/api/v1/deliveries", token: ann).status == 403)
            let read = try await s.request(.post, "/api/v1/notifications/\(id)/read", token: ann)
            #expect(read.status == 200 && read.data?["read_at"]?.stringValue != nil)
            #expect(try await s.request(.get, "/api/v1/notifications/unread-count", token: ann).data?["count"] == 0)
            #expect(try await s.request(.delete, "/api/v1/notifications/\(id)", token: ann).status == 200)
            #expect(try await s.request(.get, "/api/v1/notifications", token: ann).data?["total"] == 0)
        }
    }

    @Test func inboxPagesNewestFirstWithCounts() async throws {
        try await TestServer.run(.sqlite) { s in
            let ann = try await s.token("ann")
            var ids: [String] = []
            for index in 0..<5 {
                let reply = try await send(s, to: "ann", title: "n\(index)")
                ids.append(try #require(reply.data?["results"]?[0]?["notification"]?["id"]?.stringValue))
                try await CancellableSleep.sleep(for: .milliseconds(3))
            }
            let bulk = try await s.request(
                .post, "/api/v1/notifications/bulk-read", token: ann, json: ["notification_ids": [.string(ids[0]), .string(ids[1]), "ntf_nope"]])
            #expect(bulk.data?["updated"] == 2 && bulk.data?["unread_count"] == 3)
            let page = try await s.request(.get, "/api/v1/notifications?offset=1&limit=2", token: ann)
            #expect(page.data?["total"] == 5 && page.data?["unread_count"] == 3)
            let titles = (0..<2).compactMap { page.data?["notifications"]?[$0]?["title"]?.stringValue }
            #expect(titles == ["n3", "n2"])
            let unread = try await s.request(.get, "/api/v1/notifications?unread_only=true", token: ann)
            #expect(unread.data?["total"] == 3)
            #expect(try await s.request(.get, "/api/v1/notifications?limit=0", token: ann).status == 422)
            #expect(try await s.request(.get, "/api/v1/notifications?unread_only=maybe", token: ann).status == 422)
            #expect(try await s.request(.post, "/api/v1/notifications/bulk-read", token: ann, json: ["notification_ids": []]).status == 422)
        }
    }

    /// A stored `push_enabled = false` for a type keeps that type off the user's
    /// devices (the inbox still gets it), through the real worker and sender; another type, sent
    /// after it, still arrives, so the absence is not a worker that never ran.
    @Test(arguments: TestEngine.allCases)
    func aStoredPushOptOutStopsARealSend(engine: TestEngine) async throws {
        let pushLog = try TestDatabase.temporaryDirectory() + "/pushes.jsonl"
        try await TestServer.run(
            engine,
            configure: { config in
                config.push.logFile = pushLog
                config.push.pollIntervalMs = 50
            }
        ) { s in
            let ann = try await s.token("ann")
            let device = try await s.request(
                .post, "/api/v1/push/register", token: ann, json: ["token": .string(Self.apnsToken), "provider": "apns", "platform": "ios"])
            #expect(device.status == 201)
            let optOut = try await s.request(.put, "/api/v1/notifications/preferences", token: ann, json: ["type": "driver_assigned", "push_enabled": false])
            #expect(optOut.status == 200 && optOut.data?["types"]?["driver_assigned"]?["push_enabled"] == false)
            let held = try await send(s, to: "ann", title: "Held back")
            #expect(held.data?["results"]?[0]?["push_deliveries"] == 0 && held.data?["results"]?[0]?["channel"] == "inbox", "\(held.text)")
            let control = try await send(s, to: "ann", title: "Job moved", extra: ["type": "job_update"])
            #expect(control.data?["results"]?[0]?["push_deliveries"] == 1, "\(control.text)")
            var titles: [String] = []
            // (Not thrown: the expectation below names what was pushed.)
            try? await waitUntil("a push recorded", every: .milliseconds(50)) {
                let text = (try? String(contentsOfFile: pushLog, encoding: .utf8)) ?? ""
                titles = text.split(separator: "\n").compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8))["title"]?.stringValue }
                return !titles.isEmpty
            }
            #expect(titles == ["Job moved"])
            let inbox = try await s.request(.get, "/api/v1/notifications", token: ann)
            #expect(inbox.data?["total"] == 2)
        }
    }

    /// The notification design's per-type quiet hours, set in its single-type form and in the document form,
    /// shown back, applied to a real send in the user's zone, and cleared with null.
    @Test(arguments: TestEngine.allCases)
    func quietHoursPerTypeHoldBackThatTypesPushes(engine: TestEngine) async throws {
        // 23:00 UTC on a Wednesday.
        let clock = ManualClock(try #require(Timestamp.parse("2026-11-25T23:00:00Z")))
        try await TestServer.run(engine, clock: clock) { s in
            let ann = try await s.token("ann")
            #expect(
                try await s.request(
                    .post, "/api/v1/push/register", token: ann, json: ["token": .string(Self.apnsToken), "provider": "apns", "platform": "ios"]
                ).status == 201)
            let single = try await s.request(
                .put, "/api/v1/notifications/preferences", token: ann, json: ["type": "job_update", "quiet_hours_start": "22:00", "quiet_hours_end": "07:00"])
            #expect(single.status == 200 && single.data?["types"]?["job_update"]?["quiet_hours"] == ["start": "22:00", "end": "07:00"], "\(single.text)")
            #expect(single.data?["types"]?["job_update"]?["push_enabled"] == true && single.data?["quiet_hours"]?["enabled"] == false)
            let held = try await send(s, to: "ann", title: "Job moved", extra: ["type": "job_update"])
            #expect(held.data?["results"]?[0]?["push_deliveries"] == 0 && held.data?["results"]?[0]?["push_suppressed"] == "quiet_hours", "\(held.text)")
            // Another type is not muted by job_update's window.
            let other = try await send(s, to: "ann", title: "Trip update", extra: ["type": "trip_update"])
            #expect(other.data?["results"]?[0]?["push_deliveries"] == 1, "\(other.text)")
            // Cleared in the document form: job_update pushes again.
            let cleared = try await s.request(.put, "/api/v1/notifications/preferences", token: ann, json: ["types": ["job_update": ["quiet_hours": .null]]])
            #expect(cleared.status == 200 && cleared.data?["types"]?["job_update"]?["quiet_hours"] == .null)
            #expect(try await send(s, to: "ann", title: "Job moved again", extra: ["type": "job_update"]).data?["results"]?[0]?["push_deliveries"] == 1)
            let half = try await s.request(.put, "/api/v1/notifications/preferences", token: ann, json: ["type": "job_update", "quiet_hours_start": "22:00"])
            #expect(half.status == 422)
            let bad = try await s.request(
                .put, "/api/v1/notifications/preferences", token: ann, json: ["types": ["job_update": ["quiet_hours": ["start": "25:00", "end": "07:00"]]]])
            #expect(bad.status == 422)
        }
    }

    @Test func badNotificationsAreRefusedNamingEachField() async throws {
        try await TestServer.run(.sqlite) { s in
            let reply = try await s.request(
                .post, "/api/v1/notifications", token: try await s.token("backend", .service),
                json: ["user_ids": ["ann"], "type": "not_a_type", "title": .string(String(repeating: "t", count: 256)), "severity": "loud"])
            #expect(reply.status == 422 && reply.errorCode == "VALIDATION_FAILED")
            let both = try await s.request(
                .post, "/api/v1/notifications", token: try await s.token("backend", .service),
                json: ["user_ids": ["ann"], "user_id": "ann", "type": "job_new", "title": "x"])
            #expect(both.status == 422)
            let typeError = try await s.request(
                .post, "/api/v1/notifications", token: try await s.token("backend", .service),
                json: ["user_id": "ann", "type": "job_new", "title": "x", "ttl_seconds": 1.5])
            #expect(typeError.status == 422)
            let stored = try await s.request(.get, "/api/v1/notifications", token: try await s.token("ann"))
            #expect(stored.data?["total"] == 0)
        }
    }

    @Test func anIdempotencyKeyMakesARetrySafe() async throws {
        try await TestServer.run(.sqlite) { s in
            let service = try await s.token("backend", .service)
            let key = HTTPField.Name("Idempotency-Key")!
            let body: JSONValue = ["user_id": "ann", "type": "job_new", "title": "New job"]
            let first = try await s.request(.post, "/api/v1/notifications", token: service, headers: [key: "send-1"], json: body)
            let retry = try await s.request(.post, "/api/v1/notifications", token: service, headers: [key: "send-1"], json: body)
            #expect(first.status == 201 && retry.status == 201, "\(retry.text)")
            #expect(first.data?["results"]?[0]?["notification"]?["id"] == retry.data?["results"]?[0]?["notification"]?["id"])
            #expect(try await s.request(.get, "/api/v1/notifications", token: try await s.token("ann")).data?["total"] == 1)
        }
    }

    @Test func registeringMovesATokenAndUnregisteringIsOwnOnly() async throws {
        try await TestServer.run(.sqlite) { s in
            let ann = try await s.token("ann")
            let bob = try await s.token("bob")
            let body: JSONValue = [
                "token": .string(Self.apnsToken.uppercased()), "provider": "apns", "platform": "ios", "device_id": "phone-1", "app_version": "2.1.0",
            ]
            let created = try await s.request(.post, "/api/v1/push/register", token: ann, json: body)
            #expect(created.status == 201 && created.data?["token"] == .string(Self.apnsToken) && created.data?["active"] == true)
            #expect(try await s.request(.post, "/api/v1/push/register", token: ann, json: body).status == 200)
            // Bob signs in on the same phone: the token follows him.
            #expect(try await s.request(.post, "/api/v1/push/register", token: bob, json: body).status == 200)
            let annDevices = try await s.request(.get, "/api/v1/push/devices", token: ann)
            #expect(annDevices.data?["devices"] == [])
            #expect(try await s.request(.delete, "/api/v1/push/unregister", token: ann, json: ["token": .string(Self.apnsToken)]).status == 404)
            let gone = try await s.request(.delete, "/api/v1/push/unregister", token: bob, json: ["token": .string(Self.apnsToken)])
            #expect(gone.status == 200 && gone.data?["active"] == false && gone.data?["deactivation_reason"] == "unregistered")
            let again = try await s.request(.post, "/api/v1/push/register", token: bob, json: body)
            #expect(again.status == 200 && again.data?["active"] == true)
            // A new token for the same device replaces the old one.
            var rotated = body
            if case .object(var object) = rotated {
                object["token"] = .string(String(repeating: "f", count: 64))
                rotated = .object(object)
            }
            #expect(try await s.request(.post, "/api/v1/push/register", token: bob, json: rotated).status == 201)
            let devices = try await s.request(.get, "/api/v1/push/devices", token: bob)
            let states = (0..<2).compactMap { devices.data?["devices"]?[$0]?["deactivation_reason"] }
            #expect(states == ["replaced", .null])
        }
    }

    /// The notification design's web client registers with `fetch(url, {method: "POST", body: JSON.stringify(…)})`
    /// and no `Content-Type`, which a browser labels `text/plain;charset=UTF-8`. That route takes
    /// it; other routes still want JSON.
    @Test func theWebClientsPlainTextRegistrationIsAccepted() async throws {
        try await TestServer.run(.sqlite) { s in
            let ann = try await s.token("ann")
            let body = #"{"fcm_token": "fcm-token-0123456789:abcdefghijklmnop", "platform": "web", "device_id": "browser-1"}"#
            let plain: HTTPFields = [.contentType: "text/plain;charset=UTF-8", .contentLength: "\(body.utf8.count)"]
            let registered = try await s.request(.post, "/api/v1/push/register", token: ann, headers: plain, rawBody: body)
            #expect(registered.status == 201 && registered.data?["provider"] == "fcm" && registered.data?["platform"] == "web", "\(registered.text)")
            let notJSON = try await s.request(
                .post, "/api/v1/push/register", token: ann, headers: [.contentType: "text/plain", .contentLength: "5"], rawBody: "hello")
            #expect(notJSON.status == 400)
            let read = #"{"notification_ids": ["ntf_1"]}"#
            let elsewhere = try await s.request(
                .post, "/api/v1/notifications/bulk-read", token: ann, headers: [.contentType: "text/plain", .contentLength: "\(read.utf8.count)"], rawBody: read
            )
            #expect(elsewhere.status == 415 && elsewhere.errorCode == "UNSUPPORTED_MEDIA_TYPE")
        }
    }

    @Test func badRegistrationsAreRefused() async throws {
        try await TestServer.run(.sqlite) { s in
            let ann = try await s.token("ann")
            func fields(_ body: JSONValue) async throws -> Set<String> {
                let reply = try await s.request(.post, "/api/v1/push/register", token: ann, json: body)
                #expect(reply.status == 422)
                guard case .array(let list)? = reply.json?["error"]?["details"]?["fields"] else { return [] }
                return Set(list.compactMap { $0["field"]?.stringValue })
            }
            #expect(try await fields(["token": "not-hex", "provider": "apns", "platform": "ios"]) == ["token"])
            #expect(try await fields(["token": .string(Self.apnsToken), "provider": "apns", "platform": "android"]) == ["platform"])
            #expect(try await fields(["token": "short", "provider": "fcm", "platform": "android"]) == ["token"])
            #expect(
                try await fields(["token": .string(Self.apnsToken), "provider": "carrier-pigeon", "platform": "ios", "colour": "red"]) == [
                    "provider", "colour",
                ])
            let badKeys: JSONValue = [
                "provider": "webpush", "platform": "web",
                "subscription": ["endpoint": "https://push.example.com/send/abc", "keys": ["p256dh": "AAAA", "auth": "!!"]],
            ]
            #expect(try await fields(badKeys) == ["subscription.keys.p256dh", "subscription.keys.auth"])
            let insecure: JSONValue = [
                "provider": "webpush", "platform": "web",
                "subscription": ["endpoint": "http://push.example.com/x", "keys": ["p256dh": "AAAA", "auth": "AAAA"]],
            ]
            #expect(try await fields(insecure).contains("subscription.endpoint"))
            #expect(try await s.request(.get, "/api/v1/push/devices", token: ann).data?["devices"] == [])
        }
    }

    @Test func aWebPushSubscriptionRegistersWithItsEndpointAsToken() async throws {
        try await TestServer.run(.sqlite) { s in
            let key = Data([0x04] + (1...64).map { UInt8($0) }).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let auth = Data((1...16).map { UInt8($0) }).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let reply = try await s.request(
                .post, "/api/v1/push/register", token: try await s.token("ann"),
                json: [
                    "platform": "web",
                    "subscription": [
                        "endpoint": "https://fcm.googleapis.com/fcm/send/abc123", "expirationTime": .null,
                        "keys": ["p256dh": .string(key), "auth": .string(auth)],
                    ],
                ])
            #expect(reply.status == 201)
            #expect(reply.data?["provider"] == "webpush" && reply.data?["token"] == "https://fcm.googleapis.com/fcm/send/abc123")
        }
    }

    @Test func preferencesAreValidatedAndCriticalTypesStayOn() async throws {
        try await TestServer.run(.sqlite) { s in
            let ann = try await s.token("ann")
            let initial = try await s.request(.get, "/api/v1/notifications/preferences", token: ann)
            #expect(initial.data?["types"]?["job_new"]?["push_enabled"] == true)
            #expect(initial.data?["quiet_hours"]?["enabled"] == false)
            let singleTypeForm = try await s.request(.put, "/api/v1/notifications/preferences", token: ann, json: ["type": "job_new", "push_enabled": false])
            #expect(singleTypeForm.status == 200 && singleTypeForm.data?["types"]?["job_new"]?["push_enabled"] == false)
            #expect(singleTypeForm.data?["types"]?["job_new"]?["in_app_enabled"] == true)
            let full = try await s.request(
                .put, "/api/v1/notifications/preferences", token: ann,
                json: [
                    "quiet_hours": ["enabled": true, "start": "22:00", "end": "07:00"], "severity_floor": "warning",
                    "time_sensitive_allowed": false, "time_zone": "Australia/Sydney", "types": ["trip_update": ["in_app_enabled": false]],
                ])
            #expect(full.status == 200)
            #expect(full.data?["quiet_hours"] == ["enabled": true, "start": "22:00", "end": "07:00"])
            #expect(full.data?["time_zone"] == "Australia/Sydney" && full.data?["severity_floor"] == "warning")
            #expect(full.data?["types"]?["trip_update"]?["in_app_enabled"] == false)
            #expect(full.data?["types"]?["job_new"]?["push_enabled"] == false)
            #expect(try await s.request(.get, "/api/v1/me", token: ann).data?["time_zone"] == "Australia/Sydney")

            let critical = try await s.request(
                .put, "/api/v1/notifications/preferences", token: ann, json: ["type": "volume_adjustment", "push_enabled": false])
            #expect(critical.status == 422)
            let bad = try await s.request(
                .put, "/api/v1/notifications/preferences", token: ann,
                json: [
                    "quiet_hours": ["start": "25:00"], "severity_floor": "panic", "time_zone": "Mars/Base", "types": ["nope": ["push_enabled": true]],
                    "extra": 1,
                ])
            #expect(bad.status == 422)
            let list = try #require(bad.json?["error"]?["details"]?["fields"]?.arrayValue, "no field list in \(bad.text)")
            #expect(Set(list.compactMap { $0["field"]?.stringValue }) == ["quiet_hours.start", "severity_floor", "time_zone", "types.nope", "extra"])
            let noTimes = try await s.request(
                .put, "/api/v1/notifications/preferences", token: try await s.token("bob"), json: ["quiet_hours": ["enabled": true]])
            #expect(noTimes.status == 422)
            // Nothing of the refused requests was kept.
            let after = try await s.request(.get, "/api/v1/notifications/preferences", token: ann)
            #expect(after.data?["severity_floor"] == "warning" && after.data?["types"]?["volume_adjustment"]?["push_enabled"] == true)
        }
    }

    /// Two native connections of one user: both get `sync` on connect and the live
    /// notification; an ack on one ends the socket delivery; a read on one reaches the other.
    @Test(arguments: TestEngine.allCases)
    func nativeClientsGetNotificationsAckThemAndShareReadState(engine: TestEngine) async throws {
        // The longest ack deadline: an ack that a loaded machine delays must not turn into a push.
        try await TestServer.run(engine, setup: .live, configure: { $0.notifications.ackTimeoutMs = 600_000 }) { s in
            let earlier = try await send(s, to: "ann", title: "while away")
            #expect(earlier.data?["results"]?[0]?["channel"] == "inbox")
            let token = try await s.token("ann")
            try await withNativeClient(s, token: token) { phone in
                try await withNativeClient(s, token: token) { tablet in
                    for client in [phone, tablet] {
                        let sync = await client.next(type: "sync")
                        #expect(sync?["unread_count"] == 1)
                        #expect(sync?["notifications"]?[0]?["title"] == "while away")
                    }
                    let reply = try await send(s, to: "ann")
                    #expect(reply.data?["results"]?[0]?["channel"] == "socket")
                    let id = try #require(reply.data?["results"]?[0]?["notification"]?["id"]?.stringValue)
                    let onPhone = await phone.next(type: "notification")
                    let onTablet = await tablet.next(type: "notification")
                    #expect(onPhone?["payload"]?["id"] == .string(id) && onTablet?["payload"]?["id"] == .string(id))
                    #expect(onPhone?["payload"]?["unread_count"] == 2)
                    let ackID = try #require(onPhone?["ack_id"]?.stringValue)
                    phone.send(["type": "ack", "ack_id": .string(ackID)])
                    // Acks are per connection: the tablet cannot ack a delivery it never got under that id twice.
                    tablet.send(["type": "ack", "ack_id": "dlv_forged"])
                    #expect(await tablet.next(type: "error")?["code"] == "UNKNOWN_ACK")
                    let operatorToken = try await s.token("ops", .operator)
                    var status: String?
                    // (Not thrown: the expectation below names the status there was.)
                    try? await waitUntil("the delivery acknowledged") {
                        let log = try await s.request(.get, "/api/v1/deliveries?notification_id=\(id)", token: operatorToken)
                        status = log.data?["deliveries"]?[0]?["status"]?.stringValue
                        return status == "acknowledged"
                    }
                    #expect(status == "acknowledged")

                    phone.send(["type": "mark_read", "notification_id": .string(id), "request_id": "r1"])
                    let result = await phone.next(type: "mark_read_result")
                    #expect(result?["status"] == "ok" && result?["request_id"] == "r1")
                    let seen = await tablet.next(type: "notification_read")
                    #expect(seen?["payload"]?["notification_id"] == .string(id))
                    tablet.send(["type": "get_unread_count"])
                    #expect(await tablet.next(type: "unread_count")?["count"] == 1)
                    tablet.send(["type": "mark_read", "notification_id": "ntf_someone_elses"])
                    #expect(await tablet.next(type: "mark_read_result")?["code"] == "NOT_FOUND")
                }
            }
        }
    }
}
