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
        Migration(
            version: 4, name: "notifications",
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
            version: 5, name: "dispatch",
            statements: [
                // A driver is a user with a profile. The location columns hold the last position
                // written behind from memory (the spatial index is rebuilt from them at start);
                // `updated_at` is the watermark other nodes read changes from.
                """
                CREATE TABLE drivers (
                    user_id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    phone TEXT,
                    truck_type TEXT NOT NULL,
                    vehicle_description TEXT,
                    license_plate TEXT,
                    approval_status TEXT NOT NULL,
                    approval_reason TEXT,
                    approval_changed_at BIGINT,
                    approval_changed_by TEXT,
                    rating_total BIGINT NOT NULL DEFAULT 0,
                    rating_count BIGINT NOT NULL DEFAULT 0,
                    completed_jobs BIGINT NOT NULL DEFAULT 0,
                    online INTEGER NOT NULL DEFAULT 0,
                    online_changed_at BIGINT,
                    latitude DOUBLE PRECISION,
                    longitude DOUBLE PRECISION,
                    accuracy_m DOUBLE PRECISION,
                    heading DOUBLE PRECISION,
                    speed_mps DOUBLE PRECISION,
                    location_seq BIGINT,
                    location_at BIGINT,
                    location_client_at BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX drivers_updated_at ON drivers (updated_at)",
                "CREATE INDEX drivers_approval ON drivers (approval_status, online)",
                """
                CREATE TABLE jobs (
                    id TEXT PRIMARY KEY,
                    customer_id TEXT NOT NULL,
                    driver_id TEXT,
                    status TEXT NOT NULL,
                    address TEXT NOT NULL,
                    latitude DOUBLE PRECISION,
                    longitude DOUBLE PRECISION,
                    items TEXT NOT NULL,
                    volume_hundredths BIGINT,
                    scheduled_at BIGINT,
                    notes TEXT,
                    price_minor BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    price_lines TEXT NOT NULL,
                    offer_round INTEGER NOT NULL,
                    offer_radius_m BIGINT,
                    next_round_at BIGINT,
                    version BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    accepted_at BIGINT,
                    en_route_at BIGINT,
                    arrived_at BIGINT,
                    started_at BIGINT,
                    completed_at BIGINT,
                    cancelled_at BIGINT,
                    expired_at BIGINT,
                    cancelled_by TEXT,
                    cancel_reason TEXT
                )
                """,
                "CREATE INDEX jobs_customer ON jobs (customer_id, created_at)",
                "CREATE INDEX jobs_driver ON jobs (driver_id, status)",
                "CREATE INDEX jobs_due_round ON jobs (status, next_round_at)",
                "CREATE INDEX jobs_open_position ON jobs (status, latitude)",
                // Who was offered which job, in which round, how far away and by which channel.
                """
                CREATE TABLE job_offers (
                    job_id TEXT NOT NULL,
                    driver_id TEXT NOT NULL,
                    round INTEGER NOT NULL,
                    distance_m BIGINT,
                    channel TEXT NOT NULL,
                    notification_id TEXT,
                    offered_at BIGINT NOT NULL,
                    outcome TEXT,
                    PRIMARY KEY (job_id, driver_id)
                )
                """,
                "CREATE INDEX job_offers_driver ON job_offers (driver_id, offered_at)",
                // The audit trail of every status change.
                """
                CREATE TABLE job_events (
                    id TEXT PRIMARY KEY,
                    job_id TEXT NOT NULL,
                    from_status TEXT,
                    to_status TEXT NOT NULL,
                    actor_id TEXT,
                    actor_role TEXT NOT NULL,
                    reason TEXT,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX job_events_job ON job_events (job_id, created_at)",
            ]
        ),
        Migration(
            version: 6, name: "payments_and_adjustments",
            statements: [
                // The on-site volume adjustment (seed 001): at most one per job (the primary key
                // makes a second one fail), decided by one conditional update on `status`.
                """
                CREATE TABLE job_adjustments (
                    job_id TEXT PRIMARY KEY,
                    driver_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    automatic INTEGER NOT NULL,
                    original_volume_hundredths BIGINT,
                    actual_volume_hundredths BIGINT NOT NULL,
                    original_price_minor BIGINT NOT NULL,
                    new_price_minor BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    price_lines TEXT NOT NULL,
                    trip_fee_minor BIGINT,
                    deadline_at BIGINT,
                    extensions INTEGER NOT NULL DEFAULT 0,
                    expired_at BIGINT,
                    decided_at BIGINT,
                    decided_by TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX job_adjustments_due ON job_adjustments (status, deadline_at)",
                // Herald's view of each job's payment hold, and the provider call it still owes
                // (`pending_op`): a decision commits with it, so a crash or a provider outage
                // delays the call but never loses it.
                """
                CREATE TABLE payment_holds (
                    job_id TEXT PRIMARY KEY,
                    provider TEXT NOT NULL,
                    reference TEXT NOT NULL,
                    status TEXT NOT NULL,
                    authorized_minor BIGINT NOT NULL,
                    amount_minor BIGINT NOT NULL,
                    captured_minor BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    pending_op TEXT,
                    pending_amount_minor BIGINT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at BIGINT,
                    last_error TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX payment_holds_pending ON payment_holds (next_attempt_at)",
                // Every call Herald made to the payment provider, and how it ended.
                """
                CREATE TABLE payment_events (
                    id TEXT PRIMARY KEY,
                    job_id TEXT NOT NULL,
                    provider TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    amount_minor BIGINT,
                    outcome TEXT NOT NULL,
                    error_code TEXT,
                    idempotency_key TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX payment_events_job ON payment_events (job_id, created_at)",
                // The `ledger` provider's own book: holds and every entry against them, with
                // idempotency keys (a repeated call returns the first result).
                """
                CREATE TABLE ledger_holds (
                    reference TEXT PRIMARY KEY,
                    job_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    authorized_minor BIGINT NOT NULL,
                    amount_minor BIGINT NOT NULL,
                    captured_minor BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    payment_method TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE ledger_entries (
                    id TEXT PRIMARY KEY,
                    reference TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    amount_minor BIGINT NOT NULL,
                    idempotency_key TEXT NOT NULL UNIQUE,
                    result TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX ledger_entries_reference ON ledger_entries (reference, created_at)",
            ]
        ),
        Migration(
            version: 7, name: "trips",
            statements: [
                // A driver's car (seed 002: license, capacity, type); rides are offered only to
                // drivers whose vehicle carries the ride type and the passengers.
                """
                CREATE TABLE vehicles (
                    driver_id TEXT PRIMARY KEY,
                    make TEXT NOT NULL,
                    model TEXT NOT NULL,
                    color TEXT NOT NULL,
                    license_plate TEXT NOT NULL,
                    capacity INTEGER NOT NULL,
                    ride_types TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                // A rider's intent before matching: SEARCHING until a driver accepts (MATCHED),
                // the rider cancels or `expires_at` passes (EXPIRED). One conditional update on
                // `state` decides each of these.
                """
                CREATE TABLE ride_requests (
                    id TEXT PRIMARY KEY,
                    rider_id TEXT NOT NULL,
                    state TEXT NOT NULL,
                    pickup_latitude DOUBLE PRECISION NOT NULL,
                    pickup_longitude DOUBLE PRECISION NOT NULL,
                    pickup_address TEXT,
                    pickup_place_id TEXT,
                    dropoff_latitude DOUBLE PRECISION NOT NULL,
                    dropoff_longitude DOUBLE PRECISION NOT NULL,
                    dropoff_address TEXT,
                    dropoff_place_id TEXT,
                    ride_type TEXT NOT NULL,
                    passenger_count INTEGER NOT NULL,
                    payment_method_id TEXT,
                    distance_m BIGINT NOT NULL,
                    duration_s BIGINT NOT NULL,
                    fare_min_minor BIGINT NOT NULL,
                    fare_max_minor BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    surge_multiplier DOUBLE PRECISION NOT NULL,
                    surge_cell TEXT NOT NULL,
                    search_radius_m BIGINT NOT NULL,
                    offer_round INTEGER NOT NULL DEFAULT 0,
                    next_round_at BIGINT,
                    expires_at BIGINT NOT NULL,
                    trip_id TEXT,
                    driver_id TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX ride_requests_due ON ride_requests (state, next_round_at)",
                "CREATE INDEX ride_requests_cell ON ride_requests (surge_cell, state)",
                "CREATE INDEX ride_requests_rider ON ride_requests (rider_id, created_at)",
                """
                CREATE TABLE ride_offers (
                    request_id TEXT NOT NULL,
                    driver_id TEXT NOT NULL,
                    round INTEGER NOT NULL,
                    distance_m BIGINT,
                    offered_at BIGINT NOT NULL,
                    outcome TEXT,
                    PRIMARY KEY (request_id, driver_id)
                )
                """,
                // A matched ride. `version` is the ETag; `flags` counts fraud warnings for
                // operators. The latest position is the trail's newest shared sample.
                """
                CREATE TABLE trips (
                    id TEXT PRIMARY KEY,
                    request_id TEXT NOT NULL UNIQUE,
                    rider_id TEXT NOT NULL,
                    driver_id TEXT NOT NULL,
                    state TEXT NOT NULL,
                    version BIGINT NOT NULL,
                    pickup_latitude DOUBLE PRECISION NOT NULL,
                    pickup_longitude DOUBLE PRECISION NOT NULL,
                    pickup_address TEXT,
                    pickup_place_id TEXT,
                    dropoff_latitude DOUBLE PRECISION NOT NULL,
                    dropoff_longitude DOUBLE PRECISION NOT NULL,
                    dropoff_address TEXT,
                    dropoff_place_id TEXT,
                    ride_type TEXT NOT NULL,
                    passenger_count INTEGER NOT NULL,
                    distance_m BIGINT NOT NULL,
                    duration_s BIGINT NOT NULL,
                    fare_min_minor BIGINT NOT NULL,
                    fare_max_minor BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    surge_multiplier DOUBLE PRECISION NOT NULL,
                    flags INTEGER NOT NULL DEFAULT 0,
                    last_flag TEXT,
                    cancelled_by TEXT,
                    cancel_reason TEXT,
                    accepted_at BIGINT NOT NULL,
                    arrived_at BIGINT,
                    started_at BIGINT,
                    completed_at BIGINT,
                    cancelled_at BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                // A driver drives one trip at a time: a second accept cannot commit.
                "CREATE UNIQUE INDEX trips_driver_active ON trips (driver_id) WHERE state IN ('ACCEPTED', 'ARRIVED', 'IN_PROGRESS')",
                "CREATE INDEX trips_rider ON trips (rider_id, state)",
                """
                CREATE TABLE trip_events (
                    id TEXT PRIMARY KEY,
                    trip_id TEXT NOT NULL,
                    from_state TEXT NOT NULL,
                    to_state TEXT NOT NULL,
                    triggered_by TEXT NOT NULL,
                    actor_id TEXT,
                    context TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX trip_events_trip ON trip_events (trip_id, created_at)",
                // The audit trail: every sample taken during a trip, shared or not, with the
                // warning it raised.
                """
                CREATE TABLE trip_locations (
                    trip_id TEXT NOT NULL,
                    received_at BIGINT NOT NULL,
                    ordinal BIGINT NOT NULL,
                    sequence BIGINT,
                    latitude DOUBLE PRECISION NOT NULL,
                    longitude DOUBLE PRECISION NOT NULL,
                    accuracy_m DOUBLE PRECISION,
                    heading DOUBLE PRECISION,
                    speed_mps DOUBLE PRECISION,
                    altitude_m DOUBLE PRECISION,
                    battery_percent DOUBLE PRECISION,
                    is_charging INTEGER,
                    client_at BIGINT,
                    shared INTEGER NOT NULL,
                    warning TEXT,
                    PRIMARY KEY (trip_id, ordinal)
                )
                """,
                // A silent (content-available) push syncs an app's state and stays out of the inbox.
                "ALTER TABLE notifications ADD COLUMN silent INTEGER NOT NULL DEFAULT 0",
            ]
        ),
        Migration(
            version: 10, name: "driver location sessions",
            statements: [
                // The app session a driver's location sequence counts in: a restarted app counts
                // from 1 again under a new session id.
                "ALTER TABLE drivers ADD COLUMN location_session TEXT"
            ]
        ),
        Migration(
            version: 11, name: "quiet hours per notification type",
            statements: [
                // Seed 004's notification_preferences has quiet hours per type; they replace the
                // user's own window for that type (both null: the user's window applies).
                "ALTER TABLE notification_preferences ADD COLUMN quiet_start TEXT",
                "ALTER TABLE notification_preferences ADD COLUMN quiet_end TEXT",
            ]
        ),
        Migration(
            version: 12, name: "user phone",
            statements: [
                // E.164; shown to the driver assigned to the user's active job (seed 001's "call
                // the customer" when a price proposal goes unanswered).
                "ALTER TABLE users ADD COLUMN phone TEXT"
            ]
        ),
        Migration(
            version: 13, name: "trip fares and ratings",
            statements: [
                // Seed 002: the fare is final at COMPLETED, and each side rates the other once.
                "ALTER TABLE trips ADD COLUMN final_fare_minor BIGINT",
                "ALTER TABLE trips ADD COLUMN travelled_distance_m BIGINT",
                "ALTER TABLE trips ADD COLUMN travelled_duration_s BIGINT",
                "ALTER TABLE trips ADD COLUMN rider_rating INTEGER",
                "ALTER TABLE trips ADD COLUMN rider_comment TEXT",
                "ALTER TABLE trips ADD COLUMN driver_rating INTEGER",
                "ALTER TABLE trips ADD COLUMN driver_comment TEXT",
                // Riders' ratings by their drivers (drivers keep theirs on `drivers`).
                """
                CREATE TABLE rider_ratings (
                    user_id TEXT PRIMARY KEY,
                    rating_total BIGINT NOT NULL DEFAULT 0,
                    rating_count BIGINT NOT NULL DEFAULT 0
                )
                """,
            ]
        ),
        Migration(
            version: 14, name: "scheduled payment holds",
            statements: [
                // A job booked past an authorisation's lifetime takes its hold later (status
                // `scheduled`, owed call `authorize`): the card and customer to take it from.
                "ALTER TABLE payment_holds ADD COLUMN payment_method TEXT",
                "ALTER TABLE payment_holds ADD COLUMN customer_id TEXT",
            ]
        ),
    ]
}
