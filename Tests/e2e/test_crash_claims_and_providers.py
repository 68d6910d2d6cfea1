"""Crash tests, second load: job claims, a trip's location stream and a push provider that
misbehaves, while the server is killed with `kill -9`.

The load, from several threads at once: customers book jobs and drivers race to claim them
from their feeds; a driver on a trip streams its position over REST; notifications (keyed
and not) go to users whose APNs devices are served by `herald-mock-apns --chaos`, which
answers a quarter of all pushes with 429, 500 or 503, hangs past the request deadline, or
drops the HTTP/2 connection with every stream on it. The server is killed three times and
restarted on the same database (SQLite; PostgreSQL with two nodes). Then:

* no job was claimed twice: at most one driver's claim was answered 200 per job, and that
  driver is the job's driver after the crashes (an answered claim is never lost);
* every answered notification exists once, and every one reached each device: the mock
  answered 200 for it, every attempt for a device carried the same `apns-id`, and no
  notification was answered 200 twice by the same process run;
* the trip's location trail has every sample at most once, in sequence order, and the trip's
  answered state change survived.
"""

from __future__ import annotations

import json
import random
import secrets
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from conftest import WAIT, issue_token, pages, wait_until
from test_push_providers import MockAPNs, write_apns_key

LOAD_THREADS = 3
DRIVERS = 4
KILLS = 3
SITE = {"latitude": 37.7749, "longitude": -122.4194, "address": "123 Market St, San Francisco", "place_id": "pl_abc123"}
DROPOFF = {"latitude": 37.8044, "longitude": -122.2712, "address": "456 Broadway, Oakland", "place_id": "pl_def456"}


def write_config(directory: Path, name: str, mock: MockAPNs, key_file: Path) -> Path:
    config = {
        "idempotency": {"lock_timeout_seconds": 1, "wait_seconds": 15},
        "push": {
            "poll_interval_ms": 100, "lease_seconds": 3, "request_timeout_ms": 1000,
            "retry_base_ms": 50, "retry_max_ms": 400, "max_attempts": 40,
            "apns": {"team_id": "TEAM123456", "key_id": "KEY1234567", "private_key_file": str(key_file),
                     "topic": "com.example.app", "base_url": mock.base_url, "ca_file": mock.ca_file},
        },
        "dispatch": {"index_sync_interval_ms": 200},
        "trips": {"location": {"active_per_second": 100, "burst": 20}},
        "rate_limits": {"enabled": False},
    }
    path = directory / f"{name}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def call(nodes, rng: random.Random, method: str, path: str, token: str, **kwargs):
    """One request to a random running node; None when the connection died with it."""
    node = rng.choice([n for n in nodes if n.running] or nodes)
    headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
    try:
        return requests.request(method, node.url + path, headers=headers, timeout=10, **kwargs)
    except requests.RequestException:
        return None


