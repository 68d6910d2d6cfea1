"""A ride's Live Activity through the real binary on both engines, against the mock APNs: the
match starts it with the rider's push-to-start token, the driver's approach updates it within
the update budget, the transitions update it at priority 10 and the completion ends it. The
mock checks each push as APNs and a phone would (the app's key for its topic, the
`.push-type.liveactivity` topic, Apple's payload: `LiveActivityCheck`), so every push that it
answered 200 was one a phone would show."""

from __future__ import annotations

import json
import math
import secrets
import time
import uuid

from conftest import wait_until
from test_push_providers import TIMEOUT, database, mint_token, mock_apns, new_user, write_apns_key  # noqa: F401 (fixtures)

TOPIC = "com.example.rider"
PICKUP = {"latitude": 37.7749, "longitude": -122.4194, "address": "123 Market St, San Francisco"}
DROPOFF = {"latitude": 37.8044, "longitude": -122.2712, "address": "456 Broadway, Oakland"}
ROUTINE_SECONDS = 2


def activity_pushes(mock) -> list[dict]:
    return [line for line in mock.lines() if line.get("push_type") == "liveactivity"]


def start_with_mock_apns(database, mock_apns, herald, tmp_path, routine_seconds: int, **sections):  # noqa: F811
    """The mock APNs checking the rider app's key, and Herald pushing to it."""
    key = write_apns_key(tmp_path)
    mock = mock_apns("--log-payloads", "--app", f"{TOPIC}=KEYRIDER01={key}")
    config = tmp_path / "herald.json"
    config.write_text(json.dumps({
        "push": {"request_timeout_ms": 5000, "poll_interval_ms": 200,
                 "apns": {"team_id": "TEAM123456", "key_id": "KEYRIDER01", "private_key_file": str(key), "topic": TOPIC,
                          "base_url": mock.base_url, "ca_file": mock.ca_file}},
        "notifications": {"live_activities": {"routine_interval_seconds": routine_seconds}},
        "rate_limits": {"authenticated": {"limit": 100000, "window_seconds": 60}},
        **sections,
    }), encoding="utf-8")
    extra = ("--database", database) if database else ()
    return mock, herald.start("--config", str(config), *extra)


