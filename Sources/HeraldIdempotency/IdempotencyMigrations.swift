import HeraldStorage

/// The idempotency keys of the REST API. Append new migrations; never edit one that has shipped.
public enum IdempotencyMigrations {
    public static let set = MigrationSet(
        module: "idempotency",
        migrations: [
            Migration(
                version: 1, name: "idempotency_keys", legacyVersion: 2,
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
            )
        ])
}
