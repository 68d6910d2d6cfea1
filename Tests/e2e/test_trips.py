"""Ride requests, trips and live tracking end to end, with real clients: the
native WebSocket protocol (websocket-client) and python-socketio. Once on one SQLite node,
once on two PostgreSQL nodes (sockets on one node, REST calls on the other).

Covers the rideshare design's chaos cases: the rider's socket killed mid-trip then `reconnect` with no
gap; 20% of the driver's location updates lost on the way, the rider's view continuing with
the gaps and staleness reported; a reconnect storm of many clients following one trip."""

from __future__ import annotations

import json
import queue
import random
import secrets
import threading
import time
from pathlib import Path

import pytest
import socketio
import websocket

from conftest import WAIT, HeraldLauncher, _finish, http_session, issue_token

# Waits for what should happen (and the native client's socket timeout: a reader that hears
# nothing for this long stops): long, for a loaded machine.
TIMEOUT = WAIT
PICKUP = {"latitude": 37.7749, "longitude": -122.4194, "address": "123 Market St, San Francisco", "place_id": "pl_abc123"}
DROPOFF = {"latitude": 37.8044, "longitude": -122.2712, "address": "456 Broadway, Oakland", "place_id": "pl_def456"}


def write_config(directory: Path, node: str) -> Path:
    config = {
        "push": {"log_file": str(directory / f"push-{node}.jsonl"), "poll_interval_ms": 100},
        "dispatch": {"index_sync_interval_ms": 200},
        # Faster than the design's 1/s so a test can stream quickly; bursts of 5 as it says.
        "trips": {"location": {"active_per_second": 50, "burst": 5}},
        "rate_limits": {"authenticated": {"limit": 100000, "window_seconds": 60}},
    }
    path = directory / f"herald-{node}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


class Deployment:
    def __init__(self, launcher: HeraldLauncher, workdir: Path, database: str | None):
        self.env = {"HERALD_JWT_SECRET": secrets.token_urlsafe(48)}
        self.token_dir = workdir / "tokens"
        self.front = launcher.start("--config", str(write_config(workdir, "a")), data_dir=workdir / "a", database=database, env=self.env)
        self.sockets = self.front
        if database:
            self.sockets = launcher.start("--config", str(write_config(workdir, "b")), data_dir=workdir / "b", database=database, env=self.env)

    def token(self, user: str, role: str = "customer") -> str:
        return issue_token(self.token_dir, user=user, role=role, env=self.env)


@pytest.fixture(params=["sqlite", "postgres"])
def deployment(request, tmp_path):
    launcher = HeraldLauncher(tmp_path)
    database = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    try:
        yield Deployment(launcher, tmp_path, database)
    finally:
        _finish(launcher)


class Native:
    """A native protocol client (`/api/v1/realtime`): a reader thread files every message."""

    def __init__(self, server, token: str):
        self.ws = websocket.create_connection(server.url.replace("http://", "ws://") + f"/api/v1/realtime?token={token}", timeout=TIMEOUT)
        self.messages: queue.Queue = queue.Queue()
        self.kept: list[dict] = []
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        assert self.next("connected")["type"] == "connected"

    def _read(self) -> None:
        while True:
            try:
                text = self.ws.recv()
            except Exception:
                return
            if not text:
                return
            self.messages.put(json.loads(text))

    def send(self, message: dict) -> None:
        self.ws.send(json.dumps(message))

    def next(self, kind: str, timeout: float = TIMEOUT, where=lambda m: True) -> dict:
        return self.next_matching(lambda m: m.get("type") == kind and where(m), repr(kind), timeout)

    def next_of(self, kinds: tuple[str, ...], timeout: float = TIMEOUT) -> dict:
        """The next message of any of `kinds` (others are kept for later)."""
        return self.next_matching(lambda m: m.get("type") in kinds, f"none of {kinds}", timeout)

    def next_matching(self, wanted, what: str, timeout: float) -> dict:
        for index, message in enumerate(self.kept):
            if wanted(message):
                return self.kept.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {what} within {timeout}s; kept: {[m.get('type') for m in self.kept]}") from None
            if wanted(message):
                return message
            self.kept.append(message)

    def all(self, kind: str, count: int, timeout: float = TIMEOUT) -> list[dict]:
        return [self.next(kind, timeout) for _ in range(count)]

    def kill(self) -> None:
        """Drops the TCP connection (a tunnel), without a close handshake."""
        self.closed = True
        self.ws.shutdown()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.ws.close()


