#!/usr/bin/env python3
"""Markdown tables from a trips-run.sh results.jsonl:  summarize.py results.jsonl"""
from __future__ import annotations

import json
import sys


def fmt(value, digits=1):
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}"


def main(path: str) -> None:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip().startswith("{")]
    for r in rows:
        if r["measurement"] == "trip_setup":
            print(f"- {r['engine']}: setup of {r['trips']:,} trips in {r['seconds']} s ({r['requests_per_s']} HTTP requests/s)")
        elif r["measurement"] == "server_idle_cpu":
            print(f"- {r['engine']}: server CPU with no load after the setup: {r['cpu_server_pct']} % (loadavg {r['loadavg']})")
        elif r["measurement"] == "trip_connect":
            print(f"- {r['engine']}: {r['sockets']:,} sockets connected and subscribed in {r['seconds']:.1f} s, {r['failed']} failed")
    print()
    print("| engine | load | offered/s | sent/s | accepted/s | delivered/s | p50 ms | p90 ms | p99 ms | max ms | ack p99 ms | lost | backlog cleared s | throttled | server CPU % | PG CPU % | gen CPU % |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if r["measurement"] != "trip_location_broadcast":
            continue
        print("| " + " | ".join([
            r["engine"], r["mode"], fmt(r.get("offered_per_s"), 0), fmt(r["sent_per_s"], 0), fmt(r["accepted_per_s"], 0),
            fmt(r["delivered_per_s"], 0), fmt(r["latency_p50_ms"]), fmt(r["latency_p90_ms"]), fmt(r["latency_p99_ms"]),
            fmt(r["latency_max_ms"]), fmt(r["ack_p99_ms"]), fmt(r["lost_in_window"]), fmt(r["backlog_clear_s"]),
            fmt(r["throttles"] + r["acks_refused"] + r["errors"]), fmt(r.get("cpu_server_pct"), 0), fmt(r.get("cpu_postgres_pct"), 0),
            fmt(r.get("cpu_generator_pct"), 0),
        ]) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