class Load:
    def __init__(self, nodes, service: str, customer: str, drivers: dict[str, str], users: list[str],
                 trip_driver: str, trip_id: str):
        self.nodes = nodes
        self.service, self.customer, self.drivers, self.users = service, customer, drivers, users
        self.trip_driver, self.trip_id = trip_driver, trip_id
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.notifications: list[dict] = []
        self.jobs: list[dict] = []
        self.claims: list[tuple[str, str]] = []  # (driver, job) answered 200
        self.claim_attempts = 0
        self.samples: dict[int, bool | None] = {}  # sequence → accepted (None: unanswered)

    def booker(self, seed: int) -> None:
        rng = random.Random(seed)
        while not self.stop.is_set():
            marker = f"job-{uuid.uuid4().hex[:12]}"
            entry = {"marker": marker, "key": f"k-{marker}", "answer": None}
            with self.lock:
                self.jobs.append(entry)
            response = call(self.nodes, rng, "POST", "/api/v1/jobs", self.customer,
                            headers={"Idempotency-Key": entry["key"]},
                            json={"address": SITE["address"], "lat": SITE["latitude"], "lng": SITE["longitude"],
                                  "notes": marker, "items": [{"category": "mattress", "quantity": 1}]})
            if response is not None and response.status_code == 201:
                entry["answer"] = response.json()["data"]
            marker = f"note-{uuid.uuid4().hex[:12]}"
            key = f"k-{marker}" if rng.random() < 0.5 else None
            entry = {"marker": marker, "key": key, "answer": None,
                     "body": {"user_id": rng.choice(self.users), "type": "job_update", "title": marker}}
            with self.lock:
                self.notifications.append(entry)
            response = call(self.nodes, rng, "POST", "/api/v1/notifications", self.service,
                            headers={"Idempotency-Key": key} if key else {}, json=entry["body"])
            if response is not None and response.status_code in (200, 201):
                entry["answer"] = response.json()["data"]

    def claimer(self, driver: str, seed: int) -> None:
        rng = random.Random(seed)
        token = self.drivers[driver]
        while not self.stop.is_set():
            feed = call(self.nodes, rng, "GET", "/api/v1/drivers/jobs/available", token)
            if feed is None or feed.status_code != 200:
                time.sleep(0.05)
                continue
            jobs = feed.json()["data"]["jobs"]
            if not jobs:
                time.sleep(0.05)
                continue
            job = rng.choice(jobs[:3])
            with self.lock:
                self.claim_attempts += 1
            won = call(self.nodes, rng, "POST", f"/api/v1/drivers/jobs/{job['id']}/accept", token)
            if won is not None and won.status_code == 200:
                assert won.json()["data"]["job"]["driver_id"] == driver, won.text
                with self.lock:
                    self.claims.append((driver, job["id"]))

    def streamer(self, seed: int) -> None:
        rng = random.Random(seed)
        sequence = 1
        while not self.stop.is_set():
            sequence += 1
            self.samples[sequence] = None
            response = call(self.nodes, rng, "POST", "/api/v1/drivers/location", self.trip_driver,
                            json={"latitude": SITE["latitude"] + 0.005 + sequence * 0.000005, "longitude": SITE["longitude"],
                                  "accuracy_meters": 5, "sequence": sequence})
            if response is not None and response.status_code == 200:
                self.samples[sequence] = response.json()["data"]["accepted"]
            time.sleep(0.03)


@pytest.fixture(params=["sqlite", "postgres-two-nodes"])
def database(request):
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_url")


def test_kill_minus_nine_during_claims_trip_locations_and_a_misbehaving_provider(database, herald, tmp_path):
    env = {"HERALD_JWT_SECRET": secrets.token_urlsafe(48)}
    mock = MockAPNs(tmp_path, "--chaos", "25", "--hang-ms", "3000")
    try:
        run(database, herald, tmp_path, env, mock)
    finally:
        mock.stop()


