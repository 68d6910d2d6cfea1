#!/usr/bin/env python3
"""Benchmarks/notify-run.sh's results.jsonl as Markdown: one row per measurement.

    python notify_summary.py results.jsonl [OUT-dir]

Columns: offered load (rate/s, or closed loop cN), created/s, delivered/s in the window per path,
creation->device p50/p99 per path (ms), missing and duplicated per path (after the drain), the
cores each process used over the window (node1, node2, postgres, mock, driver) and CPU µs per
created notification (all processes; and Herald + PostgreSQL only). With the OUT dir, the
outbox's final statuses and the node logs' warning/error lines are listed per measurement."""

import glob
import json
import os
import sys


def fmt(value, digits=0):
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}"


def main() -> None:
    path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else None
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip().startswith("{")]
    print("# End-to-end notifications: one Herald node vs two on one PostgreSQL\n")
    if out and os.path.exists(os.path.join(out, "machine.txt")):
        with open(os.path.join(out, "machine.txt")) as f:
            print("```\n" + f.read().strip() + "\n```\n")
    print("Half the notifications go to online users (Socket.IO, acked), half to offline users (APNs via the "
          "outbox to herald-mock-apns). Delivered/s counts arrivals inside the sending window; missing and "
          "duplicated are counted after the drain. Cores = CPU seconds / window seconds (2 cores in all); idle cores = "
          "nodes + PostgreSQL + mock with every client connected and nothing sent, just before the window; machine busy = all "
          "cores not idle over the window (/proc/stat, steal included), other = busy minus the processes measured.\n")
    print("| run | offered | created/s | deliv/s socket | deliv/s push | socket p50 / p99 ms | push p50 / p99 ms "
          "| POST p50 / p99 ms | missing s/p | dup s/p | node1 | node2 | postgres | mock | driver | idle cores | machine busy / other cores | CPU µs/ntf all | Herald+PG µs/ntf | drain s | errors |")
    print("|" + "---|" * 21)
    for r in rows:
        offered = f"{r['offered_rate']:g}/s" if r.get("offered_rate") else f"closed c{r.get('concurrency')}"
        if r.get("not_offered"):
            offered += f" ({r['not_offered']:,} not sent)"
        print("| " + " | ".join([
            r["label"], offered, fmt(r["created_per_s"]), fmt(r["socket_delivered_per_s"]), fmt(r["push_delivered_per_s"]),
            f"{fmt(r['socket_p50_ms'], 1)} / {fmt(r['socket_p99_ms'], 1)}", f"{fmt(r['push_p50_ms'], 1)} / {fmt(r['push_p99_ms'], 1)}",
            f"{fmt(r['post_p50_ms'], 1)} / {fmt(r['post_p99_ms'], 1)}",
            f"{r['socket_missing']} / {r['push_missing']}", f"{r['socket_duplicated']} / {r['push_duplicated']}",
            fmt(r.get("node1_cores"), 2), fmt(r.get("node2_cores"), 2), fmt(r.get("postgres_cores"), 2),
            fmt(r.get("mock_cores"), 2), fmt(r.get("driver_cores"), 2), fmt(r.get("idle_cores_without_driver"), 2),
            f"{fmt(r.get('machine_busy_cores'), 2)} / {fmt(r.get('other_cores'), 2)}",
            fmt(r.get("cpu_us_per_notification"), 0), fmt(r.get("herald_pg_cpu_us_per_notification"), 0),
            fmt(r.get("drain_s"), 1), json.dumps(r.get("errors") or {}),
        ]) + " |")
    if not out:
        return
    print("\n## Outbox at the end of each run (channel | status | rows | max attempts)\n")
    for r in rows:
        p = os.path.join(out, f"deliveries-{r['label']}.txt")
        if os.path.exists(p):
            with open(p) as f:
                print(f"- {r['label']}: " + "; ".join(line.strip() for line in f if line.strip()))
    print("\n## Node log lines (warning and above; the config logs at warning)\n")
    for r in rows:
        for p in sorted(glob.glob(os.path.join(out, f"node*-{r['label']}.log"))):
            with open(p, errors="replace") as f:
                lines = [line.rstrip() for line in f if line.strip()]
            interesting = [line for line in lines if "warning" in line.lower() or "error" in line.lower() or "critical" in line.lower()]
            print(f"- {os.path.basename(p)}: {len(interesting)} warning/error lines of {len(lines)}")
            for line in interesting[:5]:
                print(f"    - `{line[:300]}`")


if __name__ == "__main__":
    main()
