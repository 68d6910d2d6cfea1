import HeraldStorage

/// The users table (see `UserStore`). Append new migrations; never edit one that has shipped.
public enum UserMigrations {
    public static let set = MigrationSet(
        module: "users",
        migrations: [
            Migration(
                version: 1, name: "users", legacyVersion: 1,
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
                version: 2, name: "user phone", legacyVersion: 12,
                statements: [
                    // E.164; shown to the driver assigned to the user's active job (the price-adjustment
                    // design's "call the customer" when a price proposal goes unanswered).
                    "ALTER TABLE users ADD COLUMN phone TEXT"
                ]
            ),
            Migration(
                version: 3, name: "user time zone chosen",
                statements: [
                    // 1 once the user sent a time zone; until then their quiet hours run in the
                    // deployment's default zone (`DefaultTimeZone`), not in the UTC the column
                    // defaults to. A zone other than UTC was chosen; a UTC stored before this
                    // migration cannot be told from the default and counts as not chosen.
                    "ALTER TABLE users ADD COLUMN time_zone_chosen INTEGER NOT NULL DEFAULT 0",
                    "UPDATE users SET time_zone_chosen = 1 WHERE time_zone <> 'UTC'",
                ]
            ),
        ])
}
