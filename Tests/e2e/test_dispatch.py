"""Dispatch end to end with python-socketio clients as drivers and customer: only
drivers inside the radius hear `job:new`; after one accepts, the others get `job:status` and
their feeds drop the job; the customer's socket gets `job:driver-assigned`; an offline
driver gets a push instead. Once on one SQLite node, once on two PostgreSQL nodes (socket
clients on one node, the job booked and claimed through the other)."""

from __future__ import annotations

import json
import queue
import secrets
import time
from pathlib import Path

import pytest
import socketio

from conftest import WAIT, HeraldLauncher, _finish, http_session, issue_token, wait_until

TIMEOUT = WAIT  # waits for what should happen; `nothing` checks keep their own short windows
SITE = (37.7749, -122.4194)


def write_config(directory: Path, node: str = "a") -> tuple[Path, Path]:
    """One config per node: each node's push worker appends to its own log (two processes
    appending to one file could interleave their lines)."""
    log_file = directory / f"push-{node}.jsonl"
    config = {
        "notifications": {"ack_timeout_ms": 800},
        "push": {"log_file": str(log_file), "poll_interval_ms": 100},
        "dispatch": {"radius_km": 30, "index_sync_interval_ms": 200},
    }
    path = directory / f"herald-{node}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path, log_file


class Deployment:
    """One node (SQLite) or two nodes on one PostgreSQL database: `front` takes REST calls,
    `sockets` takes the socket clients."""

    def __init__(self, launcher: HeraldLauncher, workdir: Path, database: str | None):
        config, front_log = write_config(workdir, "a")
        self.push_logs = [front_log]
        self.env = {"HERALD_JWT_SECRET": secrets.token_urlsafe(48)}
        self.token_dir = workdir / "tokens"
        self.front = launcher.start("--config", str(config), data_dir=workdir / "a", database=database, env=self.env)
        self.sockets = self.front
        if database:
            second, sockets_log = write_config(workdir, "b")
            self.push_logs.append(sockets_log)
            self.sockets = launcher.start("--config", str(second), data_dir=workdir / "b", database=database, env=self.env)

    def token(self, user: str, role: str = "customer") -> str:
        return issue_token(self.token_dir, user=user, role=role, env=self.env)

    def pushes(self) -> list[dict]:
        """Every push either node's log sender recorded (whole lines only)."""
        lines = []
        for log in self.push_logs:
            if log.exists():
                text = log.read_text(encoding="utf-8")
                lines += [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]
        return lines


@pytest.fixture(params=["sqlite", "postgres"])
def deployment(request, tmp_path):
    launcher = HeraldLauncher(tmp_path)
    database = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    try:
        yield Deployment(launcher, tmp_path, database)
    finally:
        _finish(launcher)


class Client:
    """A python-socketio client recording dispatch events (it acks whatever asks for an ack,
    like a foregrounded app)."""

    EVENTS = ("job:new", "job:status", "job:driver-assigned", "notification")

    def __init__(self, server, token: str):
        self.sio = socketio.Client(reconnection=False, handle_sigint=False, http_session=http_session())
        self.events: dict[str, queue.Queue] = {name: queue.Queue() for name in self.EVENTS}
        for name in self.EVENTS:
            self.sio.on(name, self._recorder(name))
        self.sio.connect(server.url, auth={"token": token}, transports=["websocket"], wait_timeout=TIMEOUT)

    def _recorder(self, name: str):
        def record(*args):
            self.events[name].put(args[0])
            return "ok"
        return record

    def next(self, name: str, timeout: float = TIMEOUT, where=lambda payload: True) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                payload = self.events[name].get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {name!r} event within {timeout}s") from None
            if where(payload):
                return payload

    def nothing(self, name: str, seconds: float) -> None:
        try:
            payload = self.events[name].get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected {name!r}: {payload}")

    def close(self) -> None:
        if self.sio.connected:
            self.sio.disconnect()


def make_driver(d: Deployment, user: str, km_north: float, operator: str) -> str:
    token = d.token(user, "driver")
    front = d.front
    assert front.put("/api/v1/drivers/me", token, json={"name": f"Driver {user}", "truck_type": "box_truck"}).status_code == 201
    approved = front.request("POST", f"/api/v1/operators/drivers/{user}/approval", operator, json={"status": "approved"})
    assert approved.status_code == 200, approved.text
    assert front.request("POST", "/api/v1/drivers/online", token, json={"online": True}).json()["data"]["online"] is True
    moved = front.request("POST", "/api/v1/drivers/location", token,
                          json={"lat": SITE[0] + km_north / 111.2, "lng": SITE[1], "accuracy": 8, "sequence": 1})
    assert moved.status_code == 200 and moved.json()["data"]["accepted"] is True, moved.text
    return token


