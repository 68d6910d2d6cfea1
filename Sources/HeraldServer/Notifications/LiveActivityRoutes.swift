import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import Hummingbird

/// Live Activities: an app registers each activity's update token and its push-to-start
/// tokens; Herald starts, updates and ends the activities from trips, jobs and departures.
struct LiveActivityRoutes {
    let service: LiveActivityService
    let clock: any HeraldClock

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/live-activities") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            let (record, created) = try await service.register(userID: identity.userID, body: body)
            return try Envelope.response(LiveActivityService.json(record), status: created ? .created : .ok, context: context, clock: clock)
        }
        api.post("/live-activities/channels") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            let channel = try await service.channel(userID: identity.userID, body: body)
            let json = LiveActivityService.json(
                channel, attributesType: service.config.attributesType(channel.record.kind.rawValue), storage: service.config.channelStorage)
            return try Envelope.response(json, status: channel.created ? .created : .ok, context: context, clock: clock)
        }
        api.get("/live-activities") { _, context in
            let identity = try context.requireIdentity()
            let records = try await service.activities(userID: identity.userID)
            return try Envelope.response(
                JSONValue.object(["live_activities": .array(records.map(LiveActivityService.json))]), context: context, clock: clock)
        }
        api.delete("/live-activities/{activity_id}") { _, context in
            let identity = try context.requireIdentity()
            let activityID = try context.parameters.require("activity_id")
            guard let record = try await service.cancel(userID: identity.userID, activityID: activityID) else {
                throw APIError.notFound("You have no Live Activity with this activity_id.")
            }
            return try Envelope.response(LiveActivityService.json(record), context: context, clock: clock)
        }
        api.put("/live-activities/start-tokens") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            let (record, created) = try await service.registerStartToken(userID: identity.userID, body: body)
            return try Envelope.response(LiveActivityService.json(record), status: created ? .created : .ok, context: context, clock: clock)
        }
        api.get("/live-activities/start-tokens") { _, context in
            let identity = try context.requireIdentity()
            let tokens = try await service.startTokens(userID: identity.userID)
            return try Envelope.response(JSONValue.object(["start_tokens": .array(tokens.map(LiveActivityService.json))]), context: context, clock: clock)
        }
        api.delete("/live-activities/start-tokens/{kind}") { _, context in
            let identity = try context.requireIdentity()
            let kind = try context.parameters.require("kind")
            let removed = try await service.removeStartTokens(userID: identity.userID, kind: kind)
            return try Envelope.response(JSONValue.object(["removed": .number(Double(removed))]), context: context, clock: clock)
        }
    }

    static let kinds = Schema.enumeration(LiveActivityKind.allCases.map(\.rawValue))

    static let activitySchema = Schema.object([
        "id": Schema.string(), "activity_id": Schema.string(nullable: true), "kind": kinds, "subject_id": Schema.string(),
        "app_id": Schema.string(), "environment": Schema.string("production or sandbox; null: the app's configured one", nullable: true),
        "status": Schema.enumeration(LiveActivityStatus.allCases.map(\.rawValue)),
        "content_state": ["type": "object", "description": "What the activity should show now (its ContentState as JSON)"],
        "pushes_sent": Schema.integer(minimum: 0), "pending": ["type": "boolean"],
        "last_sent_at": Schema.string(format: "date-time", nullable: true), "reason": Schema.string(nullable: true),
        "created_at": Schema.string(format: "date-time"), "updated_at": Schema.string(format: "date-time"),
    ])

    static let startTokenSchema = Schema.object([
        "kind": kinds, "app_id": Schema.string(), "environment": Schema.string("production or sandbox; null: the app's configured one", nullable: true),
        "created_at": Schema.string(format: "date-time"), "updated_at": Schema.string(format: "date-time"),
    ])

    static let channelSchema = Schema.object([
        "channel_id": Schema.string("APNs's channel id: start the activity with `pushType: .channel(channel_id)`"),
        "kind": kinds, "subject_id": Schema.string(), "app_id": Schema.string(), "environment": Schema.enumeration(["production", "sandbox"]),
        "attributes_type": Schema.string("the ActivityAttributes type the content matches"),
        "attributes": ["type": "object", "description": "The activity's static attributes"],
        "content_state": ["type": "object", "description": "What the activity shows now (its ContentState as JSON)"],
        "message_storage_policy": Schema.enumeration(["most_recent", "none"]), "pushes_sent": Schema.integer(minimum: 0),
        "created_at": Schema.string(format: "date-time"),
    ])

    static let tokenFields: [String: JSONValue] = [
        "push_token": Schema.string("the ActivityKit token in hex (whole bytes)", minLength: 64, maxLength: 200, pattern: "^([0-9a-fA-F]{2})+$"),
        "app_id": Schema.string("one of the server's apps (push.apps); default: `default`", maxLength: 64),
        "environment": Schema.enumeration(["production", "sandbox"]),
    ]

    static let operations: [APIOperation] = [
        APIOperation(
            "POST", "/api/v1/live-activities", summary: "Register a Live Activity's update token",
            description:
                "Send each token from `Activity.pushTokenUpdates` (an activity the app started, or one Herald started with a push-to-start token). `subject_id` is the trip id, job id or stop id the activity follows; it must be one the caller may see (404 otherwise). Registering the same `activity_id` again replaces the token (201 new, 200 known). An activity whose subject is already over is ended at once. See docs/live-activities.md.",
            tag: "live-activities", access: .authenticated(roles: []),
            requestBody: Schema.object(
                tokenFields.merging(
                    ["activity_id": Schema.string("ActivityKit's Activity.id", maxLength: 128), "kind": kinds, "subject_id": Schema.string(maxLength: 128)]
                ) { first, _ in first }, required: ["activity_id", "kind", "subject_id", "push_token"]),
            response: activitySchema, successStatus: 201,
            errors: [404: "No such subject, or not the caller's", 409: "LIVE_ACTIVITY_LIMIT, or the activity_id follows another subject"],
            otherSuccessStatus: 200),
        APIOperation(
            "POST", "/api/v1/live-activities/channels", summary: "The broadcast channel of a subject (iOS 18)",
            description:
                "For kinds whose content is the same for all followers (`departures`: `subject_id` is a stop id). Herald makes the channel at APNs the first time it is asked for (201) and answers the same one afterwards (200), with the attributes and content to start the activity with; every change then goes to the channel once, however many devices subscribed. Ask each time the app starts an activity: a channel no app asked for in `channel_idle_seconds` is deleted. See docs/live-activities.md.",
            tag: "live-activities", access: .authenticated(roles: []),
            requestBody: Schema.object(
                [
                    "kind": Schema.enumeration(LiveActivityKind.allCases.filter(\.broadcasts).map(\.rawValue)),
                    "subject_id": Schema.string(maxLength: 128),
                    "app_id": Schema.string("one of the server's apps (push.apps); default: `default`", maxLength: 64),
                    "environment": Schema.enumeration(["production", "sandbox"]),
                ], required: ["kind", "subject_id"]),
            response: channelSchema, successStatus: 201,
            errors: [404: "No such subject", 503: "LIVE_ACTIVITY_CHANNEL_LIMIT, or APNs did not make the channel"], otherSuccessStatus: 200),
        APIOperation(
            "GET", "/api/v1/live-activities", summary: "The caller's Live Activities, newest first", tag: "live-activities",
            access: .authenticated(roles: []), response: Schema.object(["live_activities": Schema.array(activitySchema)])),
        APIOperation(
            "DELETE", "/api/v1/live-activities/{activity_id}", summary: "Stop pushing to an activity the app ended itself",
            tag: "live-activities", access: .authenticated(roles: []), response: activitySchema,
            errors: [404: "The caller has no activity with this activity_id"]),
        APIOperation(
            "PUT", "/api/v1/live-activities/start-tokens", summary: "Register a push-to-start token",
            description:
                "Send each token from `Activity<Attributes>.pushToStartTokenUpdates` (iOS 17.2+) with the kind its attributes type stands for; Herald then starts that kind's activities on the device (a trip at the match). 201 new, 200 known.",
            tag: "live-activities", access: .authenticated(roles: []),
            requestBody: Schema.object(tokenFields.merging(["kind": kinds]) { first, _ in first }, required: ["kind", "push_token"]),
            response: startTokenSchema, successStatus: 201, otherSuccessStatus: 200),
        APIOperation(
            "GET", "/api/v1/live-activities/start-tokens", summary: "The caller's push-to-start tokens (without the tokens)",
            tag: "live-activities", access: .authenticated(roles: []), response: Schema.object(["start_tokens": Schema.array(startTokenSchema)])),
        APIOperation(
            "DELETE", "/api/v1/live-activities/start-tokens/{kind}", summary: "Forget the caller's push-to-start tokens of a kind",
            tag: "live-activities", access: .authenticated(roles: []), response: Schema.object(["removed": Schema.integer(minimum: 0)]),
            errors: [422: "Not a kind"], parameters: [["name": "kind", "in": "path", "required": true, "schema": kinds]]),
    ]
}
