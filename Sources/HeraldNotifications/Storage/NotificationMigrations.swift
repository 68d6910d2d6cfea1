import HeraldStorage

/// The inbox, its deliveries, devices and preferences. Append new migrations; never edit one that has shipped.
public enum NotificationMigrations {
    public static let set = MigrationSet(
        module: "notifications",
        migrations: [
            Migration(
                version: 1, name: "notifications", legacyVersion: 4,
                statements: [
                    // The inbox: the source of truth whatever channel delivered it.
                    """
                    CREATE TABLE notifications (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL,
                        type TEXT NOT NULL,
                        severity TEXT NOT NULL,
                        delivery TEXT NOT NULL,
                        title TEXT NOT NULL,
                        body TEXT,
                        data TEXT NOT NULL,
                        category TEXT,
                        thread_id TEXT,
                        collapse_key TEXT,
                        dedupe_key TEXT,
                        interruption_level TEXT,
                        expires_at BIGINT,
                        created_at BIGINT NOT NULL,
                        read_at BIGINT,
                        deleted_at BIGINT,
                        sent_via TEXT,
                        push_suppressed TEXT
                    )
                    """,
                    "CREATE INDEX notifications_user_created ON notifications (user_id, created_at)",
                    "CREATE INDEX notifications_user_unread ON notifications (user_id, read_at, deleted_at)",
                    // Which notification currently holds a (user, dedupe key) group, and since when.
                    """
                    CREATE TABLE notification_dedupe (
                        user_id TEXT NOT NULL,
                        dedupe_key TEXT NOT NULL,
                        notification_id TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        PRIMARY KEY (user_id, dedupe_key)
                    )
                    """,
                    """
                    CREATE TABLE push_devices (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL,
                        provider TEXT NOT NULL,
                        token TEXT NOT NULL,
                        platform TEXT NOT NULL,
                        device_id TEXT,
                        app_version TEXT,
                        os_version TEXT,
                        locale TEXT,
                        user_agent TEXT,
                        webpush_p256dh TEXT,
                        webpush_auth TEXT,
                        created_at BIGINT NOT NULL,
                        last_used_at BIGINT NOT NULL,
                        deactivated_at BIGINT,
                        deactivation_reason TEXT,
                        UNIQUE (provider, token)
                    )
                    """,
                    "CREATE INDEX push_devices_user ON push_devices (user_id)",
                    """
                    CREATE TABLE notification_settings (
                        user_id TEXT PRIMARY KEY,
                        quiet_hours_enabled INTEGER NOT NULL,
                        quiet_start TEXT,
                        quiet_end TEXT,
                        severity_floor TEXT NOT NULL,
                        time_sensitive_allowed INTEGER NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    """
                    CREATE TABLE notification_preferences (
                        user_id TEXT NOT NULL,
                        type TEXT NOT NULL,
                        in_app_enabled INTEGER NOT NULL,
                        push_enabled INTEGER NOT NULL,
                        updated_at BIGINT NOT NULL,
                        PRIMARY KEY (user_id, type)
                    )
                    """,
                    // The outbox: every planned delivery of a notification, written in the same
                    // transaction as the notification. `socket` rows wait for the client's ack
                    // (then fall back to push); `push` rows are claimed by the delivery worker.
                    """
                    CREATE TABLE notification_deliveries (
                        id TEXT PRIMARY KEY,
                        notification_id TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        channel TEXT NOT NULL,
                        device_id TEXT,
                        provider TEXT,
                        status TEXT NOT NULL,
                        attempts INTEGER NOT NULL,
                        next_attempt_at BIGINT NOT NULL,
                        lease_until BIGINT,
                        provider_message_id TEXT,
                        reason TEXT,
                        latency_ms INTEGER,
                        created_at BIGINT NOT NULL,
                        updated_at BIGINT NOT NULL,
                        completed_at BIGINT
                    )
                    """,
                    "CREATE INDEX notification_deliveries_due ON notification_deliveries (status, next_attempt_at)",
                    "CREATE INDEX notification_deliveries_notification ON notification_deliveries (notification_id)",
                ]
            ),
            Migration(
                version: 2, name: "silent notifications", legacyVersion: 7,
                statements: [
                    // A silent (content-available) push syncs an app's state and stays out of the inbox.
                    "ALTER TABLE notifications ADD COLUMN silent INTEGER NOT NULL DEFAULT 0"
                ]
            ),
            Migration(
                version: 3, name: "quiet hours per notification type", legacyVersion: 11,
                statements: [
                    // The notification design's notification_preferences has quiet hours per type;
                    // they replace the user's own window for that type (both null: the user's window
                    // applies).
                    "ALTER TABLE notification_preferences ADD COLUMN quiet_start TEXT",
                    "ALTER TABLE notification_preferences ADD COLUMN quiet_end TEXT",
                ]
            ),
            Migration(
                version: 4, name: "devices per app",
                statements: [
                    // The app a device belongs to (`push.apps`; `default` for every device from
                    // before), and an APNs token's environment (null: the app's configured one).
                    "ALTER TABLE push_devices ADD COLUMN app_id TEXT NOT NULL DEFAULT 'default'",
                    "ALTER TABLE push_devices ADD COLUMN apns_environment TEXT",
                ]
            ),
            Migration(
                version: 5, name: "live activities",
                statements: [
                    // One row per Live Activity on a device (its update token) or per start
                    // push (a push-to-start token): the content it should show and what was
                    // pushed of it (`LiveActivityRecord`).
                    """
                    CREATE TABLE live_activities (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL,
                        app_id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        subject_id TEXT NOT NULL,
                        activity_id TEXT,
                        mode TEXT NOT NULL,
                        token TEXT NOT NULL,
                        environment TEXT,
                        token_updated_at BIGINT NOT NULL,
                        status TEXT NOT NULL,
                        content TEXT NOT NULL,
                        attributes TEXT,
                        version BIGINT NOT NULL,
                        sent_version BIGINT NOT NULL,
                        important_version BIGINT NOT NULL,
                        alert TEXT,
                        alert_version BIGINT NOT NULL,
                        ending INTEGER NOT NULL,
                        content_at BIGINT NOT NULL,
                        sent_timestamp BIGINT,
                        dismissal_at BIGINT,
                        due_at BIGINT,
                        lease_until BIGINT,
                        attempts INTEGER NOT NULL,
                        sent_count INTEGER NOT NULL,
                        last_sent_at BIGINT,
                        reason TEXT,
                        created_at BIGINT NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX live_activities_subject ON live_activities (kind, subject_id)",
                    "CREATE INDEX live_activities_due ON live_activities (due_at)",
                    "CREATE INDEX live_activities_user ON live_activities (user_id)",
                    // An app re-registering its activity (a rotated token) updates its row.
                    "CREATE UNIQUE INDEX live_activities_activity ON live_activities (user_id, activity_id)",
                    // Push-to-start tokens, one per app and token (a device that changes user moves).
                    """
                    CREATE TABLE live_activity_start_tokens (
                        app_id TEXT NOT NULL,
                        token TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        environment TEXT,
                        created_at BIGINT NOT NULL,
                        updated_at BIGINT NOT NULL,
                        PRIMARY KEY (app_id, token)
                    )
                    """,
                    "CREATE INDEX live_activity_start_tokens_user ON live_activity_start_tokens (user_id, kind)",
                ]
            ),
            Migration(
                version: 6, name: "live activity broadcast channels",
                statements: [
                    // One channel in use per app, environment and subject: of two nodes asked
                    // for the same stop's channel at once, one keeps its own (the other
                    // deletes its at APNs and answers with the first).
                    """
                    CREATE UNIQUE INDEX live_activities_channel ON live_activities (app_id, environment, kind, subject_id)
                    WHERE mode = 'channel' AND status = 'active'
                    """
                ]
            ),
            Migration(
                version: 7, name: "trace context",
                statements: [
                    // The sending request's W3C `traceparent`, continued by the notification's
                    // deliveries (null: not traced; docs/tracing.md).
                    "ALTER TABLE notifications ADD COLUMN trace_parent TEXT"
                ]
            ),
        ])
}
