import HeraldCore
import HeraldNotifications
import HeraldPush

/// OpenAPI descriptions of the notification and push routes.
extension NotificationRoutes {
    static let notificationSchema = Schema.object([
        "id": Schema.string(), "user_id": Schema.string(), "type": Schema.string(),
        "severity": Schema.enumeration(["info", "warning", "alert"]), "delivery": Schema.enumeration(["push", "in_app"]),
        "title": Schema.string(maxLength: 255), "body": Schema.string(nullable: true), "data": ["type": "object"],
        "category": Schema.string(nullable: true), "thread_id": Schema.string(nullable: true),
        "collapse_key": Schema.string(nullable: true), "created_at": Schema.string(format: "date-time"),
        "read_at": Schema.string(format: "date-time", nullable: true),
        "sent_via": ["type": ["string", "null"], "enum": ["socket", "push", .null]],
    ])

    static let preferencesSchema = Schema.object([
        "time_zone": Schema.string("IANA time zone (the same field as /me)"),
        "quiet_hours": Schema.object([
            "enabled": ["type": "boolean"], "start": Schema.string("HH:MM local", nullable: true),
            "end": Schema.string("HH:MM local; before start means the window spans midnight", nullable: true),
        ]),
        "severity_floor": Schema.enumeration(["info", "warning", "alert"], description: "Pushes below this severity are held back"),
        "time_sensitive_allowed": ["type": "boolean"],
        "types": [
            "type": "object",
            "additionalProperties": Schema.object([
                "in_app_enabled": ["type": "boolean"], "push_enabled": ["type": "boolean"], "critical": ["type": "boolean"],
                "quiet_hours": [
                    "type": ["object", "null"], "description": "This type's own quiet hours (HH:MM local), replacing the user's; null: the user's apply",
                    "properties": ["start": Schema.string(), "end": Schema.string()],
                ],
            ]),
        ],
    ])

    static let pageParameters: [JSONValue] = [
        ["name": "offset", "in": "query", "schema": ["type": "integer", "minimum": 0, "maximum": 1_000_000, "default": 0]],
        ["name": "limit", "in": "query", "schema": ["type": "integer", "minimum": 1, "maximum": 100, "default": 20]],
        ["name": "unread_only", "in": "query", "schema": ["type": "boolean", "default": false]],
    ]

    /// The send body exactly as `SendRequest` and `NotificationDraft.validate` check it: one
    /// of `user_id`/`user_ids`, a configured type, a title with something besides spaces.
    static func sendSchema(_ config: NotificationsConfig) -> JSONValue {
        let userID = Schema.token("A user id: up to 128 printable characters", maxBytes: 128)
        let body = Schema.object(
            [
                "user_id": userID,
                "user_ids": Schema.array(userID, minItems: 1, maxItems: config.maxRecipients),
                "type": Schema.enumeration(NotificationTypeCatalog(config: config).names, description: "A configured notification type"),
                "title": Schema.string(maxLength: NotificationDraft.maxTitleLength, pattern: "\\S"),
                "body": Schema.string(maxLength: NotificationDraft.maxBodyLength),
                "data": [
                    "type": "object",
                    "description":
                        "At most 16 KiB of JSON, sent to devices unchanged. Reserved keys (422): notification_id and notification_type (Herald adds them), aps (APNs), from, message_type, google…, gcm… (FCM; any case)",
                    "propertyNames": ["not": ["pattern": .string(PushDataKeys.reservedKeyPattern)]],
                ],
                "severity": Schema.enumeration(["info", "warning", "alert"]), "delivery": Schema.enumeration(["push", "in_app"]),
                "category": Schema.asciiText(maxBytes: 64), "thread_id": Schema.asciiText(maxBytes: 64),
                "collapse_key": Schema.asciiText("apns-collapse-id / FCM collapse key / Web Push Topic", maxBytes: NotificationDraft.maxCollapseKeyBytes),
                "dedupe_key": Schema.string(minLength: 1, maxLength: NotificationDraft.maxDedupeKeyLength),
                "ttl_seconds": Schema.integer(minimum: 0, maximum: NotificationDraft.maxTTLSeconds),
            ], required: ["type", "title"])
        return Schema.exactlyOne(of: ["user_id", "user_ids"], in: body)
    }

