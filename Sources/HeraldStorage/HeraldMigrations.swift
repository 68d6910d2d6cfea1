/// The schema, in order. Append new migrations; never edit one that has shipped.
public enum HeraldMigrations {
    public static let all: [Migration] = [
        Migration(
            version: 1, name: "users",
            statements: [
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    role TEXT NOT NULL,
                    display_name TEXT,
                    locale TEXT,
                    time_zone TEXT NOT NULL DEFAULT 'UTC',
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """
            ]
        ),
        Migration(
            version: 2, name: "idempotency_keys",
            statements: [
                """
                CREATE TABLE idempotency_keys (
                    scope TEXT NOT NULL,
                    idem_key TEXT NOT NULL,
                    request_hash TEXT NOT NULL,
                    state TEXT NOT NULL,
                    status_code INTEGER,
                    response_headers TEXT,
                    response_body TEXT,
                    locked_at BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    PRIMARY KEY (scope, idem_key)
                )
                """,
                "CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at)",
            ]
        ),
        Migration(
            version: 3, name: "realtime",
            statements: [
                // One row per room: its last event sequence. The row lock taken by the
                // increment orders a room's events across nodes.
                """
                CREATE TABLE realtime_rooms (
                    room TEXT PRIMARY KEY,
                    last_seq BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE realtime_events (
                    room TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    event TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (room, seq)
                )
                """,
                "CREATE INDEX realtime_events_created_at ON realtime_events (created_at)",
                // Socket.IO sessions that may be recovered after a disconnect: their rooms in
                // join order (the offsets a client holds index into this list).
                """
                CREATE TABLE realtime_sessions (
                    pid TEXT PRIMARY KEY,
                    user_id TEXT,
                    namespace TEXT NOT NULL,
                    rooms TEXT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX realtime_sessions_updated_at ON realtime_sessions (updated_at)",
                """
                CREATE TABLE realtime_nodes (
                    node_id TEXT PRIMARY KEY,
                    heartbeat_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE realtime_presence (
                    node_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    connections INTEGER NOT NULL,
                    PRIMARY KEY (node_id, user_id)
                )
                """,
                "CREATE INDEX realtime_presence_user ON realtime_presence (user_id)",
            ]
        ),
    ]
}
