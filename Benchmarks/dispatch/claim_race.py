#!/usr/bin/env python3
"""Dispatch load against a running `herald serve`: claim races and location updates.

    claim_race.py --url http://127.0.0.1:18080 --secret S [--drivers 200] [--races 20]
                  [--location-seconds 10] [--location-concurrency 64]

Claim races: 200 approved online drivers, all within the first round's radius (so each
job is offered to all of them and each claim tells all the others); for each race a customer books a job, then every driver
POSTs /drivers/jobs/{id}/accept at the same moment (one keep-alive connection per driver,
opened beforehand). Checks that exactly one gets 200 and every other 409
JOB_ALREADY_ACCEPTED. Reports per-request latency (p50/p99 over all accepts), the race
duration (first request sent → last answer) and accepts answered per second.

Location updates: the same drivers, online, POST /drivers/location with increasing
sequence numbers from `--location-concurrency` concurrent loops for `--location-seconds`;
reports updates/s and latency. One JSON line per measurement on stdout.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import random
import statistics
import sys
import time

import aiohttp


def token(secret: str, user: str, role: str) -> str:
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    now = int(time.time())
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": user, "role": role, "iat": now, "exp": now + 7200}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def call(session: aiohttp.ClientSession, method: str, url: str, tok: str, body=None) -> tuple[int, dict]:
    async with session.request(method, url, json=body, headers={"Authorization": f"Bearer {tok}"}) as response:
        return response.status, await response.json()


async def setup(base: str, secret: str, drivers: int) -> list[str]:
    operator = token(secret, "bench-ops", "operator")
    tokens = []
    async with aiohttp.ClientSession() as session:
        for index in range(drivers):
            user = f"bench-driver-{index}"
            tok = token(secret, user, "driver")
            status, body = await call(session, "PUT", f"{base}/api/v1/drivers/me", tok, {"name": f"Driver {index}", "truck_type": "van"})
            assert status in (200, 201), (status, body)
            status, body = await call(session, "POST", f"{base}/api/v1/operators/drivers/{user}/approval", operator, {"status": "approved"})
            assert status == 200, (status, body)
            status, body = await call(session, "POST", f"{base}/api/v1/drivers/online", tok, {"online": True})
            assert status == 200, (status, body)
            # Within the first round's radius: every driver is offered every job (and told when it is taken).
            status, body = await call(session, "POST", f"{base}/api/v1/drivers/location", tok,
                                      {"lat": 37.70 + (index % 20) * 0.01, "lng": -122.45 + (index // 20) * 0.01, "sequence": 0})
            assert status == 200, (status, body)
            tokens.append(tok)
    return tokens


async def races(base: str, secret: str, tokens: list[str], count: int, engine: str) -> dict:
    customer = token(secret, "bench-customer", "customer")
    latencies: list[float] = []
    durations: list[float] = []
    winners: list[float] = []
    answered = 0
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) for _ in tokens]
    try:
        # Open every driver's connection before the first race.
        await asyncio.gather(*(s.get(f"{base}/healthz") for s in sessions))
        async with aiohttp.ClientSession(connector=connector) as booking:
            for race in range(count):
                status, body = await call(booking, "POST", f"{base}/api/v1/jobs", customer,
                                          {"address": f"{race} Bench St", "lat": 37.7749, "lng": -122.4194, "volume_estimate": 2})
                assert status == 201, (status, body)
                job = body["data"]["id"]
                start = time.perf_counter()

                async def accept(session, tok):
                    sent = time.perf_counter()
                    status, body = await call(session, "POST", f"{base}/api/v1/drivers/jobs/{job}/accept", tok)
                    return status, body, time.perf_counter() - sent

                results = await asyncio.gather(*(accept(s, t) for s, t in zip(sessions, tokens)))
                durations.append(time.perf_counter() - start)
                wins = [r for r in results if r[0] == 200]
                losses = [r for r in results if r[0] == 409 and r[1]["error"]["code"] == "JOB_ALREADY_ACCEPTED"]
                if len(wins) != 1 or len(losses) != len(tokens) - 1:
                    print(f"race {race}: {len(wins)} winners, {len(losses)} clean losers: "
                          f"{sorted(set((r[0], json.dumps(r[1].get('error'))) for r in results))}", file=sys.stderr)
                    raise SystemExit(1)
                winners.append(wins[0][2])
                latencies += [r[2] for r in results]
                answered += len(results)
    finally:
        for s in sessions:
            await s.close()
    return {
        "measurement": "claim_race", "engine": engine, "drivers": len(tokens), "races": count, "exactly_one_winner_every_race": True,
        "accept_p50_ms": round(percentile(latencies, 50) * 1000, 2), "accept_p99_ms": round(percentile(latencies, 99) * 1000, 2),
        "winner_p50_ms": round(percentile(winners, 50) * 1000, 2),
        "race_p50_ms": round(percentile(durations, 50) * 1000, 2), "race_max_ms": round(max(durations) * 1000, 2),
        "accepts_per_second": round(answered / sum(durations), 1),
    }


async def locations(base: str, tokens: list[str], seconds: float, concurrency: int, engine: str) -> dict:
    latencies: list[float] = []
    sequences = [0] * len(tokens)
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    rng = random.Random(7)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def loop(worker: int):
            index = worker
            while time.perf_counter() < deadline:
                index = (index + concurrency) % len(tokens)
                sequences[index] += 1
                body = {"lat": 37.7 + rng.random() * 0.2, "lng": -122.5 + rng.random() * 0.2, "accuracy": 5, "sequence": sequences[index]}
                sent = time.perf_counter()
                async with session.post(f"{base}/api/v1/drivers/location", json=body, headers={"Authorization": f"Bearer {tokens[index]}"}) as r:
                    assert r.status == 200, (r.status, await r.text())
                    await r.read()
                latencies.append(time.perf_counter() - sent)
        start = time.perf_counter()
        await asyncio.gather(*(loop(w) for w in range(concurrency)))
        elapsed = time.perf_counter() - start
    return {
        "measurement": "location_updates_rest", "engine": engine, "concurrency": concurrency, "updates": len(latencies),
        "updates_per_second": round(len(latencies) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 2), "p99_ms": round(percentile(latencies, 99) * 1000, 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--engine", default="sqlite")
    parser.add_argument("--drivers", type=int, default=200)
    parser.add_argument("--races", type=int, default=20)
    parser.add_argument("--location-seconds", type=float, default=10)
    parser.add_argument("--location-concurrency", type=int, default=64)
    args = parser.parse_args()
    tokens = await setup(args.url, args.secret, args.drivers)
    print(json.dumps(await races(args.url, args.secret, tokens, args.races, args.engine)), flush=True)
    if args.location_seconds > 0:
        print(json.dumps(await locations(args.url, tokens, args.location_seconds, args.location_concurrency, args.engine)), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