    static func operations(_ config: NotificationsConfig) -> [APIOperation] {
        [
            APIOperation(
                "POST", "/api/v1/notifications", summary: "Send a notification to one or many users",
                description:
                    "For backends (service and operator roles). Persisted in the inbox with its planned deliveries in one transaction; delivered over the user's sockets when online (a push-type notification falls back to push if the app does not ack within notifications.ack_timeout_ms) and as pushes to every active device when offline. Preferences, quiet hours (in the user's time zone) and the severity floor may hold back pushes. The same dedupe_key for a user within the type's cooldown returns the first notification (deduplicated: true). 201 when something was created, 200 when every recipient was deduplicated.",
                tag: "notifications", access: .authenticated(roles: ["service", "operator"]),
                requestBody: sendSchema(config),
                response: Schema.object([
                    "results": [
                        "type": "array",
                        "items": Schema.object([
                            "notification": notificationSchema, "deduplicated": ["type": "boolean"],
                            "channel": Schema.enumeration(["socket", "push", "inbox", "deduplicated"]),
                            "push_deliveries": Schema.integer(), "push_suppressed": Schema.string(nullable: true),
                        ]),
                    ]
                ]),
                successStatus: 201, acceptsIdempotencyKey: true, otherSuccessStatus: 200),
            APIOperation(
                "GET", "/api/v1/notifications", summary: "The caller's inbox, newest first", tag: "notifications",
                access: .authenticated(roles: []),
                response: Schema.object([
                    "notifications": ["type": "array", "items": notificationSchema], "total": Schema.integer(),
                    "unread_count": Schema.integer(), "offset": Schema.integer(), "limit": Schema.integer(),
                ]), parameters: pageParameters),
            APIOperation(
                "GET", "/api/v1/notifications/unread-count", summary: "How many of the caller's notifications are unread",
                tag: "notifications", access: .authenticated(roles: []), response: Schema.object(["count": Schema.integer()])),
            APIOperation(
                "POST", "/api/v1/notifications/{id}/read", summary: "Mark one notification read",
                description: "The user's other connected devices get notification_read.", tag: "notifications",
                access: .authenticated(roles: []), response: notificationSchema, errors: [404: "Not the caller's notification"]),
            APIOperation(
                "POST", "/api/v1/notifications/bulk-read", summary: "Mark several notifications read",
                description: "Ids that are not the caller's, already read or deleted are skipped. Other devices get notifications_bulk_read.",
                tag: "notifications", access: .authenticated(roles: []),
                requestBody: Schema.closed(
                    Schema.object(
                        ["notification_ids": Schema.array(Schema.token(maxBytes: 128), minItems: 1, maxItems: NotificationSocketEvents.maxBulkIDs)],
                        required: ["notification_ids"])),
                response: Schema.object([
                    "updated": Schema.integer(), "notification_ids": ["type": "array", "items": Schema.string()], "unread_count": Schema.integer(),
                ])),
            APIOperation(
                "DELETE", "/api/v1/notifications/{id}", summary: "Delete a notification from the inbox (soft delete)",
                tag: "notifications", access: .authenticated(roles: []),
                response: Schema.object(["id": Schema.string(), "deleted": ["type": "boolean"]]), errors: [404: "Not the caller's notification"]),
            APIOperation(
                "GET", "/api/v1/notifications/preferences", summary: "The caller's notification preferences", tag: "notifications",
                access: .authenticated(roles: []), response: preferencesSchema),
            APIOperation(
                "PUT", "/api/v1/notifications/preferences", summary: "Change notification preferences",
                description:
                    "Any part of the GET document, or the single-type form {type, in_app_enabled, push_enabled, quiet_hours_start, quiet_hours_end}. A type's quiet hours replace the user's for that type (both ends, or both null to clear). Critical types cannot be turned off.",
                tag: "notifications", access: .authenticated(roles: []), requestBody: preferencesSchema, response: preferencesSchema),
        ]
    }
}

