"""Herald's side of the alert benchmark: one route-wide alert to 20,000 of 100,000 riders.

    python herald_alerts.py --herald .build/release/herald --mock .build/release/herald-mock-apns \
        --feed halifax.zip --engine sqlite|postgres [--database URL] --out result.json

Loads the feed (`herald transit import`), writes the riders' favourites and iPhones straight
into Herald's tables (what 100,000 POST /favorites and /push/register would leave), starts
`herald-mock-apns` (CPU 1) and `herald serve` (CPU 0) with APNs pointed at the mock, then
posts one GTFS-Realtime Alerts message (written with gtfs-realtime-bindings) naming the route
and measures, from just before the POST:
  - queued: `herald_transit_alert_pushes_queued_total` reaches 20,000 on /metrics (the
    notifications and their deliveries are committed in the outbox);
  - accepted: the mock has answered 200 to 20,000 pushes (its request log).
It checks that the pushed tokens are exactly the affected riders' and that nobody got two.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from google.transit import gtfs_realtime_pb2

sys.path.insert(0, str(Path(__file__).parent))
import dataset  # noqa: E402

MOCK_LISTENING = re.compile(r"^mock-apns listening on (\d+) ca=(.+?)\s*$")


def pinned(cpu: int, args: list[str]) -> list[str]:
    return ["taskset", "-c", str(cpu), *args] if os.cpu_count() and os.cpu_count() >= 2 else args


def alert_message(route: str) -> bytes:
    message = gtfs_realtime_pb2.FeedMessage()
    message.header.gtfs_realtime_version = "2.0"
    message.header.timestamp = int(time.time())
    entity = message.entity.add()
    entity.id = f"bench-{route}-{int(time.time())}"
    entity.alert.informed_entity.add().route_id = route
    period = entity.alert.active_period.add()
    period.start = int(time.time()) - 60
    period.end = int(time.time()) + 3600
    entity.alert.cause = gtfs_realtime_pb2.Alert.TECHNICAL_PROBLEM
    entity.alert.effect = gtfs_realtime_pb2.Alert.SIGNIFICANT_DELAYS
    entity.alert.severity_level = gtfs_realtime_pb2.Alert.WARNING
    text = entity.alert.header_text.translation.add()
    text.text = f"Route {route}: delays of 20 minutes"
    text.language = "en"
    return message.SerializeToString()


def load_rows(engine: str, data_dir: Path, database: str | None, data: dict) -> float:
    started = time.perf_counter()
    now = int(time.time() * 1000)
    favourites = [(f"fav_b{index:07d}", user, stop, 0, 1, now, now) for index, (user, stop) in enumerate(data["favourites"])]
    devices = [(f"dev_b{index:06d}", user, "apns", token, "ios", now, now) for index, (user, token) in enumerate(sorted(data["tokens"].items()))]
    if engine == "sqlite":
        db = sqlite3.connect(data_dir / "herald.sqlite")
        db.executemany("INSERT INTO transit_favorites (id, user_id, stop_id, label, sort_order, notifications_enabled, created_at, updated_at) "
                       "VALUES (?, ?, ?, NULL, ?, ?, ?, ?)", favourites)
        db.executemany("INSERT INTO push_devices (id, user_id, provider, token, platform, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)", devices)
        db.commit()
        db.close()
    else:
        def copy(table: str, columns: str, rows) -> None:
            text = "".join("\t".join("\\N" if v is None else str(v) for v in row) + "\n" for row in rows)
            subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", f"COPY {table} ({columns}) FROM STDIN"],
                           input=text, text=True, check=True)
        copy("transit_favorites", "id, user_id, stop_id, sort_order, notifications_enabled, created_at, updated_at", favourites)
        copy("push_devices", "id, user_id, provider, token, platform, created_at, last_used_at", devices)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--herald", required=True)
    parser.add_argument("--mock", required=True)
    parser.add_argument("--feed", required=True)
    parser.add_argument("--engine", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--database")
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--affected", type=int, default=20_000)
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--infra-cpu", type=int, default=1)
    parser.add_argument("--push-concurrency", type=int, default=32)
    parser.add_argument("--alert-batch", type=int, default=500)
    parser.add_argument("--push-batch", type=int, default=100)
    parser.add_argument("--handoff-capacity", type=int, help="push.handoff_capacity (0: every push through the database, as before issue 37)")
    parser.add_argument("--out")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="herald-alerts-"))
    data_dir = work / "data"
    db_args = ["--database", args.database] if args.database else []
    data = dataset.build(args.feed, users=args.users, affected=args.affected)
    imported = subprocess.run([args.herald, "transit", "import", args.feed, "--data-dir", str(data_dir), *db_args],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    load_seconds = load_rows(args.engine, data_dir, args.database, data)

    mock_log = work / "mock.jsonl"
    mock = subprocess.Popen(pinned(args.infra_cpu, [args.mock, "--port", "0", "--h2-only", "--log", str(mock_log)]), stdout=subprocess.PIPE, text=True)
    match = MOCK_LISTENING.match(mock.stdout.readline())
    assert match, "the mock did not start"
    port, ca = match.group(1), match.group(2)
    key = work / "AuthKey.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key)], check=True,
                   capture_output=True)
    config = {
        "server": {"threads": 1}, "rate_limits": {"enabled": False}, "logging": {"level": "warning"},
        "push": {"concurrency": args.push_concurrency, "batch_size": args.push_batch, "apns": {"team_id": "TEAM123456", "key_id": "KEY1234567", "private_key_file": str(key), "topic": "com.example.transit",
                          "base_url": f"https://localhost:{port}", "ca_file": ca}},
        "transit": {"alerts": {"interval_seconds": 1, "batch_size": args.alert_batch}},
    }
    if args.handoff_capacity is not None:
        config["push"]["handoff_capacity"] = args.handoff_capacity
    (work / "herald.json").write_text(json.dumps(config))
    log = open(work / "server.log", "w")
    server = subprocess.Popen(pinned(args.server_cpu, [args.herald, "serve", "--config", str(work / "herald.json"), "--data-dir", str(data_dir),
                                                       "--host", "127.0.0.1", "--port", "0", *db_args]), stdout=log, stderr=subprocess.STDOUT)
    try:
        base = None
        for _ in range(600):
            text = (work / "server.log").read_text()
            found = re.search(r"listening on (http://[0-9.]+:\d+)", text)
            if found:
                base = found.group(1)
                break
            time.sleep(0.05)
        assert base, (work / "server.log").read_text()
        token = subprocess.run([args.herald, "token", "--user", "bench-backend", "--role", "service", "--data-dir", str(data_dir), *db_args],
                               capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]

        def metric(name: str) -> float:
            body = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
            found = re.search(rf"^{name} ([0-9.e+]+)$", body, re.M)
            return float(found.group(1)) if found else 0.0

        seen = {"offset": 0, "lines": 0}

        def accepted() -> int:
            # Read on from where the last look stopped (the log grows to 20,000 lines).
            with open(mock_log, "rb") as f:
                f.seek(seen["offset"])
                chunk = f.read()
            seen["offset"] += len(chunk)
            seen["lines"] += chunk.count(b"\n")
            return seen["lines"]

        body = alert_message(data["route"])
        request = urllib.request.Request(base + "/api/v1/transit/realtime", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status in (200, 202), response.status
        posted = time.perf_counter() - t0
        queued = accepted_at = None
        deadline = t0 + 300
        # Looks cost the server (a /metrics render) and the machine: every 20 ms, so the times
        # are late by at most that.
        while time.perf_counter() < deadline and (queued is None or accepted_at is None):
            if queued is None and metric("herald_transit_alert_pushes_queued_total") >= args.affected:
                queued = time.perf_counter() - t0
            if accepted_at is None and accepted() >= args.affected:
                accepted_at = time.perf_counter() - t0
            time.sleep(0.02)
        time.sleep(1.0)
        lines = [json.loads(line) for line in mock_log.read_text().splitlines() if line.strip()]
        tokens = [line["token"] for line in lines]
        expected = {data["tokens"][user] for user in data["affected"]}
        match_seconds = metric("herald_transit_alert_match_seconds_total")
        result = {
            "peer": "herald", "engine": args.engine, "users": args.users, "favourites": len(data["favourites"]), "affected": args.affected,
            "route": data["route"], "route_stops": len(data["route_stops"]), "rows_loaded_seconds": round(load_seconds, 2),
            "post_seconds": round(posted, 4), "queued_seconds": queued and round(queued, 3), "accepted_seconds": accepted_at and round(accepted_at, 3),
            "match_seconds": round(match_seconds, 4), "push_concurrency": args.push_concurrency, "push_batch": args.push_batch, "alert_batch": args.alert_batch, "pushes": len(tokens), "distinct_tokens": len(set(tokens)),
            "exactly_the_affected": set(tokens) == expected and len(tokens) == len(expected),
        }
        print(json.dumps(result))
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=2))
    finally:
        server.terminate()
        server.wait(20)
        mock.terminate()
        mock.wait(10)


if __name__ == "__main__":
    main()
