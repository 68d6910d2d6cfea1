#!/usr/bin/env python3
"""Markdown summary of a geo-run.sh results.jsonl: Herald vs Redis, memory, updates, equality."""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]


def first(measure, **match):
    for row in rows:
        if row["measure"] == measure and all(row.get(k) == v for k, v in match.items()):
            return row
    return None


main_cell = first("herald-build", run="herald")
cell = main_cell["cell_size_m"] if main_cell else None
h_lat = first("herald-latency", run="herald", api="DriverGrid.nearest")
h_unb = next((r for r in rows if r["measure"] == "herald-latency" and r.get("run") == "herald" and "limit: .max" in r["api"]), None)
h_qps = first("herald-qps", run="herald", api="DriverGrid.nearest")
i_qps = first("herald-qps", run="herald", api="DriverIndex.nearest")
r_lat = first("redis-latency", run="redis")
r_pipe = first("redis-qps", run="redis", mode="pipelined")
r_conc = first("redis-qps", run="redis", mode="concurrent")
eq = first("equality", run="redis")
r_load = first("redis-load", run="redis")

drivers = f"{main_cell['drivers']:,}" if main_cell else "?"
print(f"| \"20 nearest within 3 km\", {drivers} drivers | p50 | p99 | QPS (1 thread / 1 Redis core) |")
print("| --- | --- | --- | --- |")
if h_lat and h_qps:
    print(f"| Herald `DriverGrid.nearest` (in process, cell {cell:g} m) | {h_lat['p50_us']:.1f} µs | {h_lat['p99_us']:.1f} µs | {h_qps['qps']:,.0f} |")
if i_qps:
    print(f"| Herald `DriverIndex.nearest` (same, through the mutex) | | | {i_qps['qps']:,.0f} |")
if h_unb:
    print(f"| Herald, Redis's algorithm: `nearest(limit: .max)` then first 20 ({h_unb['queries']:,} queries, mean {h_unb['mean_within_radius']:,.0f} within 3 km) | {h_unb['p50_us']:,.0f} µs | {h_unb['p99_us']:,.0f} µs | {1e6 / h_unb['mean_us']:,.0f} (1 / mean latency) |")
if r_lat:
    print(f"| Redis {r_lat['redis_version']} GEOSEARCH (1 client, sequential, loopback) | {r_lat['p50_us']:,.0f} µs | {r_lat['p99_us']:,.0f} µs | {1e6 / r_lat['mean_us']:,.0f} (1 / mean latency) |")
for r in (r_pipe, r_conc):
    if r:
        print(f"| Redis, {r['mode']} ({r['clients']} client(s), pipeline {r['pipeline']}, {r['queries']} queries) | | | {r['qps']:,.1f} |")
if h_lat and h_qps and r_lat:
    best = max([x["qps"] for x in (r_pipe, r_conc) if x] + [1e6 / r_lat["mean_us"]])
    print(f"| **Herald ÷ Redis** | {r_lat['p50_us'] / h_lat['p50_us']:,.0f}× faster | {r_lat['p99_us'] / h_lat['p99_us']:,.0f}× faster | {h_qps['qps'] / best:,.0f}× Redis's best |")
print()
print("| cell size | bytes/driver (malloc) | p50 µs | p99 µs | QPS | updates/s |")
print("| --- | --- | --- | --- | --- | --- |")
for b in [r for r in rows if r["measure"] == "herald-build" and not r["run"].startswith("herald-n")]:
    run = b["run"]
    lat = first("herald-latency", run=run, api="DriverGrid.nearest")
    q = first("herald-qps", run=run, api="DriverGrid.nearest")
    u = first("herald-updates", run=run, api="DriverGrid.upsert")
    print(f"| {b['cell_size_m']:g} m | {b['bytes_per_driver']:.1f} | {lat['p50_us']:.1f} | {lat['p99_us']:.1f} | {q['qps']:,.0f} | {u['updates_per_s']:,.0f} |" if lat and q and u else f"| {b['cell_size_m']:g} | {b['bytes_per_driver']:.1f} | | | | |")
print()
if main_cell:
    print(f"- Herald build: {main_cell['drivers']:,} inserts in {main_cell['seconds']:.2f} s ({main_cell['inserts_per_s']:,.0f}/s); "
          f"{main_cell['bytes_per_driver']:.1f} bytes/driver by mallinfo2, {main_cell['self_reported_bytes_per_driver']:.1f} by `approximateMemoryBytes`.")
for u in [r for r in rows if r["measure"] == "herald-updates" and r["run"] == "herald"]:
    print(f"- Updates ({u['api']}): {u['updates']:,} in {u['seconds']:.2f} s = {u['updates_per_s']:,.0f}/s.")
if r_load:
    print(f"- Redis load: {r_load['members']:,} members in {r_load['seconds']:.2f} s ({r_load['adds_per_s']:,.0f}/s, {r_load['pipelining']}); "
          f"{r_load['bytes_per_driver']:.1f} bytes/driver (used_memory).")
if eq:
    print(f"- Equality over {eq['queries']:,} queries: {eq['exact']:,} identical, {eq['ties_only']:,} differ only by ties within "
          f"{eq['tolerance_m']:g} m, {eq['mismatch']:,} mismatches ({eq['mismatch_at_0_5m_tolerance']:,} at 0.5 m tolerance); "
          f"largest distance difference for a driver in both answers {eq['max_distance_difference_m']:.3f} m.")

extra = sorted({r["run"][len("herald-n"):] for r in rows if r["run"].startswith("herald-n")}, key=int)
if extra:
    print()
    print("| drivers | Herald p50 / p99 µs | Herald QPS | Redis p50 / p99 µs | Redis best QPS | ratio (QPS) | bytes/driver Herald / Redis | equality (identical / ties / mismatch) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in extra:
        hl = first("herald-latency", run=f"herald-n{n}", api="DriverGrid.nearest")
        hq = first("herald-qps", run=f"herald-n{n}", api="DriverGrid.nearest")
        hb = first("herald-build", run=f"herald-n{n}")
        rl = first("redis-latency", run=f"redis-n{n}")
        rload = first("redis-load", run=f"redis-n{n}")
        rq = [r["qps"] for r in rows if r["measure"] == "redis-qps" and r["run"] == f"redis-n{n}"]
        e = first("equality", run=f"redis-n{n}")
        if not (hl and hq and hb and rl and rload and e):
            continue
        best = max(rq + [1e6 / rl["mean_us"]])
        print(f"| {int(n):,} | {hl['p50_us']:.1f} / {hl['p99_us']:.1f} | {hq['qps']:,.0f} | {rl['p50_us']:,.0f} / {rl['p99_us']:,.0f} | {best:,.0f} | {hq['qps'] / best:,.0f}× | {hb['bytes_per_driver']:.0f} / {rload['bytes_per_driver']:.0f} | {e['exact']:,} / {e['ties_only']:,} / {e['mismatch']:,} |")
