#!/usr/bin/env python3
"""Summarizes one Benchmarks/transit-run.sh run (a results folder) as markdown."""

from __future__ import annotations

import glob
import json
import re
import statistics
import sys
from datetime import datetime
from pathlib import Path

MIB = 1024 * 1024


def runs(out: Path, peer: str) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in sorted(glob.glob(str(out / f"load-{peer}-*.json")))]


def median(values):
    return statistics.median(values) if values else float("nan")


def gtfs_seconds(text: str) -> int:
    h, m, s = (int(x) for x in text.strip().split(":"))
    return h * 3600 + m * 60 + s


def herald_seconds(row: dict) -> int:
    """Seconds since the service day's midnight, from the ISO time and the service date."""
    local = datetime.fromisoformat(row["departure_time"])
    service = datetime.strptime(row["service_date"], "%Y%m%d").date()
    return (local.date() - service).days * 86400 + local.hour * 3600 + local.minute * 60 + local.second


def answer(peer: str, result: dict) -> list[tuple]:
    rows = result["departures"]
    if peer == "herald":
        return [(r["trip_id"], r["service_date"], herald_seconds(r), r["stop_sequence"]) for r in rows]
    return [(r["trip_id"], r["service_date"], gtfs_seconds(r["departure_time"]), r["stop_sequence"]) for r in rows]


def histogram(text: str, route: str) -> dict[float, float]:
    buckets = {}
    pattern = re.compile(r'herald_http_request_duration_seconds_bucket\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)')
    for match in pattern.finditer(text):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group("labels")))
        if labels.get("route") == route and labels.get("method") == "GET":
            le = float("inf") if labels["le"] == "+Inf" else float(labels["le"])
            buckets[le] = buckets.get(le, 0) + float(match.group("value"))
    return buckets


