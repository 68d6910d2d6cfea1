import HeraldStorage

/// Realtime history, sessions, nodes and presence. Append new migrations; never edit one that has shipped.
public enum RealtimeMigrations {
    public static let set = MigrationSet(
        module: "realtime",
        migrations: [
            Migration(
                version: 1, name: "realtime", legacyVersion: 3,
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
            Migration(
                version: 2, name: "sessions of live sockets",
                statements: [
                    // The node holding a socket that is still connected (NULL once it disconnected):
                    // a node that crashes saves nothing, so live sockets are written as they change
                    // and a client that lost its node recovers on another.
                    "ALTER TABLE realtime_sessions ADD COLUMN node_id TEXT"
                ]
            ),
        ])
}