def test_nearby_drivers_hear_of_a_job_and_the_first_accept_wins(deployment):
    d = deployment
    tag = secrets.token_hex(3)
    operator = d.token(f"ops-{tag}", "operator")
    near, other, far, asleep = (f"{name}-{tag}" for name in ("near", "other", "far", "asleep"))
    tokens = {near: make_driver(d, near, 5, operator), other: make_driver(d, other, 12, operator),
              far: make_driver(d, far, 80, operator), asleep: make_driver(d, asleep, 8, operator)}
    # The sleeping driver's app is closed: no socket, one iPhone registered for pushes.
    device = secrets.token_hex(32)
    registered = d.front.request("POST", "/api/v1/push/register", tokens[asleep],
                                 json={"token": device, "provider": "apns", "platform": "ios"})
    assert registered.status_code == 201, registered.text
    customer = f"cust-{tag}"
    customer_token = d.token(customer)
    clients = {user: Client(d.sockets, tokens[user]) for user in (near, other, far)}
    clients[customer] = Client(d.sockets, customer_token)
    try:
        # Positions also come as the socket event `location` (acked); an older sequence is ignored.
        moved = clients[far].sio.call("location", {"lat": SITE[0] + 79 / 111.2, "lng": SITE[1], "heading": 90, "sequence": 5}, timeout=TIMEOUT)
        assert moved == {"status": "ok", "accepted": True}, moved
        stale = clients[far].sio.call("location", {"lat": SITE[0], "lng": SITE[1], "sequence": 4}, timeout=TIMEOUT)
        assert stale["accepted"] is False and stale["reason"] == "stale_sequence" and stale["last_sequence"] == 5, stale
        bad = clients[far].sio.call("location", {"lat": 91, "lng": SITE[1]}, timeout=TIMEOUT)
        assert bad["status"] == "error" and bad["code"] == "VALIDATION_FAILED", bad
        refused = clients[customer].sio.call("location", {"lat": SITE[0], "lng": SITE[1]}, timeout=TIMEOUT)
        assert refused["code"] == "FORBIDDEN", refused
        if d.front is not d.sockets:
            time.sleep(0.5)  # the drivers' positions reach the other node's index (sync every 200 ms)
        booked = d.front.request("POST", "/api/v1/jobs", customer_token, json={
            "address": "1 Market St, San Francisco", "lat": SITE[0], "lng": SITE[1], "volume_estimate": 3.5,
            "items": [{"category": "mattress", "quantity": 1}]})
        assert booked.status_code == 201, booked.text
        job = booked.json()["data"]
        assert job["status"] == "pending" and job["price"]["currency"] == "USD"

        # Inside the radius: job:new with the distance; outside: nothing.
        for user, km in ((near, 5), (other, 12)):
            offer = clients[user].next("job:new", where=lambda p: p["id"] == job["id"])
            assert abs(offer["distance_m"] - km * 1000) < 200, offer
            assert offer["address"] == "1 Market St, San Francisco" and offer["price"]["amount_minor"] == job["price"]["amount_minor"]
        clients[far].nothing("job:new", 1.0)

        # The closed app gets a push of the job_new notification.
        pushes = wait_until(lambda: [p for p in d.pushes() if p["user_id"] == asleep], TIMEOUT, message="push to the sleeping driver")
        assert len(pushes) == 1 and pushes[0]["device_id"] == registered.json()["data"]["id"], pushes
        assert pushes[0]["title"] == "New Job Nearby" and pushes[0]["data"]["job_id"] == job["id"], pushes[0]
        # The dispatch design's data reaches the device as the server wrote it: apps route the tap on `type`.
        assert pushes[0]["data"]["type"] == "job:new" and pushes[0]["data"]["notification_type"] == "job_new", pushes[0]
        assert pushes[0]["request"]["payload"]["type"] == "job:new", pushes[0]["request"]

        # The first accept wins; the other driver's feed drops the job at once.
        won = d.front.request("POST", f"/api/v1/drivers/jobs/{job['id']}/accept", tokens[near])
        assert won.status_code == 200, won.text
        assert won.json()["data"]["job"]["driver_id"] == near
        status = clients[other].next("job:status", where=lambda p: p["job_id"] == job["id"])
        assert status["status"] == "accepted" and status["driver_id"] == near and status["driver_name"] == f"Driver {near}"
        feed = d.front.get("/api/v1/drivers/jobs/available", token=tokens[other]).json()["data"]
        assert job["id"] not in [j["id"] for j in feed["jobs"]], feed
        lost = d.front.request("POST", f"/api/v1/drivers/jobs/{job['id']}/accept", tokens[other])
        assert lost.status_code == 409 and lost.json()["error"]["code"] == "JOB_ALREADY_ACCEPTED", lost.text

        # The customer's socket (already open when the job was booked) hears who is coming.
        assigned = clients[customer].next("job:driver-assigned")
        assert assigned["job_id"] == job["id"]
        assert assigned["driver"]["id"] == near and assigned["driver"]["name"] == f"Driver {near}"
        assert assigned["driver"]["truck_type"] == "box_truck" and "avg_rating" in assigned["driver"] and assigned["driver"]["total_jobs"] == 0
        note = clients[customer].next("notification", where=lambda p: p["type"] == "driver_assigned")
        assert note["data"]["job_id"] == job["id"]

        # The winner's later steps reach the customer in the job room.
        step = d.front.request("POST", f"/api/v1/drivers/jobs/{job['id']}/status", tokens[near], json={"status": "en_route"})
        assert step.status_code == 200, step.text
        moving = clients[customer].next("job:status", where=lambda p: p["status"] == "en_route")
        assert moving["job_id"] == job["id"] and moving["previous_status"] == "accepted"

        # Operators see who was offered the job and how.
        offers = d.front.get(f"/api/v1/operators/jobs/{job['id']}/offers", token=operator).json()["data"]["offers"]
        channels = {o["driver_id"]: (o["channel"], o["outcome"]) for o in offers}
        assert channels == {near: ("socket", "won"), other: ("socket", "lost"), asleep: ("push", "lost")}, channels
    finally:
        for client in clients.values():
            client.close()


