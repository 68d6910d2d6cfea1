#!/usr/bin/env python3
"""Turns Benchmarks/run.sh's results.jsonl into a Markdown table: Herald vs python-socketio."""

import json
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def fmt(v, unit=""):
    if v is None:
        return "–"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}{unit}"
        if abs(v) >= 10:
            return f"{v:.1f}{unit}"
        return f"{v:.3g}{unit}"
    if isinstance(v, int):
        return f"{v:,}{unit}"
    return str(v)


def ratio(h, p, higher_is_better=True):
    if h is None or p is None or not isinstance(h, (int, float)) or not isinstance(p, (int, float)):
        return "–"
    if h <= 0 or p <= 0:
        return "–"
    if higher_is_better:
        return f"{h / p:.1f}×"
    return f"{p / h:.1f}× less"


def main():
    rows = load(sys.argv[1])
    groups = {}
    died = []
    floors = []
    for r in rows:
        key = r["test"]
        if key == "floor":
            floors.append(r)
            continue
        if key == "server-died":
            died.append(r.get("label", "?"))
            continue
        if key == "fanout":
            key = f"fanout {r['connections']:,} clients @ {r['rate']:g} ev/s"
        elif key == "memory":
            key = f"memory {r['connections']:,} idle ({r['processes']} proc)"
        elif key == "storm":
            key = f"storm {r['connections']:,} clients @ {r['rate']:g} ev/s"
        groups.setdefault(key, {})[r.get("label", "?")] = r

    metrics = {
        "fanout": [
            ("deliveries/s", "deliveries_per_s", True),
            ("publish→receive p50 ms", "latency_p50_ms", False),
            ("publish→receive p99 ms", "latency_p99_ms", False),
            ("publish→receive max ms", "latency_max_ms", False),
            ("events published (ok / attempted)", None, None),
            ("missing deliveries", "missing_deliveries", None),
            ("server CPU (cores)", "server_cpu_util", None),
            ("unexpected disconnects", "unexpected_closes", None),
        ],
        "memory": [
            ("connected", "connected", None),
            ("RSS per idle connection (bytes)", "bytes_per_connection", False),
            ("RSS with all connected (MiB)", "server_rss_connected_bytes", None),
            ("RSS after closing all (MiB)", "server_rss_after_close_bytes", None),
        ],
        "storm": [
            ("reconnected", "reconnected", None),
            ("share complete (every event, no gap)", "share_complete", True),
            ("share caught up", "share_caught_up", True),
            ("share session recovered (same sid)", "share_sid_kept", True),
            ("whoami recovered:true", "whoami_recovered_true", None),
            ("reconnect → caught up p50 ms", "catch_up_p50_ms", False),
            ("reconnect → caught up p99 ms", "catch_up_p99_ms", False),
            ("reconnect → CONNECT reply p99 ms", "reconnect_p99_ms", False),
            ("missing events (all clients)", "missing_events", None),
        ],
    }
    print("| measurement | metric | Herald | python-socketio | ratio |")
    print("| --- | --- | ---: | ---: | ---: |")
    for key, by in groups.items():
        kind = key.split()[0]
        h, p = by.get("herald"), by.get("python-socketio")
        for label, field, better in metrics.get(kind, []):
            if field is None:
                hv = f"{h['publish_ok']:,} / {h['publish_attempted']:,}" if h else "–"
                pv = f"{p['publish_ok']:,} / {p['publish_attempted']:,}" if p else "–"
                print(f"| {key} | {label} | {hv} | {pv} | |")
                continue
            hv, pv = (h or {}).get(field), (p or {}).get(field)
            if kind == "storm" and field.startswith("catch_up_"):
                # No client caught up: no time to report.
                hv = hv if (h or {}).get("catch_up_samples") else None
                pv = pv if (p or {}).get("catch_up_samples") else None
            if kind == "memory" and field != "connected":
                hv = hv if (h or {}).get("server_alive", True) else "server gone"
                pv = pv if (p or {}).get("server_alive", True) else "server gone"
            if field.endswith("_bytes") and "per" not in field:
                hv = hv / 2**20 if isinstance(hv, (int, float)) else hv
                pv = pv / 2**20 if isinstance(pv, (int, float)) else pv
            r = ratio(hv, pv, better) if better is not None else ""
            print(f"| {key} | {label} | {fmt(hv)} | {fmt(pv)} | {r} |")
    for f in floors:
        print(
            f"\n{f['label'][:1].upper()}{f['label'][1:]}: {f['connections']:,} sockets, {f['rounds']} one-message rounds, "
            f"{f['message_bytes']} B: {f['write_us_per_socket']:.2f} µs per write, publish→receive "
            f"p50 {f['latency_p50_ms']:.1f} ms, p99 {f['latency_p99_ms']:.1f} ms, max {f['latency_max_ms']:.1f} ms."
        )
    for name in died:
        print(f"\nSERVER DIED during {name} (see its log in this results folder).")


if __name__ == "__main__":
    main()
