#!/usr/bin/env python3
"""Benchmarks/cluster-run.sh's results.jsonl as a Markdown table: one row per measurement, with
CPU per delivery summed over every process of the arrangement (nodes, database or Redis).

A many-small-rooms measurement runs two generator processes at once (each holds half the
users and publishes half the rate): their rows are merged — deliveries and rates added,
latency percentiles the larger of the two, and each server process's CPU the mean of what the
two generators measured over their (nearly identical) windows. Presence churn rows
(`test: churn`) get a table of their own: cycles (a user leaving and coming back) per second,
the reconnects' CONNECT latency and CPU per cycle."""

import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def cpu_parts(row):
    """Server-side CPU seconds over the publishing window: node 1, node 2, the database or Redis."""
    parts = {"node1": row.get("server_cpu_s")}
    for key, value in row.items():
        if key.endswith("_cpu_s") and key != "server_cpu_s":
            parts[key[: -len("_cpu_s")]] = value
    return {k: v for k, v in parts.items() if v is not None}


def merged(rows):
    """Joins the second generator's row of a many-small-rooms measurement to the first's."""
    out = []
    for row in rows:
        if row.get("rooms") and row.get("client_offset", 0) > 0 and out and out[-1]["label"] == row["label"]:
            first = out[-1]
            first["parts"].append(row)
        else:
            out.append({**row, "parts": [row]})
    return out


def summarize(group):
    parts = group["parts"]
    n = len(parts)
    delivered = sum(p["deliveries"] for p in parts)
    cpu = {}
    for p in parts:
        for key, value in cpu_parts(p).items():
            cpu[key] = cpu.get(key, 0) + value / n
    window = max(p.get("delivery_window_s") or p.get("duration_s") or 1 for p in parts)
    total = sum(cpu.values())
    infra = cpu.get("postgres", cpu.get("redis"))
    nodes = []
    for key in ("latency_node1_p99_ms", "latency_node2_p99_ms"):
        values = [p[key] for p in parts if key in p]
        if values:
            nodes.append(max(values))
    return {
        "label": group["label"],
        "users": sum(p["connections"] for p in parts) if group.get("rooms") else None,
        "rate": sum(p["rate"] for p in parts),
        "offered": sum(p["offered_deliveries_per_s"] for p in parts),
        "delivered_per_s": sum(p["deliveries_per_s"] for p in parts),
        "missing": sum(p["missing_deliveries"] for p in parts) + sum(p.get("strays", 0) for p in parts),
        "p50": max(p.get("latency_p50_ms", float("nan")) for p in parts),
        "p99": max(p.get("latency_p99_ms", float("nan")) for p in parts),
        "nodes": " / ".join(f"{v:.0f}" for v in nodes) if nodes else "–",
        "cores": total / window,
        "per": total / delivered * 1e6 if delivered else float("nan"),
        "infra_per": infra / delivered * 1e6 if delivered and infra is not None else float("nan"),
        "publish_p99": max(p.get("publish_request_p99_ms", float("nan")) for p in parts),
    }


def main():
    everything = load(sys.argv[1])
    rows = [r for r in everything if r.get("test") == "fanout"]
    print("| arrangement | users (many rooms) | events/s | offered deliveries/s | delivered/s | missing | p50 ms | p99 ms | p99 ms on node 1 / node 2 | publish request p99 ms | server CPU (cores) | CPU µs per delivery | of which database / Redis µs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for group in merged(rows):
        s = summarize(group)
        users = f"{s['users']:,}" if s["users"] else "–"
        print(
            f"| {s['label']} | {users} | {s['rate']:g} | {s['offered']:,.0f} | {s['delivered_per_s']:,.0f} | {s['missing']:,} | "
            f"{s['p50']:.1f} | {s['p99']:.1f} | {s['nodes']} | {s['publish_p99']:.1f} | {s['cores']:.2f} | {s['per']:.2f} | {s['infra_per']:.2f} |"
        )
    churn_table([r for r in everything if r.get("test") == "churn"])


def churn_table(rows):
    if not rows:
        return
    print()
    print("| arrangement | users | leaving/s offered | cycles/s | reconnect failed | still away at end | CONNECT p50 ms | p99 ms | CPU (cores): node 1 + node 2 + database / Redis | CPU µs per cycle | of which database / Redis µs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        cpu = cpu_parts(row)
        window = row.get("window_s") or 1
        cycles = row.get("reconnected") or 0
        total = sum(cpu.values())
        infra = cpu.get("postgres", cpu.get("redis"))
        shares = " + ".join(f"{cpu[k] / window:.2f}" for k in ("node1", "node2", "postgres", "redis") if k in cpu)
        per = total / cycles * 1e6 if cycles else float("nan")
        infra_per = infra / cycles * 1e6 if cycles and infra is not None else float("nan")
        print(
            f"| {row['label']} | {row['connections']:,} | {row['rate']:g} | {row.get('cycles_per_s', 0):,.0f} | {row.get('reconnect_failed', 0):,} | "
            f"{row.get('reconnect_pending_at_end', 0):,} | {row.get('reconnect_p50_ms', float('nan')):.1f} | {row.get('reconnect_p99_ms', float('nan')):.1f} | "
            f"{shares} | {per:.0f} | {infra_per:.0f} |"
        )


if __name__ == "__main__":
    main()
