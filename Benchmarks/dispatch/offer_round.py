#!/usr/bin/env python3
"""The dispatch offer round on the durable path (issue 37, part 3): the driver of Benchmarks/offer-run.sh.

    offer_round.py run --url http://127.0.0.1:18600 --secret S --mock-log mock.jsonl --leg herald-sqlite
                       [--drivers 1000] [--jobs 5] [--gap 3] [--probe herald=PID --probe postgres=PID ...]
    offer_round.py summary results.jsonl > summary.md

One job offered to N drivers at once. Setup (not measured): N drivers `ob-drv-<n>` create a
profile (PUT /drivers/me), an operator approves them, they go online (POST /drivers/online) and
report one position (POST /drivers/location) within 7 km of the job's site, so all N are in the
first round (radius_km 30). Even n: the app is open — a python-socketio AsyncClient (WebSocket)
per driver, in the driver's `driver:{id}` room, counting `job:new` and `notification` events with
their receive time (the `notification` is acknowledged, as a foregrounded app does: the handler
returns and python-socketio sends the ack Herald asked for). Odd n: the app is closed — no
socket, one APNs device (POST /push/register), so the offer's `job_new` notification goes
outbox -> delivery worker (or the in-memory hand-over) -> APNs -> herald-mock-apns, whose
`--log` line per push carries the device token, the notification id and `received_ns`.

Then J jobs one after another: for each, t0 = CLOCK_REALTIME just before POST /api/v1/jobs (a
customer token; the round runs inside the request: notification + delivery per driver, offer
rows, `job:new` per driver room). The job is complete when every socket driver has its `job:new`
and its `notification` (data.job_id = the job) and the mock has a push for every offline
driver's device with a notification id not seen for an earlier job. Then `--settle` s (acks and
push outcomes being recorded), then the CPU snapshot, then (outside the window) GET
/operators/jobs/{id}/offers: the offer rows, their channels, and each driver's notification id
(which attributes the mock's lines to jobs for the final count). `--gap` s between jobs.

Per job: time from t0 until the last driver had each thing ("all"), p50/p99/max per driver,
missing (never arrived within `--timeout`; and still missing at the end, after `--final-settle`),
duplicates (a driver that got the same job's event, or a device that got the same notification,
more than once), and CPU (utime+stime of each `--probe name=pid` process tree, /proc) over the
window t0 -> complete + settle, per offered driver. Prints one JSON line per job and one per
leg; `summary` turns those lines into markdown tables.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import sys
import time

SITE = (37.7749, -122.4194)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from proc_stats import cpu_of_trees, percentile, system_busy_seconds  # noqa: E402


def rounded(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def token(secret: str, sub: str, role: str) -> str:
    import jwt  # noqa: PLC0415  (only the run needs it)
    now = int(time.time())
    return jwt.encode({"sub": sub, "role": role, "iat": now, "exp": now + 7200}, secret, algorithm="HS256")


class MockLog:
    """Reads the mock's --log incrementally (whole lines only)."""

    def __init__(self, path: str):
        self.path = path
        self.offset = 0
        self.rest = b""

    def new_rows(self) -> list[dict]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        data = self.rest + data
        cut = data.rfind(b"\n") + 1
        self.rest = data[cut:]
        rows = []
        for line in data[:cut].splitlines():
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
        return rows


