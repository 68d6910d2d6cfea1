PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE herald_schema_migrations (
    version BIGINT PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at BIGINT NOT NULL
);
INSERT INTO herald_schema_migrations VALUES(1,'users',1795751844095);
INSERT INTO herald_schema_migrations VALUES(2,'idempotency_keys',1795751844096);
INSERT INTO herald_schema_migrations VALUES(3,'realtime',1795751844099);
INSERT INTO herald_schema_migrations VALUES(4,'notifications',1795751844101);
INSERT INTO herald_schema_migrations VALUES(5,'dispatch',1795751844104);
INSERT INTO herald_schema_migrations VALUES(6,'payments_and_adjustments',1795751844107);
INSERT INTO herald_schema_migrations VALUES(7,'trips',1795751844111);
INSERT INTO herald_schema_migrations VALUES(8,'transit',1795751844118);
INSERT INTO herald_schema_migrations VALUES(9,'transit alert pushes',1795751844120);
INSERT INTO herald_schema_migrations VALUES(10,'driver location sessions',1795751844122);
INSERT INTO herald_schema_migrations VALUES(11,'quiet hours per notification type',1795751844126);
INSERT INTO herald_schema_migrations VALUES(12,'user phone',1795751844128);
INSERT INTO herald_schema_migrations VALUES(13,'trip fares and ratings',1795751844141);
INSERT INTO herald_schema_migrations VALUES(14,'scheduled payment holds',1795751844145);
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    display_name TEXT,
    locale TEXT,
    time_zone TEXT NOT NULL DEFAULT 'UTC',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
, phone TEXT);
INSERT INTO users VALUES('users.id.1','users.role.1','users.display_name.1','users.locale.1','users.time_zone.1',1601,1616,'users.phone.1');
INSERT INTO users VALUES('users.id.2','users.role.2','users.display_name.2','users.locale.2','users.time_zone.2',2601,2616,'users.phone.2');
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
);
INSERT INTO idempotency_keys VALUES('idempotency_keys.scope.1','idempotency_keys.idem_key.1','idempotency_keys.request_hash.1','idempotency_keys.state.1',1912,'idempotency_keys.response_headers.1','idempotency_keys.response_body.1',1664,1766,1806);
INSERT INTO idempotency_keys VALUES('idempotency_keys.scope.2','idempotency_keys.idem_key.2','idempotency_keys.request_hash.2','idempotency_keys.state.2',2912,'idempotency_keys.response_headers.2','idempotency_keys.response_body.2',2664,2766,2806);
CREATE TABLE realtime_rooms (
    room TEXT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);