def main(out: Path) -> None:
    lines = ["# Transit benchmark: Halifax, next 10 departures at a busy stop", ""]
    machine = (out / "machine.txt").read_text() if (out / "machine.txt").exists() else ""
    lines += ["```", machine.strip(), "```", ""]
    peers = {name: runs(out, name) for name in ["herald", "gtfs-kit", "partridge"]}
    lines += ["## Load ready to answer, and the question in-process (median of runs)", "",
              "| | load (s) | peak RSS after load (MiB) | of which the load (MiB) | queries/s | p50 (ms) | p99 (ms) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    summary = {}
    for name, results in peers.items():
        if not results:
            continue
        load = median([r["load"]["seconds"] for r in results])
        hwm = median([r["memory_bytes"]["vmhwm_after_load"] for r in results]) / MIB
        base_key = "vmhwm_before_load" if name == "herald" else "vmhwm_after_imports"
        share = median([r["memory_bytes"]["vmhwm_after_load"] - r["memory_bytes"][base_key] for r in results]) / MIB
        qps = median([r["throughput"]["qps"] for r in results])
        p50 = median([r["throughput"]["p50_ms"] for r in results])
        p99 = median([r["throughput"]["p99_ms"] for r in results])
        summary[name] = dict(load=load, hwm=hwm, share=share, qps=qps, p99=p99)
        lines.append(f"| {name} | {load:.3f} | {hwm:.1f} | {share:.1f} | {qps:,.0f} | {p50:.3f} | {p99:.3f} |")
    lines.append("")
    if "herald" in summary:
        h = summary["herald"]
        for peer in ["gtfs-kit", "partridge"]:
            if peer in summary:
                p = summary[peer]
                lines.append(f"- vs {peer}: load {p['load'] / h['load']:.1f}× faster, peak RSS {p['hwm'] / h['hwm']:.1f}× smaller, "
                             f"queries/s {h['qps'] / p['qps']:,.0f}×")
        r = peers["herald"][0]["memory_bytes"]
        lines.append(f"- Herald's timetable index: {r['timetable_bytes'] / MIB:.1f} MiB for {r['stop_times']:,} stop times = "
                     f"{r['timetable_bytes_per_stop_time']:.1f} bytes per stop time")
    lines.append("")
    # Agreement.
    lines += ["## Do the answers agree?", ""]
    if peers["herald"]:
        reference = answer("herald", peers["herald"][0])
        lines.append("Herald: " + ", ".join(f"{t}@{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}" for t, _, s, _ in reference))
        for peer in ["gtfs-kit", "partridge"]:
            if peers[peer]:
                theirs = answer(peer, peers[peer][0])
                verdict = "same trips, service dates, times and stop sequences" if theirs == reference else f"DIFFERENT: {theirs}"
                lines.append(f"- {peer}: {verdict}")
                diagnostics = peers[peer][0].get("diagnostics")
                if diagnostics:
                    lines.append(f"  - diagnostics: {json.dumps(diagnostics)[:400]}")
    lines.append("")
    # CSV.
    csv = out / "csv.json"
    if csv.exists():
        data = json.loads(csv.read_text())
        lines += [f"## CSV readers on {data['file']} ({data['bytes'] / MIB:.1f} MiB, best of {data['runs']})", "",
                  "| reader | seconds | rows/s | vs Herald (strings) |", "|---|---:|---:|---:|"]
        base = data["herald_strings"]["seconds"]
        for key in ["herald_strings", "herald_typed", "swiftcsv_0.10.0", "csv.swift_2.5.2"]:
            r = data[key]
            lines.append(f"| {key} | {r['seconds']:.3f} | {r['rows_per_second']:,.0f} | {r['seconds'] / base:.1f}× |")
        lines.append("")
    # Imports.
    lines += ["## Full import (`herald transit import`)", ""]
    for engine in ["sqlite", "postgres"]:
        path = out / f"import-{engine}.txt"
        if path.exists():
            match = re.search(r"([\d]+) rows in ([\d.]+) s \(([\d]+) rows/s\)", path.read_text())
            if match:
                lines.append(f"- {engine}: {int(match.group(1)):,} rows in {float(match.group(2)):.2f} s = {int(match.group(3)):,} rows/s")
    lines.append("")
    # Server.
    server = out / "server.json"
    if server.exists():
        s = json.loads(server.read_text())
        lines += ["## `herald serve` from its own database (SQLite, one event loop)", "",
                  f"- to listening: {s['feed_start_seconds']:.2f} s with Halifax loaded, {s['empty_start_seconds']:.2f} s empty",
                  f"- RSS after start: {s['feed_memory']['vmrss'] / MIB:.1f} MiB with Halifax, {s['empty_memory']['vmrss'] / MIB:.1f} MiB empty "
                  f"(peak {s['feed_memory']['vmhwm'] / MIB:.1f} / {s['empty_memory']['vmhwm'] / MIB:.1f} MiB); "
                  f"after the HTTP run {s['serving_memory']['vmrss'] / MIB:.1f} MiB", ""]
    wrk = out / "wrk.txt"
    if wrk.exists():
        text = wrk.read_text()
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
        lat = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", text, re.M))
        lines += ["## Departures over HTTP (server on one CPU, wrk on the other)", "",
                  f"- {rps:,.0f} requests/s; wrk's latency p50 {lat.get('50')}, p90 {lat.get('90')}, p99 {lat.get('99')}"]
        before = histogram((out / "metrics-before.txt").read_text(), "/api/v1/stops/{id}/departures")
        after = histogram((out / "metrics-after.txt").read_text(), "/api/v1/stops/{id}/departures")
        delta = {le: after.get(le, 0) - before.get(le, 0) for le in after}
        total = delta.get(float("inf"), 0)
        if total:
            p99 = next((le for le in sorted(delta) if delta[le] >= 0.99 * total), float("inf"))
            within = {le: delta[le] / total for le in sorted(delta) if le <= 0.005}
            lines.append(f"- at the server (its histogram, {int(total):,} requests): p99 ≤ {p99 * 1000:g} ms; "
                         + ", ".join(f"{share:.2%} ≤ {le * 1000:g} ms" for le, share in within.items()))
        if summary.get("gtfs-kit") and summary.get("partridge"):
            best_peer = max(summary["gtfs-kit"]["qps"], summary["partridge"]["qps"])
            lines.append(f"- {rps / best_peer:,.0f}× the faster peer's in-process queries/s")
        lines.append("")
    print("\n".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
