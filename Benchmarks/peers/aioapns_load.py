"""aioapns against the benchmark's mock APNs: the peer of `PushLoad apns`.

    Benchmarks/.venv/bin/python Benchmarks/peers/aioapns_load.py \
        --url https://localhost:PORT --ca CA.pem --seconds 60 --concurrency 100 --connections 2

N asyncio tasks each send back to back through one `aioapns.APNs` client (key-based
auth with a P-256 .p8 made here, the ES256 provider token cached by aioapns), the same
payload and headers as Herald's sender (alert push type, priority 10, topic, apns-id).
Warmup seconds are not counted; then sends, latency and process CPU (user + system,
all threads) are measured. Prints one JSON line.

Pointing aioapns at the mock: aioapns hard-codes api.push.apple.com:443 as class
attributes of its protocol class (APNS_SERVER / APNS_PORT), so the pool's protocol_class
is replaced by a subclass naming localhost and the mock's port; the TLS context is
aioapns's own default (`ssl.create_default_context()`) plus the mock's CA and ALPN "h2"
(the mock, like NIO's HTTP/2 servers, falls back to HTTP/1.1 without ALPN; Apple does not
need it). Nothing else in aioapns is changed. uvloop is used when installed (--loop).
"""

import argparse
import asyncio
import json
import os
import resource
import ssl
import sys
import time
from urllib.parse import urlparse

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsProductionClientProtocol
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

TITLE = "New message from Alice"
BODY = "Are we still on for lunch tomorrow? I booked the place near the station for 12:30."
THREAD = "conversation-42"


def device_token(index: int) -> str:
    seed = "%016x" % ((index * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
    return seed * 4


def message() -> dict:
    # What Herald's APNsPayload renders for the same notification (keys sorted there too).
    return {
        "aps": {
            "alert": {"body": BODY, "title": TITLE},
            "badge": 3,
            "category": "MESSAGE",
            "mutable-content": 1,
            "sound": "default",
            "thread-id": THREAD,
        },
        "conversation_id": THREAD,
        "notification_id": "ntf_01JD5R8Y4W2KQ7X9ABCDEF",
        "type": "chat.message",
    }


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentiles(samples):
    samples.sort()
    out = {}
    for name, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p999", 99.9)):
        if samples:
            index = max(0, min(len(samples) - 1, int(-(-p / 100 * len(samples) // 1)) - 1))
            out["latency_%s_ms" % name] = round(samples[index] * 1000, 3)
        else:
            out["latency_%s_ms" % name] = None
    out["latency_max_ms"] = round(samples[-1] * 1000, 3) if samples else None
    out["latency_mean_ms"] = round(sum(samples) / len(samples) * 1000, 3) if samples else None
    return out


async def main(args) -> dict:
    target = urlparse(args.url)
    protocol = type(
        "MockAPNsProtocol",
        (APNsProductionClientProtocol,),
        {"APNS_SERVER": target.hostname, "APNS_PORT": target.port or 443},
    )
    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()

    client = APNs(
        key=pem,
        key_id="KEY1234567",
        team_id="TEAM123456",
        topic="com.example.herald",
        max_connections=args.connections,
        ssl_context=context,
    )
    client.pool.protocol_class = protocol

    tokens = [device_token(i) for i in range(1000)]
    loop = asyncio.get_running_loop()
    start = loop.time()
    measure_start = start + args.warmup
    measure_end = measure_start + args.seconds
    state = {"completed": 0, "failed": 0, "first_failure": None}

    async def sender(index: int):
        latencies = []
        i = 0
        while True:
            begin = loop.time()
            if begin >= measure_end:
                break
            begin_precise = time.perf_counter()
            request = NotificationRequest(
                device_token=tokens[(index * 7 + i) % len(tokens)],
                message=message(),
                priority=10,
                push_type=PushType.ALERT,
            )
            i += 1
            try:
                result = await client.send_notification(request)
                if not result.is_successful:
                    state["failed"] += 1
                    state["first_failure"] = state["first_failure"] or "%s %s" % (result.status, result.description)
            except Exception as error:  # noqa: BLE001 - counted, like Herald's thrown errors
                state["failed"] += 1
                state["first_failure"] = state["first_failure"] or repr(error)
            elapsed_precise = time.perf_counter() - begin_precise
            end = loop.time()
            state["completed"] += 1
            if begin >= measure_start and end <= measure_end:
                latencies.append(elapsed_precise)
        return latencies

    tasks = [asyncio.create_task(sender(i)) for i in range(args.concurrency)]
    await asyncio.sleep(max(0.0, measure_start - loop.time()))
    sends0 = state["completed"]
    cpu0 = cpu_seconds()
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = loop.time()
    per_second = []
    last = sends0
    tick = measure_start
    while True:
        tick += 1
        if tick > measure_end:
            break
        await asyncio.sleep(max(0.0, tick - loop.time()))
        now = state["completed"]
        per_second.append(now - last)
        last = now
    await asyncio.sleep(max(0.0, measure_end - loop.time()))
    sends = state["completed"] - sends0
    cpu = cpu_seconds() - cpu0
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    elapsed = loop.time() - t0
    latencies = []
    for part in await asyncio.gather(*tasks):
        latencies.extend(part)
    client.pool.close()

    from importlib.metadata import version

    result = {
        "bench": "apns",
        "impl": "aioapns",
        "url": args.url,
        "concurrency": args.concurrency,
        "connections": args.connections,
        "event_loop": args.loop,
        "versions": "aioapns %s, h2 %s, pyjwt %s, cryptography %s, python %s" % (
            version("aioapns"), version("h2"), version("PyJWT"), version("cryptography"), sys.version.split()[0]),
        "cpus": ",".join(str(c) for c in sorted(os.sched_getaffinity(0))),
        "warmup_s": args.warmup,
        "duration_s": round(elapsed, 3),
        "sends": sends,
        "failed_total": state["failed"],
        "first_failure": state["first_failure"],
        "sends_per_s": round(sends / elapsed, 3),
        "min_1s_sends": min(per_second) if per_second else 0,
        "max_1s_sends": max(per_second) if per_second else 0,
        "cpu_us_per_send": round(cpu * 1e6 / max(1, sends), 3),
        "cpu_user_s": round(usage1.ru_utime - usage0.ru_utime, 3),
        "cpu_sys_s": round(usage1.ru_stime - usage0.ru_stime, 3),
        "cpu_cores_used": round(cpu / elapsed, 3),
        "latency_samples": len(latencies),
    }
    result.update(percentiles(latencies))
    result["max_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result["per_second"] = per_second
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop")
    args = parser.parse_args()
    if args.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            args.loop = "asyncio"
        else:
            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    print(json.dumps(asyncio.run(main(args))), flush=True)
