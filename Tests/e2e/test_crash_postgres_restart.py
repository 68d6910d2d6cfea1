"""PostgreSQL restarted under load: two Herald nodes share a database whose server is stopped
(once as a crash, `pg_ctl -m immediate`, once as an administrator's restart, `-m fast`) and
started again while clients keep sending.

What must hold: no node dies or needs a restart of its own; while the database is away a
request is answered 503 with a stable code (never a 500, never an internal message), and
`/readyz` says so; once it is back every node serves again within seconds; every request that
was answered has exactly one effect, a keyed request whose answer was lost replays it, and
every notification is pushed once per device.

The database is a private PostgreSQL cluster made for the test (initdb in /tmp), so the shared
one the rest of the suite uses is never stopped.
"""

from __future__ import annotations

import glob
import json
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from conftest import WAIT, issue_token, wait_until
from test_crash_consistency import push_lines, read_effects

LOAD_THREADS = 4


def pg_bin() -> str:
    if os.environ.get("HERALD_TEST_PG_BIN"):
        return os.environ["HERALD_TEST_PG_BIN"]
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(re.search(r"/(\d+)/bin", p).group(1)))
    if not found:
        pytest.fail("initdb not found: install PostgreSQL (scripts/test does)")
    return os.path.dirname(found[-1])


class PrivatePostgres:
    """A throwaway cluster this test may stop and start."""

    def __init__(self):
        self.bin = pg_bin()
        # /tmp rather than pytest's tmp_path: the postgres user must reach it.
        self.directory = Path(subprocess.check_output(["mktemp", "-d", "/tmp/herald-pgrestart.XXXXXX"], text=True).strip())
        self.root = os.geteuid() == 0
        if self.root:
            shutil.chown(self.directory, "postgres")
        self.data = self.directory / "data"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust")
        self.start()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def run(self, tool: str, *args: str) -> None:
        command = [os.path.join(self.bin, tool), *args]
        if self.root:
            command = ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(f"'{part}'" for part in command)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/")
        assert result.returncode == 0, f"{tool} failed: {result.stdout}\n{result.stderr}"

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.directory / "log"),
                 "-o", f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off",
                 "start")

    def stop(self, mode: str) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def close(self) -> None:
        try:
            self.stop("immediate")
        except AssertionError:
            pass
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture
def private_pg():
    cluster = PrivatePostgres()
    yield cluster
    cluster.close()