class SocketIOClient:
    EVENTS = ("ride:new", "ride:closed", "trip_state_changed", "driver_location", "eta_update", "state_sync", "location_warning")

    def __init__(self, server, token: str):
        self.sio = socketio.Client(reconnection=False, handle_sigint=False, http_session=http_session())
        self.events = {name: queue.Queue() for name in self.EVENTS}
        for name in self.EVENTS:
            self.sio.on(name, self._recorder(name))
        self.sio.connect(server.url, auth={"token": token}, transports=["websocket"], wait_timeout=TIMEOUT)

    def _recorder(self, name):
        def record(*args):
            self.events[name].put(args[0])
        return record

    def next(self, name: str, timeout: float = TIMEOUT, where=lambda p: True) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                payload = self.events[name].get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {name!r} event within {timeout}s") from None
            if where(payload):
                return payload

    def close(self) -> None:
        if self.sio.connected:
            self.sio.disconnect()


def make_driver(d: Deployment, user: str, meters_north: float, operator: str) -> str:
    token = d.token(user, "driver")
    assert d.front.put("/api/v1/drivers/me", token, json={"name": f"Alex {user}", "truck_type": "sedan"}).status_code == 201
    assert d.front.request("POST", f"/api/v1/operators/drivers/{user}/approval", operator, json={"status": "approved"}).status_code == 200
    assert d.front.request("POST", "/api/v1/drivers/online", token, json={"online": True}).status_code == 200
    vehicle = d.front.put("/api/v1/drivers/me/vehicle", token,
                          json={"make": "Toyota", "model": "Camry", "color": "Silver", "license_plate": "ABC123", "capacity": 4})
    assert vehicle.status_code == 200, vehicle.text
    moved = d.front.request("POST", "/api/v1/drivers/location", token,
                            json={"latitude": PICKUP["latitude"] + meters_north / 111_200, "longitude": PICKUP["longitude"],
                                  "accuracy_meters": 5, "sequence": 1})
    assert moved.status_code == 200 and moved.json()["data"]["accepted"] is True, moved.text
    return token


def book(d: Deployment, rider_token: str) -> dict:
    reply = d.front.request("POST", "/api/v1/ride-requests", rider_token, headers={"Idempotency-Key": secrets.token_hex(8)},
                            json={"pickup": PICKUP, "dropoff": DROPOFF, "ride_type": "STANDARD", "passenger_count": 1})
    assert reply.status_code == 201, reply.text
    return reply.json()["data"]


def location(lat: float, sequence: int, accuracy: float = 5.0) -> dict:
    return {"type": "location", "sequence": sequence,
            "payload": {"latitude": lat, "longitude": PICKUP["longitude"], "accuracy_meters": accuracy, "heading": 180.0,
                        "speed_mps": 10.0, "altitude_meters": 15.0, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "battery_percent": 72, "is_charging": False}}


def event_number(message: dict) -> int:
    return int(message["event_id"][len("evt_"):])


