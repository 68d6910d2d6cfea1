import HeraldStorage

/// Vehicles, ride requests, trips and their location trail. Append new migrations; never edit one that has shipped.
public enum TripMigrations {
    public static let set = MigrationSet(
        module: "trips",
        migrations: [
            Migration(
                version: 1, name: "trips", legacyVersion: 7,
                statements: [
                    // A driver's car (license, capacity, type); rides are offered only to
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
                ]
            ),
            Migration(
                version: 2, name: "trip fares and ratings", legacyVersion: 13,
                statements: [
                    // The fare is final at COMPLETED, and each side rates the other once.
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
                version: 3, name: "trip history",
                statements: [
                    // Each user's trips and requests, newest first (`GET /trips`, `GET /ride-requests`).
                    "CREATE INDEX trips_rider_created ON trips (rider_id, created_at)",
                    "CREATE INDEX trips_driver_created ON trips (driver_id, created_at)",
                ]
            ),
        ])
}
