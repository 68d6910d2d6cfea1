#!/usr/bin/env python3
"""Benchmarks/cluster-run.sh's results.jsonl as a Markdown table: one row per measurement, with
CPU per delivery summed over every process of the arrangement (nodes, database or Redis).

A many-small-rooms measurement runs two generator processes at once (each holds half the
users and publishes half the rate): their rows are merged — deliveries and rates added,
latency percentiles the larger of the two, and each server process's CPU the mean of what the
two generators measured over their (nearly identical) windows."""

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
    rows = [r for r in load(sys.argv[1]) if r.get("test") == "fanout"]
    print("| arrangement | users (many rooms) | events/s | offered deliveries/s | delivered/s | missing | p50 ms | p99 ms | p99 ms on node 1 / node 2 | publish request p99 ms | server CPU (cores) | CPU µs per delivery | of which database / Redis µs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for group in merged(rows):
        s = summarize(group)
        users = f"{s['users']:,}" if s["users"] else "–"
        print(
            f"| {s['label']} | {users} | {s['rate']:g} | {s['offered']:,.0f} | {s['delivered_per_s']:,.0f} | {s['missing']:,} | "
            f"{s['p50']:.1f} | {s['p99']:.1f} | {s['nodes']} | {s['publish_p99']:.1f} | {s['cores']:.2f} | {s['per']:.2f} | {s['infra_per']:.2f} |"
        )


if __name__ == "__main__":
    main()