def test_a_ride_starts_updates_and_ends_its_live_activity(database, mock_apns, herald, tmp_path):  # noqa: F811
    mock, server = start_with_mock_apns(database, mock_apns, herald, tmp_path, routine_seconds=ROUTINE_SECONDS,
                                        trips={"location": {"active_per_second": 50, "burst": 5}})
    rider_id, driver_id = new_user("rider"), new_user("driver")
    rider = mint_token(server.data_dir, rider_id)
    driver = mint_token(server.data_dir, driver_id, role="driver")
    operator = mint_token(server.data_dir, "ops", role="operator")

    start_token, activity_token = secrets.token_hex(40), secrets.token_hex(40)
    reply = server.put("/api/v1/live-activities/start-tokens", rider, json={"kind": "trip", "push_token": start_token})
    assert reply.status_code == 201, reply.text

    assert server.put("/api/v1/drivers/me", driver, json={"name": "Alex Smith", "truck_type": "sedan"}).status_code == 201
    assert server.request("POST", f"/api/v1/operators/drivers/{driver_id}/approval", operator, json={"status": "approved"}).status_code == 200
    assert server.request("POST", "/api/v1/drivers/online", driver, json={"online": True}).status_code == 200
    assert server.put("/api/v1/drivers/me/vehicle", driver, json={"make": "Toyota", "model": "Camry", "color": "Silver",
                                                                  "license_plate": "ABC123", "capacity": 4}).status_code == 200
    north = 1500.0

    def move(meters_north: float, speed: float = 12.0) -> None:
        reply = server.request("POST", "/api/v1/drivers/location", driver,
                               json={"latitude": PICKUP["latitude"] + meters_north / 111_200, "longitude": PICKUP["longitude"],
                                     "accuracy_meters": 5, "speed_mps": speed})
        assert reply.status_code == 200, reply.text

    move(north)
    booked = server.request("POST", "/api/v1/ride-requests", rider, headers={"Idempotency-Key": secrets.token_hex(8)},
                            json={"pickup": PICKUP, "dropoff": DROPOFF, "ride_type": "STANDARD", "passenger_count": 1})
    assert booked.status_code == 201, booked.text
    accepted = server.request("POST", f"/api/v1/drivers/ride-requests/{booked.json()['data']['request_id']}/accept", driver)
    assert accepted.status_code == 200, accepted.text
    trip_id = accepted.json()["data"]["trip_id"]

    # The match starts the activity on the rider's phone.
    wait_until(lambda: len(activity_pushes(mock)) >= 1, TIMEOUT, message="the start push")
    start = activity_pushes(mock)[0]
    assert start["token"] == start_token and start["answer"] == 200, start
    assert (start["topic"], start["kid"], start["iss"]) == (f"{TOPIC}.push-type.liveactivity", "KEYRIDER01", "TEAM123456")
    assert start["headers"]["apns-priority"] == "10"
    aps = start["payload"]["aps"]
    assert aps["event"] == "start" and aps["attributes-type"] == "TripActivityAttributes" and aps["attributes"]["trip_id"] == trip_id
    assert aps["content-state"]["state"] == "ACCEPTED" and aps["content-state"]["vehicle"] == "Silver Toyota Camry"

    # The phone hands the app the activity's update token; the app registers it.
    registered = server.request("POST", "/api/v1/live-activities", rider,
                                json={"activity_id": str(uuid.uuid4()), "kind": "trip", "subject_id": trip_id, "push_token": activity_token})
    assert registered.status_code == 201, registered.text

    # The driver approaches for a while, ten samples a second with a changing speed: the ETA
    # moves often, the activity gets at most one routine push per interval.
    began = time.monotonic()
    samples = 0
    while time.monotonic() - began < 3 * ROUTINE_SECONDS:
        north -= 8
        samples += 1
        move(north, speed=6 + 6 * (1 + math.sin(samples / 3)))
        time.sleep(0.1)
    elapsed = time.monotonic() - began
    time.sleep(ROUTINE_SECONDS + 0.5)  # the last coalesced update is due an interval after the push before it
    routine = [line for line in activity_pushes(mock) if line["token"] == activity_token]
    assert routine, "no ETA update reached the activity"
    assert all(line["headers"]["apns-priority"] == "5" and line["payload"]["aps"]["event"] == "update" for line in routine), routine
    assert len(routine) <= math.ceil((elapsed + ROUTINE_SECONDS + 0.5) / ROUTINE_SECONDS) + 1, (len(routine), samples, elapsed)
    # (No bound from the sample count: on a busy machine fewer samples go out in the time, not fewer pushes.)
    assert all(line["payload"]["aps"]["content-state"]["eta_kind"] == "pickup" for line in routine)

    # The arrival, the ride, the end: each at once, at priority 10.
    for step in ["ARRIVED", "IN_PROGRESS", "COMPLETED"]:
        move(0.0)
        moved = server.request("POST", f"/api/v1/trips/{trip_id}/transitions", driver, json={"to": step})
        assert moved.status_code == 200, moved.text
    wait_until(lambda: any(line["payload"]["aps"]["event"] == "end" for line in activity_pushes(mock)), TIMEOUT, message="the end push")
    pushes = [line for line in activity_pushes(mock) if line["token"] == activity_token]
    important = [line for line in pushes if line["headers"]["apns-priority"] == "10"]
    assert [line["payload"]["aps"]["content-state"]["state"] for line in important] == ["ARRIVED", "IN_PROGRESS", "COMPLETED"], important
    assert important[0]["payload"]["aps"]["alert"]["title"] == "Your driver has arrived"
    end = important[-1]["payload"]["aps"]
    # (A timestamp may run a second or two ahead of the clock: each push's is after the last one's.)
    assert end["event"] == "end" and abs(end["dismissal-date"] - (end["timestamp"] + 900)) <= 5, end
    stamps = [line["payload"]["aps"]["timestamp"] for line in pushes]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), stamps
    # Every push was one APNs took and a phone would show.
    assert all(line["answer"] == 200 for line in activity_pushes(mock)), [line for line in activity_pushes(mock) if line["answer"] != 200]
    # The mock logs a push before Herald records APNs's answer: wait for the record.
    listed = wait_until(lambda: (lambda rows: rows if rows and rows[0]["status"] == "ended" else None)(
        server.get("/api/v1/live-activities", token=rider).json()["data"]["live_activities"]), TIMEOUT, message="the activity recorded as ended")
    assert listed[0]["pushes_sent"] == len(pushes), listed