def test_a_ride_end_to_end_over_both_protocols_with_a_killed_socket_and_lost_updates(deployment):
    d = deployment
    tag = secrets.token_hex(3)
    operator = d.token(f"ops-{tag}", "operator")
    alex, blake, rider = f"alex-{tag}", f"blake-{tag}", f"rider-{tag}"
    alex_token = make_driver(d, alex, 600, operator)
    blake_token = make_driver(d, blake, 900, operator)
    rider_token = d.token(rider)

    driver_native = Native(d.sockets, alex_token)
    driver_native.send({"type": "subscribe", "channel": f"driver:{alex}"})
    assert driver_native.next("subscribed")["channel"] == f"driver:{alex}"
    blake_sio = SocketIOClient(d.sockets, blake_token)
    rider_native = Native(d.sockets, rider_token)
    rider_sio = SocketIOClient(d.front, rider_token)
    try:
        request = book(d, rider_token)
        assert request["state"] == "SEARCHING" and request["allowed_transitions"] == ["CANCELLED"]
        request_id = request["request_id"]
        # Both drivers are offered it: the native one on driver:{id}, the Socket.IO one as `ride:new`.
        assert driver_native.next("ride:new")["payload"]["request_id"] == request_id
        offer = blake_sio.next("ride:new")
        assert offer["request_id"] == request_id and offer["fare_estimate"] == request["fare_estimate"]

        accepted = d.front.request("POST", f"/api/v1/drivers/ride-requests/{request_id}/accept", alex_token)
        assert accepted.status_code == 200, accepted.text
        trip_id = accepted.json()["data"]["trip_id"]
        assert blake_sio.next("ride:closed")["reason"] == "accepted"
        late = d.front.request("POST", f"/api/v1/drivers/ride-requests/{request_id}/accept", blake_token)
        assert late.status_code == 409 and late.json()["error"]["code"] == "RIDE_ALREADY_ACCEPTED"

        # The rider learns the trip on their user channel and follows it from its first event.
        matched = rider_native.next("ride_request_updated")["payload"]
        assert matched["state"] == "MATCHED" and matched["trip_id"] == trip_id
        assert matched["trip"]["driver"]["vehicle"]["model"] == "Camry"
        rider_native.send({"type": "subscribe", "channel": f"trip:{trip_id}", "last_event_id": "evt_0"})
        assert rider_native.next("subscribed")["recovered"] is True
        change = rider_native.next("trip_state_changed")["payload"]
        assert (change["previous_state"], change["state"], change["triggered_by"]) == ("REQUESTED", "ACCEPTED", "DRIVER")
        # The Socket.IO rider was put in the room when the trip was made.
        assert rider_sio.next("trip_state_changed")["state"] == "ACCEPTED"
        # A stranger cannot follow the trip.
        stranger = Native(d.sockets, d.token(f"stranger-{tag}"))
        stranger.send({"type": "subscribe", "channel": f"trip:{trip_id}"})
        assert stranger.next("error")["code"] == "FORBIDDEN"
        stranger.close()

        # The driver streams over the native socket, heading for the pickup.
        lat = PICKUP["latitude"] + 600 / 111_200
        sequence = 1
        for _ in range(5):
            lat -= 20 / 111_200
            sequence += 1
            driver_native.send(location(lat, sequence))
            assert driver_native.next("location_result")["accepted"] is True
            time.sleep(0.12)  # clients may send 10 messages a second
        seen = rider_native.all("driver_location", 5)
        assert [m["payload"]["latitude"] for m in seen] == pytest.approx([PICKUP["latitude"] + (600 - 20 * i) / 111_200 for i in range(1, 6)])
        assert all(set(m["payload"]) >= {"latitude", "longitude", "heading", "speed_mps", "interpolation_hint", "server_timestamp"} for m in seen)
        assert all("battery_percent" not in m["payload"] and "accuracy_meters" not in m["payload"] for m in seen)
        eta = rider_native.next("eta_update")["payload"]
        assert eta["pickup_eta"]["seconds"] > 0 and eta["pickup_eta"]["confidence"] in ("HIGH", "MEDIUM", "LOW")
        assert isinstance(eta["route_polyline"], str) and eta["route_polyline"]
        assert eta["traffic_conditions"] in ("LIGHT", "MODERATE", "HEAVY", "UNKNOWN")
        assert rider_sio.next("driver_location")["latitude"] == pytest.approx(seen[0]["payload"]["latitude"])

        # A tunnel: the rider's socket dies. Meanwhile 20% of the driver's updates are lost on
        # the way (never sent) and the driver arrives.
        last_seen = event_number(seen[-1])
        rider_native.kill()
        random.seed(7)
        sent = []
        for _ in range(20):
            lat -= 10 / 111_200
            sequence += 1
            if random.random() < 0.2:
                continue
            driver_native.send(location(lat, sequence))
            assert driver_native.next("location_result")["accepted"] is True
            sent.append((sequence, lat))
            time.sleep(0.12)
        assert 10 <= len(sent) < 20
        arrived = d.front.request("POST", f"/api/v1/trips/{trip_id}/transitions", alex_token, json={"to": "ARRIVED"})
        assert arrived.status_code == 200, arrived.text

        # Reconnect: state_sync with every missed event in order, no gap, and the latest position.
        rider_native = Native(d.sockets, rider_token)
        rider_native.send({"type": "reconnect", "last_event_id": seen[-1]["event_id"], "trip_id": trip_id, "client_state": "ACCEPTED"})
        # (The connection was told the trip's state when it opened, `reason: "connect"`; this is the answer.)
        sync = rider_native.next("state_sync", where=lambda m: m.get("reason") != "connect")
        assert sync["current_state"] == "ARRIVED" and sync["recovered"] is True and sync["stale_client"] is True
        missed = sync["missed_events"]
        numbers = [event_number(m) for m in missed]
        assert numbers == list(range(last_seen + 1, last_seen + 1 + len(missed))), numbers
        locations = [m for m in missed if m["type"] == "driver_location"]
        assert [m["payload"]["latitude"] for m in locations] == pytest.approx([lat for _, lat in sent])
        # The lost updates show as gaps the client can render (longer interpolation, a count).
        gaps = [b - a - 1 for (a, _), (b, _) in zip(sent, sent[1:])]
        reported = [m["payload"].get("samples_missed", 0) for m in locations[1:]]
        assert reported == gaps and sum(gaps) > 0
        assert missed[-1]["type"] == "trip_state_changed" and missed[-1]["payload"]["state"] == "ARRIVED"
        latest = sync["latest_driver_location"]
        assert latest["latitude"] == pytest.approx(sent[-1][1]) and latest["age_seconds"] >= 0
        assert rider_sio.next("trip_state_changed", where=lambda p: p["state"] == "ARRIVED")["previous_state"] == "ACCEPTED"

        # REST fallback with ETag.
        trip = d.front.get(f"/api/v1/trips/{trip_id}", rider_token)
        assert trip.status_code == 200 and trip.json()["data"]["state"] == "ARRIVED"
        etag = trip.headers["ETag"]
        assert d.front.get(f"/api/v1/trips/{trip_id}", rider_token, headers={"If-None-Match": etag}).status_code == 304
        assert d.front.get(f"/api/v1/trips/{trip_id}", d.token(f"nosy-{tag}")).status_code == 404

        # Socket.IO: a reconnecting app gets the trip's state at once.
        rider_sio.close()
        rider_sio = SocketIOClient(d.front, rider_token)
        synced = rider_sio.next("state_sync")
        assert synced["trip_id"] == trip_id and synced["current_state"] == "ARRIVED" and synced["latest_driver_location"] is not None

        for step in ("IN_PROGRESS", "COMPLETED"):
            moved = d.front.request("POST", f"/api/v1/trips/{trip_id}/transitions", alex_token, json={"to": step})
            assert moved.status_code == 200, moved.text
            assert rider_native.next("trip_state_changed", where=lambda m: m["payload"]["state"] == step)
            assert rider_sio.next("trip_state_changed", where=lambda p: p["state"] == step)
        assert d.front.get(f"/api/v1/trips/{trip_id}", rider_token, headers={"If-None-Match": etag}).status_code == 200

        # Over the socket too, a burst beyond the limit gets the rideshare design's throttle message (no
        # trip now: one per 30 s online without one, after a burst of 5).
        for _ in range(8):
            sequence += 1
            driver_native.send(location(lat, sequence))
        # One answer per sample, a result or a throttle, in whatever order they come.
        answers = [driver_native.next_of(("location_result", "throttle")) for _ in range(8)]
        accepted = [a for a in answers if a["type"] == "location_result"]
        throttles = [a for a in answers if a["type"] == "throttle"]
        # What is left of the burst (4 or 5: the last trip sample used one) passes, the rest waits.
        assert len(accepted) in (4, 5) and all(a["accepted"] is True for a in accepted), answers
        assert all(t["code"] == "RATE_LIMITED" and t["limit"] == "1/30s" and t["retry_after_ms"] > 20_000 for t in throttles), throttles
    finally:
        for client in (driver_native, rider_native):
            client.close()
        blake_sio.close()
        rider_sio.close()


