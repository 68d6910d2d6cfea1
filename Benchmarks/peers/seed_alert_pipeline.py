"""The seed's own alert pipeline (seed 003 §4.2 Phase B, §4.4, §4.9), the peer of
`Benchmarks/alerts/herald_alerts.py`: the same riders, favourites, iPhones and alert.

    python seed_alert_pipeline.py --feed halifax.zip --redis-port 6390 --mock-url https://localhost:PORT --ca CA.pem

Built from the seed's code, in one asyncio process (no Celery: its broker round trips would
only add to the peer's time):
  - write-through reverse index in Redis, as favourites CRUD keeps it: `stop:{id}:users` and
    `route:{id}:users` sets, and the riders' APNs tokens (`user_devices`, a hash standing in for
    the Supabase table), loaded before the clock starts;
  - the matcher (`match_alerts_to_favorites`): the GTFS-RT message decoded with
    gtfs-realtime-bindings, the fingerprint check (`is_unchanged_alert`), stop and route ids
    from `informed_entity`, `SUNION` of their sets, `filter_users_by_prefs` (preferences
    read in one pipeline; nobody set any, so all pass, as in the seed's default), the 30-min
    cooldown key per user (`SET NX EX`, §4.4), the tokens fetched (`HMGET`) — "queued" is
    when every batch of 400 tokens is built with its payload and headers (§4.5–4.6);
  - `send_apns_batch` with aioapns (the seed's Phase B library; PyAPNs2 depends on `hyper`,
    which does not import on Python 3.10+), all batches at once over `--connections`
    HTTP/2 connections, at most `--concurrency` in flight — "accepted" is when the mock has
    answered every push. Two adaptations of aioapns to the mock, neither of which changes
    what it does per push: its `host` header is sent as `:authority` (the mock's HTTP/2
    server requires it; Apple takes either), and the mock's empty DATA frame ending a 200 is
    not parsed as JSON (Apple ends a 200 on its HEADERS frame).
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import ssl
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

import redis.asyncio as redis
from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsProductionClientProtocol
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from google.transit import gtfs_realtime_pb2

sys.path.insert(0, str(Path(__file__).parent.parent / "alerts"))
import dataset  # noqa: E402
from herald_alerts import alert_message  # noqa: E402


async def load(r: redis.Redis, data: dict) -> float:
    started = time.perf_counter()
    await r.flushdb()
    pipe = r.pipeline(transaction=False)
    for index, (user, stop) in enumerate(data["favourites"]):
        pipe.sadd(f"stop:{stop}:users", user)
        for route in data["stop_routes"].get(stop, ()):
            pipe.sadd(f"route:{route}:users", user)
        if index % 5000 == 4999:
            await pipe.execute()
    pipe.hset("user_devices", mapping=data["tokens"])
    await pipe.execute()
    return time.perf_counter() - started


def build_aps(alert) -> tuple[dict, dict]:
    """§4.5 headers and §4.6 payload."""
    alert_id = alert.id
    header = alert.alert.header_text.translation[0].text
    severity = {gtfs_realtime_pb2.Alert.SEVERE: "cancelled", gtfs_realtime_pb2.Alert.WARNING: "major"}.get(alert.alert.severity_level, "minor")
    route = alert.alert.informed_entity[0].route_id or None
    aps = {
        "aps": {
            "alert": {"title-loc-key": "ALERT_TITLE_DELAY", "title-loc-args": [route or ""], "loc-key": "ALERT_BODY_DELAY_SHORT",
                      "loc-args": [header, "technical problem"]},
            "badge": 1, "sound": "default", "category": "SERVICE_ALERT", "thread-id": alert_id,
            "interruption-level": "time-sensitive" if severity != "minor" else "active",
        },
        "alert_id": alert_id, "route_id": route, "stop_ids": [], "severity": severity, "deep_link": f"transitapp://alerts/{alert_id}",
    }
    expiry = {"cancelled": 7200, "major": 3600}.get(severity, 1800)
    headers = {"apns-push-type": "alert", "apns-collapse-id": alert_id, "apns-priority": "10", "apns-expiration": str(int(time.time()) + expiry)}
    return aps, headers


async def main(args) -> dict:
    data = dataset.build(args.feed, users=args.users, affected=args.affected)
    r = redis.Redis(port=args.redis_port, decode_responses=True)
    load_seconds = await load(r, data)

    target = urlparse(args.mock_url)
    def connection_made(self, transport):
        # aioapns names the host in a `host` header; Apple takes it, the mock (NIO's HTTP/2
        # server) wants `:authority`, the form RFC 9113 asks clients to use. Only the name changes.
        send_headers = self.conn.send_headers
        self.conn.send_headers = lambda stream_id, headers, **kw: send_headers(
            stream_id, [(":authority", v) if k == "host" else (k, v) for k, v in headers], **kw)
        APNsProductionClientProtocol.connection_made(self, transport)

    def on_data_received(self, raw_data: bytes, stream_id: int) -> None:
        # The mock ends a 200 with an empty DATA frame (Apple ends it on the HEADERS frame);
        # aioapns would parse the empty body as JSON and drop the connection.
        if raw_data:
            APNsProductionClientProtocol.on_data_received(self, raw_data, stream_id)

    protocol = type("MockAPNsProtocol", (APNsProductionClientProtocol,),
                    {"APNS_SERVER": target.hostname, "APNS_PORT": target.port, "connection_made": connection_made,
                     "on_data_received": on_data_received})
    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])
    key = Path(tempfile.mkdtemp()) / "AuthKey.p8"  # aioapns 3.3 takes the .p8 file's path
    key.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    client = APNs(key=str(key), key_id="KEY1234567", team_id="TEAM123456", topic="com.example.transit", max_connections=args.connections,
                  ssl_context=context)
    client.pool.protocol_class = protocol
    body = alert_message(data["route"])

    t0 = time.perf_counter()
    message = gtfs_realtime_pb2.FeedMessage()
    message.ParseFromString(body)
    batches = []
    matched = 0
    for entity in message.entity:
        if not entity.HasField("alert"):
            continue
        fingerprint = hashlib.sha256(entity.alert.SerializeToString()).hexdigest()
        if await r.get(f"alert_fp:{entity.id}") == fingerprint:  # is_unchanged_alert
            continue
        await r.set(f"alert_fp:{entity.id}", fingerprint)
        stop_ids = [e.stop_id for e in entity.alert.informed_entity if e.stop_id]
        route_ids = [e.route_id for e in entity.alert.informed_entity if e.route_id]
        keys = [f"stop:{s}:users" for s in stop_ids] + [f"route:{x}:users" for x in route_ids]
        user_ids = sorted(await r.sunion(keys)) if keys else []
        matched += len(user_ids)
        # filter_users_by_prefs: one batch read of everyone's preferences.
        pipe = r.pipeline(transaction=False)
        for user in user_ids:
            pipe.hgetall(f"user_prefs:{user}")
        prefs = await pipe.execute()
        user_ids = [user for user, pref in zip(user_ids, prefs) if not pref or pref.get("severity_min", "minor") != "cancelled"]
        # exclude_already_notified: the 30-minute suppression key per user and alert.
        pipe = r.pipeline(transaction=False)
        for user in user_ids:
            pipe.set(f"notif_suppress:{user}:{entity.id}", "1", nx=True, ex=1800)
        fresh = [user for user, ok in zip(user_ids, await pipe.execute()) if ok]
        aps, headers = build_aps(entity)
        for start in range(0, len(fresh), 500):
            chunk = fresh[start:start + 500]
            tokens = [t for t in await r.hmget("user_devices", chunk) if t]
            for i in range(0, len(tokens), 400):
                batches.append((tokens[i:i + 400], aps, headers, entity.id))
    queued = time.perf_counter() - t0

    state = {"ok": 0, "failed": 0, "first_failure": None}
    # aioapns does not hold back requests over the server's 100 concurrent streams per
    # connection (h2 raises TooManyStreamsError): at most --concurrency in flight, as
    # PyAPNs2's send_notification_batch keeps within the stream limit.
    in_flight = asyncio.Semaphore(args.concurrency)

    async def send(token: str, aps: dict, headers: dict) -> None:
        async with in_flight:
            request = NotificationRequest(
                device_token=token, message=aps, priority=10, push_type=PushType.ALERT, collapse_key=headers["apns-collapse-id"],
                time_to_live=int(headers["apns-expiration"]) - int(time.time()))
            result = await client.send_notification(request)
        if result.is_successful:
            state["ok"] += 1
        else:
            state["failed"] += 1
            state["first_failure"] = state["first_failure"] or f"{result.status} {result.description}"

    async def send_apns_batch(tokens, aps, headers, alert_id) -> None:
        await asyncio.gather(*(send(token, aps, headers) for token in tokens))

    await asyncio.gather(*(send_apns_batch(*batch) for batch in batches))
    accepted = time.perf_counter() - t0
    client.pool.close()
    await r.aclose()
    return {
        "peer": "seed (redis + aioapns)", "users": args.users, "favourites": len(data["favourites"]), "affected": args.affected,
        "route": data["route"], "rows_loaded_seconds": round(load_seconds, 2), "matched": matched, "queued_seconds": round(queued, 3),
        "accepted_seconds": round(accepted, 3), "pushes": state["ok"], "failed": state["failed"], "first_failure": state["first_failure"],
        "connections": args.connections, "concurrency": args.concurrency,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--feed", required=True)
    parser.add_argument("--redis-port", type=int, required=True)
    parser.add_argument("--mock-url", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--affected", type=int, default=20_000)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--out")
    args = parser.parse_args()
    result = asyncio.run(main(args))
    print(json.dumps(result))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
