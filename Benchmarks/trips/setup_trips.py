#!/usr/bin/env python3
"""Makes N trips on a running `herald serve` for the trip location benchmark (issue 8).

    setup_trips.py --url http://127.0.0.1:18181 --secret S --trips 2000 --out trips.jsonl

Per trip i, one pipeline (several pipelines at once, `--concurrency`): driver `d{i}` makes
a profile, is approved by an operator, goes online, registers a vehicle and reports a
position a few hundred metres north of the pickup; rider `r{i}` books a ride
(Idempotency-Key) and d{i} accepts it at once, so each driver ends up with exactly one trip
(a driver on a trip is no longer offered rides). Writes one JSON line per trip: trip_id,
driver_token, rider_token, lat, lng (the driver's position) and seq (the sequence used).
Tokens are HS256 JWTs signed with the server's HERALD_JWT_SECRET, as claim_race.py mints them.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import sys
import time
import uuid

import aiohttp

PICKUP = {"latitude": 37.7749, "longitude": -122.4194}
DROPOFF = {"latitude": 37.8044, "longitude": -122.2712}


def token(secret: str, user: str, role: str, ttl: int = 4 * 3600) -> str:
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    now = int(time.time())
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": user, "role": role, "iat": now, "exp": now + ttl}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


async def call(session: aiohttp.ClientSession, method: str, url: str, tok: str, body=None, expect=(200,), headers=None):
    all_headers = {"Authorization": f"Bearer {tok}", **(headers or {})}
    async with session.request(method, url, json=body, headers=all_headers) as response:
        text = await response.text()
        if response.status not in expect:
            raise RuntimeError(f"{method} {url} → {response.status}: {text[:300]}")
        return json.loads(text) if text else {}


async def make_trip(session: aiohttp.ClientSession, base: str, secret: str, operator: str, i: int) -> dict:
    driver, rider = f"d{i}", f"r{i}"
    dtok, rtok = token(secret, driver, "driver"), token(secret, rider, "customer")
    api = f"{base}/api/v1"
    await call(session, "PUT", f"{api}/drivers/me", dtok, {"name": f"Driver {i}", "truck_type": "sedan"}, expect=(200, 201))
    await call(session, "POST", f"{api}/operators/drivers/{driver}/approval", operator, {"status": "approved"})
    await call(session, "POST", f"{api}/drivers/online", dtok, {"online": True})
    await call(session, "PUT", f"{api}/drivers/me/vehicle", dtok,
               {"make": "Toyota", "model": "Camry", "color": "Silver", "license_plate": f"X{i}", "capacity": 4})
    lat = PICKUP["latitude"] + (200 + (i % 40) * 10) / 111_200
    lng = PICKUP["longitude"]
    moved = await call(session, "POST", f"{api}/drivers/location", dtok,
                       {"latitude": lat, "longitude": lng, "accuracy_meters": 5, "sequence": 1})
    if moved["data"].get("accepted") is not True:
        raise RuntimeError(f"location of {driver} not accepted: {moved}")
    booked = await call(session, "POST", f"{api}/ride-requests", rtok, {"pickup": PICKUP, "dropoff": DROPOFF},
                        expect=(201,), headers={"Idempotency-Key": uuid.uuid4().hex})
    request_id = booked["data"]["request_id"]
    accepted = await call(session, "POST", f"{api}/drivers/ride-requests/{request_id}/accept", dtok, {})
    return {"trip_id": accepted["data"]["trip_id"], "driver_token": dtok, "rider_token": rtok, "lat": lat, "lng": lng, "seq": 1}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--trips", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--out", required=True)
    parser.add_argument("--engine", default="sqlite")
    args = parser.parse_args()

    operator = token(args.secret, "bench-ops", "operator")
    started = time.monotonic()
    results: list[dict | None] = [None] * args.trips
    next_index = 0
    done = 0

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=args.concurrency)) as session:
        async def worker() -> None:
            nonlocal next_index, done
            while next_index < args.trips:
                i = next_index
                next_index += 1
                results[i] = await make_trip(session, args.url, args.secret, operator, i)
                done += 1
                if done % 500 == 0:
                    print(f"[setup] {done}/{args.trips} trips", file=sys.stderr, flush=True)
        await asyncio.gather(*(worker() for _ in range(args.concurrency)))

    seconds = time.monotonic() - started
    with open(args.out, "w", encoding="utf-8") as out:
        for row in results:
            out.write(json.dumps(row) + "\n")
    print(json.dumps({"measurement": "trip_setup", "engine": args.engine, "trips": args.trips, "seconds": round(seconds, 1),
                      "http_requests": 7 * args.trips, "requests_per_s": round(7 * args.trips / seconds, 1)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
