#!/usr/bin/env python3
"""Benchmarks/cluster-run.sh's results.jsonl as a Markdown table: one row per measurement, with
CPU per delivery summed over every process of the arrangement (nodes, database or Redis)."""

import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def cpu_total(row):
    """Server-side CPU seconds over the publishing window: node 1, node 2, the database or Redis."""
    parts = {"node1": row.get("server_cpu_s")}
    for key, value in row.items():
        if key.endswith("_cpu_s") and key != "server_cpu_s":
            parts[key[: -len("_cpu_s")]] = value
    return sum(v for v in parts.values() if v is not None), parts


def split(row):
    """p99 of the clients on each node (node 1 is where events are published)."""
    nodes = [row[key] for key in ("latency_node1_p99_ms", "latency_node2_p99_ms") if key in row]
    return " / ".join(f"{value:.0f}" for value in nodes) if nodes else "–"


def main():
    rows = [r for r in load(sys.argv[1]) if r.get("test") == "fanout"]
    print("| arrangement | events/s | offered deliveries/s | delivered/s | missing | p50 ms | p99 ms | p99 ms on node 1 / node 2 | server CPU (cores) | CPU µs per delivery | of which database / Redis µs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        total, parts = cpu_total(r)
        window = r.get("delivery_window_s") or r.get("duration_s") or 1
        delivered = r.get("deliveries") or 0
        per = total / delivered * 1e6 if delivered else float("nan")
        infra = parts.get("postgres", parts.get("redis"))
        infra_per = infra / delivered * 1e6 if delivered and infra is not None else float("nan")
        print(
            f"| {r['label']} | {r['rate']:g} | {r['offered_deliveries_per_s']:,.0f} | {r['deliveries_per_s']:,.0f} | "
            f"{r['missing_deliveries']:,} | {r.get('latency_p50_ms', float('nan')):.1f} | {r.get('latency_p99_ms', float('nan')):.1f} | "
            f"{split(r)} | "
            f"{total / window:.2f} | {per:.2f} | {infra_per:.2f} |"
        )


if __name__ == "__main__":
    main()
