--
-- PostgreSQL database dump
--

\restrict A64jnpNUGjZQzW5yiUAKZU7hMhsGWkLciu21NMy57WcHWXXqjEbyQ8bDakSI1Fi

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: drivers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.drivers (
    user_id text NOT NULL,
    name text NOT NULL,
    phone text,
    truck_type text NOT NULL,
    vehicle_description text,
    license_plate text,
    approval_status text NOT NULL,
    approval_reason text,
    approval_changed_at bigint,
    approval_changed_by text,
    rating_total bigint DEFAULT 0 NOT NULL,
    rating_count bigint DEFAULT 0 NOT NULL,
    completed_jobs bigint DEFAULT 0 NOT NULL,
    online integer DEFAULT 0 NOT NULL,
    online_changed_at bigint,
    latitude double precision,
    longitude double precision,
    accuracy_m double precision,
    heading double precision,
    speed_mps double precision,
    location_seq bigint,
    location_at bigint,
    location_client_at bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    location_session text
);


--
-- Name: herald_schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.herald_schema_migrations (
    version bigint NOT NULL,
    name text NOT NULL,
    applied_at bigint NOT NULL
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    scope text NOT NULL,
    idem_key text NOT NULL,
    request_hash text NOT NULL,
    state text NOT NULL,
    status_code integer,
    response_headers text,
    response_body text,
    locked_at bigint NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: job_adjustments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.job_adjustments (
    job_id text NOT NULL,
    driver_id text NOT NULL,
    customer_id text NOT NULL,
    status text NOT NULL,
    automatic integer NOT NULL,
    original_volume_hundredths bigint,
    actual_volume_hundredths bigint NOT NULL,
    original_price_minor bigint NOT NULL,
    new_price_minor bigint NOT NULL,
    currency text NOT NULL,
    price_lines text NOT NULL,
    trip_fee_minor bigint,
    deadline_at bigint,
    extensions integer DEFAULT 0 NOT NULL,
    expired_at bigint,
    decided_at bigint,
    decided_by text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: job_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.job_events (
    id text NOT NULL,
    job_id text NOT NULL,
    from_status text,
    to_status text NOT NULL,
    actor_id text,
    actor_role text NOT NULL,
    reason text,
    created_at bigint NOT NULL
);


--
-- Name: job_offers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.job_offers (
    job_id text NOT NULL,
    driver_id text NOT NULL,
    round integer NOT NULL,
    distance_m bigint,
    channel text NOT NULL,
    notification_id text,
    offered_at bigint NOT NULL,
    outcome text
);


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id text NOT NULL,
    customer_id text NOT NULL,
    driver_id text,
    status text NOT NULL,
    address text NOT NULL,
    latitude double precision,
    longitude double precision,
    items text NOT NULL,
    volume_hundredths bigint,
    scheduled_at bigint,
    notes text,
    price_minor bigint NOT NULL,
    currency text NOT NULL,
    price_lines text NOT NULL,
    offer_round integer NOT NULL,
    offer_radius_m bigint,
    next_round_at bigint,
    version bigint NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    accepted_at bigint,
    en_route_at bigint,
    arrived_at bigint,
    started_at bigint,
    completed_at bigint,
    cancelled_at bigint,
    expired_at bigint,
    cancelled_by text,
    cancel_reason text
);


--
-- Name: ledger_entries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_entries (
    id text NOT NULL,
    reference text NOT NULL,
    operation text NOT NULL,
    amount_minor bigint NOT NULL,
    idempotency_key text NOT NULL,
    result text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: ledger_holds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_holds (
    reference text NOT NULL,
    job_id text NOT NULL,
    customer_id text NOT NULL,
    status text NOT NULL,
    authorized_minor bigint NOT NULL,
    amount_minor bigint NOT NULL,
    captured_minor bigint NOT NULL,
    currency text NOT NULL,
    payment_method text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: notification_dedupe; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_dedupe (
    user_id text NOT NULL,
    dedupe_key text NOT NULL,
    notification_id text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: notification_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_deliveries (
    id text NOT NULL,
    notification_id text NOT NULL,
    user_id text NOT NULL,
    channel text NOT NULL,
    device_id text,
    provider text,
    status text NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at bigint NOT NULL,
    lease_until bigint,
    provider_message_id text,
    reason text,
    latency_ms integer,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    completed_at bigint
);


--
-- Name: notification_preferences; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_preferences (
    user_id text NOT NULL,
    type text NOT NULL,
    in_app_enabled integer NOT NULL,
    push_enabled integer NOT NULL,
    updated_at bigint NOT NULL,
    quiet_start text,
    quiet_end text
);


--
-- Name: notification_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_settings (
    user_id text NOT NULL,
    quiet_hours_enabled integer NOT NULL,
    quiet_start text,
    quiet_end text,
    severity_floor text NOT NULL,
    time_sensitive_allowed integer NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: notifications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notifications (
    id text NOT NULL,
    user_id text NOT NULL,
    type text NOT NULL,
    severity text NOT NULL,
    delivery text NOT NULL,
    title text NOT NULL,
    body text,
    data text NOT NULL,
    category text,
    thread_id text,
    collapse_key text,
    dedupe_key text,
    interruption_level text,
    expires_at bigint,
    created_at bigint NOT NULL,
    read_at bigint,
    deleted_at bigint,
    sent_via text,
    push_suppressed text,
    silent integer DEFAULT 0 NOT NULL
);


--
-- Name: payment_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payment_events (
    id text NOT NULL,
    job_id text NOT NULL,
    provider text NOT NULL,
    operation text NOT NULL,
    amount_minor bigint,
    outcome text NOT NULL,
    error_code text,
    idempotency_key text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: payment_holds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payment_holds (
    job_id text NOT NULL,
    provider text NOT NULL,
    reference text NOT NULL,
    status text NOT NULL,
    authorized_minor bigint NOT NULL,
    amount_minor bigint NOT NULL,
    captured_minor bigint NOT NULL,
    currency text NOT NULL,
    pending_op text,
    pending_amount_minor bigint,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at bigint,
    last_error text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    payment_method text,
    customer_id text
);


--
-- Name: push_devices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_devices (
    id text NOT NULL,
    user_id text NOT NULL,
    provider text NOT NULL,
    token text NOT NULL,
    platform text NOT NULL,
    device_id text,
    app_version text,
    os_version text,
    locale text,
    user_agent text,
    webpush_p256dh text,
    webpush_auth text,
    created_at bigint NOT NULL,
    last_used_at bigint NOT NULL,
    deactivated_at bigint,
    deactivation_reason text
);


--
-- Name: realtime_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.realtime_events (
    room text NOT NULL,
    seq bigint NOT NULL,
    event text NOT NULL,
    payload text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: realtime_nodes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.realtime_nodes (
    node_id text NOT NULL,
    heartbeat_at bigint NOT NULL
);


--
-- Name: realtime_presence; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.realtime_presence (
    node_id text NOT NULL,
    user_id text NOT NULL,
    connections integer NOT NULL
);


--
-- Name: realtime_rooms; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.realtime_rooms (
    room text NOT NULL,
    last_seq bigint NOT NULL
);


--
-- Name: realtime_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.realtime_sessions (
    pid text NOT NULL,
    user_id text,
    namespace text NOT NULL,
    rooms text NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: ride_offers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ride_offers (
    request_id text NOT NULL,
    driver_id text NOT NULL,
    round integer NOT NULL,
    distance_m bigint,
    offered_at bigint NOT NULL,
    outcome text
);


--
-- Name: ride_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ride_requests (
    id text NOT NULL,
    rider_id text NOT NULL,
    state text NOT NULL,
    pickup_latitude double precision NOT NULL,
    pickup_longitude double precision NOT NULL,
    pickup_address text,
    pickup_place_id text,
    dropoff_latitude double precision NOT NULL,
    dropoff_longitude double precision NOT NULL,
    dropoff_address text,
    dropoff_place_id text,
    ride_type text NOT NULL,
    passenger_count integer NOT NULL,
    payment_method_id text,
    distance_m bigint NOT NULL,
    duration_s bigint NOT NULL,
    fare_min_minor bigint NOT NULL,
    fare_max_minor bigint NOT NULL,
    currency text NOT NULL,
    surge_multiplier double precision NOT NULL,
    surge_cell text NOT NULL,
    search_radius_m bigint NOT NULL,
    offer_round integer DEFAULT 0 NOT NULL,
    next_round_at bigint,
    expires_at bigint NOT NULL,
    trip_id text,
    driver_id text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: rider_ratings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rider_ratings (
    user_id text NOT NULL,
    rating_total bigint DEFAULT 0 NOT NULL,
    rating_count bigint DEFAULT 0 NOT NULL
);


--
-- Name: transit_agencies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_agencies (
    version_id text NOT NULL,
    agency_id text,
    agency_name text NOT NULL,
    agency_url text NOT NULL,
    agency_timezone text NOT NULL,
    agency_lang text,
    agency_phone text
);


--
-- Name: transit_alert_digests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_alert_digests (
    user_id text NOT NULL,
    alert_id text NOT NULL,
    fingerprint text NOT NULL,
    due_at bigint NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: transit_alert_mutes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_alert_mutes (
    user_id text NOT NULL,
    kind text NOT NULL,
    entity_id text NOT NULL,
    until_at bigint NOT NULL,
    alert_id text,
    created_at bigint NOT NULL
);


--
-- Name: transit_alert_pushes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_alert_pushes (
    alert_id text NOT NULL,
    fingerprint text NOT NULL,
    user_id text NOT NULL,
    notification_id text NOT NULL,
    created_at bigint NOT NULL,
    opened_at bigint
);


--
-- Name: transit_alert_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_alert_versions (
    alert_id text NOT NULL,
    fingerprint text NOT NULL,
    alert text NOT NULL,
    status text NOT NULL,
    due_at bigint NOT NULL,
    claimed_by text,
    lease_until bigint,
    attempts integer DEFAULT 0 NOT NULL,
    matched_users integer,
    queued_users integer,
    created_at bigint NOT NULL,
    finished_at bigint
);


--
-- Name: transit_alerts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_alerts (
    id text NOT NULL,
    severity text NOT NULL,
    header text NOT NULL,
    description text,
    cause text NOT NULL,
    effect text NOT NULL,
    url text,
    affected_routes text NOT NULL,
    affected_stops text NOT NULL,
    active_start bigint,
    active_end bigint,
    created_by text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: transit_calendar; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_calendar (
    version_id text NOT NULL,
    service_id text NOT NULL,
    monday integer NOT NULL,
    tuesday integer NOT NULL,
    wednesday integer NOT NULL,
    thursday integer NOT NULL,
    friday integer NOT NULL,
    saturday integer NOT NULL,
    sunday integer NOT NULL,
    start_date text NOT NULL,
    end_date text NOT NULL
);


--
-- Name: transit_calendar_dates; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_calendar_dates (
    version_id text NOT NULL,
    service_id text NOT NULL,
    date text NOT NULL,
    exception_type integer NOT NULL
);


--
-- Name: transit_fare_attributes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_fare_attributes (
    version_id text NOT NULL,
    fare_id text NOT NULL,
    price double precision NOT NULL,
    currency_type text NOT NULL,
    payment_method integer NOT NULL,
    transfers integer,
    agency_id text,
    transfer_duration integer
);


--
-- Name: transit_fare_rules; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_fare_rules (
    version_id text NOT NULL,
    fare_id text NOT NULL,
    route_id text,
    origin_id text,
    destination_id text,
    contains_id text
);


--
-- Name: transit_favorites; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_favorites (
    id text NOT NULL,
    user_id text NOT NULL,
    stop_id text NOT NULL,
    label text,
    sort_order integer NOT NULL,
    notifications_enabled integer DEFAULT 1 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: transit_feed_files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_feed_files (
    version_id text NOT NULL,
    chunk integer NOT NULL,
    bytes bytea NOT NULL
);


--
-- Name: transit_feed_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_feed_versions (
    id text NOT NULL,
    feed_name text NOT NULL,
    version text NOT NULL,
    sha256 text NOT NULL,
    size_bytes bigint NOT NULL,
    status text NOT NULL,
    source text,
    row_count bigint DEFAULT 0 NOT NULL,
    stop_time_count bigint DEFAULT 0 NOT NULL,
    report text,
    imported_at bigint NOT NULL,
    activated_at bigint
);


--
-- Name: transit_feeds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_feeds (
    name text NOT NULL,
    active_version text,
    source_url text,
    etag text,
    last_modified text,
    next_check_at bigint DEFAULT 0 NOT NULL,
    checked_at bigint,
    last_error text,
    import_lease_until bigint,
    import_id text,
    updated_at bigint NOT NULL
);


--
-- Name: transit_frequencies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_frequencies (
    version_id text NOT NULL,
    trip_id text NOT NULL,
    start_time integer NOT NULL,
    end_time integer NOT NULL,
    headway_secs integer NOT NULL,
    exact_times integer NOT NULL
);


--
-- Name: transit_imports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_imports (
    id text NOT NULL,
    feed_name text NOT NULL,
    status text NOT NULL,
    source text NOT NULL,
    version_id text,
    report text,
    error text,
    requested_by text,
    created_at bigint NOT NULL,
    finished_at bigint
);


--
-- Name: transit_realtime_feeds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_realtime_feeds (
    source text NOT NULL,
    feed_name text NOT NULL,
    payload bytea,
    feed_timestamp bigint,
    received_at bigint,
    etag text,
    last_modified text,
    next_poll_at bigint DEFAULT 0 NOT NULL,
    last_error text,
    updated_at bigint NOT NULL
);


--
-- Name: transit_routes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_routes (
    version_id text NOT NULL,
    route_id text NOT NULL,
    agency_id text,
    route_short_name text,
    route_long_name text,
    route_desc text,
    route_type integer NOT NULL,
    route_url text,
    route_color text,
    route_text_color text,
    route_sort_order integer
);


--
-- Name: transit_shapes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_shapes (
    version_id text NOT NULL,
    shape_id text NOT NULL,
    shape_pt_sequence integer NOT NULL,
    shape_pt_lat double precision NOT NULL,
    shape_pt_lon double precision NOT NULL,
    shape_dist_traveled double precision
);


--
-- Name: transit_stop_times; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_stop_times (
    version_id text NOT NULL,
    trip_id text NOT NULL,
    stop_sequence integer NOT NULL,
    stop_id text NOT NULL,
    arrival_time integer,
    departure_time integer,
    stop_headsign text,
    pickup_type integer NOT NULL,
    drop_off_type integer NOT NULL,
    shape_dist_traveled double precision,
    timepoint integer
);


--
-- Name: transit_stops; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_stops (
    version_id text NOT NULL,
    stop_id text NOT NULL,
    stop_code text,
    stop_name text,
    stop_desc text,
    stop_lat double precision,
    stop_lon double precision,
    zone_id text,
    stop_url text,
    location_type integer NOT NULL,
    parent_station text,
    stop_timezone text,
    wheelchair_boarding integer NOT NULL,
    level_id text,
    platform_code text
);


--
-- Name: transit_transfers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_transfers (
    version_id text NOT NULL,
    from_stop_id text,
    to_stop_id text,
    from_route_id text,
    to_route_id text,
    from_trip_id text,
    to_trip_id text,
    transfer_type integer NOT NULL,
    min_transfer_time integer
);


--
-- Name: transit_trips; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transit_trips (
    version_id text NOT NULL,
    trip_id text NOT NULL,
    route_id text NOT NULL,
    service_id text NOT NULL,
    trip_headsign text,
    trip_short_name text,
    direction_id integer,
    block_id text,
    shape_id text,
    wheelchair_accessible integer NOT NULL,
    bikes_allowed integer NOT NULL
);


--
-- Name: trip_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.trip_events (
    id text NOT NULL,
    trip_id text NOT NULL,
    from_state text NOT NULL,
    to_state text NOT NULL,
    triggered_by text NOT NULL,
    actor_id text,
    context text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: trip_locations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.trip_locations (
    trip_id text NOT NULL,
    received_at bigint NOT NULL,
    ordinal bigint NOT NULL,
    sequence bigint,
    latitude double precision NOT NULL,
    longitude double precision NOT NULL,
    accuracy_m double precision,
    heading double precision,
    speed_mps double precision,
    altitude_m double precision,
    battery_percent double precision,
    is_charging integer,
    client_at bigint,
    shared integer NOT NULL,
    warning text
);


--
-- Name: trips; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.trips (
    id text NOT NULL,
    request_id text NOT NULL,
    rider_id text NOT NULL,
    driver_id text NOT NULL,
    state text NOT NULL,
    version bigint NOT NULL,
    pickup_latitude double precision NOT NULL,
    pickup_longitude double precision NOT NULL,
    pickup_address text,
    pickup_place_id text,
    dropoff_latitude double precision NOT NULL,
    dropoff_longitude double precision NOT NULL,
    dropoff_address text,
    dropoff_place_id text,
    ride_type text NOT NULL,
    passenger_count integer NOT NULL,
    distance_m bigint NOT NULL,
    duration_s bigint NOT NULL,
    fare_min_minor bigint NOT NULL,
    fare_max_minor bigint NOT NULL,
    currency text NOT NULL,
    surge_multiplier double precision NOT NULL,
    flags integer DEFAULT 0 NOT NULL,
    last_flag text,
    cancelled_by text,
    cancel_reason text,
    accepted_at bigint NOT NULL,
    arrived_at bigint,
    started_at bigint,
    completed_at bigint,
    cancelled_at bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    final_fare_minor bigint,
    travelled_distance_m bigint,
    travelled_duration_s bigint,
    rider_rating integer,
    rider_comment text,
    driver_rating integer,
    driver_comment text
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id text NOT NULL,
    role text NOT NULL,
    display_name text,
    locale text,
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    phone text
);


--
-- Name: vehicles; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.vehicles (
    driver_id text NOT NULL,
    make text NOT NULL,
    model text NOT NULL,
    color text NOT NULL,
    license_plate text NOT NULL,
    capacity integer NOT NULL,
    ride_types text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Data for Name: drivers; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.drivers VALUES ('drivers.user_id.1', 'drivers.name.1', 'drivers.phone.1', 'drivers.truck_type.1', 'drivers.vehicle_description.1', 'drivers.license_plate.1', 'drivers.approval_status.1', 'drivers.approval_reason.1', 1759, 'drivers.approval_changed_by.1', 1061, 1066, 1255, 1415, 1535, 8.375, 11.125, 9.5, 2, 9.75, 1054, 1935, 1672, 1806, 1821, 'drivers.location_session.1');
INSERT INTO public.drivers VALUES ('drivers.user_id.2', 'drivers.name.2', 'drivers.phone.2', 'drivers.truck_type.2', 'drivers.vehicle_description.2', 'drivers.license_plate.2', 'drivers.approval_status.2', 'drivers.approval_reason.2', 2759, 'drivers.approval_changed_by.2', 2061, 2066, 2255, 2415, 2535, 9.375, 12.125, 10.5, 3, 10.75, 2054, 2935, 2672, 2806, 2821, 'drivers.location_session.2');


--
-- Data for Name: herald_schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.herald_schema_migrations VALUES (1, 'users', 1795751845275);
INSERT INTO public.herald_schema_migrations VALUES (2, 'idempotency_keys', 1795751845285);
INSERT INTO public.herald_schema_migrations VALUES (3, 'realtime', 1795751845309);
INSERT INTO public.herald_schema_migrations VALUES (4, 'notifications', 1795751845345);
INSERT INTO public.herald_schema_migrations VALUES (5, 'dispatch', 1795751845376);
INSERT INTO public.herald_schema_migrations VALUES (6, 'payments_and_adjustments', 1795751845403);
INSERT INTO public.herald_schema_migrations VALUES (7, 'trips', 1795751845438);
INSERT INTO public.herald_schema_migrations VALUES (8, 'transit', 1795751845583);
INSERT INTO public.herald_schema_migrations VALUES (9, 'transit alert pushes', 1795751845611);
INSERT INTO public.herald_schema_migrations VALUES (10, 'driver location sessions', 1795751845617);
INSERT INTO public.herald_schema_migrations VALUES (11, 'quiet hours per notification type', 1795751845631);
INSERT INTO public.herald_schema_migrations VALUES (12, 'user phone', 1795751845638);
INSERT INTO public.herald_schema_migrations VALUES (13, 'trip fares and ratings', 1795751845653);
INSERT INTO public.herald_schema_migrations VALUES (14, 'scheduled payment holds', 1795751845661);


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.idempotency_keys VALUES ('idempotency_keys.scope.1', 'idempotency_keys.idem_key.1', 'idempotency_keys.request_hash.1', 'idempotency_keys.state.1', 1912, 'idempotency_keys.response_headers.1', 'idempotency_keys.response_body.1', 1664, 1766, 1806);
INSERT INTO public.idempotency_keys VALUES ('idempotency_keys.scope.2', 'idempotency_keys.idem_key.2', 'idempotency_keys.request_hash.2', 'idempotency_keys.state.2', 2912, 'idempotency_keys.response_headers.2', 'idempotency_keys.response_body.2', 2664, 2766, 2806);


--
-- Data for Name: job_adjustments; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.job_adjustments VALUES ('job_adjustments.job_id.1', 'job_adjustments.driver_id.1', 'job_adjustments.customer_id.1', 'job_adjustments.status.1', 1585, 1412, 1193, 1744, 1221, 'job_adjustments.currency.1', 'job_adjustments.price_lines.1', 1111, 1748, 1722, 1679, 1632, 'job_adjustments.decided_by.1', 1654, 1669);
INSERT INTO public.job_adjustments VALUES ('job_adjustments.job_id.2', 'job_adjustments.driver_id.2', 'job_adjustments.customer_id.2', 'job_adjustments.status.2', 2585, 2412, 2193, 2744, 2221, 'job_adjustments.currency.2', 'job_adjustments.price_lines.2', 2111, 2748, 2722, 2679, 2632, 'job_adjustments.decided_by.2', 2654, 2669);


--
-- Data for Name: job_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.job_events VALUES ('job_events.id.1', 'job_events.job_id.1', 'job_events.from_status.1', 'job_events.to_status.1', 'job_events.actor_id.1', 'job_events.actor_role.1', 'job_events.reason.1', 1113);
INSERT INTO public.job_events VALUES ('job_events.id.2', 'job_events.job_id.2', 'job_events.from_status.2', 'job_events.to_status.2', 'job_events.actor_id.2', 'job_events.actor_role.2', 'job_events.reason.2', 2113);


--
-- Data for Name: job_offers; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.job_offers VALUES ('job_offers.job_id.1', 'job_offers.driver_id.1', 1610, 1108, 'job_offers.channel.1', 'job_offers.notification_id.1', 1100, 'job_offers.outcome.1');
INSERT INTO public.job_offers VALUES ('job_offers.job_id.2', 'job_offers.driver_id.2', 2610, 2108, 'job_offers.channel.2', 'job_offers.notification_id.2', 2100, 'job_offers.outcome.2');


--
-- Data for Name: jobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.jobs VALUES ('jobs.id.1', 'jobs.customer_id.1', 'jobs.driver_id.1', 'jobs.status.1', 'jobs.address.1', 8.375, 11.125, 'jobs.items.1', 1276, 1686, 'jobs.notes.1', 1608, 'jobs.currency.1', 'jobs.price_lines.1', 1610, 1910, 1835, 1207, 1469, 1484, 1566, 1606, 1490, 1500, 1698, 1664, 1494, 'jobs.cancelled_by.1', 'jobs.cancel_reason.1');
INSERT INTO public.jobs VALUES ('jobs.id.2', 'jobs.customer_id.2', 'jobs.driver_id.2', 'jobs.status.2', 'jobs.address.2', 9.375, 12.125, 'jobs.items.2', 2276, 2686, 'jobs.notes.2', 2608, 'jobs.currency.2', 'jobs.price_lines.2', 2610, 2910, 2835, 2207, 2469, 2484, 2566, 2606, 2490, 2500, 2698, 2664, 2494, 'jobs.cancelled_by.2', 'jobs.cancel_reason.2');


--
-- Data for Name: ledger_entries; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ledger_entries VALUES ('ledger_entries.id.1', 'ledger_entries.reference.1', 'ledger_entries.operation.1', 1794, 'ledger_entries.idempotency_key.1', 'ledger_entries.result.1', 1526);
INSERT INTO public.ledger_entries VALUES ('ledger_entries.id.2', 'ledger_entries.reference.2', 'ledger_entries.operation.2', 2794, 'ledger_entries.idempotency_key.2', 'ledger_entries.result.2', 2526);


--
-- Data for Name: ledger_holds; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ledger_holds VALUES ('ledger_holds.reference.1', 'ledger_holds.job_id.1', 'ledger_holds.customer_id.1', 'ledger_holds.status.1', 1000, 1570, 1766, 'ledger_holds.currency.1', 'ledger_holds.payment_method.1', 1302, 1317);
INSERT INTO public.ledger_holds VALUES ('ledger_holds.reference.2', 'ledger_holds.job_id.2', 'ledger_holds.customer_id.2', 'ledger_holds.status.2', 2000, 2570, 2766, 'ledger_holds.currency.2', 'ledger_holds.payment_method.2', 2302, 2317);


--
-- Data for Name: notification_dedupe; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.notification_dedupe VALUES ('notification_dedupe.user_id.1', 'notification_dedupe.dedupe_key.1', 'notification_dedupe.notification_id.1', 1058);
INSERT INTO public.notification_dedupe VALUES ('notification_dedupe.user_id.2', 'notification_dedupe.dedupe_key.2', 'notification_dedupe.notification_id.2', 2058);


--
-- Data for Name: notification_deliveries; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.notification_deliveries VALUES ('notification_deliveries.id.1', 'notification_deliveries.notification_id.1', 'notification_deliveries.user_id.1', 'notification_deliveries.channel.1', 'notification_deliveries.device_id.1', 'notification_deliveries.provider.1', 'notification_deliveries.status.1', 1341, 1079, 1632, 'notification_deliveries.provider_message_id.1', 'notification_deliveries.reason.1', 1530, 1495, 1510, 1724);
INSERT INTO public.notification_deliveries VALUES ('notification_deliveries.id.2', 'notification_deliveries.notification_id.2', 'notification_deliveries.user_id.2', 'notification_deliveries.channel.2', 'notification_deliveries.device_id.2', 'notification_deliveries.provider.2', 'notification_deliveries.status.2', 2341, 2079, 2632, 'notification_deliveries.provider_message_id.2', 'notification_deliveries.reason.2', 2530, 2495, 2510, 2724);


--
-- Data for Name: notification_preferences; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.notification_preferences VALUES ('notification_preferences.user_id.1', 'notification_preferences.type.1', 1005, 1819, 1612, 'notification_preferences.quiet_start.1', 'notification_preferences.quiet_end.1');
INSERT INTO public.notification_preferences VALUES ('notification_preferences.user_id.2', 'notification_preferences.type.2', 2005, 2819, 2612, 'notification_preferences.quiet_start.2', 'notification_preferences.quiet_end.2');


--
-- Data for Name: notification_settings; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.notification_settings VALUES ('notification_settings.user_id.1', 1293, 'notification_settings.quiet_start.1', 'notification_settings.quiet_end.1', 'notification_settings.severity_floor.1', 1626, 1323);
INSERT INTO public.notification_settings VALUES ('notification_settings.user_id.2', 2293, 'notification_settings.quiet_start.2', 'notification_settings.quiet_end.2', 'notification_settings.severity_floor.2', 2626, 2323);


--
-- Data for Name: notifications; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.notifications VALUES ('notifications.id.1', 'notifications.user_id.1', 'notifications.type.1', 'notifications.severity.1', 'notifications.delivery.1', 'notifications.title.1', 'notifications.body.1', 'notifications.data.1', 'notifications.category.1', 'notifications.thread_id.1', 'notifications.collapse_key.1', 'notifications.dedupe_key.1', 'notifications.interruption_level.1', 1484, 1444, 1128, 1443, 'notifications.sent_via.1', 'notifications.push_suppressed.1', 1063);
INSERT INTO public.notifications VALUES ('notifications.id.2', 'notifications.user_id.2', 'notifications.type.2', 'notifications.severity.2', 'notifications.delivery.2', 'notifications.title.2', 'notifications.body.2', 'notifications.data.2', 'notifications.category.2', 'notifications.thread_id.2', 'notifications.collapse_key.2', 'notifications.dedupe_key.2', 'notifications.interruption_level.2', 2484, 2444, 2128, 2443, 'notifications.sent_via.2', 'notifications.push_suppressed.2', 2063);


--
-- Data for Name: payment_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.payment_events VALUES ('payment_events.id.1', 'payment_events.job_id.1', 'payment_events.provider.1', 'payment_events.operation.1', 1832, 'payment_events.outcome.1', 'payment_events.error_code.1', 'payment_events.idempotency_key.1', 1564);
INSERT INTO public.payment_events VALUES ('payment_events.id.2', 'payment_events.job_id.2', 'payment_events.provider.2', 'payment_events.operation.2', 2832, 'payment_events.outcome.2', 'payment_events.error_code.2', 'payment_events.idempotency_key.2', 2564);


--
-- Data for Name: payment_holds; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.payment_holds VALUES ('payment_holds.job_id.1', 'payment_holds.provider.1', 'payment_holds.reference.1', 'payment_holds.status.1', 1139, 1709, 1905, 'payment_holds.currency.1', 'payment_holds.pending_op.1', 1548, 1287, 1025, 'payment_holds.last_error.1', 1441, 1456, 'payment_holds.payment_method.1', 'payment_holds.customer_id.1');
INSERT INTO public.payment_holds VALUES ('payment_holds.job_id.2', 'payment_holds.provider.2', 'payment_holds.reference.2', 'payment_holds.status.2', 2139, 2709, 2905, 'payment_holds.currency.2', 'payment_holds.pending_op.2', 2548, 2287, 2025, 'payment_holds.last_error.2', 2441, 2456, 'payment_holds.payment_method.2', 'payment_holds.customer_id.2');


--
-- Data for Name: push_devices; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.push_devices VALUES ('push_devices.id.1', 'push_devices.user_id.1', 'push_devices.provider.1', 'push_devices.token.1', 'push_devices.platform.1', 'push_devices.device_id.1', 'push_devices.app_version.1', 'push_devices.os_version.1', 'push_devices.locale.1', 'push_devices.user_agent.1', 'push_devices.webpush_p256dh.1', 'push_devices.webpush_auth.1', 1324, 1560, 1746, 'push_devices.deactivation_reason.1');
INSERT INTO public.push_devices VALUES ('push_devices.id.2', 'push_devices.user_id.2', 'push_devices.provider.2', 'push_devices.token.2', 'push_devices.platform.2', 'push_devices.device_id.2', 'push_devices.app_version.2', 'push_devices.os_version.2', 'push_devices.locale.2', 'push_devices.user_agent.2', 'push_devices.webpush_p256dh.2', 'push_devices.webpush_auth.2', 2324, 2560, 2746, 'push_devices.deactivation_reason.2');


--
-- Data for Name: realtime_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.realtime_events VALUES ('realtime_events.room.1', 1939, 'realtime_events.event.1', 'realtime_events.payload.1', 1649);
INSERT INTO public.realtime_events VALUES ('realtime_events.room.2', 2939, 'realtime_events.event.2', 'realtime_events.payload.2', 2649);


--
-- Data for Name: realtime_nodes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.realtime_nodes VALUES ('realtime_nodes.node_id.1', 1741);
INSERT INTO public.realtime_nodes VALUES ('realtime_nodes.node_id.2', 2741);


--
-- Data for Name: realtime_presence; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.realtime_presence VALUES ('realtime_presence.node_id.1', 'realtime_presence.user_id.1', 1992);
INSERT INTO public.realtime_presence VALUES ('realtime_presence.node_id.2', 'realtime_presence.user_id.2', 2992);


--
-- Data for Name: realtime_rooms; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.realtime_rooms VALUES ('realtime_rooms.room.1', 1372);
INSERT INTO public.realtime_rooms VALUES ('realtime_rooms.room.2', 2372);


--
-- Data for Name: realtime_sessions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.realtime_sessions VALUES ('realtime_sessions.pid.1', 'realtime_sessions.user_id.1', 'realtime_sessions.namespace.1', 'realtime_sessions.rooms.1', 1890);
INSERT INTO public.realtime_sessions VALUES ('realtime_sessions.pid.2', 'realtime_sessions.user_id.2', 'realtime_sessions.namespace.2', 'realtime_sessions.rooms.2', 2890);


--
-- Data for Name: ride_offers; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ride_offers VALUES ('ride_offers.request_id.1', 'ride_offers.driver_id.1', 1715, 1213, 1205, 'ride_offers.outcome.1');
INSERT INTO public.ride_offers VALUES ('ride_offers.request_id.2', 'ride_offers.driver_id.2', 2715, 2213, 2205, 'ride_offers.outcome.2');


--
-- Data for Name: ride_requests; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ride_requests VALUES ('ride_requests.id.1', 'ride_requests.rider_id.1', 'ride_requests.state.1', 1.625, 4.375, 'ride_requests.pickup_address.1', 'ride_requests.pickup_place_id.1', 3, 5.75, 'ride_requests.dropoff_address.1', 'ride_requests.dropoff_place_id.1', 'ride_requests.ride_type.1', 1032, 'ride_requests.payment_method_id.1', 1460, 1493, 1890, 1892, 'ride_requests.currency.1', 7.125, 'ride_requests.surge_cell.1', 1990, 1590, 1815, 1489, 'ride_requests.trip_id.1', 'ride_requests.driver_id.1', 1449, 1464);
INSERT INTO public.ride_requests VALUES ('ride_requests.id.2', 'ride_requests.rider_id.2', 'ride_requests.state.2', 2.625, 5.375, 'ride_requests.pickup_address.2', 'ride_requests.pickup_place_id.2', 4, 6.75, 'ride_requests.dropoff_address.2', 'ride_requests.dropoff_place_id.2', 'ride_requests.ride_type.2', 2032, 'ride_requests.payment_method_id.2', 2460, 2493, 2890, 2892, 'ride_requests.currency.2', 8.125, 'ride_requests.surge_cell.2', 2990, 2590, 2815, 2489, 'ride_requests.trip_id.2', 'ride_requests.driver_id.2', 2449, 2464);


--
-- Data for Name: rider_ratings; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.rider_ratings VALUES ('rider_ratings.user_id.1', 1683, 1688);
INSERT INTO public.rider_ratings VALUES ('rider_ratings.user_id.2', 2683, 2688);


--
-- Data for Name: transit_agencies; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_agencies VALUES ('transit_agencies.version_id.1', 'transit_agencies.agency_id.1', 'transit_agencies.agency_name.1', 'transit_agencies.agency_url.1', 'transit_agencies.agency_timezone.1', 'transit_agencies.agency_lang.1', 'transit_agencies.agency_phone.1');
INSERT INTO public.transit_agencies VALUES ('transit_agencies.version_id.2', 'transit_agencies.agency_id.2', 'transit_agencies.agency_name.2', 'transit_agencies.agency_url.2', 'transit_agencies.agency_timezone.2', 'transit_agencies.agency_lang.2', 'transit_agencies.agency_phone.2');


--
-- Data for Name: transit_alert_digests; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_alert_digests VALUES ('transit_alert_digests.user_id.1', 'transit_alert_digests.alert_id.1', 'transit_alert_digests.fingerprint.1', 1886, 1299);
INSERT INTO public.transit_alert_digests VALUES ('transit_alert_digests.user_id.2', 'transit_alert_digests.alert_id.2', 'transit_alert_digests.fingerprint.2', 2886, 2299);


--
-- Data for Name: transit_alert_mutes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_alert_mutes VALUES ('transit_alert_mutes.user_id.1', 'transit_alert_mutes.kind.1', 'transit_alert_mutes.entity_id.1', 1927, 'transit_alert_mutes.alert_id.1', 1102);
INSERT INTO public.transit_alert_mutes VALUES ('transit_alert_mutes.user_id.2', 'transit_alert_mutes.kind.2', 'transit_alert_mutes.entity_id.2', 2927, 'transit_alert_mutes.alert_id.2', 2102);


--
-- Data for Name: transit_alert_pushes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_alert_pushes VALUES ('transit_alert_pushes.alert_id.1', 'transit_alert_pushes.fingerprint.1', 'transit_alert_pushes.user_id.1', 'transit_alert_pushes.notification_id.1', 1208, 1115);
INSERT INTO public.transit_alert_pushes VALUES ('transit_alert_pushes.alert_id.2', 'transit_alert_pushes.fingerprint.2', 'transit_alert_pushes.user_id.2', 'transit_alert_pushes.notification_id.2', 2208, 2115);


--
-- Data for Name: transit_alert_versions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_alert_versions VALUES ('transit_alert_versions.alert_id.1', 'transit_alert_versions.fingerprint.1', 'transit_alert_versions.alert.1', 'transit_alert_versions.status.1', 1023, 'transit_alert_versions.claimed_by.1', 1570, 1279, 1780, 1703, 1433, 1547);
INSERT INTO public.transit_alert_versions VALUES ('transit_alert_versions.alert_id.2', 'transit_alert_versions.fingerprint.2', 'transit_alert_versions.alert.2', 'transit_alert_versions.status.2', 2023, 'transit_alert_versions.claimed_by.2', 2570, 2279, 2780, 2703, 2433, 2547);


--
-- Data for Name: transit_alerts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_alerts VALUES ('transit_alerts.id.1', 'transit_alerts.severity.1', 'transit_alerts.header.1', 'transit_alerts.description.1', 'transit_alerts.cause.1', 'transit_alerts.effect.1', 'transit_alerts.url.1', 'transit_alerts.affected_routes.1', 'transit_alerts.affected_stops.1', 1814, 1567, 'transit_alerts.created_by.1', 1561, 1576);
INSERT INTO public.transit_alerts VALUES ('transit_alerts.id.2', 'transit_alerts.severity.2', 'transit_alerts.header.2', 'transit_alerts.description.2', 'transit_alerts.cause.2', 'transit_alerts.effect.2', 'transit_alerts.url.2', 'transit_alerts.affected_routes.2', 'transit_alerts.affected_stops.2', 2814, 2567, 'transit_alerts.created_by.2', 2561, 2576);


--
-- Data for Name: transit_calendar; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_calendar VALUES ('transit_calendar.version_id.1', 'transit_calendar.service_id.1', 1348, 1467, 1664, 1584, 1339, 1577, 1360, 'transit_calendar.start_date.1', 'transit_calendar.end_date.1');
INSERT INTO public.transit_calendar VALUES ('transit_calendar.version_id.2', 'transit_calendar.service_id.2', 2348, 2467, 2664, 2584, 2339, 2577, 2360, 'transit_calendar.start_date.2', 'transit_calendar.end_date.2');


--
-- Data for Name: transit_calendar_dates; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_calendar_dates VALUES ('transit_calendar_dates.version_id.1', 'transit_calendar_dates.service_id.1', 'transit_calendar_dates.date.1', 1847);
INSERT INTO public.transit_calendar_dates VALUES ('transit_calendar_dates.version_id.2', 'transit_calendar_dates.service_id.2', 'transit_calendar_dates.date.2', 2847);


--
-- Data for Name: transit_fare_attributes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_fare_attributes VALUES ('transit_fare_attributes.version_id.1', 'transit_fare_attributes.fare_id.1', 11.75, 'transit_fare_attributes.currency_type.1', 1983, 1465, 'transit_fare_attributes.agency_id.1', 1318);
INSERT INTO public.transit_fare_attributes VALUES ('transit_fare_attributes.version_id.2', 'transit_fare_attributes.fare_id.2', 12.75, 'transit_fare_attributes.currency_type.2', 2983, 2465, 'transit_fare_attributes.agency_id.2', 2318);


--
-- Data for Name: transit_fare_rules; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_fare_rules VALUES ('transit_fare_rules.version_id.1', 'transit_fare_rules.fare_id.1', 'transit_fare_rules.route_id.1', 'transit_fare_rules.origin_id.1', 'transit_fare_rules.destination_id.1', 'transit_fare_rules.contains_id.1');
INSERT INTO public.transit_fare_rules VALUES ('transit_fare_rules.version_id.2', 'transit_fare_rules.fare_id.2', 'transit_fare_rules.route_id.2', 'transit_fare_rules.origin_id.2', 'transit_fare_rules.destination_id.2', 'transit_fare_rules.contains_id.2');


--
-- Data for Name: transit_favorites; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_favorites VALUES ('transit_favorites.id.1', 'transit_favorites.user_id.1', 'transit_favorites.stop_id.1', 'transit_favorites.label.1', 1944, 1071, 1889, 1904);
INSERT INTO public.transit_favorites VALUES ('transit_favorites.id.2', 'transit_favorites.user_id.2', 'transit_favorites.stop_id.2', 'transit_favorites.label.2', 2944, 2071, 2889, 2904);


--
-- Data for Name: transit_feed_files; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_feed_files VALUES ('transit_feed_files.version_id.1', 1441, '\x7472616e7369745f666565645f66696c65732e62797465732e31');
INSERT INTO public.transit_feed_files VALUES ('transit_feed_files.version_id.2', 2441, '\x7472616e7369745f666565645f66696c65732e62797465732e32');


--
-- Data for Name: transit_feed_versions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_feed_versions VALUES ('transit_feed_versions.id.1', 'transit_feed_versions.feed_name.1', 'transit_feed_versions.version.1', 'transit_feed_versions.sha256.1', 1354, 'transit_feed_versions.status.1', 'transit_feed_versions.source.1', 1257, 1893, 'transit_feed_versions.report.1', 1441, 1522);
INSERT INTO public.transit_feed_versions VALUES ('transit_feed_versions.id.2', 'transit_feed_versions.feed_name.2', 'transit_feed_versions.version.2', 'transit_feed_versions.sha256.2', 2354, 'transit_feed_versions.status.2', 'transit_feed_versions.source.2', 2257, 2893, 'transit_feed_versions.report.2', 2441, 2522);


--
-- Data for Name: transit_feeds; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_feeds VALUES ('transit_feeds.name.1', 'transit_feeds.active_version.1', 'transit_feeds.source_url.1', 'transit_feeds.etag.1', 'transit_feeds.last_modified.1', 1753, 1412, 'transit_feeds.last_error.1', 1331, 'transit_feeds.import_id.1', 1444);
INSERT INTO public.transit_feeds VALUES ('transit_feeds.name.2', 'transit_feeds.active_version.2', 'transit_feeds.source_url.2', 'transit_feeds.etag.2', 'transit_feeds.last_modified.2', 2753, 2412, 'transit_feeds.last_error.2', 2331, 'transit_feeds.import_id.2', 2444);


--
-- Data for Name: transit_frequencies; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_frequencies VALUES ('transit_frequencies.version_id.1', 'transit_frequencies.trip_id.1', 1139, 1889, 1319, 1229);
INSERT INTO public.transit_frequencies VALUES ('transit_frequencies.version_id.2', 'transit_frequencies.trip_id.2', 2139, 2889, 2319, 2229);


--
-- Data for Name: transit_imports; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_imports VALUES ('transit_imports.id.1', 'transit_imports.feed_name.1', 'transit_imports.status.1', 'transit_imports.source.1', 'transit_imports.version_id.1', 'transit_imports.report.1', 'transit_imports.error.1', 'transit_imports.requested_by.1', 1692, 1806);
INSERT INTO public.transit_imports VALUES ('transit_imports.id.2', 'transit_imports.feed_name.2', 'transit_imports.status.2', 'transit_imports.source.2', 'transit_imports.version_id.2', 'transit_imports.report.2', 'transit_imports.error.2', 'transit_imports.requested_by.2', 2692, 2806);


--
-- Data for Name: transit_realtime_feeds; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_realtime_feeds VALUES ('transit_realtime_feeds.source.1', 'transit_realtime_feeds.feed_name.1', '\x7472616e7369745f7265616c74696d655f66656564732e7061796c6f61642e31', 1821, 1489, 'transit_realtime_feeds.etag.1', 'transit_realtime_feeds.last_modified.1', 1631, 'transit_realtime_feeds.last_error.1', 1393);
INSERT INTO public.transit_realtime_feeds VALUES ('transit_realtime_feeds.source.2', 'transit_realtime_feeds.feed_name.2', '\x7472616e7369745f7265616c74696d655f66656564732e7061796c6f61642e32', 2821, 2489, 'transit_realtime_feeds.etag.2', 'transit_realtime_feeds.last_modified.2', 2631, 'transit_realtime_feeds.last_error.2', 2393);


--
-- Data for Name: transit_routes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_routes VALUES ('transit_routes.version_id.1', 'transit_routes.route_id.1', 'transit_routes.agency_id.1', 'transit_routes.route_short_name.1', 'transit_routes.route_long_name.1', 'transit_routes.route_desc.1', 1652, 'transit_routes.route_url.1', 'transit_routes.route_color.1', 'transit_routes.route_text_color.1', 1296);
INSERT INTO public.transit_routes VALUES ('transit_routes.version_id.2', 'transit_routes.route_id.2', 'transit_routes.agency_id.2', 'transit_routes.route_short_name.2', 'transit_routes.route_long_name.2', 'transit_routes.route_desc.2', 2652, 'transit_routes.route_url.2', 'transit_routes.route_color.2', 'transit_routes.route_text_color.2', 2296);


--
-- Data for Name: transit_shapes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_shapes VALUES ('transit_shapes.version_id.1', 'transit_shapes.shape_id.1', 1325, 3.75, 4.75, 7.5);
INSERT INTO public.transit_shapes VALUES ('transit_shapes.version_id.2', 'transit_shapes.shape_id.2', 2325, 4.75, 5.75, 8.5);


--
-- Data for Name: transit_stop_times; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_stop_times VALUES ('transit_stop_times.version_id.1', 'transit_stop_times.trip_id.1', 1378, 'transit_stop_times.stop_id.1', 1251, 1470, 'transit_stop_times.stop_headsign.1', 1169, 1364, 7.5, 1954);
INSERT INTO public.transit_stop_times VALUES ('transit_stop_times.version_id.2', 'transit_stop_times.trip_id.2', 2378, 'transit_stop_times.stop_id.2', 2251, 2470, 'transit_stop_times.stop_headsign.2', 2169, 2364, 8.5, 2954);


--
-- Data for Name: transit_stops; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_stops VALUES ('transit_stops.version_id.1', 'transit_stops.stop_id.1', 'transit_stops.stop_code.1', 'transit_stops.stop_name.1', 'transit_stops.stop_desc.1', 9.625, 10.625, 'transit_stops.zone_id.1', 'transit_stops.stop_url.1', 1845, 'transit_stops.parent_station.1', 'transit_stops.stop_timezone.1', 1431, 'transit_stops.level_id.1', 'transit_stops.platform_code.1');
INSERT INTO public.transit_stops VALUES ('transit_stops.version_id.2', 'transit_stops.stop_id.2', 'transit_stops.stop_code.2', 'transit_stops.stop_name.2', 'transit_stops.stop_desc.2', 10.625, 11.625, 'transit_stops.zone_id.2', 'transit_stops.stop_url.2', 2845, 'transit_stops.parent_station.2', 'transit_stops.stop_timezone.2', 2431, 'transit_stops.level_id.2', 'transit_stops.platform_code.2');


--
-- Data for Name: transit_transfers; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_transfers VALUES ('transit_transfers.version_id.1', 'transit_transfers.from_stop_id.1', 'transit_transfers.to_stop_id.1', 'transit_transfers.from_route_id.1', 'transit_transfers.to_route_id.1', 'transit_transfers.from_trip_id.1', 'transit_transfers.to_trip_id.1', 1275, 1675);
INSERT INTO public.transit_transfers VALUES ('transit_transfers.version_id.2', 'transit_transfers.from_stop_id.2', 'transit_transfers.to_stop_id.2', 'transit_transfers.from_route_id.2', 'transit_transfers.to_route_id.2', 'transit_transfers.from_trip_id.2', 'transit_transfers.to_trip_id.2', 2275, 2675);


--
-- Data for Name: transit_trips; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.transit_trips VALUES ('transit_trips.version_id.1', 'transit_trips.trip_id.1', 'transit_trips.route_id.1', 'transit_trips.service_id.1', 'transit_trips.trip_headsign.1', 'transit_trips.trip_short_name.1', 1697, 'transit_trips.block_id.1', 'transit_trips.shape_id.1', 1624, 1801);
INSERT INTO public.transit_trips VALUES ('transit_trips.version_id.2', 'transit_trips.trip_id.2', 'transit_trips.route_id.2', 'transit_trips.service_id.2', 'transit_trips.trip_headsign.2', 'transit_trips.trip_short_name.2', 2697, 'transit_trips.block_id.2', 'transit_trips.shape_id.2', 2624, 2801);


--
-- Data for Name: trip_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.trip_events VALUES ('trip_events.id.1', 'trip_events.trip_id.1', 'trip_events.from_state.1', 'trip_events.to_state.1', 'trip_events.triggered_by.1', 'trip_events.actor_id.1', 'trip_events.context.1', 1245);
INSERT INTO public.trip_events VALUES ('trip_events.id.2', 'trip_events.trip_id.2', 'trip_events.from_state.2', 'trip_events.to_state.2', 'trip_events.triggered_by.2', 'trip_events.actor_id.2', 'trip_events.context.2', 2245);


--
-- Data for Name: trip_locations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.trip_locations VALUES ('trip_locations.trip_id.1', 1667, 1265, 1377, 8.375, 11.125, 9.5, 2, 9.75, 11.625, 2.125, 1670, 1467, 1151, 'trip_locations.warning.1');
INSERT INTO public.trip_locations VALUES ('trip_locations.trip_id.2', 2667, 2265, 2377, 9.375, 12.125, 10.5, 3, 10.75, 12.625, 3.125, 2670, 2467, 2151, 'trip_locations.warning.2');


--
-- Data for Name: trips; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.trips VALUES ('trips.id.1', 'trips.request_id.1', 'trips.rider_id.1', 'trips.driver_id.1', 'trips.state.1', 1339, 1.625, 4.375, 'trips.pickup_address.1', 'trips.pickup_place_id.1', 3, 5.75, 'trips.dropoff_address.1', 'trips.dropoff_place_id.1', 'trips.ride_type.1', 1184, 1612, 1645, 1045, 1047, 'trips.currency.1', 7.125, 1090, 'trips.last_flag.1', 'trips.cancelled_by.1', 'trips.cancel_reason.1', 1698, 1622, 1632, 1830, 1796, 1601, 1616, 1243, 1673, 1706, 1839, 'trips.rider_comment.1', 1957, 'trips.driver_comment.1');
INSERT INTO public.trips VALUES ('trips.id.2', 'trips.request_id.2', 'trips.rider_id.2', 'trips.driver_id.2', 'trips.state.2', 2339, 2.625, 5.375, 'trips.pickup_address.2', 'trips.pickup_place_id.2', 4, 6.75, 'trips.dropoff_address.2', 'trips.dropoff_place_id.2', 'trips.ride_type.2', 2184, 2612, 2645, 2045, 2047, 'trips.currency.2', 8.125, 2090, 'trips.last_flag.2', 'trips.cancelled_by.2', 'trips.cancel_reason.2', 2698, 2622, 2632, 2830, 2796, 2601, 2616, 2243, 2673, 2706, 2839, 'trips.rider_comment.2', 2957, 'trips.driver_comment.2');


--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.users VALUES ('users.id.1', 'users.role.1', 'users.display_name.1', 'users.locale.1', 'users.time_zone.1', 1601, 1616, 'users.phone.1');
INSERT INTO public.users VALUES ('users.id.2', 'users.role.2', 'users.display_name.2', 'users.locale.2', 'users.time_zone.2', 2601, 2616, 'users.phone.2');


--
-- Data for Name: vehicles; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.vehicles VALUES ('vehicles.driver_id.1', 'vehicles.make.1', 'vehicles.model.1', 'vehicles.color.1', 'vehicles.license_plate.1', 1700, 'vehicles.ride_types.1', 1890, 1905);
INSERT INTO public.vehicles VALUES ('vehicles.driver_id.2', 'vehicles.make.2', 'vehicles.model.2', 'vehicles.color.2', 'vehicles.license_plate.2', 2700, 'vehicles.ride_types.2', 2890, 2905);


--
-- Name: drivers drivers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.drivers
    ADD CONSTRAINT drivers_pkey PRIMARY KEY (user_id);


--
-- Name: herald_schema_migrations herald_schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.herald_schema_migrations
    ADD CONSTRAINT herald_schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, idem_key);


--
-- Name: job_adjustments job_adjustments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_adjustments
    ADD CONSTRAINT job_adjustments_pkey PRIMARY KEY (job_id);


--
-- Name: job_events job_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_events
    ADD CONSTRAINT job_events_pkey PRIMARY KEY (id);


--
-- Name: job_offers job_offers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_offers
    ADD CONSTRAINT job_offers_pkey PRIMARY KEY (job_id, driver_id);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: ledger_entries ledger_entries_idempotency_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_entries
    ADD CONSTRAINT ledger_entries_idempotency_key_key UNIQUE (idempotency_key);


--
-- Name: ledger_entries ledger_entries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_entries
    ADD CONSTRAINT ledger_entries_pkey PRIMARY KEY (id);


--
-- Name: ledger_holds ledger_holds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_holds
    ADD CONSTRAINT ledger_holds_pkey PRIMARY KEY (reference);


--
-- Name: notification_dedupe notification_dedupe_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_dedupe
    ADD CONSTRAINT notification_dedupe_pkey PRIMARY KEY (user_id, dedupe_key);


--
-- Name: notification_deliveries notification_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_deliveries
    ADD CONSTRAINT notification_deliveries_pkey PRIMARY KEY (id);


--
-- Name: notification_preferences notification_preferences_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_preferences
    ADD CONSTRAINT notification_preferences_pkey PRIMARY KEY (user_id, type);


--
-- Name: notification_settings notification_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_settings
    ADD CONSTRAINT notification_settings_pkey PRIMARY KEY (user_id);


--
-- Name: notifications notifications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);


--
-- Name: payment_events payment_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payment_events
    ADD CONSTRAINT payment_events_pkey PRIMARY KEY (id);


--
-- Name: payment_holds payment_holds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payment_holds
    ADD CONSTRAINT payment_holds_pkey PRIMARY KEY (job_id);


--
-- Name: push_devices push_devices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_devices
    ADD CONSTRAINT push_devices_pkey PRIMARY KEY (id);


--
-- Name: push_devices push_devices_provider_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_devices
    ADD CONSTRAINT push_devices_provider_token_key UNIQUE (provider, token);


--
-- Name: realtime_events realtime_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_events
    ADD CONSTRAINT realtime_events_pkey PRIMARY KEY (room, seq);


--
-- Name: realtime_nodes realtime_nodes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_nodes
    ADD CONSTRAINT realtime_nodes_pkey PRIMARY KEY (node_id);


--
-- Name: realtime_presence realtime_presence_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_presence
    ADD CONSTRAINT realtime_presence_pkey PRIMARY KEY (node_id, user_id);


--
-- Name: realtime_rooms realtime_rooms_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_rooms
    ADD CONSTRAINT realtime_rooms_pkey PRIMARY KEY (room);


--
-- Name: realtime_sessions realtime_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_sessions
    ADD CONSTRAINT realtime_sessions_pkey PRIMARY KEY (pid);


--
-- Name: ride_offers ride_offers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ride_offers
    ADD CONSTRAINT ride_offers_pkey PRIMARY KEY (request_id, driver_id);


--
-- Name: ride_requests ride_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ride_requests
    ADD CONSTRAINT ride_requests_pkey PRIMARY KEY (id);


--
-- Name: rider_ratings rider_ratings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rider_ratings
    ADD CONSTRAINT rider_ratings_pkey PRIMARY KEY (user_id);


--
-- Name: transit_alert_digests transit_alert_digests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_alert_digests
    ADD CONSTRAINT transit_alert_digests_pkey PRIMARY KEY (user_id, alert_id);


--
-- Name: transit_alert_mutes transit_alert_mutes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_alert_mutes
    ADD CONSTRAINT transit_alert_mutes_pkey PRIMARY KEY (user_id, kind, entity_id);


--
-- Name: transit_alert_pushes transit_alert_pushes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_alert_pushes
    ADD CONSTRAINT transit_alert_pushes_pkey PRIMARY KEY (alert_id, fingerprint, user_id);


--
-- Name: transit_alert_versions transit_alert_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_alert_versions
    ADD CONSTRAINT transit_alert_versions_pkey PRIMARY KEY (alert_id, fingerprint);


--
-- Name: transit_alerts transit_alerts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_alerts
    ADD CONSTRAINT transit_alerts_pkey PRIMARY KEY (id);


--
-- Name: transit_calendar_dates transit_calendar_dates_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_calendar_dates
    ADD CONSTRAINT transit_calendar_dates_pkey PRIMARY KEY (version_id, service_id, date);


--
-- Name: transit_calendar transit_calendar_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_calendar
    ADD CONSTRAINT transit_calendar_pkey PRIMARY KEY (version_id, service_id);


--
-- Name: transit_fare_attributes transit_fare_attributes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_fare_attributes
    ADD CONSTRAINT transit_fare_attributes_pkey PRIMARY KEY (version_id, fare_id);


--
-- Name: transit_favorites transit_favorites_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_favorites
    ADD CONSTRAINT transit_favorites_pkey PRIMARY KEY (id);


--
-- Name: transit_feed_files transit_feed_files_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_feed_files
    ADD CONSTRAINT transit_feed_files_pkey PRIMARY KEY (version_id, chunk);


--
-- Name: transit_feed_versions transit_feed_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_feed_versions
    ADD CONSTRAINT transit_feed_versions_pkey PRIMARY KEY (id);


--
-- Name: transit_feeds transit_feeds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_feeds
    ADD CONSTRAINT transit_feeds_pkey PRIMARY KEY (name);


--
-- Name: transit_imports transit_imports_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_imports
    ADD CONSTRAINT transit_imports_pkey PRIMARY KEY (id);


--
-- Name: transit_realtime_feeds transit_realtime_feeds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_realtime_feeds
    ADD CONSTRAINT transit_realtime_feeds_pkey PRIMARY KEY (source);


--
-- Name: transit_routes transit_routes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_routes
    ADD CONSTRAINT transit_routes_pkey PRIMARY KEY (version_id, route_id);


--
-- Name: transit_shapes transit_shapes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_shapes
    ADD CONSTRAINT transit_shapes_pkey PRIMARY KEY (version_id, shape_id, shape_pt_sequence);


--
-- Name: transit_stop_times transit_stop_times_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_stop_times
    ADD CONSTRAINT transit_stop_times_pkey PRIMARY KEY (version_id, trip_id, stop_sequence);


--
-- Name: transit_stops transit_stops_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_stops
    ADD CONSTRAINT transit_stops_pkey PRIMARY KEY (version_id, stop_id);


--
-- Name: transit_trips transit_trips_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transit_trips
    ADD CONSTRAINT transit_trips_pkey PRIMARY KEY (version_id, trip_id);


--
-- Name: trip_events trip_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trip_events
    ADD CONSTRAINT trip_events_pkey PRIMARY KEY (id);


--
-- Name: trip_locations trip_locations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trip_locations
    ADD CONSTRAINT trip_locations_pkey PRIMARY KEY (trip_id, ordinal);


--
-- Name: trips trips_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trips
    ADD CONSTRAINT trips_pkey PRIMARY KEY (id);


--
-- Name: trips trips_request_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trips
    ADD CONSTRAINT trips_request_id_key UNIQUE (request_id);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: vehicles vehicles_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.vehicles
    ADD CONSTRAINT vehicles_pkey PRIMARY KEY (driver_id);


--
-- Name: drivers_approval; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX drivers_approval ON public.drivers USING btree (approval_status, online);


--
-- Name: drivers_updated_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX drivers_updated_at ON public.drivers USING btree (updated_at);


--
-- Name: idempotency_keys_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_expires_at ON public.idempotency_keys USING btree (expires_at);


--
-- Name: job_adjustments_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX job_adjustments_due ON public.job_adjustments USING btree (status, deadline_at);


--
-- Name: job_events_job; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX job_events_job ON public.job_events USING btree (job_id, created_at);


--
-- Name: job_offers_driver; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX job_offers_driver ON public.job_offers USING btree (driver_id, offered_at);


--
-- Name: jobs_customer; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_customer ON public.jobs USING btree (customer_id, created_at);


--
-- Name: jobs_driver; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_driver ON public.jobs USING btree (driver_id, status);


--
-- Name: jobs_due_round; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_due_round ON public.jobs USING btree (status, next_round_at);


--
-- Name: jobs_open_position; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_open_position ON public.jobs USING btree (status, latitude);


--
-- Name: ledger_entries_reference; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_entries_reference ON public.ledger_entries USING btree (reference, created_at);


--
-- Name: notification_deliveries_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_deliveries_due ON public.notification_deliveries USING btree (status, next_attempt_at);


--
-- Name: notification_deliveries_notification; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_deliveries_notification ON public.notification_deliveries USING btree (notification_id);


--
-- Name: notifications_user_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notifications_user_created ON public.notifications USING btree (user_id, created_at);


--
-- Name: notifications_user_unread; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notifications_user_unread ON public.notifications USING btree (user_id, read_at, deleted_at);


--
-- Name: payment_events_job; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payment_events_job ON public.payment_events USING btree (job_id, created_at);


--
-- Name: payment_holds_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payment_holds_pending ON public.payment_holds USING btree (next_attempt_at);


--
-- Name: push_devices_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX push_devices_user ON public.push_devices USING btree (user_id);


--
-- Name: realtime_events_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX realtime_events_created_at ON public.realtime_events USING btree (created_at);


--
-- Name: realtime_presence_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX realtime_presence_user ON public.realtime_presence USING btree (user_id);


--
-- Name: realtime_sessions_updated_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX realtime_sessions_updated_at ON public.realtime_sessions USING btree (updated_at);


--
-- Name: ride_requests_cell; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ride_requests_cell ON public.ride_requests USING btree (surge_cell, state);


--
-- Name: ride_requests_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ride_requests_due ON public.ride_requests USING btree (state, next_round_at);


--
-- Name: ride_requests_rider; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ride_requests_rider ON public.ride_requests USING btree (rider_id, created_at);


--
-- Name: transit_agencies_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_agencies_version ON public.transit_agencies USING btree (version_id);


--
-- Name: transit_alert_digests_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_alert_digests_due ON public.transit_alert_digests USING btree (due_at);


--
-- Name: transit_alert_pushes_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_alert_pushes_user ON public.transit_alert_pushes USING btree (user_id, alert_id, created_at);


--
-- Name: transit_alert_versions_alert; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_alert_versions_alert ON public.transit_alert_versions USING btree (alert_id, created_at);


--
-- Name: transit_alert_versions_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_alert_versions_due ON public.transit_alert_versions USING btree (status, due_at);


--
-- Name: transit_alerts_end; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_alerts_end ON public.transit_alerts USING btree (active_end);


--
-- Name: transit_fare_rules_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_fare_rules_version ON public.transit_fare_rules USING btree (version_id, fare_id);


--
-- Name: transit_favorites_stop; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_favorites_stop ON public.transit_favorites USING btree (stop_id);


--
-- Name: transit_favorites_user_stop; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX transit_favorites_user_stop ON public.transit_favorites USING btree (user_id, stop_id);


--
-- Name: transit_feed_versions_feed; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_feed_versions_feed ON public.transit_feed_versions USING btree (feed_name, imported_at);


--
-- Name: transit_frequencies_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_frequencies_version ON public.transit_frequencies USING btree (version_id, trip_id);


--
-- Name: transit_imports_feed; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_imports_feed ON public.transit_imports USING btree (feed_name, created_at);


--
-- Name: transit_transfers_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transit_transfers_version ON public.transit_transfers USING btree (version_id, from_stop_id);


--
-- Name: trip_events_trip; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX trip_events_trip ON public.trip_events USING btree (trip_id, created_at);


--
-- Name: trips_driver_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX trips_driver_active ON public.trips USING btree (driver_id) WHERE (state = ANY (ARRAY['ACCEPTED'::text, 'ARRIVED'::text, 'IN_PROGRESS'::text]));


--
-- Name: trips_rider; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX trips_rider ON public.trips USING btree (rider_id, state);


--
-- PostgreSQL database dump complete
--

\unrestrict A64jnpNUGjZQzW5yiUAKZU7hMhsGWkLciu21NMy57WcHWXXqjEbyQ8bDakSI1Fi

