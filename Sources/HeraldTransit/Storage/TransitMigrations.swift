import HeraldGTFS
import HeraldStorage

/// The transit module's tables. Append new migrations; never edit one that has shipped.
public enum TransitMigrations {
    public static let set = MigrationSet(
        module: "transit",
        migrations: [
            Migration(
                version: 1, name: "transit", legacyVersion: 8,
                statements: [
                    // One row per configured (or imported) feed: which version serves, and the
                    // state of its scheduled refresh (conditional GET validators, the next check,
                    // claimed by one node with a conditional update) and of a running import (a lease).
                    """
                    CREATE TABLE transit_feeds (
                        name TEXT PRIMARY KEY,
                        active_version TEXT,
                        source_url TEXT,
                        etag TEXT,
                        last_modified TEXT,
                        next_check_at BIGINT NOT NULL DEFAULT 0,
                        checked_at BIGINT,
                        last_error TEXT,
                        import_lease_until BIGINT,
                        import_id TEXT,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    // Each loaded feed: loading → ready (→ retired), or failed. Rows of the feed's
                    // files carry the version id, so a new version is written beside the one in use.
                    """
                    CREATE TABLE transit_feed_versions (
                        id TEXT PRIMARY KEY,
                        feed_name TEXT NOT NULL,
                        version TEXT NOT NULL,
                        sha256 TEXT NOT NULL,
                        size_bytes BIGINT NOT NULL,
                        status TEXT NOT NULL,
                        source TEXT,
                        row_count BIGINT NOT NULL DEFAULT 0,
                        stop_time_count BIGINT NOT NULL DEFAULT 0,
                        report TEXT,
                        imported_at BIGINT NOT NULL,
                        activated_at BIGINT
                    )
                    """,
                    "CREATE INDEX transit_feed_versions_feed ON transit_feed_versions (feed_name, imported_at)",
                    // The feed's zip, in chunks (bounded messages on the wire): what GET /gtfs/feed
                    // serves and what every node builds its timetable from.
                    """
                    CREATE TABLE transit_feed_files (
                        version_id TEXT NOT NULL,
                        chunk INTEGER NOT NULL,
                        bytes {BYTES} NOT NULL,
                        PRIMARY KEY (version_id, chunk)
                    )
                    """,
                    """
                    CREATE TABLE transit_imports (
                        id TEXT PRIMARY KEY,
                        feed_name TEXT NOT NULL,
                        status TEXT NOT NULL,
                        source TEXT NOT NULL,
                        version_id TEXT,
                        report TEXT,
                        error TEXT,
                        requested_by TEXT,
                        created_at BIGINT NOT NULL,
                        finished_at BIGINT
                    )
                    """,
                    "CREATE INDEX transit_imports_feed ON transit_imports (feed_name, created_at)",
                    // The feed's files as rows (for SQL readers; the timetable is built from the zip).
                    """
                    CREATE TABLE transit_agencies (
                        version_id TEXT NOT NULL, agency_id TEXT, agency_name TEXT NOT NULL, agency_url TEXT NOT NULL,
                        agency_timezone TEXT NOT NULL, agency_lang TEXT, agency_phone TEXT
                    )
                    """,
                    "CREATE INDEX transit_agencies_version ON transit_agencies (version_id)",
                    """
                    CREATE TABLE transit_stops (
                        version_id TEXT NOT NULL, stop_id TEXT NOT NULL, stop_code TEXT, stop_name TEXT, stop_desc TEXT,
                        stop_lat DOUBLE PRECISION, stop_lon DOUBLE PRECISION, zone_id TEXT, stop_url TEXT, location_type INTEGER NOT NULL,
                        parent_station TEXT, stop_timezone TEXT, wheelchair_boarding INTEGER NOT NULL, level_id TEXT, platform_code TEXT,
                        PRIMARY KEY (version_id, stop_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_routes (
                        version_id TEXT NOT NULL, route_id TEXT NOT NULL, agency_id TEXT, route_short_name TEXT, route_long_name TEXT,
                        route_desc TEXT, route_type INTEGER NOT NULL, route_url TEXT, route_color TEXT, route_text_color TEXT,
                        route_sort_order INTEGER,
                        PRIMARY KEY (version_id, route_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_trips (
                        version_id TEXT NOT NULL, trip_id TEXT NOT NULL, route_id TEXT NOT NULL, service_id TEXT NOT NULL,
                        trip_headsign TEXT, trip_short_name TEXT, direction_id INTEGER, block_id TEXT, shape_id TEXT,
                        wheelchair_accessible INTEGER NOT NULL, bikes_allowed INTEGER NOT NULL,
                        PRIMARY KEY (version_id, trip_id)
                    )
                    """,
                    // Times in seconds since the service day's start; NULL where the feed left them
                    // empty (Herald interpolates those in memory).
                    """
                    CREATE TABLE transit_stop_times (
                        version_id TEXT NOT NULL, trip_id TEXT NOT NULL, stop_sequence INTEGER NOT NULL, stop_id TEXT NOT NULL,
                        arrival_time INTEGER, departure_time INTEGER, stop_headsign TEXT, pickup_type INTEGER NOT NULL,
                        drop_off_type INTEGER NOT NULL, shape_dist_traveled DOUBLE PRECISION, timepoint INTEGER,
                        PRIMARY KEY (version_id, trip_id, stop_sequence)
                    )
                    """,
                    """
                    CREATE TABLE transit_calendar (
                        version_id TEXT NOT NULL, service_id TEXT NOT NULL, monday INTEGER NOT NULL, tuesday INTEGER NOT NULL,
                        wednesday INTEGER NOT NULL, thursday INTEGER NOT NULL, friday INTEGER NOT NULL, saturday INTEGER NOT NULL,
                        sunday INTEGER NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL,
                        PRIMARY KEY (version_id, service_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_calendar_dates (
                        version_id TEXT NOT NULL, service_id TEXT NOT NULL, date TEXT NOT NULL, exception_type INTEGER NOT NULL,
                        PRIMARY KEY (version_id, service_id, date)
                    )
                    """,
                    """
                    CREATE TABLE transit_frequencies (
                        version_id TEXT NOT NULL, trip_id TEXT NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,
                        headway_secs INTEGER NOT NULL, exact_times INTEGER NOT NULL
                    )
                    """,
                    "CREATE INDEX transit_frequencies_version ON transit_frequencies (version_id, trip_id)",
                    """
                    CREATE TABLE transit_transfers (
                        version_id TEXT NOT NULL, from_stop_id TEXT, to_stop_id TEXT, from_route_id TEXT, to_route_id TEXT,
                        from_trip_id TEXT, to_trip_id TEXT, transfer_type INTEGER NOT NULL, min_transfer_time INTEGER
                    )
                    """,
                    "CREATE INDEX transit_transfers_version ON transit_transfers (version_id, from_stop_id)",
                    """
                    CREATE TABLE transit_shapes (
                        version_id TEXT NOT NULL, shape_id TEXT NOT NULL, shape_pt_sequence INTEGER NOT NULL,
                        shape_pt_lat DOUBLE PRECISION NOT NULL, shape_pt_lon DOUBLE PRECISION NOT NULL, shape_dist_traveled DOUBLE PRECISION,
                        PRIMARY KEY (version_id, shape_id, shape_pt_sequence)
                    )
                    """,
                    """
                    CREATE TABLE transit_fare_attributes (
                        version_id TEXT NOT NULL, fare_id TEXT NOT NULL, price DOUBLE PRECISION NOT NULL, currency_type TEXT NOT NULL,
                        payment_method INTEGER NOT NULL, transfers INTEGER, agency_id TEXT, transfer_duration INTEGER,
                        PRIMARY KEY (version_id, fare_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_fare_rules (
                        version_id TEXT NOT NULL, fare_id TEXT NOT NULL, route_id TEXT, origin_id TEXT, destination_id TEXT, contains_id TEXT
                    )
                    """,
                    "CREATE INDEX transit_fare_rules_version ON transit_fare_rules (version_id, fare_id)",
                    // The latest good GTFS-Realtime message of each source (polled or pushed); every
                    // node decodes it from here, so all answer from the same data.
                    """
                    CREATE TABLE transit_realtime_feeds (
                        source TEXT PRIMARY KEY,
                        feed_name TEXT NOT NULL,
                        payload {BYTES},
                        feed_timestamp BIGINT,
                        received_at BIGINT,
                        etag TEXT,
                        last_modified TEXT,
                        next_poll_at BIGINT NOT NULL DEFAULT 0,
                        last_error TEXT,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    // Alerts posted by backends (POST /alerts), beside the GTFS-RT ones.
                    """
                    CREATE TABLE transit_alerts (
                        id TEXT PRIMARY KEY,
                        severity TEXT NOT NULL,
                        header TEXT NOT NULL,
                        description TEXT,
                        cause TEXT NOT NULL,
                        effect TEXT NOT NULL,
                        url TEXT,
                        affected_routes TEXT NOT NULL,
                        affected_stops TEXT NOT NULL,
                        active_start BIGINT,
                        active_end BIGINT,
                        created_by TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX transit_alerts_end ON transit_alerts (active_end)",
                    // A user's favourite stops, in their order; one row per stop per user.
                    """
                    CREATE TABLE transit_favorites (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL,
                        stop_id TEXT NOT NULL,
                        label TEXT,
                        sort_order INTEGER NOT NULL,
                        notifications_enabled INTEGER NOT NULL DEFAULT 1,
                        created_at BIGINT NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE UNIQUE INDEX transit_favorites_user_stop ON transit_favorites (user_id, stop_id)",
                    "CREATE INDEX transit_favorites_stop ON transit_favorites (stop_id)",
                ]
            ),
            Migration(
                version: 2, name: "transit alert pushes", legacyVersion: 9,
                statements: [
                    // One row per version of an alert (its id and the fingerprint of its content):
                    // claimed by one node with a conditional update and a lease, processed once.
                    """
                    CREATE TABLE transit_alert_versions (
                        alert_id TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        alert TEXT NOT NULL,
                        status TEXT NOT NULL,
                        due_at BIGINT NOT NULL,
                        claimed_by TEXT,
                        lease_until BIGINT,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        matched_users INTEGER,
                        queued_users INTEGER,
                        created_at BIGINT NOT NULL,
                        finished_at BIGINT,
                        PRIMARY KEY (alert_id, fingerprint)
                    )
                    """,
                    "CREATE INDEX transit_alert_versions_due ON transit_alert_versions (status, due_at)",
                    "CREATE INDEX transit_alert_versions_alert ON transit_alert_versions (alert_id, created_at)",
                    // One row per user an alert version was sent to: the key that makes it once,
                    // written in the transaction that writes the notification.
                    """
                    CREATE TABLE transit_alert_pushes (
                        alert_id TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        notification_id TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        opened_at BIGINT,
                        PRIMARY KEY (alert_id, fingerprint, user_id)
                    )
                    """,
                    "CREATE INDEX transit_alert_pushes_user ON transit_alert_pushes (user_id, alert_id, created_at)",
                    // A user's timed mutes of a route or stop (MUTE_24H).
                    """
                    CREATE TABLE transit_alert_mutes (
                        user_id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        until_at BIGINT NOT NULL,
                        alert_id TEXT,
                        created_at BIGINT NOT NULL,
                        PRIMARY KEY (user_id, kind, entity_id)
                    )
                    """,
                    // Alerts quiet hours held back, to be summed up in one push when they end.
                    """
                    CREATE TABLE transit_alert_digests (
                        user_id TEXT NOT NULL,
                        alert_id TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        due_at BIGINT NOT NULL,
                        created_at BIGINT NOT NULL,
                        PRIMARY KEY (user_id, alert_id)
                    )
                    """,
                    "CREATE INDEX transit_alert_digests_due ON transit_alert_digests (due_at)",
                ]
            ),
            Migration(
                version: 3, name: "alert cooldown, route favourites, offline database",
                statements: [
                    // Whether a push sounded, and at what severity: the cooldown lets one version
                    // per rider sound within its window unless the alert escalates. Rows written
                    // before read as having sounded.
                    "ALTER TABLE transit_alert_pushes ADD COLUMN sounded INTEGER NOT NULL DEFAULT 1",
                    "ALTER TABLE transit_alert_pushes ADD COLUMN severity TEXT",
                    // A favourite is a stop (optionally narrowed to some of its routes, a JSON
                    // array in `route_ids`) or a whole route (`route_id`, with `stop_id` empty).
                    "ALTER TABLE transit_favorites ADD COLUMN route_id TEXT NOT NULL DEFAULT ''",
                    "ALTER TABLE transit_favorites ADD COLUMN route_ids TEXT",
                    "DROP INDEX transit_favorites_user_stop",
                    "CREATE UNIQUE INDEX transit_favorites_user_place ON transit_favorites (user_id, stop_id, route_id)",
                    "CREATE INDEX transit_favorites_route ON transit_favorites (route_id)",
                    // The app's offline database of each version (`OfflineDatabase`), made at
                    // import and kept in chunks like the feed's zip; its size and sha256 are what
                    // `/gtfs/version` announces.
                    "ALTER TABLE transit_feed_versions ADD COLUMN offline_size_bytes BIGINT",
                    "ALTER TABLE transit_feed_versions ADD COLUMN offline_sha256 TEXT",
                    """
                    CREATE TABLE transit_offline_files (
                        version_id TEXT NOT NULL,
                        chunk INTEGER NOT NULL,
                        bytes {BYTES} NOT NULL,
                        PRIMARY KEY (version_id, chunk)
                    )
                    """,
                ]
            ),
            Migration(
                version: 4, name: "transit fares v2",
                statements: [
                    // GTFS Fares v2's files as rows of a version (for SQL readers, like the other
                    // files; the timetable and its fares are built from the stored zip).
                    "ALTER TABLE transit_routes ADD COLUMN network_id TEXT",
                    """
                    CREATE TABLE transit_rider_categories (
                        version_id TEXT NOT NULL, rider_category_id TEXT NOT NULL, rider_category_name TEXT NOT NULL,
                        is_default_fare_category INTEGER NOT NULL, eligibility_url TEXT,
                        PRIMARY KEY (version_id, rider_category_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_fare_media (
                        version_id TEXT NOT NULL, fare_media_id TEXT NOT NULL, fare_media_name TEXT, fare_media_type INTEGER NOT NULL,
                        PRIMARY KEY (version_id, fare_media_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_fare_products (
                        version_id TEXT NOT NULL, fare_product_id TEXT NOT NULL, fare_product_name TEXT, rider_category_id TEXT,
                        fare_media_id TEXT, amount DOUBLE PRECISION NOT NULL, currency TEXT NOT NULL
                    )
                    """,
                    "CREATE INDEX transit_fare_products_version ON transit_fare_products (version_id, fare_product_id)",
                    """
                    CREATE TABLE transit_areas (
                        version_id TEXT NOT NULL, area_id TEXT NOT NULL, area_name TEXT,
                        PRIMARY KEY (version_id, area_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_stop_areas (
                        version_id TEXT NOT NULL, area_id TEXT NOT NULL, stop_id TEXT NOT NULL,
                        PRIMARY KEY (version_id, area_id, stop_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_networks (
                        version_id TEXT NOT NULL, network_id TEXT NOT NULL, network_name TEXT,
                        PRIMARY KEY (version_id, network_id)
                    )
                    """,
                    """
                    CREATE TABLE transit_route_networks (
                        version_id TEXT NOT NULL, network_id TEXT NOT NULL, route_id TEXT NOT NULL,
                        PRIMARY KEY (version_id, route_id)
                    )
                    """,
                    // Times in seconds since local midnight (0 to 86400).
                    """
                    CREATE TABLE transit_timeframes (
                        version_id TEXT NOT NULL, timeframe_group_id TEXT NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,
                        service_id TEXT NOT NULL
                    )
                    """,
                    "CREATE INDEX transit_timeframes_version ON transit_timeframes (version_id, timeframe_group_id)",
                    // rule_priority NULL: the file has no rule_priority column (empty fields then
                    // mean "every value no rule names").
                    """
                    CREATE TABLE transit_fare_leg_rules (
                        version_id TEXT NOT NULL, leg_group_id TEXT, network_id TEXT, from_area_id TEXT, to_area_id TEXT,
                        from_timeframe_group_id TEXT, to_timeframe_group_id TEXT, fare_product_id TEXT NOT NULL, rule_priority INTEGER
                    )
                    """,
                    "CREATE INDEX transit_fare_leg_rules_version ON transit_fare_leg_rules (version_id, network_id)",
                    """
                    CREATE TABLE transit_fare_leg_join_rules (
                        version_id TEXT NOT NULL, from_network_id TEXT NOT NULL, to_network_id TEXT NOT NULL, from_stop_id TEXT, to_stop_id TEXT
                    )
                    """,
                    "CREATE INDEX transit_fare_leg_join_rules_version ON transit_fare_leg_join_rules (version_id, from_network_id)",
                    """
                    CREATE TABLE transit_fare_transfer_rules (
                        version_id TEXT NOT NULL, from_leg_group_id TEXT, to_leg_group_id TEXT, transfer_count INTEGER, duration_limit INTEGER,
                        duration_limit_type INTEGER, fare_transfer_type INTEGER NOT NULL, fare_product_id TEXT
                    )
                    """,
                    "CREATE INDEX transit_fare_transfer_rules_version ON transit_fare_transfer_rules (version_id, from_leg_group_id)",
                ]
            ),
        ])
}
