#!/usr/bin/env python3
"""Benchmarks/durable-run.sh's results.jsonl as Markdown.

    python durable_summary.py results.jsonl [OUT-dir]

Three tables: the end-to-end legs (Herald and the seed 004 stack, each engine; one row per
measurement), the storage floor (one row per engine and K), and the ratios: Herald / seed at the
same offered load and engine (created/s, p99 per path, server CPU per notification), and Herald's
server CPU per notification over the floor's at each K. "Server CPU" is every probed process
but the driver and the mock: Herald (+ PostgreSQL), or the seed's uvicorn process + Redis
(+ PostgreSQL); the SQLite engines run inside the server process."""

from __future__ import annotations

import json
import os
import re
import sys

LEG = re.compile(r"^(herald|seed)-(sqlite|postgres)(-one-by-one|-traced)?-(open|closed)-(.+)$")
PROCESSES = ["herald", "seed", "redis", "postgres", "mock", "driver", "otlp"]


def fmt(value, digits=0):
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}"


def ratio(a, b, digits=2):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.{digits}f}×"


def above_idle(r: dict):
    """Server µs per notification less what the server processes burnt idle (the driver's idle baseline,
    every client connected and nothing sent, just before the window): at a low offered rate the idle
    cost would otherwise dominate."""
    if not r.get("created") or r.get("herald_pg_cpu_s") is None:
        return None
    idle = sum(r.get(f"{name}_idle_cores") or 0.0 for name in PROCESSES if name not in ("driver", "mock", "otlp"))
    return round(max(0.0, r["herald_pg_cpu_s"] - idle * r["window_s"]) / r["created"] * 1e6, 1)


def offered(r: dict) -> str:
    text = f"{r['offered_rate']:g}/s" if r.get("offered_rate") else f"closed c{r.get('concurrency')}"
    if r.get("not_offered"):
        text += f" ({r['not_offered']:,} not sent)"
    return text


