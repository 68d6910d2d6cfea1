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
    ]
}
