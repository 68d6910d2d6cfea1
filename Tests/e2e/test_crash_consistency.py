"""Crash tests: `kill -9` at random moments under a mixed load, then restart and check that
every accepted request's effect exists exactly once.

The load, from several threads at once: notifications with an `Idempotency-Key`, without
one, and job bookings with a key, to users who each have an APNs device (the log sender
writes every push to a file). The server is killed three times at random moments while the
load runs and restarted on the same database. Then every keyed request whose answer was
lost is retried with its key, as a client would, and the test checks:

* every keyed request has exactly one effect (one notification, one job), and its retry's
  answer names that same notification or job (replayed when the first run committed);
* every unkeyed request that was answered has exactly one notification;
* every notification has exactly one push delivery per device, every one is sent, and no
  device got the same notification twice from one process (a copy after a crash carries the
  same `apns-id` and collapse id);
* no job was booked twice.

It runs on SQLite (one node) and on PostgreSQL with two nodes sharing the database (the
load spread over both, each killed in turn). RELIABILITY.md records the figures.
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

LOAD_THREADS = 6
KILLS = 3


def write_config(directory: Path, name: str) -> tuple[Path, Path]:
    log_file = directory / f"{name}-push.jsonl"
    config = {
        # A retry may take over a dead node's key after a second.
        "idempotency": {"lock_timeout_seconds": 1, "wait_seconds": 15},
        "push": {"log_file": str(log_file), "poll_interval_ms": 100, "lease_seconds": 3, "request_timeout_ms": 1000},
        "rate_limits": {"enabled": False},
    }
    path = directory / f"{name}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path, log_file


def push_lines(paths: list[Path]) -> list[dict]:
    lines = []
    for path in paths:
        if path.exists():
            text = path.read_text(encoding="utf-8")
            lines += [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]
    return lines


class Load:
    """Requests sent, and what came back (None when the connection died with the server)."""

    def __init__(self, users: list[str], service: str, customer: str):
        self.users = users
        self.service = service
        self.customer = customer
        self.lock = threading.Lock()
        self.sent: list[dict] = []
        self.stop = threading.Event()

    def one(self, nodes, rng: random.Random) -> None:
        kind = rng.choice(["keyed", "keyed", "plain", "job"])
        marker = f"{kind}-{uuid.uuid4().hex[:12]}"
        key = None if kind == "plain" else f"k-{marker}"
        if kind == "job":
            path, token = "/api/v1/jobs", self.customer
            body = {"address": "1 Market St", "lat": 37.79, "lng": -122.39, "notes": marker,
                    "items": [{"category": "mattress", "quantity": 1}]}
        else:
            path, token = "/api/v1/notifications", self.service
            body = {"user_id": rng.choice(self.users), "type": "job_update", "title": marker}
        entry = {"kind": kind, "marker": marker, "key": key, "path": path, "token": token, "body": body, "answer": None}
        with self.lock:
            self.sent.append(entry)
        node = rng.choice([n for n in nodes if n.running] or nodes)
        headers = {"Authorization": f"Bearer {token}"}
        if key:
            headers["Idempotency-Key"] = key
        try:
            response = requests.post(node.url + path, json=body, headers=headers, timeout=10)
        except requests.RequestException:
            return
        if response.status_code in (200, 201):
            entry["answer"] = response.json()["data"]

    def run(self, nodes, seed: int) -> None:
        rng = random.Random(seed)
        while not self.stop.is_set():
            self.one(nodes, rng)


def read_effects(node, users: list[str], token_for, customer: str) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """Notifications by title (each user's inbox) and the customer's jobs by notes."""
    notifications: dict[str, list[dict]] = {}
    for user in users:
        for item in pages(node, "/api/v1/notifications", token_for(user), "notifications"):
            notifications.setdefault(item["title"], []).append(item)
    jobs: dict[str, list[dict]] = {}
    for job in pages(node, "/api/v1/jobs", customer, "jobs"):
        jobs.setdefault(job.get("notes") or "", []).append(job)
    return notifications, jobs


def effect_id(entry: dict, answer: dict) -> str:
    return answer["id"] if entry["kind"] == "job" else answer["results"][0]["notification"]["id"]


@pytest.fixture(params=["sqlite", "postgres-two-nodes"])
def database(request):
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_url")


def test_kill_minus_nine_under_mixed_load_keeps_every_effect_exactly_once(database, herald, tmp_path):
    env = {"HERALD_JWT_SECRET": secrets.token_urlsafe(48)}
    node_count = 1 if database is None else 2
    data_dirs = [herald.new_data_dir() for _ in range(node_count)]
    configs = [write_config(tmp_path, f"node{n}") for n in range(node_count)]
    logs = [log for _, log in configs]

    def start(n: int):
        return herald.start("--config", str(configs[n][0]), data_dir=data_dirs[n], database=database, env=env)

    nodes = [start(n) for n in range(node_count)]
    token_dir = tmp_path / "tokens"
    service = issue_token(token_dir, user="svc-crashmix", role="service", env=env)
    customer = issue_token(token_dir, user="cust-crashmix", role="customer", env=env)
    users = [f"crashmix-{n}-{secrets.token_hex(2)}" for n in range(12)]
    devices: dict[str, str] = {}
    for user in users:
        token = issue_token(token_dir, user=user, env=env)
        response = requests.post(nodes[0].url + "/api/v1/push/register", headers={"Authorization": f"Bearer {token}"},
                                 json={"provider": "apns", "token": secrets.token_hex(32), "platform": "ios",
                                       "device_id": f"hw-{secrets.token_hex(3)}", "app_version": "1.0.0", "locale": "en-US"},
                                 timeout=WAIT)
        assert response.status_code in (200, 201), response.text
        devices[user] = response.json()["data"]["id"]

    load = Load(users, service, customer)
    threads = [threading.Thread(target=load.run, args=(nodes, seed), daemon=True) for seed in range(LOAD_THREADS)]
    for thread in threads:
        thread.start()
    rng = random.Random(19)
    kill_points = []
    try:
        for round_ in range(KILLS):
            time.sleep(rng.uniform(0.8, 2.5))
            victim = round_ % node_count
            kill_points.append(len(load.sent))
            assert nodes[victim].stop(signal.SIGKILL) == -signal.SIGKILL
            time.sleep(0.2)
            nodes[victim] = start(victim)
        time.sleep(rng.uniform(0.5, 1.5))
    finally:
        load.stop.set()
        for thread in threads:
            thread.join(20)

    # Retries: every keyed request whose answer was lost, with its key, after the dead
    # process's locks timed out.
    time.sleep(1.2)
    lost = [entry for entry in load.sent if entry["answer"] is None and entry["key"]]
    for entry in lost:
        response = requests.post(nodes[0].url + entry["path"], json=entry["body"], timeout=WAIT, headers={
            "Authorization": f"Bearer {entry['token']}", "Idempotency-Key": entry["key"]})
        assert response.status_code in (200, 201), (entry["marker"], response.status_code, response.text)
        entry["answer"] = response.json()["data"]
        entry["retried"] = response.headers.get("Idempotent-Replayed") == "true"

    # What exists, read back through the API.
    notifications, jobs = read_effects(nodes[0], users, lambda user: issue_token(token_dir, user=user, env=env), customer)

    answered = [entry for entry in load.sent if entry["answer"] is not None]
    for entry in answered:
        found = jobs.get(entry["marker"], []) if entry["kind"] == "job" else notifications.get(entry["marker"], [])
        assert len(found) == 1, f"{entry['kind']} {entry['marker']} has {len(found)} effects (retried: {entry.get('retried')})"
        assert found[0]["id"] == effect_id(entry, entry["answer"]), (entry["marker"], found[0]["id"], entry["answer"])
    # Unkeyed requests that died unanswered may or may not have happened, but never twice.
    for marker, found in list(notifications.items()) + list(jobs.items()):
        assert len(found) <= 1, f"{marker} exists {len(found)} times"

    # Every notification's push is sent (one delivery per device), and each process sent a
    # given push at most once.
    expected = {(devices[items[0]["user_id"]], items[0]["id"]) for items in notifications.values()}

    def all_pushed():
        return {(line["device_id"], line["notification_id"]) for line in push_lines(logs)} >= expected

    wait_until(all_pushed, 5 * WAIT, interval=0.3, message=f"all {len(expected)} pushes")
    lines = push_lines(logs)
    by_delivery: dict[str, set[str]] = {}
    for line in lines:
        by_delivery.setdefault((line["device_id"], line["notification_id"]), set()).add(line["delivery_id"])
    twice = {pair: ids for pair, ids in by_delivery.items() if len(ids) != 1}
    assert not twice, f"{len(twice)} notifications got two push deliveries for one device: {list(twice.items())[:3]}"
    copies = len(lines) - len(by_delivery)

    keyed = [entry for entry in load.sent if entry["key"]]
    print(f"\n[{'sqlite' if database is None else 'postgres x2'}] {len(load.sent)} requests "
          f"({len(keyed)} keyed, {len(answered)} answered before the kills or by a retry), {KILLS} kills at requests "
          f"{kill_points}, {len(lost)} keyed retries ({sum(1 for e in lost if e.get('retried'))} replayed), "
          f"{len(notifications)} notifications, {len(jobs)} jobs, {len(lines)} pushes ({copies} re-sent copies)")
    assert len(answered) >= 50, "too little load to mean anything"