def test_a_stops_departures_channel_gets_one_broadcast_per_change(database, mock_apns, herald, tmp_path):  # noqa: F811
    """iOS 18 broadcast channels: thirty riders following one stop share one channel, made
    once through the mock's channel management API; a delay on a run leaving the stop (posted
    with Google's gtfs-realtime-bindings) is one broadcast to the channel, not one push per
    rider, and a board that did not change sends nothing."""
    from test_transit import delay, feed_message, live_feed, next_trip, zip_folder

    mock, server = start_with_mock_apns(database, mock_apns, herald, tmp_path, routine_seconds=0)
    ops = mint_token(server.data_dir, "ops", role="operator")
    service = mint_token(server.data_dir, "feeds-backend", role="service")
    started = server.request("POST", "/api/v1/transit/feeds/default/import", ops, data=zip_folder(live_feed(tmp_path / "live")),
                             headers={"Content-Type": "application/zip"})
    assert started.status_code == 202, started.text
    import_id = started.json()["data"]["id"]
    wait_until(lambda: server.get(f"/api/v1/transit/imports/{import_id}", ops).json()["data"]["status"] == "succeeded",
               TIMEOUT, message="the import")

    replies = [server.request("POST", "/api/v1/live-activities/channels", mint_token(server.data_dir, new_user("rider")),
                              json={"kind": "departures", "subject_id": "A"}) for _ in range(30)]
    assert [r.status_code for r in replies] == [201] + [200] * 29, [r.text for r in replies if r.status_code >= 300]
    channel_ids = {r.json()["data"]["channel_id"] for r in replies}
    assert len(channel_ids) == 1
    channel_id = channel_ids.pop()
    made = replies[0].json()["data"]
    assert made["attributes"]["stop_name"] == "Alpha" and made["content_state"]["departures"], made
    creations = [line for line in mock.lines() if line.get("kind") == "channel"]
    assert len(creations) == 1 and creations[0]["method"] == "POST" and creations[0]["answer"] == 201, creations
    assert creations[0]["channel_id"] == channel_id and creations[0]["kid"] == "KEYRIDER01"

    def broadcasts() -> list[dict]:
        return [line for line in mock.lines() if line.get("kind") == "broadcast"]

    trip, leaves = next_trip()
    date = leaves.strftime("%Y%m%d")

    def delayed(seconds: int) -> list[dict]:
        return [b for b in broadcasts()
                if any(d["trip_id"] == trip and d["delay_seconds"] == seconds for d in b["payload"]["aps"]["content-state"]["departures"])]

    for seconds in (240, 360):
        message = feed_message([delay(trip, date, seconds)])
        posted = server.request("POST", "/api/v1/transit/realtime", service, data=message.SerializeToString(),
                                headers={"Content-Type": "application/x-protobuf"})
        assert posted.status_code == 200, posted.text
        wait_until(lambda: delayed(seconds), TIMEOUT, message=f"the broadcast of a {seconds} s delay")
        # The same message again is no change.
        again = server.request("POST", "/api/v1/transit/realtime", service, data=message.SerializeToString(),
                               headers={"Content-Type": "application/x-protobuf"})
        assert again.status_code == 200, again.text
    time.sleep(1.0)
    sent = broadcasts()
    # One push per change for the thirty riders: each delay went once, each broadcast carries
    # another board than the one before, and APNs (the mock) took every one.
    assert len(delayed(240)) == 1 and len(delayed(360)) == 1, sent
    boards = [b["payload"]["aps"]["content-state"] for b in sent]
    assert all(a != b for a, b in zip(boards, boards[1:])), boards
    assert all(b["answer"] == 200 and b["channel_id"] == channel_id and b["kid"] == "KEYRIDER01" for b in sent), sent
    assert all(b["headers"]["apns-push-type"] == "liveactivity" and "apns-topic" not in b["headers"] for b in sent), sent
    assert len(sent) <= 4, sent  # the two delays, and at most a departure or two leaving meanwhile