extension PushRoutes {
    static let deviceSchema = Schema.object([
        "id": Schema.string(), "token": Schema.string(), "provider": Schema.enumeration(["apns", "fcm", "webpush"]),
        "platform": Schema.enumeration(["ios", "android", "web"]), "device_id": Schema.string(nullable: true),
        "app_version": Schema.string(nullable: true), "os_version": Schema.string(nullable: true),
        "locale": Schema.string(nullable: true), "user_agent": Schema.string(nullable: true), "active": ["type": "boolean"],
        "created_at": Schema.string(format: "date-time"), "last_used_at": Schema.string(format: "date-time"),
        "deactivated_at": Schema.string(format: "date-time", nullable: true), "deactivation_reason": Schema.string(nullable: true),
        "app_id": Schema.string("the app it belongs to (push.apps; default: `default`)"),
        "environment": ["type": ["string", "null"], "enum": ["production", "sandbox", .null], "description": "an APNs token's environment"],
    ])

    static let operations: [APIOperation] = [
        APIOperation(
            "POST", "/api/v1/push/register", summary: "Register a device for push",
            description:
                "APNs tokens are hex; FCM registration tokens; Web Push takes the browser's PushSubscription JSON as subscription (its endpoint is the token). Re-registering a token moves it to the caller and reactivates it; an older token of the same device_id and app is deactivated. app_id names the app (its own APNs topic and key, Firebase project, VAPID key); environment says where an APNs token is valid (a development build's token is sandbox). 201 for a new token, 200 for a known one. fcm_token is accepted for token. The JSON body may also be labelled text/plain (a browser fetch with a string body and no Content-Type, as some web clients send it).",
            tag: "push", access: .authenticated(roles: []),
            requestBody: Schema.object(
                [
                    "token": Schema.string(), "provider": Schema.enumeration(["apns", "fcm", "webpush"]),
                    "platform": Schema.enumeration(["ios", "android", "web"]), "device_id": Schema.string(maxLength: 200),
                    "app_version": Schema.string(maxLength: 64), "os_version": Schema.string(maxLength: 64),
                    "locale": Schema.string(maxLength: 35),
                    "app_id": Schema.string("one of the server's apps (push.apps); default: `default`", maxLength: 64),
                    "environment": Schema.enumeration(["production", "sandbox"]),
                    "subscription": Schema.object([
                        "endpoint": Schema.string(format: "uri"),
                        "keys": Schema.object(["p256dh": Schema.string("base64url, 65 bytes"), "auth": Schema.string("base64url, 16 bytes")]),
                    ]),
                ], required: ["platform"]),
            response: deviceSchema, successStatus: 201, otherSuccessStatus: 200),
        APIOperation(
            "DELETE", "/api/v1/push/unregister", summary: "Stop pushes to one of the caller's tokens", tag: "push",
            access: .authenticated(roles: []), requestBody: Schema.object(["token": Schema.string(maxLength: 4096)], required: ["token"]),
            response: deviceSchema, errors: [404: "The caller has no device with this token"]),
        APIOperation(
            "GET", "/api/v1/push/devices", summary: "The caller's devices (active and deactivated)", tag: "push",
            access: .authenticated(roles: []), response: Schema.object(["devices": ["type": "array", "items": deviceSchema]])),
        APIOperation(
            "GET", "/api/v1/deliveries", summary: "Delivery log (socket acks and pushes)", tag: "push",
            access: .authenticated(roles: ["operator", "service"]),
            response: Schema.object(["deliveries": ["type": "array"]]),
            parameters: [
                ["name": "notification_id", "in": "query", "schema": ["type": "string"]],
                ["name": "status", "in": "query", "schema": Schema.enumeration(DeliveryStatus.allCases.map(\.rawValue).sorted())],
                ["name": "limit", "in": "query", "schema": ["type": "integer", "minimum": 1, "maximum": 1000, "default": 100]],
            ]),
    ]
}
