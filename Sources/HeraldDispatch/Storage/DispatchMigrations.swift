import HeraldStorage

/// Drivers, jobs, offers, price adjustments and payment holds. Append new migrations; never edit one that has shipped.
public enum DispatchMigrations {
    public static let set = MigrationSet(
        module: "dispatch",
        migrations: [
            Migration(
                version: 1, name: "dispatch", legacyVersion: 5,
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
                version: 2, name: "adjustments and payment holds", legacyVersion: 6,
                statements: [
                    // The on-site volume adjustment: at most one per job (the primary key
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
                ]
            ),
            Migration(
                version: 3, name: "driver location sessions", legacyVersion: 10,
                statements: [
                    // The app session a driver's location sequence counts in: a restarted app counts
                    // from 1 again under a new session id.
                    "ALTER TABLE drivers ADD COLUMN location_session TEXT"
                ]
            ),
            Migration(
                version: 4, name: "scheduled payment holds", legacyVersion: 14,
                statements: [
                    // A job booked past an authorisation's lifetime takes its hold later (status
                    // `scheduled`, owed call `authorize`): the card and customer to take it from.
                    "ALTER TABLE payment_holds ADD COLUMN payment_method TEXT",
                    "ALTER TABLE payment_holds ADD COLUMN customer_id TEXT",
                ]
            ),
            Migration(
                version: 5, name: "driver photo",
                statements: [
                    // An https URL of the driver's photo, shown to the rider or customer of their trip or job.
                    "ALTER TABLE drivers ADD COLUMN photo_url TEXT"
                ]
            ),
        ])
}