# The benchmark ---------------------------------------------------------------------------------------------
class OfferBench:
    def __init__(self, args):
        self.args = args
        self.url = args.url.rstrip("/")
        n = args.drivers
        self.drivers = [f"ob-drv-{i}" for i in range(n)]
        self.online = [d for i, d in enumerate(self.drivers) if i % 2 == 0]
        self.offline = [d for i, d in enumerate(self.drivers) if i % 2 == 1]
        self.tokens = {d: token(args.secret, d, "driver") for d in self.drivers}
        self.operator = token(args.secret, "ob-ops", "operator")
        self.service = token(args.secret, "ob-backend", "service")
        self.customer = token(args.secret, "ob-customer", "customer")
        self.device_token: dict[str, str] = {}   # APNs token -> driver
        # job id -> driver -> [recv_ns]; notification events also keep the notification id
        self.job_new: dict[str, dict[str, list[int]]] = {}
        self.notes: dict[str, dict[str, list[tuple[int, str]]]] = {}
        self.unexpected_events: dict[str, int] = {}
        self.clients = []
        self.disconnects = 0
        self.mock = MockLog(args.mock_log)
        self.push_rows: list[dict] = []          # every mock line, in order
        self.nid_job: dict[str, tuple[str, str]] = {}   # notification id -> (job, driver), from the offer rows
        self.errors: dict[str, int] = {}

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    def unexpected(self, what: str) -> None:
        self.unexpected_events[what] = self.unexpected_events.get(what, 0) + 1

    # setup -----------------------------------------------------------------------------------------------
    async def call(self, session, method: str, path: str, tok: str, body=None, ok=(200, 201)) -> dict:
        async with session.request(method, self.url + path, json=body, headers={"Authorization": f"Bearer {tok}"}) as r:
            text = await r.text()
            if r.status not in ok:
                raise RuntimeError(f"{method} {path}: {r.status} {text[:300]}")
            return json.loads(text) if text else {}

    async def setup_drivers(self, session) -> None:
        semaphore = asyncio.Semaphore(self.args.setup_concurrency)

        async def one(index: int, driver: str) -> None:
            tok = self.tokens[driver]
            async with semaphore:
                await self.call(session, "PUT", "/api/v1/drivers/me", tok, {"name": f"Driver {index}", "truck_type": "box_truck"})
                await self.call(session, "POST", f"/api/v1/operators/drivers/{driver}/approval", self.operator, {"status": "approved"})
                await self.call(session, "POST", "/api/v1/drivers/online", tok, {"online": True})
                # A 50 x 20 grid about 220 m apart around the site: at most ~6.5 km away, well inside radius_km.
                lat = SITE[0] + ((index % 50) - 25) * 0.002
                lng = SITE[1] + ((index // 50) % 20 - 10) * 0.0025
                body = await self.call(session, "POST", "/api/v1/drivers/location", tok,
                                       {"lat": lat, "lng": lng, "accuracy": 8, "sequence": 1})
                if not body.get("data", {}).get("accepted", False):
                    raise RuntimeError(f"location of {driver} not accepted: {body}")
                if index % 2 == 1:
                    device = secrets.token_hex(32)
                    self.device_token[device] = driver
                    await self.call(session, "POST", "/api/v1/push/register", tok,
                                    {"token": device, "provider": "apns", "platform": "ios", "device_id": f"{driver}-phone"})

        await asyncio.gather(*(one(i, d) for i, d in enumerate(self.drivers)))

    async def connect_clients(self) -> None:
        import socketio  # noqa: PLC0415
        semaphore = asyncio.Semaphore(50)

        async def connect(driver: str) -> None:
            sio = socketio.AsyncClient(reconnection=False, handle_sigint=False)

            @sio.on("job:new")
            async def on_job_new(payload, *_):
                now = time.time_ns()
                try:
                    self.job_new.setdefault(payload["id"], {}).setdefault(driver, []).append(now)
                except Exception:  # noqa: BLE001
                    self.error("bad_job_new_payload")

            @sio.on("notification")
            async def on_notification(payload, *_):
                now = time.time_ns()
                try:
                    if payload.get("user_id") != driver:
                        self.unexpected("notification_for_another_user")
                    job = (payload.get("data") or {}).get("job_id")
                    if payload.get("type") != "job_new" or job is None:
                        self.unexpected(f"notification_type_{payload.get('type')}")
                        return
                    self.notes.setdefault(job, {}).setdefault(driver, []).append((now, payload["id"]))
                except Exception:  # noqa: BLE001
                    self.error("bad_notification_payload")
                # returning None: python-socketio sends the (empty) ack Herald asked for

            @sio.on("disconnect")
            async def on_disconnect(*_):
                self.disconnects += 1

            async with semaphore:
                await sio.connect(self.url, auth={"token": self.tokens[driver]}, transports=["websocket"], wait_timeout=30)
            self.clients.append(sio)

        await asyncio.gather(*(connect(d) for d in self.online))

    async def wait_presence(self, session) -> None:
        deadline = time.monotonic() + 60
        pending = list(self.online)
        semaphore = asyncio.Semaphore(32)

        async def online(user: str) -> bool:
            async with semaphore:
                async with session.get(f"{self.url}/api/v1/realtime/presence/{user}",
                                       headers={"Authorization": f"Bearer {self.service}"}) as r:
                    return r.status == 200 and bool((await r.json()).get("data", {}).get("online"))

        while pending and time.monotonic() < deadline:
            seen = await asyncio.gather(*(online(u) for u in pending))
            pending = [u for u, s in zip(pending, seen) if not s]
            if pending:
                await asyncio.sleep(0.5)
        if pending:
            raise RuntimeError(f"{len(pending)} socket drivers never seen online, e.g. {pending[:3]}")

    # one job ---------------------------------------------------------------------------------------------
    def read_mock(self, current: dict[str, list[tuple[int, str]]] | None) -> None:
        """New mock lines; those for an offline driver's device with a notification id not
        attributed to an earlier job count for the current job (by driver)."""
        for row in self.mock.new_rows():
            self.push_rows.append(row)
            if current is None:
                continue
            driver = self.device_token.get(row.get("token", ""))
            nid = row.get("notification_id", "")
            if driver is None or nid in self.nid_job or row.get("answer") != 200:
                continue
            current.setdefault(driver, []).append((int(row["received_ns"]), nid))

    async def run_job(self, session, number: int, probes: dict[str, int]) -> dict:
        a = self.args
        pushes_now: dict[str, list[tuple[int, str]]] = {}
        self.read_mock(None)  # whatever came before this job is not this job's
        cpu_before, busy_before = cpu_of_trees(probes), system_busy_seconds()
        t0 = time.time_ns()
        async with session.post(f"{self.url}/api/v1/jobs", headers={"Authorization": f"Bearer {self.customer}"},
                                json={"address": f"{number} Bench St, San Francisco", "lat": SITE[0], "lng": SITE[1],
                                      "volume_estimate": 2, "items": [{"category": "mattress", "quantity": 1}]}) as r:
            text = await r.text()
            answered = time.time_ns()
            if r.status != 201:
                raise RuntimeError(f"POST /jobs: {r.status} {text[:300]}")
        job = json.loads(text)["data"]
        jid = job["id"]
        deadline = time.monotonic() + a.timeout
        online_set, offline_set = set(self.online), set(self.offline)
        timed_out = False
        while True:
            self.read_mock(pushes_now)
            got_new = len(online_set.intersection(self.job_new.get(jid, {})))
            got_note = len(online_set.intersection(self.notes.get(jid, {})))
            got_push = len(offline_set.intersection(pushes_now))
            if got_new == len(online_set) and got_note == len(online_set) and got_push == len(offline_set):
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
            await asyncio.sleep(0.005)
        complete_ns = time.time_ns()
        await asyncio.sleep(a.settle)
        cpu_after, busy_after, end_ns = cpu_of_trees(probes), system_busy_seconds(), time.time_ns()
        # Outside the window: the offer rows (their channels and notification ids).
        body = await self.call(session, "GET", f"/api/v1/operators/jobs/{jid}/offers", self.operator)
        offers = body["data"]["offers"]
        for offer in offers:
            if offer.get("notification_id"):
                self.nid_job[offer["notification_id"]] = (jid, offer["driver_id"])
        window_s = (end_ns - t0) / 1e9
        result = {
            "kind": "job", "leg": a.leg, "engine": a.engine, "handoff": a.handoff, "job": number, "job_id": jid,
            "drivers": len(self.drivers), "online": len(self.online), "offline": len(self.offline),
            "offer_round": job.get("offer_round"), "t0_ns": t0, "complete_ns": complete_ns, "window_end_ns": end_ns,
            "post_ms": round((answered - t0) / 1e6, 2), "timed_out": timed_out, "window_s": round(window_s, 3),
            "complete_ms": round((complete_ns - t0) / 1e6, 1),
        }
        channels: dict[str, int] = {}
        mismatched = 0
        for offer in offers:
            channels[offer["channel"]] = channels.get(offer["channel"], 0) + 1
            expected = "socket" if offer["driver_id"] in online_set else "push"
            mismatched += offer["channel"] != expected
        result["offer_rows"] = len(offers)
        result["offer_channels"] = channels
        result["offer_channel_unexpected"] = mismatched
        result["offer_rows_missing"] = len(set(self.drivers) - {o["driver_id"] for o in offers})
        result["_pushes_in_window"] = {d: [t for t, _ in v] for d, v in pushes_now.items()}
        total = 0.0
        for name in probes:
            if name in cpu_before and name in cpu_after:
                used = cpu_after[name] - cpu_before[name]
                result[f"{name}_cpu_s"] = round(used, 3)
                if name in ("herald", "postgres"):
                    total += used
        result["herald_pg_cpu_s"] = round(total, 3)
        n = len(self.drivers)
        result["herald_us_per_driver"] = round(result.get("herald_cpu_s", 0.0) / n * 1e6, 1)
        result["postgres_us_per_driver"] = round(result["postgres_cpu_s"] / n * 1e6, 1) if "postgres_cpu_s" in result else None
        result["herald_pg_us_per_driver"] = round(total / n * 1e6, 1)
        result["machine_busy_cores"] = round((busy_after - busy_before) / window_s, 3)
        ours = sum(result.get(f"{name}_cpu_s", 0.0) for name in probes)
        result["other_cores"] = round((busy_after - busy_before - ours) / window_s, 3)
        return result

    def finish_job(self, result: dict) -> dict:
        """Latencies, missing and duplicates of one job, from everything received by the end."""
        jid, t0 = result["job_id"], result["t0_ns"]
        in_window = result.pop("_pushes_in_window")
        # The mock's lines attributed by notification id (the offer rows), all of them to the end.
        pushes: dict[str, list[int]] = {}
        per_nid: dict[str, int] = {}
        wrong_device = 0
        for row in self.push_rows:
            owner = self.nid_job.get(row.get("notification_id", ""))
            if owner is None or owner[0] != jid or row.get("answer") != 200:
                continue
            per_nid[row["notification_id"]] = per_nid.get(row["notification_id"], 0) + 1
            driver = self.device_token.get(row.get("token", ""))
            if driver != owner[1]:
                wrong_device += 1
                continue
            pushes.setdefault(driver, []).append(int(row["received_ns"]))
        sources = {
            "job_new": (self.online, self.job_new.get(jid, {})),
            "notification": (self.online, {d: [t for t, _ in v] for d, v in self.notes.get(jid, {}).items()}),
            "push": (self.offline, pushes),
        }
        complete_ns = result["complete_ns"]
        for name, (expected, received) in sources.items():
            lat, missing, late, dup = [], 0, 0, 0
            for driver in expected:
                times = received.get(driver)
                if not times:
                    missing += 1
                    continue
                if len(times) > 1:
                    dup += 1
                first = min(times)
                if result["timed_out"] and first > complete_ns:
                    late += 1
                lat.append((first - t0) / 1e6)
            lat.sort()
            result[f"{name}_expected"] = len(expected)
            result[f"{name}_received"] = len(expected) - missing
            result[f"{name}_all_ms"] = rounded(lat[-1]) if lat and not missing else None
            result[f"{name}_p50_ms"] = rounded(percentile(lat, 0.50))
            result[f"{name}_p99_ms"] = rounded(percentile(lat, 0.99))
            result[f"{name}_max_ms"] = rounded(lat[-1]) if lat else None
            result[f"{name}_missing"] = missing
            result[f"{name}_late"] = late   # arrived after the per-job timeout (counted missing at the time)
            result[f"{name}_duplicated"] = dup
            result[f"{name}_unknown_drivers"] = len(set(received) - set(expected))
        # Socket notifications: same notification id twice, and the id matches the offer row's.
        result["notification_id_mismatch"] = sum(
            1 for d, v in self.notes.get(jid, {}).items() for _, nid in v if self.nid_job.get(nid) != (jid, d))
        result["push_duplicated_by_notification_id"] = sum(1 for c in per_nid.values() if c > 1)
        result["push_wrong_device"] = wrong_device
        result["push_seen_in_window"] = len(in_window)
        result["missing"] = sum(result[f"{k}_missing"] for k in sources)
        result["duplicated"] = sum(result[f"{k}_duplicated"] for k in sources) + result["push_duplicated_by_notification_id"]
        return result

    async def run(self) -> list[dict]:
        import aiohttp  # noqa: PLC0415
        a = self.args
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=64)
        timeout = aiohttp.ClientTimeout(total=a.request_timeout)
        started = time.monotonic()
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            await self.setup_drivers(session)
            setup_rest_s = time.monotonic() - started
            await self.connect_clients()
            await self.wait_presence(session)
            setup_s = time.monotonic() - started
            print(f"[offer_round {a.leg}] {len(self.drivers)} drivers approved, online and placed, {len(self.offline)} devices, "
                  f"{len(self.clients)} sockets in {setup_s:.1f}s", file=sys.stderr)
            probes = {k: int(v) for k, v in (p.split("=", 1) for p in a.probe)}
            probes["driver"] = os.getpid()
            await asyncio.sleep(1)
            # Idle baseline: every client connected, nothing happening.
            idle_before, idle_t = cpu_of_trees(probes), time.monotonic()
            await asyncio.sleep(a.idle)
            idle_after, idle_s = cpu_of_trees(probes), time.monotonic() - idle_t
            raw = []
            for number in range(1, a.jobs + 1):
                if number > 1:
                    await asyncio.sleep(a.gap)
                result = await self.run_job(session, number, probes)
                raw.append(result)
                print(f"[offer_round {a.leg}] job {number}: complete in {result['complete_ms']} ms"
                      f"{' (TIMED OUT)' if result['timed_out'] else ''}, POST {result['post_ms']} ms, "
                      f"herald+pg {result['herald_pg_us_per_driver']} µs/driver", file=sys.stderr)
            await asyncio.sleep(a.final_settle)  # late arrivals and duplicates
            self.read_mock(None)
            for sio in self.clients:
                await sio.disconnect()
        rows = [self.finish_job(r) for r in raw]
        leg = {"kind": "leg", "leg": a.leg, "engine": a.engine, "handoff": a.handoff, "binary": a.binary,
               "drivers": len(self.drivers), "online": len(self.online), "offline": len(self.offline), "jobs": a.jobs,
               "gap_s": a.gap, "settle_s": a.settle, "setup_rest_s": round(setup_rest_s, 1), "setup_s": round(setup_s, 1),
               "idle_s": round(idle_s, 2)}
        for name in probes:
            if name in idle_before and name in idle_after:
                leg[f"{name}_idle_cores"] = round((idle_after[name] - idle_before[name]) / idle_s, 3)
        for key in ("post_ms", "complete_ms", "job_new_all_ms", "job_new_p50_ms", "job_new_p99_ms", "notification_all_ms",
                    "notification_p50_ms", "notification_p99_ms", "push_all_ms", "push_p50_ms", "push_p99_ms",
                    "herald_us_per_driver", "postgres_us_per_driver", "herald_pg_us_per_driver", "other_cores"):
            values = [r[key] for r in rows if r.get(key) is not None]
            leg[f"median_{key}"] = rounded(statistics.median(values), 2) if values else None
        leg["missing"] = sum(r["missing"] for r in rows)
        leg["duplicated"] = sum(r["duplicated"] for r in rows)
        leg["timed_out_jobs"] = sum(1 for r in rows if r["timed_out"])
        leg["offer_channel_unexpected"] = sum(r["offer_channel_unexpected"] for r in rows)
        leg["offer_rows_missing"] = sum(r["offer_rows_missing"] for r in rows)
        leg["unexpected_events"] = self.unexpected_events
        leg["errors"] = self.errors
        leg["pushes_unattributed"] = sum(1 for row in self.push_rows if row.get("notification_id", "") not in self.nid_job)
        leg["mock_non_200"] = sum(1 for row in self.push_rows if row.get("answer") != 200)
        leg["socket_disconnects_during_run"] = max(0, self.disconnects - len(self.clients))
        return rows + [leg]


# Summary -----------------------------------------------------------------------------------------------------
def fmt(value, digits: int = 0) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def summary(path: str) -> str:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    legs = [r for r in rows if r.get("kind") == "leg"]
    jobs = [r for r in rows if r.get("kind") == "job"]
    out = ["# Dispatch offer round on the durable path (issue 37, part 3)", ""]
    if legs:
        first = legs[0]
        out += [f"{first['drivers']} drivers per job ({first['online']} on a Socket.IO client, {first['offline']} with one APNs "
                f"device and no socket), {first['jobs']} jobs per leg, {first['gap_s']} s apart; binary `{first.get('binary')}`.",
                "t0 = just before POST /api/v1/jobs. *all* = until the last driver had it; p50/p99 over drivers. "
                "CPU over t0 → complete + settle (" + fmt(first.get("settle_s"), 1) + " s), µs per offered driver. "
                "`other` = cores busy on the machine outside the measured processes (builds, tests).", ""]
        out += ["## Legs side by side (median over jobs)", "",
                "| leg | POST ms | job:new all ms | notification all ms | push all ms | push p50/p99 ms | Herald µs/driver | PostgreSQL µs/driver | Herald+PG µs/driver | missing | dup | other cores |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for leg in legs:
            out.append(
                f"| {leg['leg']} | {fmt(leg['median_post_ms'], 1)} | {fmt(leg['median_job_new_all_ms'], 1)} | "
                f"{fmt(leg['median_notification_all_ms'], 1)} | {fmt(leg['median_push_all_ms'], 1)} | "
                f"{fmt(leg['median_push_p50_ms'], 1)} / {fmt(leg['median_push_p99_ms'], 1)} | {fmt(leg['median_herald_us_per_driver'], 1)} | "
                f"{fmt(leg['median_postgres_us_per_driver'], 1)} | {fmt(leg['median_herald_pg_us_per_driver'], 1)} | "
                f"{leg['missing']} | {leg['duplicated']} | {fmt(leg['median_other_cores'], 2)} |")
        out.append("")
    for leg in legs:
        name = leg["leg"]
        out += [f"## {name}", "",
                f"{leg['engine']}, push hand-over {leg['handoff']}; setup {leg['setup_s']} s; idle cores: Herald "
                f"{fmt(leg.get('herald_idle_cores'), 3)}, PostgreSQL {fmt(leg.get('postgres_idle_cores'), 3)}, driver "
                f"{fmt(leg.get('driver_idle_cores'), 3)}. Offer rows missing {leg['offer_rows_missing']}, on an unexpected "
                f"channel {leg['offer_channel_unexpected']}; jobs timed out {leg['timed_out_jobs']}; pushes not attributed "
                f"to an offer {leg['pushes_unattributed']}; mock answers ≠ 200 {leg['mock_non_200']}; unexpected events "
                f"{json.dumps(leg['unexpected_events'])}; errors {json.dumps(leg['errors'])}.", "",
                "| job | POST ms | job:new all / p50 / p99 ms | notification all / p50 / p99 ms | push all / p50 / p99 ms | missing | dup | Herald µs/driver | PG µs/driver | Herald+PG µs/driver | driver CPU s | other cores |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in (j for j in jobs if j["leg"] == name):
            def triple(k):
                return f"{fmt(r[f'{k}_all_ms'], 1)} / {fmt(r[f'{k}_p50_ms'], 1)} / {fmt(r[f'{k}_p99_ms'], 1)}"
            out.append(
                f"| {r['job']} | {fmt(r['post_ms'], 1)} | {triple('job_new')} | {triple('notification')} | {triple('push')} | "
                f"{r['missing']} | {r['duplicated']} | {fmt(r['herald_us_per_driver'], 1)} | {fmt(r.get('postgres_us_per_driver'), 1)} | "
                f"{fmt(r['herald_pg_us_per_driver'], 1)} | {fmt(r.get('driver_cpu_s'), 2)} | {fmt(r['other_cores'], 2)} |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--url", required=True)
    r.add_argument("--secret", required=True, help="the server's HERALD_JWT_SECRET")
    r.add_argument("--mock-log", required=True)
    r.add_argument("--leg", default="herald")
    r.add_argument("--engine", default="sqlite")
    r.add_argument("--handoff", default="on")
    r.add_argument("--binary", default="")
    r.add_argument("--drivers", type=int, default=1000)
    r.add_argument("--jobs", type=int, default=5)
    r.add_argument("--gap", type=float, default=3, help="seconds between one job's end and the next job")
    r.add_argument("--settle", type=float, default=1, help="seconds after a job is complete still in its CPU window")
    r.add_argument("--final-settle", type=float, default=3, help="seconds after the last job for late arrivals and duplicates")
    r.add_argument("--timeout", type=float, default=60, help="seconds a job may take to reach everyone")
    r.add_argument("--idle", type=float, default=3)
    r.add_argument("--setup-concurrency", type=int, default=32)
    r.add_argument("--request-timeout", type=float, default=60)
    r.add_argument("--probe", action="append", default=[], help="name=pid (herald, postgres, mock)")
    s = sub.add_parser("summary")
    s.add_argument("results")
    args = p.parse_args()
    if args.command == "summary":
        print(summary(args.results))
        return
    if args.drivers < 2:
        p.error("--drivers must be at least 2")
    try:
        import uvloop  # noqa: PLC0415
        uvloop.install()
    except ImportError:
        pass
    for row in asyncio.run(OfferBench(args).run()):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