def run(database, herald, tmp_path: Path, env: dict, mock: MockAPNs) -> None:
    node_count = 1 if database is None else 2
    key_file = write_apns_key(tmp_path)
    data_dirs = [herald.new_data_dir() for _ in range(node_count)]
    configs = [write_config(tmp_path, f"node{n}", mock, key_file) for n in range(node_count)]

    def start(n: int):
        return herald.start("--config", str(configs[n]), data_dir=data_dirs[n], database=database, env=env)

    nodes = [start(n) for n in range(node_count)]
    front = nodes[0]
    token_dir = tmp_path / "tokens"

    def token(user: str, role: str = "customer") -> str:
        return issue_token(token_dir, user=user, role=role, env=env)

    def post(path: str, who: str, headers: dict | None = None, **kwargs) -> requests.Response:
        return requests.post(front.url + path, headers={"Authorization": f"Bearer {who}", **(headers or {})}, timeout=WAIT, **kwargs)

    tag = secrets.token_hex(3)
    service, customer, operator = token(f"svc-{tag}", "service"), token(f"cust-{tag}"), token(f"ops-{tag}", "operator")

    def make_driver(user: str, meters_north: float, **profile) -> str:
        who = token(user, "driver")
        made = requests.put(front.url + "/api/v1/drivers/me", headers={"Authorization": f"Bearer {who}"}, timeout=WAIT,
                            json={"name": f"Driver {user}", "truck_type": "box_truck", **profile})
        assert made.status_code == 201, made.text
        assert post(f"/api/v1/operators/drivers/{user}/approval", operator, json={"status": "approved"}).status_code == 200
        assert post("/api/v1/drivers/online", who, json={"online": True}).status_code == 200
        moved = post("/api/v1/drivers/location", who, json={"latitude": SITE["latitude"] + meters_north / 111_200,
                                                            "longitude": SITE["longitude"], "accuracy_meters": 5, "sequence": 1})
        assert moved.status_code == 200 and moved.json()["data"]["accepted"] is True, moved.text
        return who

    drivers = {f"drv-{tag}-{n}": make_driver(f"drv-{tag}-{n}", 200 + 100 * n) for n in range(DRIVERS)}

    # One trip under way: a rider books, a driver accepts.
    trip_user = f"trip-drv-{tag}"
    trip_driver = make_driver(trip_user, 500)
    vehicle = requests.put(front.url + "/api/v1/drivers/me/vehicle", headers={"Authorization": f"Bearer {trip_driver}"}, timeout=WAIT,
                           json={"make": "Toyota", "model": "Camry", "color": "Silver", "license_plate": "ABC123", "capacity": 4})
    assert vehicle.status_code == 200, vehicle.text
    rider = token(f"rider-{tag}")
    booked = post("/api/v1/ride-requests", rider, headers={"Idempotency-Key": secrets.token_hex(8)},
                  json={"pickup": SITE, "dropoff": DROPOFF, "ride_type": "STANDARD", "passenger_count": 1})
    assert booked.status_code == 201, booked.text
    accepted = post(f"/api/v1/drivers/ride-requests/{booked.json()['data']['request_id']}/accept", trip_driver)
    assert accepted.status_code == 200, accepted.text
    trip_id = accepted.json()["data"]["trip_id"]

    users = [f"chaos-{tag}-{n}" for n in range(8)]
    for user in users:
        response = post("/api/v1/push/register", token(user),
                        json={"provider": "apns", "token": secrets.token_hex(32), "platform": "ios",
                              "device_id": f"hw-{secrets.token_hex(3)}", "app_version": "1.0.0", "locale": "en-US"})
        assert response.status_code in (200, 201), response.text

    load = Load(nodes, service, customer, drivers, users, trip_driver, trip_id)
    threads = [threading.Thread(target=load.booker, args=(seed,), daemon=True) for seed in range(LOAD_THREADS)]
    threads += [threading.Thread(target=load.claimer, args=(driver, 100 + n), daemon=True) for n, driver in enumerate(drivers)]
    threads.append(threading.Thread(target=load.streamer, args=(7,), daemon=True))
    for thread in threads:
        thread.start()
    rng = random.Random(20)
    arrived_answered = False
    try:
        for round_ in range(KILLS):
            time.sleep(rng.uniform(1.0, 2.5))
            if round_ == 1:
                # A state change answered just before a kill survives it.
                arrived = call(nodes, rng, "POST", f"/api/v1/trips/{trip_id}/transitions", trip_driver,
                               json={"to": "ARRIVED"})
                arrived_answered = arrived is not None and arrived.status_code == 200
            victim = round_ % node_count
            assert nodes[victim].stop(signal.SIGKILL) == -signal.SIGKILL
            time.sleep(0.2)
            nodes[victim] = start(victim)
            load.nodes = nodes
        time.sleep(rng.uniform(0.5, 1.5))
    finally:
        load.stop.set()
        for thread in threads:
            thread.join(20)
    front = nodes[0]

    # Keyed requests whose answers were lost are retried with their keys.
    time.sleep(1.2)
    for entry in [e for e in load.jobs if e["answer"] is None]:
        retry = requests.post(front.url + "/api/v1/jobs", timeout=WAIT, headers={
            "Authorization": f"Bearer {customer}", "Idempotency-Key": entry["key"]},
            json={"address": SITE["address"], "lat": SITE["latitude"], "lng": SITE["longitude"],
                  "notes": entry["marker"], "items": [{"category": "mattress", "quantity": 1}]})
        assert retry.status_code == 201, retry.text
        entry["answer"] = retry.json()["data"]
    for entry in [e for e in load.notifications if e["answer"] is None and e["key"]]:
        retry = requests.post(front.url + "/api/v1/notifications", json=entry["body"], timeout=WAIT, headers={
            "Authorization": f"Bearer {service}", "Idempotency-Key": entry["key"]})
        assert retry.status_code in (200, 201), retry.text
        entry["answer"] = retry.json()["data"]

    # Jobs: each booked once, claimed at most once, and an answered claim is the job's driver.
    jobs: dict[str, list[dict]] = {}
    for job in pages(front, "/api/v1/jobs", customer, "jobs"):
        jobs.setdefault(job.get("notes") or "", []).append(job)
    by_id = {items[0]["id"]: items[0] for items in jobs.values()}
    for entry in load.jobs:
        assert len(jobs.get(entry["marker"], [])) == 1, f"job {entry['marker']} booked {len(jobs.get(entry['marker'], []))} times"
        assert jobs[entry["marker"]][0]["id"] == entry["answer"]["id"]
    winners: dict[str, set[str]] = {}
    for driver, job_id in load.claims:
        winners.setdefault(job_id, set()).add(driver)
    twice = {job: who for job, who in winners.items() if len(who) > 1}
    assert not twice, f"jobs claimed by two drivers: {twice}"
    for job_id, who in winners.items():
        assert by_id[job_id]["driver_id"] == next(iter(who)), (job_id, who, by_id[job_id])
    assert len(load.claims) >= 5, f"too few claims to mean anything ({load.claim_attempts} attempts)"

    # Notifications: once each, and each one's push accepted by the provider once it behaved.
    notifications: dict[str, list[dict]] = {}
    for user in users:
        for item in pages(front, "/api/v1/notifications", token(user), "notifications"):
            notifications.setdefault(item["title"], []).append(item)
    for entry in load.notifications:
        found = notifications.get(entry["marker"], [])
        if entry["answer"] is not None:
            assert len(found) == 1 and found[0]["id"] == entry["answer"]["results"][0]["notification"]["id"], (entry, found)
        assert len(found) <= 1, f"{entry['marker']} exists {len(found)} times"
    expected = {items[0]["id"] for items in notifications.values()}

    def delivered() -> set[str]:
        return {line["notification_id"] for line in mock.lines() if line["answer"] == 200}

    wait_until(lambda: delivered() >= expected, 5 * WAIT, interval=0.5,
               message=f"every one of {len(expected)} notifications accepted by the provider")
    lines = mock.lines()
    apns_ids: dict[str, set[str]] = {}
    for line in lines:
        if line["notification_id"]:
            apns_ids.setdefault(line["notification_id"], set()).add(line["apns_id"])
    reused = {n: ids for n, ids in apns_ids.items() if len(ids) != 1}
    assert not reused, f"attempts of one push with different apns-ids: {list(reused.items())[:3]}"
    answers: dict[str, int] = {}
    for line in lines:
        answers[str(line["answer"])] = answers.get(str(line["answer"]), 0) + 1
    for kind in ("429", "500", "503", "hang", "drop"):
        assert answers.get(kind, 0) > 0, f"the provider never misbehaved with {kind}: {answers}"
    accepted_twice = sum(1 for n in expected if sum(1 for line in lines if line["notification_id"] == n and line["answer"] == 200) > 1)

    # The trip: its trail holds each sample at most once, in order; the answered arrival held.
    trail = requests.get(front.url + f"/api/v1/trips/{trip_id}/locations?limit=1000",
                         headers={"Authorization": f"Bearer {trip_driver}"}, timeout=WAIT)
    assert trail.status_code == 200, trail.text
    sequences = [row["sequence"] for row in trail.json()["data"]["locations"] if row["sequence"] is not None]
    assert len(sequences) == len(set(sequences)), "a location sample stored twice"
    assert sequences == sorted(sequences), "the trail is out of sequence order"
    answered_samples = {s for s, accepted in load.samples.items() if accepted}
    lost_samples = answered_samples - set(sequences)
    trip = requests.get(front.url + f"/api/v1/trips/{trip_id}", headers={"Authorization": f"Bearer {trip_driver}"}, timeout=WAIT)
    assert trip.status_code == 200, trip.text
    if arrived_answered:
        assert trip.json()["data"]["state"] == "ARRIVED", trip.text

    print(f"\n[{'sqlite' if database is None else 'postgres x2'}] {len(load.jobs)} jobs, {len(load.claims)} claims "
          f"of {load.claim_attempts} attempts, {len(load.notifications)} notifications, {len(lines)} provider requests "
          f"{answers}, {accepted_twice} pushes accepted twice (the provider's 200 lost with a dropped connection or a "
          f"killed process; the copy carries the same apns-id and collapse id), "
          f"{len(load.samples)} location samples ({len(answered_samples)} accepted, {len(sequences)} in the trail, "
          f"{len(lost_samples)} accepted then lost with a killed process), arrival answered: {arrived_answered}")
