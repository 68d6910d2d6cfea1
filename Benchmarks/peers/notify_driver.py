"""End-to-end notification throughput (issue 24, part 2): the driver of Benchmarks/notify-run.sh.

One process (asyncio, uvloop when present):
  * ONLINE users (`nb-on-<n>`) hold a python-socketio AsyncClient each, user n on node n mod N,
    and receive the `notification` event; python-socketio answers the server's ack request
    by itself (the handler returns nothing, so the ack is empty), as an app in the foreground.
  * OFFLINE users (`nb-off-<n>`) registered one APNs device each (POST /api/v1/push/register)
    and hold no socket, so their notifications go outbox -> delivery worker -> APNs -> the
    mock, whose `--log` line carries `received_ns` (CLOCK_REALTIME).
  * Notifications are created with POST /api/v1/notifications (service token), one user
    each, users taken in turn (online and offline alternate), requests alternating over the
    nodes; at a fixed offered `--rate` (open loop: a send that would exceed `--max-inflight`
    requests in flight is not made and counted as `not_offered`) or, with `--rate 0`, closed
    loop with `--concurrency` senders.
  * `data.sent_ns` is CLOCK_REALTIME just before the POST (a string: JSON numbers are doubles).
    Socket latency = receive time - sent_ns; push latency = mock received_ns - sent_ns (by the
    notification id the POST answered).

Before the window, `--idle` s with every client connected and nothing sent give each process's
idle baseline (`<name>_idle_cores`). Measured window = the sending window (`--duration` s). Delivered/s counts deliveries that
arrived inside it; after it the driver waits up to `--drain` s for the rest, then counts
missing (created, never arrived) and duplicates (a notification id that reached its device
more than once). CPU: /proc/<pid>/stat (utime+stime+cutime+cstime) of each `--probe name=pid`
process tree and of the driver itself, over the window. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import time

import aiohttp
import jwt
import socketio

from proc_stats import CLK_TCK, cpu_of_trees, percentile, system_busy_seconds  # noqa: E402


def token(secret: str, sub: str, role: str) -> str:
    now = int(time.time())
    return jwt.encode({"sub": sub, "role": role, "iat": now, "exp": now + 3600}, secret, algorithm="HS256")


# The driver ----------------------------------------------------------------------------------------
class Driver:
    def __init__(self, args):
        self.args = args
        self.urls = args.urls.split(",")
        self.online = [f"nb-on-{n}" for n in range(args.online)]
        self.offline = [f"nb-off-{n}" for n in range(args.offline)]
        self.service = token(args.secret, "bench-notifier", "service")
        # id -> (sent_ns, path); socket receipts: id -> [recv_ns...]
        self.created: dict[str, tuple[int, str]] = {}
        self.socket_received: dict[str, list[int]] = {}
        self.unexpected_socket_users = 0
        self.errors: dict[str, int] = {}
        self.post_latency: list[float] = []
        self.answered: dict[str, int] = {}
        self.in_flight = 0
        self.not_offered = 0
        self.attempted = 0
        self.clients: list[socketio.AsyncClient] = []
        self.disconnects = 0

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    async def register_devices(self, session: aiohttp.ClientSession) -> None:
        semaphore = asyncio.Semaphore(32)

        async def register(n: int, user: str) -> None:
            body = {"token": secrets.token_hex(32), "provider": "apns", "platform": "ios", "device_id": f"{user}-phone"}
            url = self.urls[n % len(self.urls)] + "/api/v1/push/register"
            async with semaphore:
                async with session.post(url, json=body, headers={"Authorization": f"Bearer {token(self.args.secret, user, 'customer')}"}) as r:
                    if r.status not in (200, 201):
                        raise RuntimeError(f"register {user}: {r.status} {await r.text()}")

        await asyncio.gather(*(register(n, u) for n, u in enumerate(self.offline)))

    async def connect_clients(self) -> None:
        semaphore = asyncio.Semaphore(50)

        async def connect(n: int, user: str) -> None:
            sio = socketio.AsyncClient(reconnection=False, handle_sigint=False)
            expected_user = user

            @sio.on("notification")
            async def on_notification(payload, *_):
                now = time.time_ns()
                try:
                    nid = payload["id"]
                    if payload.get("user_id") != expected_user:
                        self.unexpected_socket_users += 1
                    self.socket_received.setdefault(nid, []).append(now)
                except Exception:  # noqa: BLE001
                    self.error("bad_socket_payload")
                # returning None: python-socketio sends the (empty) ack the server asked for

            @sio.on("disconnect")
            async def on_disconnect(*_):
                self.disconnects += 1

            async with semaphore:
                await sio.connect(self.urls[n % len(self.urls)], auth={"token": token(self.args.secret, user, "customer")},
                                  transports=["websocket"], wait_timeout=20)
            self.clients.append(sio)

        await asyncio.gather(*(connect(n, u) for n, u in enumerate(self.online)))

    async def wait_presence(self, session: aiohttp.ClientSession) -> None:
        """Every online user is online as each node sees it (PostgreSQL presence for the other)."""
        deadline = time.monotonic() + 30
        pending = [(url, user) for url in self.urls for user in self.online]
        while pending and time.monotonic() < deadline:
            still = []
            for url, user in pending:
                async with session.get(f"{url}/api/v1/realtime/presence/{user}", headers={"Authorization": f"Bearer {self.service}"}) as r:
                    data = (await r.json()).get("data", {}) if r.status == 200 else {}
                    if not data.get("online"):
                        still.append((url, user))
            pending = still
            if pending:
                await asyncio.sleep(0.5)
        if pending:
            raise RuntimeError(f"{len(pending)} (node, user) pairs never saw the user online, e.g. {pending[:3]}")

    async def send_one(self, session: aiohttp.ClientSession, n: int) -> None:
        users = self.recipients
        user, path = users[n % len(users)]
        url = self.urls[n % len(self.urls)] + "/api/v1/notifications"
        self.in_flight += 1
        sent_ns = time.time_ns()
        body = {"user_id": user, "type": "job_update", "title": "Your driver is close", "body": f"notification {n}",
                "data": {"sent_ns": str(sent_ns), "n": str(n)}}
        try:
            async with session.post(url, json=body, headers={"Authorization": f"Bearer {self.service}"}) as r:
                text = await r.read()
                if r.status != 201:
                    self.error(f"http_{r.status}")
                    if self.errors[f"http_{r.status}"] <= 3:
                        print(f"notify: {r.status} {text[:300]!r}", file=sys.stderr)
                    return
                result = json.loads(text)["data"]["results"][0]
                nid = result["notification"]["id"]
                channel = result.get("channel")
                if channel != path:
                    self.error(f"routed_{channel}_expected_{path}")
                self.created[nid] = (sent_ns, path)
                answered = time.time_ns()
                self.post_latency.append((answered - sent_ns) / 1e6)
                self.answered[nid] = answered
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            self.error(type(e).__name__)
        finally:
            self.in_flight -= 1

    async def load(self, session: aiohttp.ClientSession) -> tuple[int, int]:
        a = self.args
        # interleave: online, offline, online, … (whichever list is longer fills the tail)
        rec: list[tuple[str, str]] = []
        for i in range(max(len(self.online), len(self.offline))):
            if i < len(self.online):
                rec.append((self.online[i], "socket"))
            if i < len(self.offline):
                rec.append((self.offline[i], "push"))
        self.recipients = rec
        start = time.time_ns()
        end = start + int(a.duration * 1e9)
        tasks: set[asyncio.Task] = set()
        if a.rate > 0:
            interval = 1.0 / a.rate
            t0 = time.monotonic()
            n = 0
            while True:
                now = time.monotonic()
                if now - t0 >= a.duration:
                    break
                due = int((now - t0) / interval) + 1
                while n < due:
                    if self.in_flight >= a.max_inflight:
                        self.not_offered += 1
                    else:
                        self.attempted += 1
                        task = asyncio.create_task(self.send_one(session, n))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    n += 1
                await asyncio.sleep(min(interval, 0.002))
        else:
            counter = iter(range(10**9))

            async def worker() -> None:
                while time.time_ns() < end:
                    i = next(counter)
                    self.attempted += 1
                    await self.send_one(session, i)

            await asyncio.gather(*(worker() for _ in range(a.concurrency)))
        send_end = time.time_ns()
        if tasks:
            await asyncio.wait(tasks, timeout=60)
        return start, send_end

    def mock_receipts(self) -> dict[str, list[int]]:
        received: dict[str, list[int]] = {}
        try:
            with open(self.args.mock_log, "rb") as f:
                for line in f:
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except ValueError:
                        continue
                    if row.get("answer") != 200:
                        self.error(f"mock_answer_{row.get('answer')}")
                        continue
                    received.setdefault(row["notification_id"], []).append(int(row["received_ns"]))
        except FileNotFoundError:
            pass
        return received

    def outstanding(self) -> int:
        push = self.mock_receipts()
        missing = 0
        for nid, (_, path) in self.created.items():
            if nid not in (self.socket_received if path == "socket" else push):
                missing += 1
        return missing

    async def run(self) -> dict:
        a = self.args
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=max(a.max_inflight, a.concurrency) + 8)
        timeout = aiohttp.ClientTimeout(total=a.request_timeout)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            t = time.monotonic()
            await self.register_devices(session)
            await self.connect_clients()
            await self.wait_presence(session)
            print(f"[driver] {len(self.offline)} devices, {len(self.clients)} sockets, presence seen on {len(self.urls)} node(s) "
                  f"in {time.monotonic() - t:.1f}s", file=sys.stderr)
            await asyncio.sleep(1)
            self.socket_received.clear()  # nothing before the window (sync is another event anyway)
            probes = {name: pid for name, pid in (p.split("=", 1) for p in a.probe)}
            probes = {k: int(v) for k, v in probes.items()}
            probes["driver"] = os.getpid()
            # Idle baseline: what the arrangement costs with every client connected and nothing sent.
            idle_before, idle_t = cpu_of_trees(probes), time.monotonic()
            await asyncio.sleep(a.idle)
            idle_after, idle_s = cpu_of_trees(probes), time.monotonic() - idle_t
            cpu_before, busy_before = cpu_of_trees(probes), system_busy_seconds()
            start_ns, end_ns = await self.load(session)
            cpu_after, busy_after = cpu_of_trees(probes), system_busy_seconds()
            window_s = (end_ns - start_ns) / 1e9
            # drain
            deadline = time.monotonic() + a.drain
            missing = self.outstanding()
            while missing and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                missing = self.outstanding()
            drain_s = a.drain - max(0.0, deadline - time.monotonic())
            await asyncio.sleep(a.settle)  # late duplicates
            for sio in self.clients:
                await sio.disconnect()

        push_received = self.mock_receipts()
        if a.samples:  # one line per notification: id, path, sent, answered, first and last arrival (ns), copies
            with open(a.samples, "w") as f:
                for nid, (sent, path) in self.created.items():
                    times = (self.socket_received if path == "socket" else push_received).get(nid) or []
                    f.write(json.dumps([nid, path, sent, self.answered.get(nid), min(times) if times else None,
                                        max(times) if times else None, len(times)]) + "\n")
        result: dict = {"label": a.label, "nodes": len(self.urls), "online_users": len(self.online), "offline_users": len(self.offline),
                        "mode": "open" if a.rate > 0 else "closed", "offered_rate": a.rate if a.rate > 0 else None,
                        "concurrency": a.concurrency if a.rate <= 0 else a.max_inflight, "window_s": round(window_s, 3),
                        "window_start_ns": start_ns, "window_end_ns": end_ns}
        created_window = len(self.created)
        result["attempted"] = self.attempted
        result["not_offered"] = self.not_offered
        result["created"] = created_window
        result["created_per_s"] = round(created_window / window_s, 1)
        errors = dict(self.errors)
        for path, receipts in (("socket", self.socket_received), ("push", push_received)):
            ids = [nid for nid, (_, p) in self.created.items() if p == path]
            lat, in_window, missing, dup, copies = [], 0, 0, 0, 0
            for nid in ids:
                times = receipts.get(nid)
                if not times:
                    missing += 1
                    continue
                if len(times) > 1:
                    dup += 1
                    copies += len(times) - 1
                first = min(times)
                lat.append((first - self.created[nid][0]) / 1e6)
                if first <= end_ns:
                    in_window += 1
            unknown = sum(1 for nid in receipts if nid not in self.created)
            lat.sort()
            result[f"{path}_created"] = len(ids)
            result[f"{path}_delivered"] = len(ids) - missing
            result[f"{path}_delivered_in_window"] = in_window
            result[f"{path}_delivered_per_s"] = round(in_window / window_s, 1)
            result[f"{path}_p50_ms"] = round(percentile(lat, 0.50), 2) if lat else None
            result[f"{path}_p99_ms"] = round(percentile(lat, 0.99), 2) if lat else None
            result[f"{path}_max_ms"] = round(lat[-1], 2) if lat else None
            result[f"{path}_missing"] = missing
            result[f"{path}_duplicated"] = dup
            result[f"{path}_extra_copies"] = copies
            result[f"{path}_unknown_ids"] = unknown
        post = sorted(self.post_latency)
        result["post_p50_ms"] = round(percentile(post, 0.5), 2) if post else None
        result["post_p99_ms"] = round(percentile(post, 0.99), 2) if post else None
        delivered_window = result["socket_delivered_in_window"] + result["push_delivered_in_window"]
        result["delivered_per_s"] = round(delivered_window / window_s, 1)
        result["drain_s"] = round(drain_s, 2)
        total = 0.0
        for name in probes:
            if name in cpu_before and name in cpu_after:
                used = cpu_after[name] - cpu_before[name]
                total += used
                result[f"{name}_cpu_s"] = round(used, 3)
                result[f"{name}_cores"] = round(used / window_s, 3)
        result["total_cpu_s"] = round(total, 3)
        # The whole machine over the window (steal included): what is not ours is someone else's.
        result["machine_busy_cores"] = round((busy_after - busy_before) / window_s, 3)
        result["other_cores"] = round((busy_after - busy_before - total) / window_s, 3)
        result["idle_s"] = round(idle_s, 2)
        idle_total = 0.0
        for name in probes:
            if name in idle_before and name in idle_after and name != "driver":
                cores = (idle_after[name] - idle_before[name]) / idle_s
                idle_total += cores
                result[f"{name}_idle_cores"] = round(cores, 3)
        result["idle_cores_without_driver"] = round(idle_total, 3)
        # The server side: not the load (driver), nor the stand-ins for APNs and a trace collector.
        server = total - result.get("driver_cpu_s", 0.0) - result.get("mock_cpu_s", 0.0) - result.get("otlp_cpu_s", 0.0)
        result["herald_pg_cpu_s"] = round(server, 3)
        result["cpu_us_per_notification"] = round(total / created_window * 1e6, 1) if created_window else None
        result["herald_pg_cpu_us_per_notification"] = round(server / created_window * 1e6, 1) if created_window else None
        result["errors"] = errors
        result["socket_wrong_user"] = self.unexpected_socket_users
        result["socket_disconnects_during_run"] = self.disconnects - len(self.clients) if self.disconnects > len(self.clients) else 0
        return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--urls", required=True, help="comma-separated node URLs")
    p.add_argument("--secret", required=True, help="the cluster's HERALD_JWT_SECRET")
    p.add_argument("--online", type=int, default=200)
    p.add_argument("--offline", type=int, default=200)
    p.add_argument("--rate", type=float, default=0, help="notifications/s offered (0: closed loop)")
    p.add_argument("--concurrency", type=int, default=64, help="closed loop: senders")
    p.add_argument("--max-inflight", type=int, default=256, help="open loop: most requests in flight")
    p.add_argument("--duration", type=float, default=15)
    p.add_argument("--drain", type=float, default=30)
    p.add_argument("--settle", type=float, default=2)
    p.add_argument("--idle", type=float, default=3, help="seconds of idle baseline CPU before the window")
    p.add_argument("--request-timeout", type=float, default=30)
    p.add_argument("--mock-log", required=True)
    p.add_argument("--probe", action="append", default=[], help="name=pid (repeatable)")
    p.add_argument("--label", default="notify")
    p.add_argument("--samples", help="write one JSON line per notification here")
    args = p.parse_args()
    try:
        import uvloop  # noqa: PLC0415
        uvloop.install()
    except ImportError:
        pass
    result = asyncio.run(Driver(args).run())
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