def test_a_customer_without_a_socket_is_pushed_on_each_device(tmp_path):
    """The customer's app is closed when a driver accepts; each of their devices gets the
    "driver assigned" push with the dispatch design's data."""
    launcher = HeraldLauncher(tmp_path)
    try:
        d = Deployment(launcher, tmp_path, None)
        tag = secrets.token_hex(3)
        operator = d.token(f"ops-{tag}", "operator")
        driver = f"drv-{tag}"
        driver_token = make_driver(d, driver, 3, operator)
        customer = f"cust-{tag}"
        customer_token = d.token(customer)
        phone, tablet = secrets.token_hex(32), f"fcm-{secrets.token_hex(40)}"
        for body in ({"token": phone, "provider": "apns", "platform": "ios"},
                     {"token": tablet, "provider": "fcm", "platform": "android"}):
            registered = d.front.request("POST", "/api/v1/push/register", customer_token, json=body)
            assert registered.status_code == 201, registered.text
        booked = d.front.request("POST", "/api/v1/jobs", customer_token, json={
            "address": "1 Market St, San Francisco", "lat": SITE[0], "lng": SITE[1], "volume_estimate": 2,
            "items": [{"category": "mattress", "quantity": 1}]})
        assert booked.status_code == 201, booked.text
        job_id = booked.json()["data"]["id"]
        accepted = d.front.request("POST", f"/api/v1/drivers/jobs/{job_id}/accept", driver_token)
        assert accepted.status_code == 200, accepted.text

        pushes = wait_until(lambda: (lambda p: p if len(p) >= 2 else None)(
            [p for p in d.pushes() if p["user_id"] == customer]), TIMEOUT, message="a push to each of the customer's devices")
        time.sleep(0.5)  # and no more than one each
        pushes = [p for p in d.pushes() if p["user_id"] == customer]
        assert sorted(p["provider"] for p in pushes) == ["apns", "fcm"], pushes
        for push in pushes:
            assert push["title"] == "Driver Assigned" and push["body"] == f"Driver {driver} has accepted your job.", push
            data = push["data"]
            assert data["job_id"] == job_id and data["type"] == "job_update" and data["status"] == "accepted", data
            assert data["driver_id"] == driver and data["notification_type"] == "driver_assigned", data
        [apns] = [p for p in pushes if p["provider"] == "apns"]
        payload = apns["request"]["payload"]
        assert payload["aps"]["alert"]["title"] == "Driver Assigned" and payload["type"] == "job_update", payload
        assert payload["job_id"] == job_id, payload
    finally:
        _finish(launcher)