INSERT INTO realtime_rooms VALUES('realtime_rooms.room.1',1372);
INSERT INTO realtime_rooms VALUES('realtime_rooms.room.2',2372);
CREATE TABLE realtime_events (
    room TEXT NOT NULL,
    seq BIGINT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (room, seq)
);
INSERT INTO realtime_events VALUES('realtime_events.room.1',1939,'realtime_events.event.1','realtime_events.payload.1',1649);
INSERT INTO realtime_events VALUES('realtime_events.room.2',2939,'realtime_events.event.2','realtime_events.payload.2',2649);
CREATE TABLE realtime_sessions (
    pid TEXT PRIMARY KEY,
    user_id TEXT,
    namespace TEXT NOT NULL,
    rooms TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
INSERT INTO realtime_sessions VALUES('realtime_sessions.pid.1','realtime_sessions.user_id.1','realtime_sessions.namespace.1','realtime_sessions.rooms.1',1890);
INSERT INTO realtime_sessions VALUES('realtime_sessions.pid.2','realtime_sessions.user_id.2','realtime_sessions.namespace.2','realtime_sessions.rooms.2',2890);
CREATE TABLE realtime_nodes (
    node_id TEXT PRIMARY KEY,
    heartbeat_at BIGINT NOT NULL
);
INSERT INTO realtime_nodes VALUES('realtime_nodes.node_id.1',1741);
INSERT INTO realtime_nodes VALUES('realtime_nodes.node_id.2',2741);
CREATE TABLE realtime_presence (
    node_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    connections INTEGER NOT NULL,
    PRIMARY KEY (node_id, user_id)
);
INSERT INTO realtime_presence VALUES('realtime_presence.node_id.1','realtime_presence.user_id.1',1992);
INSERT INTO realtime_presence VALUES('realtime_presence.node_id.2','realtime_presence.user_id.2',2992);
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
, silent INTEGER NOT NULL DEFAULT 0);
INSERT INTO notifications VALUES('notifications.id.1','notifications.user_id.1','notifications.type.1','notifications.severity.1','notifications.delivery.1','notifications.title.1','notifications.body.1','notifications.data.1','notifications.category.1','notifications.thread_id.1','notifications.collapse_key.1','notifications.dedupe_key.1','notifications.interruption_level.1',1484,1444,1128,1443,'notifications.sent_via.1','notifications.push_suppressed.1',1063);
INSERT INTO notifications VALUES('notifications.id.2','notifications.user_id.2','notifications.type.2','notifications.severity.2','notifications.delivery.2','notifications.title.2','notifications.body.2','notifications.data.2','notifications.category.2','notifications.thread_id.2','notifications.collapse_key.2','notifications.dedupe_key.2','notifications.interruption_level.2',2484,2444,2128,2443,'notifications.sent_via.2','notifications.push_suppressed.2',2063);
CREATE TABLE notification_dedupe (
    user_id TEXT NOT NULL,
    dedupe_key TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, dedupe_key)
);
INSERT INTO notification_dedupe VALUES('notification_dedupe.user_id.1','notification_dedupe.dedupe_key.1','notification_dedupe.notification_id.1',1058);
INSERT INTO notification_dedupe VALUES('notification_dedupe.user_id.2','notification_dedupe.dedupe_key.2','notification_dedupe.notification_id.2',2058);
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
);
INSERT INTO push_devices VALUES('push_devices.id.1','push_devices.user_id.1','push_devices.provider.1','push_devices.token.1','push_devices.platform.1','push_devices.device_id.1','push_devices.app_version.1','push_devices.os_version.1','push_devices.locale.1','push_devices.user_agent.1','push_devices.webpush_p256dh.1','push_devices.webpush_auth.1',1324,1560,1746,'push_devices.deactivation_reason.1');
INSERT INTO push_devices VALUES('push_devices.id.2','push_devices.user_id.2','push_devices.provider.2','push_devices.token.2','push_devices.platform.2','push_devices.device_id.2','push_devices.app_version.2','push_devices.os_version.2','push_devices.locale.2','push_devices.user_agent.2','push_devices.webpush_p256dh.2','push_devices.webpush_auth.2',2324,2560,2746,'push_devices.deactivation_reason.2');
CREATE TABLE notification_settings (
    user_id TEXT PRIMARY KEY,
    quiet_hours_enabled INTEGER NOT NULL,
    quiet_start TEXT,
    quiet_end TEXT,
    severity_floor TEXT NOT NULL,
    time_sensitive_allowed INTEGER NOT NULL,
    updated_at BIGINT NOT NULL
);
INSERT INTO notification_settings VALUES('notification_settings.user_id.1',1293,'notification_settings.quiet_start.1','notification_settings.quiet_end.1','notification_settings.severity_floor.1',1626,1323);
INSERT INTO notification_settings VALUES('notification_settings.user_id.2',2293,'notification_settings.quiet_start.2','notification_settings.quiet_end.2','notification_settings.severity_floor.2',2626,2323);
CREATE TABLE notification_preferences (
    user_id TEXT NOT NULL,
    type TEXT NOT NULL,
    in_app_enabled INTEGER NOT NULL,
    push_enabled INTEGER NOT NULL,
    updated_at BIGINT NOT NULL, quiet_start TEXT, quiet_end TEXT,
    PRIMARY KEY (user_id, type)
);
INSERT INTO notification_preferences VALUES('notification_preferences.user_id.1','notification_preferences.type.1',1005,1819,1612,'notification_preferences.quiet_start.1','notification_preferences.quiet_end.1');
INSERT INTO notification_preferences VALUES('notification_preferences.user_id.2','notification_preferences.type.2',2005,2819,2612,'notification_preferences.quiet_start.2','notification_preferences.quiet_end.2');
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
);
INSERT INTO notification_deliveries VALUES('notification_deliveries.id.1','notification_deliveries.notification_id.1','notification_deliveries.user_id.1','notification_deliveries.channel.1','notification_deliveries.device_id.1','notification_deliveries.provider.1','notification_deliveries.status.1',1341,1079,1632,'notification_deliveries.provider_message_id.1','notification_deliveries.reason.1',1530,1495,1510,1724);
INSERT INTO notification_deliveries VALUES('notification_deliveries.id.2','notification_deliveries.notification_id.2','notification_deliveries.user_id.2','notification_deliveries.channel.2','notification_deliveries.device_id.2','notification_deliveries.provider.2','notification_deliveries.status.2',2341,2079,2632,'notification_deliveries.provider_message_id.2','notification_deliveries.reason.2',2530,2495,2510,2724);
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
, location_session TEXT);
INSERT INTO drivers VALUES('drivers.user_id.1','drivers.name.1','drivers.phone.1','drivers.truck_type.1','drivers.vehicle_description.1','drivers.license_plate.1','drivers.approval_status.1','drivers.approval_reason.1',1759,'drivers.approval_changed_by.1',1061,1066,1255,1415,1535,8.375,11.124999999999999999,9.5,2.0,9.75,1054,1935,1672,1806,1821,'drivers.location_session.1');
INSERT INTO drivers VALUES('drivers.user_id.2','drivers.name.2','drivers.phone.2','drivers.truck_type.2','drivers.vehicle_description.2','drivers.license_plate.2','drivers.approval_status.2','drivers.approval_reason.2',2759,'drivers.approval_changed_by.2',2061,2066,2255,2415,2535,9.375,12.124999999999999999,10.499999999999999999,3.0,10.75,2054,2935,2672,2806,2821,'drivers.location_session.2');
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
);
INSERT INTO jobs VALUES('jobs.id.1','jobs.customer_id.1','jobs.driver_id.1','jobs.status.1','jobs.address.1',8.375,11.124999999999999999,'jobs.items.1',1276,1686,'jobs.notes.1',1608,'jobs.currency.1','jobs.price_lines.1',1610,1910,1835,1207,1469,1484,1566,1606,1490,1500,1698,1664,1494,'jobs.cancelled_by.1','jobs.cancel_reason.1');
INSERT INTO jobs VALUES('jobs.id.2','jobs.customer_id.2','jobs.driver_id.2','jobs.status.2','jobs.address.2',9.375,12.124999999999999999,'jobs.items.2',2276,2686,'jobs.notes.2',2608,'jobs.currency.2','jobs.price_lines.2',2610,2910,2835,2207,2469,2484,2566,2606,2490,2500,2698,2664,2494,'jobs.cancelled_by.2','jobs.cancel_reason.2');
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
);
INSERT INTO job_offers VALUES('job_offers.job_id.1','job_offers.driver_id.1',1610,1108,'job_offers.channel.1','job_offers.notification_id.1',1100,'job_offers.outcome.1');
INSERT INTO job_offers VALUES('job_offers.job_id.2','job_offers.driver_id.2',2610,2108,'job_offers.channel.2','job_offers.notification_id.2',2100,'job_offers.outcome.2');
CREATE TABLE job_events (
    id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL,
    from_status TEXT,
    to_status TEXT NOT NULL,
    actor_id TEXT,
    actor_role TEXT NOT NULL,
    reason TEXT,
    created_at BIGINT NOT NULL
);
INSERT INTO job_events VALUES('job_events.id.1','job_events.job_id.1','job_events.from_status.1','job_events.to_status.1','job_events.actor_id.1','job_events.actor_role.1','job_events.reason.1',1113);
INSERT INTO job_events VALUES('job_events.id.2','job_events.job_id.2','job_events.from_status.2','job_events.to_status.2','job_events.actor_id.2','job_events.actor_role.2','job_events.reason.2',2113);
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
);
INSERT INTO job_adjustments VALUES('job_adjustments.job_id.1','job_adjustments.driver_id.1','job_adjustments.customer_id.1','job_adjustments.status.1',1585,1412,1193,1744,1221,'job_adjustments.currency.1','job_adjustments.price_lines.1',1111,1748,1722,1679,1632,'job_adjustments.decided_by.1',1654,1669);
INSERT INTO job_adjustments VALUES('job_adjustments.job_id.2','job_adjustments.driver_id.2','job_adjustments.customer_id.2','job_adjustments.status.2',2585,2412,2193,2744,2221,'job_adjustments.currency.2','job_adjustments.price_lines.2',2111,2748,2722,2679,2632,'job_adjustments.decided_by.2',2654,2669);
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
, payment_method TEXT, customer_id TEXT);
INSERT INTO payment_holds VALUES('payment_holds.job_id.1','payment_holds.provider.1','payment_holds.reference.1','payment_holds.status.1',1139,1709,1905,'payment_holds.currency.1','payment_holds.pending_op.1',1548,1287,1025,'payment_holds.last_error.1',1441,1456,'payment_holds.payment_method.1','payment_holds.customer_id.1');
INSERT INTO payment_holds VALUES('payment_holds.job_id.2','payment_holds.provider.2','payment_holds.reference.2','payment_holds.status.2',2139,2709,2905,'payment_holds.currency.2','payment_holds.pending_op.2',2548,2287,2025,'payment_holds.last_error.2',2441,2456,'payment_holds.payment_method.2','payment_holds.customer_id.2');
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
);
INSERT INTO payment_events VALUES('payment_events.id.1','payment_events.job_id.1','payment_events.provider.1','payment_events.operation.1',1832,'payment_events.outcome.1','payment_events.error_code.1','payment_events.idempotency_key.1',1564);
INSERT INTO payment_events VALUES('payment_events.id.2','payment_events.job_id.2','payment_events.provider.2','payment_events.operation.2',2832,'payment_events.outcome.2','payment_events.error_code.2','payment_events.idempotency_key.2',2564);
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
);
INSERT INTO ledger_holds VALUES('ledger_holds.reference.1','ledger_holds.job_id.1','ledger_holds.customer_id.1','ledger_holds.status.1',1000,1570,1766,'ledger_holds.currency.1','ledger_holds.payment_method.1',1302,1317);
INSERT INTO ledger_holds VALUES('ledger_holds.reference.2','ledger_holds.job_id.2','ledger_holds.customer_id.2','ledger_holds.status.2',2000,2570,2766,'ledger_holds.currency.2','ledger_holds.payment_method.2',2302,2317);
CREATE TABLE ledger_entries (
    id TEXT PRIMARY KEY,
    reference TEXT NOT NULL,
    operation TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    result TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
INSERT INTO ledger_entries VALUES('ledger_entries.id.1','ledger_entries.reference.1','ledger_entries.operation.1',1794,'ledger_entries.idempotency_key.1','ledger_entries.result.1',1526);
INSERT INTO ledger_entries VALUES('ledger_entries.id.2','ledger_entries.reference.2','ledger_entries.operation.2',2794,'ledger_entries.idempotency_key.2','ledger_entries.result.2',2526);
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
);
INSERT INTO vehicles VALUES('vehicles.driver_id.1','vehicles.make.1','vehicles.model.1','vehicles.color.1','vehicles.license_plate.1',1700,'vehicles.ride_types.1',1890,1905);
INSERT INTO vehicles VALUES('vehicles.driver_id.2','vehicles.make.2','vehicles.model.2','vehicles.color.2','vehicles.license_plate.2',2700,'vehicles.ride_types.2',2890,2905);
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
);
INSERT INTO ride_requests VALUES('ride_requests.id.1','ride_requests.rider_id.1','ride_requests.state.1',1.625,4.375,'ride_requests.pickup_address.1','ride_requests.pickup_place_id.1',3.0,5.75,'ride_requests.dropoff_address.1','ride_requests.dropoff_place_id.1','ride_requests.ride_type.1',1032,'ride_requests.payment_method_id.1',1460,1493,1890,1892,'ride_requests.currency.1',7.125,'ride_requests.surge_cell.1',1990,1590,1815,1489,'ride_requests.trip_id.1','ride_requests.driver_id.1',1449,1464);
INSERT INTO ride_requests VALUES('ride_requests.id.2','ride_requests.rider_id.2','ride_requests.state.2',2.625,5.375,'ride_requests.pickup_address.2','ride_requests.pickup_place_id.2',4.0,6.75,'ride_requests.dropoff_address.2','ride_requests.dropoff_place_id.2','ride_requests.ride_type.2',2032,'ride_requests.payment_method_id.2',2460,2493,2890,2892,'ride_requests.currency.2',8.125,'ride_requests.surge_cell.2',2990,2590,2815,2489,'ride_requests.trip_id.2','ride_requests.driver_id.2',2449,2464);
CREATE TABLE ride_offers (
    request_id TEXT NOT NULL,
    driver_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    distance_m BIGINT,
    offered_at BIGINT NOT NULL,
    outcome TEXT,
    PRIMARY KEY (request_id, driver_id)
);
INSERT INTO ride_offers VALUES('ride_offers.request_id.1','ride_offers.driver_id.1',1715,1213,1205,'ride_offers.outcome.1');
INSERT INTO ride_offers VALUES('ride_offers.request_id.2','ride_offers.driver_id.2',2715,2213,2205,'ride_offers.outcome.2');
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
, final_fare_minor BIGINT, travelled_distance_m BIGINT, travelled_duration_s BIGINT, rider_rating INTEGER, rider_comment TEXT, driver_rating INTEGER, driver_comment TEXT);
INSERT INTO trips VALUES('trips.id.1','trips.request_id.1','trips.rider_id.1','trips.driver_id.1','trips.state.1',1339,1.625,4.375,'trips.pickup_address.1','trips.pickup_place_id.1',3.0,5.75,'trips.dropoff_address.1','trips.dropoff_place_id.1','trips.ride_type.1',1184,1612,1645,1045,1047,'trips.currency.1',7.125,1090,'trips.last_flag.1','trips.cancelled_by.1','trips.cancel_reason.1',1698,1622,1632,1830,1796,1601,1616,1243,1673,1706,1839,'trips.rider_comment.1',1957,'trips.driver_comment.1');
INSERT INTO trips VALUES('trips.id.2','trips.request_id.2','trips.rider_id.2','trips.driver_id.2','trips.state.2',2339,2.625,5.375,'trips.pickup_address.2','trips.pickup_place_id.2',4.0,6.75,'trips.dropoff_address.2','trips.dropoff_place_id.2','trips.ride_type.2',2184,2612,2645,2045,2047,'trips.currency.2',8.125,2090,'trips.last_flag.2','trips.cancelled_by.2','trips.cancel_reason.2',2698,2622,2632,2830,2796,2601,2616,2243,2673,2706,2839,'trips.rider_comment.2',2957,'trips.driver_comment.2');
CREATE TABLE trip_events (
    id TEXT PRIMARY KEY,
    trip_id TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state TEXT NOT NULL,
    triggered_by TEXT NOT NULL,
    actor_id TEXT,
    context TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
INSERT INTO trip_events VALUES('trip_events.id.1','trip_events.trip_id.1','trip_events.from_state.1','trip_events.to_state.1','trip_events.triggered_by.1','trip_events.actor_id.1','trip_events.context.1',1245);
INSERT INTO trip_events VALUES('trip_events.id.2','trip_events.trip_id.2','trip_events.from_state.2','trip_events.to_state.2','trip_events.triggered_by.2','trip_events.actor_id.2','trip_events.context.2',2245);
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
);
INSERT INTO trip_locations VALUES('trip_locations.trip_id.1',1667,1265,1377,8.375,11.124999999999999999,9.5,2.0,9.75,11.625,2.125,1670,1467,1151,'trip_locations.warning.1');
INSERT INTO trip_locations VALUES('trip_locations.trip_id.2',2667,2265,2377,9.375,12.124999999999999999,10.499999999999999999,3.0,10.75,12.625,3.125,2670,2467,2151,'trip_locations.warning.2');
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
);
INSERT INTO transit_feeds VALUES('transit_feeds.name.1','transit_feeds.active_version.1','transit_feeds.source_url.1','transit_feeds.etag.1','transit_feeds.last_modified.1',1753,1412,'transit_feeds.last_error.1',1331,'transit_feeds.import_id.1',1444);
INSERT INTO transit_feeds VALUES('transit_feeds.name.2','transit_feeds.active_version.2','transit_feeds.source_url.2','transit_feeds.etag.2','transit_feeds.last_modified.2',2753,2412,'transit_feeds.last_error.2',2331,'transit_feeds.import_id.2',2444);
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
);
INSERT INTO transit_feed_versions VALUES('transit_feed_versions.id.1','transit_feed_versions.feed_name.1','transit_feed_versions.version.1','transit_feed_versions.sha256.1',1354,'transit_feed_versions.status.1','transit_feed_versions.source.1',1257,1893,'transit_feed_versions.report.1',1441,1522);
INSERT INTO transit_feed_versions VALUES('transit_feed_versions.id.2','transit_feed_versions.feed_name.2','transit_feed_versions.version.2','transit_feed_versions.sha256.2',2354,'transit_feed_versions.status.2','transit_feed_versions.source.2',2257,2893,'transit_feed_versions.report.2',2441,2522);
CREATE TABLE transit_feed_files (
    version_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (version_id, chunk)
);
INSERT INTO transit_feed_files VALUES('transit_feed_files.version_id.1',1441,X'7472616e7369745f666565645f66696c65732e62797465732e31');
INSERT INTO transit_feed_files VALUES('transit_feed_files.version_id.2',2441,X'7472616e7369745f666565645f66696c65732e62797465732e32');
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
);
INSERT INTO transit_imports VALUES('transit_imports.id.1','transit_imports.feed_name.1','transit_imports.status.1','transit_imports.source.1','transit_imports.version_id.1','transit_imports.report.1','transit_imports.error.1','transit_imports.requested_by.1',1692,1806);
INSERT INTO transit_imports VALUES('transit_imports.id.2','transit_imports.feed_name.2','transit_imports.status.2','transit_imports.source.2','transit_imports.version_id.2','transit_imports.report.2','transit_imports.error.2','transit_imports.requested_by.2',2692,2806);
CREATE TABLE transit_agencies (
    version_id TEXT NOT NULL, agency_id TEXT, agency_name TEXT NOT NULL, agency_url TEXT NOT NULL,
    agency_timezone TEXT NOT NULL, agency_lang TEXT, agency_phone TEXT
);
INSERT INTO transit_agencies VALUES('transit_agencies.version_id.1','transit_agencies.agency_id.1','transit_agencies.agency_name.1','transit_agencies.agency_url.1','transit_agencies.agency_timezone.1','transit_agencies.agency_lang.1','transit_agencies.agency_phone.1');
INSERT INTO transit_agencies VALUES('transit_agencies.version_id.2','transit_agencies.agency_id.2','transit_agencies.agency_name.2','transit_agencies.agency_url.2','transit_agencies.agency_timezone.2','transit_agencies.agency_lang.2','transit_agencies.agency_phone.2');
CREATE TABLE transit_stops (
    version_id TEXT NOT NULL, stop_id TEXT NOT NULL, stop_code TEXT, stop_name TEXT, stop_desc TEXT,
    stop_lat DOUBLE PRECISION, stop_lon DOUBLE PRECISION, zone_id TEXT, stop_url TEXT, location_type INTEGER NOT NULL,
    parent_station TEXT, stop_timezone TEXT, wheelchair_boarding INTEGER NOT NULL, level_id TEXT, platform_code TEXT,
    PRIMARY KEY (version_id, stop_id)
);
INSERT INTO transit_stops VALUES('transit_stops.version_id.1','transit_stops.stop_id.1','transit_stops.stop_code.1','transit_stops.stop_name.1','transit_stops.stop_desc.1',9.625,10.625,'transit_stops.zone_id.1','transit_stops.stop_url.1',1845,'transit_stops.parent_station.1','transit_stops.stop_timezone.1',1431,'transit_stops.level_id.1','transit_stops.platform_code.1');
INSERT INTO transit_stops VALUES('transit_stops.version_id.2','transit_stops.stop_id.2','transit_stops.stop_code.2','transit_stops.stop_name.2','transit_stops.stop_desc.2',10.625,11.625,'transit_stops.zone_id.2','transit_stops.stop_url.2',2845,'transit_stops.parent_station.2','transit_stops.stop_timezone.2',2431,'transit_stops.level_id.2','transit_stops.platform_code.2');
CREATE TABLE transit_routes (
    version_id TEXT NOT NULL, route_id TEXT NOT NULL, agency_id TEXT, route_short_name TEXT, route_long_name TEXT,
    route_desc TEXT, route_type INTEGER NOT NULL, route_url TEXT, route_color TEXT, route_text_color TEXT,
    route_sort_order INTEGER,
    PRIMARY KEY (version_id, route_id)
);
INSERT INTO transit_routes VALUES('transit_routes.version_id.1','transit_routes.route_id.1','transit_routes.agency_id.1','transit_routes.route_short_name.1','transit_routes.route_long_name.1','transit_routes.route_desc.1',1652,'transit_routes.route_url.1','transit_routes.route_color.1','transit_routes.route_text_color.1',1296);
INSERT INTO transit_routes VALUES('transit_routes.version_id.2','transit_routes.route_id.2','transit_routes.agency_id.2','transit_routes.route_short_name.2','transit_routes.route_long_name.2','transit_routes.route_desc.2',2652,'transit_routes.route_url.2','transit_routes.route_color.2','transit_routes.route_text_color.2',2296);
CREATE TABLE transit_trips (
    version_id TEXT NOT NULL, trip_id TEXT NOT NULL, route_id TEXT NOT NULL, service_id TEXT NOT NULL,
    trip_headsign TEXT, trip_short_name TEXT, direction_id INTEGER, block_id TEXT, shape_id TEXT,
    wheelchair_accessible INTEGER NOT NULL, bikes_allowed INTEGER NOT NULL,
    PRIMARY KEY (version_id, trip_id)
);
INSERT INTO transit_trips VALUES('transit_trips.version_id.1','transit_trips.trip_id.1','transit_trips.route_id.1','transit_trips.service_id.1','transit_trips.trip_headsign.1','transit_trips.trip_short_name.1',1697,'transit_trips.block_id.1','transit_trips.shape_id.1',1624,1801);
INSERT INTO transit_trips VALUES('transit_trips.version_id.2','transit_trips.trip_id.2','transit_trips.route_id.2','transit_trips.service_id.2','transit_trips.trip_headsign.2','transit_trips.trip_short_name.2',2697,'transit_trips.block_id.2','transit_trips.shape_id.2',2624,2801);
CREATE TABLE transit_stop_times (
    version_id TEXT NOT NULL, trip_id TEXT NOT NULL, stop_sequence INTEGER NOT NULL, stop_id TEXT NOT NULL,
    arrival_time INTEGER, departure_time INTEGER, stop_headsign TEXT, pickup_type INTEGER NOT NULL,
    drop_off_type INTEGER NOT NULL, shape_dist_traveled DOUBLE PRECISION, timepoint INTEGER,
    PRIMARY KEY (version_id, trip_id, stop_sequence)
);
INSERT INTO transit_stop_times VALUES('transit_stop_times.version_id.1','transit_stop_times.trip_id.1',1378,'transit_stop_times.stop_id.1',1251,1470,'transit_stop_times.stop_headsign.1',1169,1364,7.5,1954);
INSERT INTO transit_stop_times VALUES('transit_stop_times.version_id.2','transit_stop_times.trip_id.2',2378,'transit_stop_times.stop_id.2',2251,2470,'transit_stop_times.stop_headsign.2',2169,2364,8.5,2954);
CREATE TABLE transit_calendar (
    version_id TEXT NOT NULL, service_id TEXT NOT NULL, monday INTEGER NOT NULL, tuesday INTEGER NOT NULL,
    wednesday INTEGER NOT NULL, thursday INTEGER NOT NULL, friday INTEGER NOT NULL, saturday INTEGER NOT NULL,
    sunday INTEGER NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL,
    PRIMARY KEY (version_id, service_id)
);
INSERT INTO transit_calendar VALUES('transit_calendar.version_id.1','transit_calendar.service_id.1',1348,1467,1664,1584,1339,1577,1360,'transit_calendar.start_date.1','transit_calendar.end_date.1');
INSERT INTO transit_calendar VALUES('transit_calendar.version_id.2','transit_calendar.service_id.2',2348,2467,2664,2584,2339,2577,2360,'transit_calendar.start_date.2','transit_calendar.end_date.2');
CREATE TABLE transit_calendar_dates (
    version_id TEXT NOT NULL, service_id TEXT NOT NULL, date TEXT NOT NULL, exception_type INTEGER NOT NULL,
    PRIMARY KEY (version_id, service_id, date)
);
INSERT INTO transit_calendar_dates VALUES('transit_calendar_dates.version_id.1','transit_calendar_dates.service_id.1','transit_calendar_dates.date.1',1847);
INSERT INTO transit_calendar_dates VALUES('transit_calendar_dates.version_id.2','transit_calendar_dates.service_id.2','transit_calendar_dates.date.2',2847);
CREATE TABLE transit_frequencies (
    version_id TEXT NOT NULL, trip_id TEXT NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,
    headway_secs INTEGER NOT NULL, exact_times INTEGER NOT NULL
);
INSERT INTO transit_frequencies VALUES('transit_frequencies.version_id.1','transit_frequencies.trip_id.1',1139,1889,1319,1229);
INSERT INTO transit_frequencies VALUES('transit_frequencies.version_id.2','transit_frequencies.trip_id.2',2139,2889,2319,2229);
CREATE TABLE transit_transfers (
    version_id TEXT NOT NULL, from_stop_id TEXT, to_stop_id TEXT, from_route_id TEXT, to_route_id TEXT,
    from_trip_id TEXT, to_trip_id TEXT, transfer_type INTEGER NOT NULL, min_transfer_time INTEGER
);
INSERT INTO transit_transfers VALUES('transit_transfers.version_id.1','transit_transfers.from_stop_id.1','transit_transfers.to_stop_id.1','transit_transfers.from_route_id.1','transit_transfers.to_route_id.1','transit_transfers.from_trip_id.1','transit_transfers.to_trip_id.1',1275,1675);
INSERT INTO transit_transfers VALUES('transit_transfers.version_id.2','transit_transfers.from_stop_id.2','transit_transfers.to_stop_id.2','transit_transfers.from_route_id.2','transit_transfers.to_route_id.2','transit_transfers.from_trip_id.2','transit_transfers.to_trip_id.2',2275,2675);
CREATE TABLE transit_shapes (
    version_id TEXT NOT NULL, shape_id TEXT NOT NULL, shape_pt_sequence INTEGER NOT NULL,
    shape_pt_lat DOUBLE PRECISION NOT NULL, shape_pt_lon DOUBLE PRECISION NOT NULL, shape_dist_traveled DOUBLE PRECISION,
    PRIMARY KEY (version_id, shape_id, shape_pt_sequence)
);
INSERT INTO transit_shapes VALUES('transit_shapes.version_id.1','transit_shapes.shape_id.1',1325,3.75,4.75,7.5);
INSERT INTO transit_shapes VALUES('transit_shapes.version_id.2','transit_shapes.shape_id.2',2325,4.75,5.75,8.5);
CREATE TABLE transit_fare_attributes (
    version_id TEXT NOT NULL, fare_id TEXT NOT NULL, price DOUBLE PRECISION NOT NULL, currency_type TEXT NOT NULL,
    payment_method INTEGER NOT NULL, transfers INTEGER, agency_id TEXT, transfer_duration INTEGER,
    PRIMARY KEY (version_id, fare_id)
);
INSERT INTO transit_fare_attributes VALUES('transit_fare_attributes.version_id.1','transit_fare_attributes.fare_id.1',11.749999999999999999,'transit_fare_attributes.currency_type.1',1983,1465,'transit_fare_attributes.agency_id.1',1318);
INSERT INTO transit_fare_attributes VALUES('transit_fare_attributes.version_id.2','transit_fare_attributes.fare_id.2',12.749999999999999999,'transit_fare_attributes.currency_type.2',2983,2465,'transit_fare_attributes.agency_id.2',2318);
CREATE TABLE transit_fare_rules (
    version_id TEXT NOT NULL, fare_id TEXT NOT NULL, route_id TEXT, origin_id TEXT, destination_id TEXT, contains_id TEXT
);
INSERT INTO transit_fare_rules VALUES('transit_fare_rules.version_id.1','transit_fare_rules.fare_id.1','transit_fare_rules.route_id.1','transit_fare_rules.origin_id.1','transit_fare_rules.destination_id.1','transit_fare_rules.contains_id.1');
INSERT INTO transit_fare_rules VALUES('transit_fare_rules.version_id.2','transit_fare_rules.fare_id.2','transit_fare_rules.route_id.2','transit_fare_rules.origin_id.2','transit_fare_rules.destination_id.2','transit_fare_rules.contains_id.2');
CREATE TABLE transit_realtime_feeds (
    source TEXT PRIMARY KEY,
    feed_name TEXT NOT NULL,
    payload BLOB,
    feed_timestamp BIGINT,
    received_at BIGINT,
    etag TEXT,
    last_modified TEXT,
    next_poll_at BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    updated_at BIGINT NOT NULL
);
INSERT INTO transit_realtime_feeds VALUES('transit_realtime_feeds.source.1','transit_realtime_feeds.feed_name.1',X'7472616e7369745f7265616c74696d655f66656564732e7061796c6f61642e31',1821,1489,'transit_realtime_feeds.etag.1','transit_realtime_feeds.last_modified.1',1631,'transit_realtime_feeds.last_error.1',1393);
INSERT INTO transit_realtime_feeds VALUES('transit_realtime_feeds.source.2','transit_realtime_feeds.feed_name.2',X'7472616e7369745f7265616c74696d655f66656564732e7061796c6f61642e32',2821,2489,'transit_realtime_feeds.etag.2','transit_realtime_feeds.last_modified.2',2631,'transit_realtime_feeds.last_error.2',2393);
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
);
INSERT INTO transit_alerts VALUES('transit_alerts.id.1','transit_alerts.severity.1','transit_alerts.header.1','transit_alerts.description.1','transit_alerts.cause.1','transit_alerts.effect.1','transit_alerts.url.1','transit_alerts.affected_routes.1','transit_alerts.affected_stops.1',1814,1567,'transit_alerts.created_by.1',1561,1576);
INSERT INTO transit_alerts VALUES('transit_alerts.id.2','transit_alerts.severity.2','transit_alerts.header.2','transit_alerts.description.2','transit_alerts.cause.2','transit_alerts.effect.2','transit_alerts.url.2','transit_alerts.affected_routes.2','transit_alerts.affected_stops.2',2814,2567,'transit_alerts.created_by.2',2561,2576);
CREATE TABLE transit_favorites (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    stop_id TEXT NOT NULL,
    label TEXT,
    sort_order INTEGER NOT NULL,
    notifications_enabled INTEGER NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
INSERT INTO transit_favorites VALUES('transit_favorites.id.1','transit_favorites.user_id.1','transit_favorites.stop_id.1','transit_favorites.label.1',1944,1071,1889,1904);
INSERT INTO transit_favorites VALUES('transit_favorites.id.2','transit_favorites.user_id.2','transit_favorites.stop_id.2','transit_favorites.label.2',2944,2071,2889,2904);
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
);
INSERT INTO transit_alert_versions VALUES('transit_alert_versions.alert_id.1','transit_alert_versions.fingerprint.1','transit_alert_versions.alert.1','transit_alert_versions.status.1',1023,'transit_alert_versions.claimed_by.1',1570,1279,1780,1703,1433,1547);
INSERT INTO transit_alert_versions VALUES('transit_alert_versions.alert_id.2','transit_alert_versions.fingerprint.2','transit_alert_versions.alert.2','transit_alert_versions.status.2',2023,'transit_alert_versions.claimed_by.2',2570,2279,2780,2703,2433,2547);
CREATE TABLE transit_alert_pushes (
    alert_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    user_id TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    opened_at BIGINT,
    PRIMARY KEY (alert_id, fingerprint, user_id)
);
INSERT INTO transit_alert_pushes VALUES('transit_alert_pushes.alert_id.1','transit_alert_pushes.fingerprint.1','transit_alert_pushes.user_id.1','transit_alert_pushes.notification_id.1',1208,1115);
INSERT INTO transit_alert_pushes VALUES('transit_alert_pushes.alert_id.2','transit_alert_pushes.fingerprint.2','transit_alert_pushes.user_id.2','transit_alert_pushes.notification_id.2',2208,2115);
CREATE TABLE transit_alert_mutes (
    user_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    until_at BIGINT NOT NULL,
    alert_id TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, kind, entity_id)
);
INSERT INTO transit_alert_mutes VALUES('transit_alert_mutes.user_id.1','transit_alert_mutes.kind.1','transit_alert_mutes.entity_id.1',1927,'transit_alert_mutes.alert_id.1',1102);
INSERT INTO transit_alert_mutes VALUES('transit_alert_mutes.user_id.2','transit_alert_mutes.kind.2','transit_alert_mutes.entity_id.2',2927,'transit_alert_mutes.alert_id.2',2102);
CREATE TABLE transit_alert_digests (
    user_id TEXT NOT NULL,
    alert_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    due_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, alert_id)
);
INSERT INTO transit_alert_digests VALUES('transit_alert_digests.user_id.1','transit_alert_digests.alert_id.1','transit_alert_digests.fingerprint.1',1886,1299);
INSERT INTO transit_alert_digests VALUES('transit_alert_digests.user_id.2','transit_alert_digests.alert_id.2','transit_alert_digests.fingerprint.2',2886,2299);
CREATE TABLE rider_ratings (
    user_id TEXT PRIMARY KEY,
    rating_total BIGINT NOT NULL DEFAULT 0,
    rating_count BIGINT NOT NULL DEFAULT 0
);
INSERT INTO rider_ratings VALUES('rider_ratings.user_id.1',1683,1688);
INSERT INTO rider_ratings VALUES('rider_ratings.user_id.2',2683,2688);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
CREATE INDEX realtime_events_created_at ON realtime_events (created_at);
CREATE INDEX realtime_sessions_updated_at ON realtime_sessions (updated_at);
CREATE INDEX realtime_presence_user ON realtime_presence (user_id);
CREATE INDEX notifications_user_created ON notifications (user_id, created_at);
CREATE INDEX notifications_user_unread ON notifications (user_id, read_at, deleted_at);
CREATE INDEX push_devices_user ON push_devices (user_id);
CREATE INDEX notification_deliveries_due ON notification_deliveries (status, next_attempt_at);
CREATE INDEX notification_deliveries_notification ON notification_deliveries (notification_id);
CREATE INDEX drivers_updated_at ON drivers (updated_at);
CREATE INDEX drivers_approval ON drivers (approval_status, online);
CREATE INDEX jobs_customer ON jobs (customer_id, created_at);
CREATE INDEX jobs_driver ON jobs (driver_id, status);
CREATE INDEX jobs_due_round ON jobs (status, next_round_at);
CREATE INDEX jobs_open_position ON jobs (status, latitude);
CREATE INDEX job_offers_driver ON job_offers (driver_id, offered_at);
CREATE INDEX job_events_job ON job_events (job_id, created_at);
CREATE INDEX job_adjustments_due ON job_adjustments (status, deadline_at);
CREATE INDEX payment_holds_pending ON payment_holds (next_attempt_at);
CREATE INDEX payment_events_job ON payment_events (job_id, created_at);
CREATE INDEX ledger_entries_reference ON ledger_entries (reference, created_at);
CREATE INDEX ride_requests_due ON ride_requests (state, next_round_at);
CREATE INDEX ride_requests_cell ON ride_requests (surge_cell, state);
CREATE INDEX ride_requests_rider ON ride_requests (rider_id, created_at);
CREATE UNIQUE INDEX trips_driver_active ON trips (driver_id) WHERE state IN ('ACCEPTED', 'ARRIVED', 'IN_PROGRESS');
CREATE INDEX trips_rider ON trips (rider_id, state);
CREATE INDEX trip_events_trip ON trip_events (trip_id, created_at);
CREATE INDEX transit_feed_versions_feed ON transit_feed_versions (feed_name, imported_at);
CREATE INDEX transit_imports_feed ON transit_imports (feed_name, created_at);
CREATE INDEX transit_agencies_version ON transit_agencies (version_id);
CREATE INDEX transit_frequencies_version ON transit_frequencies (version_id, trip_id);
CREATE INDEX transit_transfers_version ON transit_transfers (version_id, from_stop_id);
CREATE INDEX transit_fare_rules_version ON transit_fare_rules (version_id, fare_id);
CREATE INDEX transit_alerts_end ON transit_alerts (active_end);
CREATE UNIQUE INDEX transit_favorites_user_stop ON transit_favorites (user_id, stop_id);
CREATE INDEX transit_favorites_stop ON transit_favorites (stop_id);
CREATE INDEX transit_alert_versions_due ON transit_alert_versions (status, due_at);
CREATE INDEX transit_alert_versions_alert ON transit_alert_versions (alert_id, created_at);
CREATE INDEX transit_alert_pushes_user ON transit_alert_pushes (user_id, alert_id, created_at);
CREATE INDEX transit_alert_digests_due ON transit_alert_digests (due_at);
COMMIT;
