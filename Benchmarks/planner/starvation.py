"""A legitimate rider's plan while sixteen addresses plan as fast as their rate limit allows
(issue 38 item 6). Each attacker has its own loopback source address (127.0.0.2…17), so the
per-address limit (10 plans a minute, anonymous) holds each of them, and asks for the most
work a plan may be: a three-hour departure window with eight itineraries and four changes.
The rider (127.0.0.100) asks a plain plan every `--every` seconds.

Prints one JSON line: the rider's latency unloaded and under the attack (median, p90, max),
their ratio, and what the attackers were answered (200, 429, 503 PLANNER_BUSY).
"""
from __future__ import annotations

import argparse
import json
import statistics
import threading
import time

import requests
from requests.adapters import HTTPAdapter


class SourceAdapter(HTTPAdapter):
    """Connections from one loopback address."""

    def __init__(self, source: str):
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)


def session(source: str) -> requests.Session:
    s = requests.Session()
    s.mount("http://", SourceAdapter(source))
    return s


def quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--attackers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=90)
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--unloaded", type=int, default=20)
    parser.add_argument("--day", default="2026-03-04")
    args = parser.parse_args()
    plan = args.url + "/api/v1/trips/plan"
    rider_body = {"origin": {"type": "stop_id", "stop_id": "2203"}, "destination": {"type": "stop_id", "stop_id": "8953"},
                  "depart_at": f"{args.day}T08:00:00-04:00", "max_itineraries": 3}
    # Across the city, from and to places (every stop within 3 km walks in), every departure
    # of three hours: the most work one plan may ask for.
    attack_body = {"origin": {"type": "coordinates", "lat": 44.7260, "lon": -63.6600}, "destination": {"type": "coordinates", "lat": 44.6700, "lon": -63.4900},
                   "depart_at": f"{args.day}T07:00:00-04:00", "depart_until": f"{args.day}T10:00:00-04:00",
                   "max_itineraries": 8, "preferences": {"max_transfers": 4, "max_walking_distance": 3000}}

    def rider_plan(s: requests.Session) -> tuple[float, int]:
        started = time.monotonic()
        answer = s.post(plan, json=rider_body, timeout=600)
        return time.monotonic() - started, answer.status_code

    # Unloaded: from addresses of their own (the rate limit is per address).
    unloaded = []
    for index in range(args.unloaded):
        seconds, status = rider_plan(session(f"127.0.1.{index + 1}"))
        assert status == 200, status
        unloaded.append(seconds)

    stop = threading.Event()
    answers: dict[str, int] = {}
    lock = threading.Lock()

    def attacker(index: int) -> None:
        s = session(f"127.0.0.{index + 2}")
        while not stop.is_set():
            started = time.monotonic()
            try:
                answer = s.post(plan, json=attack_body, timeout=600)
                key = str(answer.status_code)
                if answer.status_code == 503:
                    key += " " + answer.json().get("error", {}).get("code", "")
            except requests.RequestException as error:
                key = type(error).__name__
            with lock:
                answers[key] = answers.get(key, 0) + 1
            # Within the limit: 10 a minute.
            stop.wait(max(0.0, 6.0 - (time.monotonic() - started)))

    threads = [threading.Thread(target=attacker, args=(i,), daemon=True) for i in range(args.attackers)]
    for thread in threads:
        thread.start()
    time.sleep(min(10.0, args.seconds / 4))  # the attack under way
    loaded, statuses = [], {}
    rider = session("127.0.0.100")
    deadline = time.monotonic() + args.seconds
    count = 0
    while time.monotonic() < deadline:
        # A fresh address every 9 plans keeps the rider within its own limit.
        if count and count % 9 == 0:
            rider = session(f"127.0.2.{count // 9}")
        seconds, status = rider_plan(rider)
        count += 1
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        if status == 200:
            loaded.append(seconds)
        time.sleep(args.every)
    stop.set()
    for thread in threads:
        thread.join(timeout=600)
    result = {
        "measurement": "planner_starvation", "attackers": args.attackers,
        "unloaded_ms": {"median": round(statistics.median(unloaded) * 1000, 1), "p90": round(quantile(unloaded, 0.9) * 1000, 1),
                        "max": round(max(unloaded) * 1000, 1)},
        "loaded_ms": {"median": round(statistics.median(loaded) * 1000, 1) if loaded else None,
                      "p90": round(quantile(loaded, 0.9) * 1000, 1) if loaded else None, "max": round(max(loaded) * 1000, 1) if loaded else None},
        "rider_answers": statuses, "attacker_answers": answers,
    }
    if loaded:
        result["ratio_median"] = round(statistics.median(loaded) / statistics.median(unloaded), 2)
        result["ratio_p90"] = round(quantile(loaded, 0.9) / quantile(unloaded, 0.9), 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