def main() -> None:
    path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else None
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip().startswith("{")]
    legs, floors = [], []
    for r in rows:
        m = LEG.match(r.get("label", ""))
        if m:
            system, r["_engine"], variant, r["_mode"], r["_value"] = m.groups()
            r["_system"] = system + (variant or "")
            legs.append(r)
        elif r.get("label", "").startswith("floor-"):
            floors.append(r)

    print("# The durable notification path: Herald, the seed 004 stack and the storage floor\n")
    if out and os.path.exists(os.path.join(out, "machine.txt")):
        with open(os.path.join(out, "machine.txt")) as f:
            print("```\n" + f.read().strip() + "\n```\n")

    if legs:
        print("## End to end (same driver, same users)\n")
        print("Half the notifications go to online users (Socket.IO), half to offline users (one APNs device each, "
              "to herald-mock-apns). Created/s and delivered/s over the sending window; p50/p99 creation→device; "
              "missing and twice after the drain. Cores = CPU s / window s per process tree. Server µs/ntf = CPU of every "
              "process but the driver and the mock, per created notification; above idle: less those processes' idle "
              "baseline (measured just before the window, every client connected, nothing sent).\n")
        print("| leg | offered | created/s | deliv/s socket | deliv/s push | socket p50 / p99 ms | push p50 / p99 ms "
              "| POST p50 / p99 ms | missing s/p | twice s/p | cores per process | server µs/ntf | server µs/ntf above idle "
              "| all µs/ntf | machine busy | errors |")
        print("|" + "---|" * 16)
        for r in legs:
            cores = ", ".join(f"{name} {r[name + '_cores']:.2f}" for name in PROCESSES if r.get(name + "_cores") is not None)
            print("| " + " | ".join([
                f"{r['_system']}-{r['_engine']}", offered(r), fmt(r["created_per_s"]), fmt(r["socket_delivered_per_s"]),
                fmt(r["push_delivered_per_s"]),
                f"{fmt(r['socket_p50_ms'], 1)} / {fmt(r['socket_p99_ms'], 1)}", f"{fmt(r['push_p50_ms'], 1)} / {fmt(r['push_p99_ms'], 1)}",
                f"{fmt(r['post_p50_ms'], 1)} / {fmt(r['post_p99_ms'], 1)}",
                f"{r['socket_missing']} / {r['push_missing']}", f"{r['socket_duplicated']} / {r['push_duplicated']}",
                cores, fmt(r.get("herald_pg_cpu_us_per_notification")), fmt(above_idle(r)), fmt(r.get("cpu_us_per_notification")),
                fmt(r.get("machine_busy_cores"), 2), json.dumps(r.get("errors") or {}),
            ]) + " |")
        print()

    if floors:
        print("## Storage floor (Benchmarks/storage_floor.py)\n")
        print("Herald's rows per notification — one `notifications` and one `notification_deliveries` row, then the ack "
              "or push outcome UPDATE and `sent_via` — with Herald's schema and durability, K notifications per commit. "
              "Program = the Python writer (sqlite3 in-process; psycopg client on PostgreSQL), postgres = the postmaster's "
              "process tree.\n")
        print("| engine | K | durability | notifications/s | commits/ntf | statements/ntf | rows/ntf | rows/commit "
              "| program µs/ntf | postgres µs/ntf | total µs/ntf |")
        print("|" + "---|" * 11)
        for r in floors:
            durability = (f"WAL, synchronous={r.get('synchronous')}" if r["engine"] == "sqlite"
                          else f"fsync={r.get('fsync')}, synchronous_commit={r.get('synchronous_commit')}")
            if r.get("connections", 1) > 1:
                durability += f", {r['connections']} connections"
            print("| " + " | ".join([
                r["engine"], str(r["batch"]), durability, fmt(r["notifications_per_s"]), fmt(r["commits_per_notification"], 3),
                fmt(r["statements_per_notification"], 3), fmt(r["rows_per_notification"], 2), fmt(r["rows_per_commit"], 1),
                fmt(r["program_cpu_us_per_notification"], 1), fmt(r.get("postgres_cpu_us_per_notification"), 1),
                fmt(r["cpu_us_per_notification"], 1),
            ]) + " |")
        print()

    traced = [r for r in legs if r["_system"] == "herald-traced"]
    if traced:
        print("## The cost of traces\n")
        print("Herald with tracing on (every request sampled; spans exported over OTLP/HTTP to a sink that discards "
              "them) against Herald with it off, same engine and load. Server µs/ntf: Herald (+ PostgreSQL), the sink "
              "not counted; the difference is what traces cost per notification (its request span, its delivery "
              "spans, the export).\n")
        print("| engine | offered | created/s traced / untraced | server µs/ntf traced − untraced | sink cores | p99 socket / push traced (untraced) ms |")
        print("|" + "---|" * 6)
        for t in traced:
            base = next((r for r in legs if r["_system"] == "herald" and r["_engine"] == t["_engine"]
                         and r["_mode"] == t["_mode"] and r["_value"] == t["_value"]), None)
            if base is None:
                continue
            t_us, b_us = t.get("herald_pg_cpu_us_per_notification"), base.get("herald_pg_cpu_us_per_notification")
            print("| " + " | ".join([
                t["_engine"], offered(t), ratio(t["created_per_s"], base["created_per_s"]),
                "–" if t_us is None or b_us is None else f"{t_us - b_us:+,.0f} ({ratio(t_us, b_us)})",
                fmt(t.get("otlp_cores"), 2),
                f"{fmt(t['socket_p99_ms'], 1)} / {fmt(t['push_p99_ms'], 1)} ({fmt(base['socket_p99_ms'], 1)} / {fmt(base['push_p99_ms'], 1)})",
            ]) + " |")
        print()

    heralds = [r for r in legs if r["_system"] == "herald" or r["_system"].startswith("herald-one")]
    if heralds:
        print("## Ratios\n")
        print("Herald / seed at the same engine and offered load (throughput: higher is better for Herald; p99: lower is "
              "better; CPU: seed µs ÷ Herald µs, how many times less CPU Herald spends per notification). Herald / floor: "
              "Herald's server µs per notification ÷ the floor's total µs per notification at each K (the issue's target: ≤ 3×).\n")
        print("| engine | offered | created/s Herald / seed | socket p99 Herald / seed | push p99 Herald / seed "
              "| seed CPU / Herald CPU | Herald CPU / floor CPU (K) | missing + twice (Herald, seed) |")
        print("|" + "---|" * 8)
        for h in heralds:
            seed = next((r for r in legs if r["_system"] == "seed" and r["_engine"] == h["_engine"]
                         and r["_mode"] == h["_mode"] and r["_value"] == h["_value"]), None)
            herald_us = h.get("herald_pg_cpu_us_per_notification")
            floor_ratios = ", ".join(f"{ratio(herald_us, f['cpu_us_per_notification'], 1)} (K={f['batch']})"
                                     for f in floors if f["engine"] == h["_engine"]) or "–"

            def bad(r):
                return None if r is None else r["socket_missing"] + r["push_missing"] + r["socket_duplicated"] + r["push_duplicated"]
            print("| " + " | ".join([
                h["_engine"], offered(h),
                f"{fmt(h['created_per_s'])} / {fmt(seed['created_per_s']) if seed else '–'} = "
                f"{ratio(h['created_per_s'], seed['created_per_s'] if seed else None, 1)}",
                f"{fmt(h['socket_p99_ms'], 1)} / {fmt(seed['socket_p99_ms'], 1) if seed else '–'} = "
                f"{ratio(h['socket_p99_ms'], seed['socket_p99_ms'] if seed else None)}",
                f"{fmt(h['push_p99_ms'], 1)} / {fmt(seed['push_p99_ms'], 1) if seed else '–'} = "
                f"{ratio(h['push_p99_ms'], seed['push_p99_ms'] if seed else None)}",
                ratio(seed.get("herald_pg_cpu_us_per_notification") if seed else None, herald_us, 1),
                floor_ratios, f"{bad(h)}, {fmt(bad(seed))}",
            ]) + " |")
        print()
    seeds = [r for r in legs if r["_system"] == "seed"]
    if seeds and floors:
        print("Seed CPU / floor CPU: " + "; ".join(
            f"{s['_engine']} {offered(s)}: " + ", ".join(
                f"{ratio(s.get('herald_pg_cpu_us_per_notification'), f['cpu_us_per_notification'], 1)} (K={f['batch']})"
                for f in floors if f["engine"] == s["_engine"])
            for s in seeds) + "\n")

    if out:
        print("## Final delivery states (Herald: channel | status | rows | max attempts; seed: sent_via | rows)\n")
        for r in legs:
            p = os.path.join(out, f"deliveries-{r['label']}.txt")
            if os.path.exists(p):
                with open(p) as f:
                    print(f"- {r['label']}: " + "; ".join(line.strip() for line in f if line.strip()))
        print("\n## Server log lines (warning and above)\n")
        for r in legs:
            p = os.path.join(out, f"server-{r['label']}.log")
            if not os.path.exists(p):
                continue
            with open(p, errors="replace") as f:
                lines = [line.rstrip() for line in f if line.strip()]
            interesting = [line for line in lines if any(w in line.lower() for w in ("warning", "error", "critical", "traceback"))]
            print(f"- {os.path.basename(p)}: {len(interesting)} warning/error lines of {len(lines)}")
            for line in interesting[:5]:
                print(f"    - `{line[:300]}`")


if __name__ == "__main__":
    main()