def test_a_reconnect_storm_loses_no_driver_location(deployment):
    d = deployment
    tag = secrets.token_hex(3)
    operator = d.token(f"ops-{tag}", "operator")
    driver = f"storm-driver-{tag}"
    driver_token = make_driver(d, driver, 500, operator)
    rider_token = d.token(f"storm-rider-{tag}")
    request_id = book(d, rider_token)["request_id"]
    accepted = d.front.request("POST", f"/api/v1/drivers/ride-requests/{request_id}/accept", driver_token)
    assert accepted.status_code == 200, accepted.text
    trip_id = accepted.json()["data"]["trip_id"]
    channel = f"trip:{trip_id}"
    # The rider and 24 operator consoles follow the trip; each drops and resumes three times.
    tokens = [rider_token] + [d.token(f"console-{i}-{tag}", "operator") for i in range(24)]
    total = 60
    errors: list[str] = []
    received: dict[int, list[int]] = {}

    def follower(index: int, token: str) -> None:
        try:
            got: list[int] = []
            last = "evt_0"
            rng = random.Random(index)
            for round_ in range(4):
                client = Native(d.sockets, token)
                client.send({"type": "subscribe", "channel": channel, "last_event_id": last})
                assert client.next("subscribed")["recovered"] is True
                # The last round stays until every location came (long: a loaded machine streams slowly).
                stay = rng.uniform(0.3, 1.2) if round_ < 3 else 5 * WAIT
                deadline = time.monotonic() + stay
                while time.monotonic() < deadline:
                    try:
                        message = client.next("driver_location", timeout=max(0.05, deadline - time.monotonic()))
                    except AssertionError:
                        break
                    got.append(event_number(message))
                    last = message["event_id"]
                    if round_ == 3 and len(got) >= total:
                        break
                client.kill() if round_ < 3 else client.close()
                time.sleep(rng.uniform(0, 0.2))
            received[index] = got
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(f"follower {index}: {error!r}")

    threads = [threading.Thread(target=follower, args=(i, t)) for i, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    streamer = Native(d.sockets, driver_token)
    lat = PICKUP["latitude"] + 500 / 111_200
    for sequence in range(2, total + 2):
        lat -= 5 / 111_200
        streamer.send(location(lat, sequence))
        assert streamer.next("location_result")["accepted"] is True
        time.sleep(0.12)
    for thread in threads:
        thread.join(5 * WAIT + 60)
    streamer.close()
    assert not errors, errors
    assert len(received) == len(tokens)
    for index, got in received.items():
        # Every location exactly once, in order, across four connections.
        assert len(got) == total and got == sorted(got) and len(set(got)) == total, (index, got)