def test_postgres_restarted_under_load_loses_nothing_and_doubles_nothing(private_pg, herald, tmp_path):
    # Requested after `private_pg`, so the launcher's servers stop before the cluster goes.
    env = {"HERALD_JWT_SECRET": secrets.token_urlsafe(48)}
    logs = [tmp_path / f"push-{n}.jsonl" for n in range(2)]
    configs = []
    for n in range(2):
        path = tmp_path / f"node{n}.json"
        path.write_text(json.dumps({
            "idempotency": {"lock_timeout_seconds": 1, "wait_seconds": 15},
            "database": {"acquire_timeout_ms": 2000},
            "push": {"log_file": str(logs[n]), "poll_interval_ms": 100, "lease_seconds": 3, "request_timeout_ms": 1000},
            "rate_limits": {"enabled": False},
        }), encoding="utf-8")
        configs.append(path)
    nodes = [herald.start("--config", str(configs[n]), data_dir=herald.new_data_dir(), database=private_pg.url, env=env)
             for n in range(2)]
    token_dir = tmp_path / "tokens"
    service = issue_token(token_dir, user="svc-pgrestart", role="service", env=env)
    customer = issue_token(token_dir, user="cust-pgrestart", role="customer", env=env)
    users = [f"pgr-{n}-{secrets.token_hex(2)}" for n in range(6)]
    devices: dict[str, str] = {}
    for user in users:
        response = requests.post(nodes[0].url + "/api/v1/push/register",
                                 headers={"Authorization": f"Bearer {issue_token(token_dir, user=user, env=env)}"},
                                 json={"provider": "apns", "token": secrets.token_hex(32), "platform": "ios",
                                       "device_id": f"hw-{secrets.token_hex(3)}", "app_version": "1.0.0", "locale": "en-US"},
                                 timeout=WAIT)
        assert response.status_code in (200, 201), response.text
        devices[user] = response.json()["data"]["id"]

    stop = threading.Event()
    lock = threading.Lock()
    sent: list[dict] = []
    refusals: dict[tuple[int, str], int] = {}

    def load(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            kind = rng.choice(["keyed", "plain", "job"])
            marker = f"{kind}-{uuid.uuid4().hex[:12]}"
            if kind == "job":
                path, token = "/api/v1/jobs", customer
                body = {"address": "1 Market St", "lat": 37.79, "lng": -122.39, "notes": marker,
                        "items": [{"category": "mattress", "quantity": 1}]}
            else:
                path, token = "/api/v1/notifications", service
                body = {"user_id": rng.choice(users), "type": "job_update", "title": marker}
            entry = {"kind": kind, "marker": marker, "key": None if kind == "plain" else f"k-{marker}",
                     "path": path, "token": token, "body": body, "answer": None}
            with lock:
                sent.append(entry)
            headers = {"Authorization": f"Bearer {token}"}
            if entry["key"]:
                headers["Idempotency-Key"] = entry["key"]
            try:
                # Long: a loaded machine answers late; a node that waits for its database for ever
                # (the defect this guards) still never answers, and its 2 s acquire timeout answers 503 long before.
                response = requests.post(rng.choice(nodes).url + path, json=body, headers=headers, timeout=WAIT)
            except requests.RequestException as error:
                raise AssertionError(f"a node stopped answering while its database was away: {error}")
            if response.status_code in (200, 201):
                entry["answer"] = response.json()["data"]
            else:
                code = response.json().get("error", {}).get("code", "?")
                with lock:
                    refusals[(response.status_code, code)] = refusals.get((response.status_code, code), 0) + 1
                time.sleep(0.05)

    threads = [threading.Thread(target=load, args=(seed,), daemon=True) for seed in range(LOAD_THREADS)]
    for thread in threads:
        thread.start()
    outages = []
    try:
        for mode in ("immediate", "fast"):
            time.sleep(1.5)
            before = len(sent)
            private_pg.stop(mode)
            down_at = time.monotonic()
            time.sleep(0.5)
            ready = requests.get(nodes[1].url + "/readyz", timeout=WAIT)
            assert ready.status_code == 503, f"/readyz while the database is stopped: {ready.status_code} {ready.text}"
            time.sleep(1.5)
            private_pg.start()
            up_at = time.monotonic()
            for node in nodes:
                wait_until(lambda: requests.get(node.url + "/readyz", timeout=WAIT).status_code == 200, WAIT,
                           interval=0.2, message="the node serves again after the database came back")
            outages.append((mode, round(up_at - down_at, 1), round(time.monotonic() - up_at, 1), len(sent) - before))
        time.sleep(1.5)
    finally:
        stop.set()
        for thread in threads:
            thread.join(WAIT + 30)
    for node in nodes:
        assert node.running, f"a node died with its database:\n{node.output()}"

    assert set(status for status, _ in refusals) <= {503}, f"refusals other than 503: {refusals}"
    assert refusals, "no request met the outage: the test proved nothing"

    # Keyed requests whose answer was refused or lost are retried with their keys.
    for entry in [e for e in sent if e["answer"] is None and e["key"]]:
        response = requests.post(nodes[0].url + entry["path"], json=entry["body"], timeout=WAIT, headers={
            "Authorization": f"Bearer {entry['token']}", "Idempotency-Key": entry["key"]})
        assert response.status_code in (200, 201), (entry["marker"], response.status_code, response.text)
        entry["answer"] = response.json()["data"]

    notifications, jobs = read_effects(nodes[0], users, lambda user: issue_token(token_dir, user=user, env=env), customer)
    for entry in sent:
        found = (jobs if entry["kind"] == "job" else notifications).get(entry["marker"], [])
        assert len(found) <= 1, f"{entry['marker']} exists {len(found)} times"
        if entry["answer"] is not None:
            assert len(found) == 1, f"{entry['kind']} {entry['marker']} was answered but has no effect"
            expected = entry["answer"]["id"] if entry["kind"] == "job" else entry["answer"]["results"][0]["notification"]["id"]
            assert found[0]["id"] == expected

    pairs = {(devices[items[0]["user_id"]], items[0]["id"]) for items in notifications.values()}
    wait_until(lambda: {(l["device_id"], l["notification_id"]) for l in push_lines(logs)} >= pairs, 5 * WAIT, interval=0.3,
               message=f"all {len(pairs)} pushes after the database came back")
    by_delivery: dict[tuple[str, str], set[str]] = {}
    for line in push_lines(logs):
        by_delivery.setdefault((line["device_id"], line["notification_id"]), set()).add(line["delivery_id"])
    assert all(len(ids) == 1 for ids in by_delivery.values()), "a notification got two deliveries for one device"

    print(f"\n{len(sent)} requests, {sum(1 for e in sent if e['answer'] is not None)} answered (retries included), "
          f"refused while away: {refusals}; outages (mode, seconds down, seconds until both nodes were ready, "
          f"requests sent meanwhile): {outages}; {len(notifications)} notifications, {len(jobs)} jobs, {len(pairs)} pushes")
