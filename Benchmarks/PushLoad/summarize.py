"""Summarises a push-run.sh results.jsonl as a Markdown table against the issue's targets.

    python3 Benchmarks/PushLoad/summarize.py Benchmarks/results/<timestamp>-push/results.jsonl

With several rounds of the APNs pair (REPEAT=n), figures are medians with the range in
brackets, and the ratio is the median of the per-round ratios (each round's Herald and
aioapns ran back to back).
"""

import json
import statistics
import sys


def load(path):
    return [json.loads(line) for line in open(path) if line.strip().startswith("{")]


def rows_of(rows, small_window=False, **match):
    out = []
    for row in rows:
        if str(row.get("mock_impl", "")).endswith("-window65535") != small_window:
            continue
        if all(row.get(k) == v for k, v in match.items()):
            out.append(row)
    return out


def first(rows, **match):
    found = rows_of(rows, **match)
    return found[0] if found else None


def fmt(value, digits=0):
    if value is None:
        return "–"
    return "{:,.{}f}".format(value, digits)


def spread(values, digits=0):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if len(values) == 1:
        return fmt(values[0], digits)
    return "{} [{}–{}]".format(fmt(statistics.median(values), digits), fmt(min(values), digits), fmt(max(values), digits))


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def verdict(ok):
    return "–" if ok is None else ("**yes**" if ok else "**no**")


def main(path):
    rows = load(path)
    out = ["| measurement | Herald | peer | ratio | target | met? |", "| --- | --- | --- | --- | --- | --- |"]

    for impl in ("shared", "fast"):
        h2 = first(rows, bench="h2load", mock_impl=impl)
        if h2:
            rate = h2.get("req_per_s")
            out.append(
                "| mock APNs ({} mock) under h2load, req/s (mock used {} cores; h2load {} µs CPU/request) | {} | – | – | ≥ 45,000 | {} |".format(
                    impl, fmt(h2.get("mock_cpu_cores"), 2), fmt(h2.get("h2load_cpu_us_per_request"), 1), fmt(rate),
                    verdict(rate is not None and rate >= 45000)))

    herald = rows_of(rows, bench="apns", impl="herald")
    peer = rows_of(rows, bench="apns", impl="aioapns")
    if herald or peer:
        by_round = {}
        for row in herald + peer:
            by_round.setdefault(row.get("round", 1), {})[row["impl"]] = row
        ratios = [r["herald"]["sends_per_s"] / r["aioapns"]["sends_per_s"] for r in by_round.values() if "herald" in r and "aioapns" in r]
        cpu_ratios = [r["aioapns"]["cpu_us_per_send"] / r["herald"]["cpu_us_per_send"] for r in by_round.values() if "herald" in r and "aioapns" in r]
        h = median([r["sends_per_s"] for r in herald])
        ratio = median(ratios)
        seconds = herald[0]["duration_s"] if herald else peer[0]["duration_s"]
        out.append("| APNs sends/s over {} s, {} round(s) | {} | {} | {}× | ≥ 15,000 and ≥ 11× | {} / {} |".format(
            fmt(seconds), max(len(herald), len(peer)), spread([r["sends_per_s"] for r in herald]),
            spread([r["sends_per_s"] for r in peer]), spread(ratios, 2),
            verdict(h is not None and h >= 15000), verdict(ratio is not None and ratio >= 11)))
        out.append("| lowest 1-s bucket, sends | {} | {} | – | – | – |".format(
            spread([r["min_1s_sends"] for r in herald]), spread([r["min_1s_sends"] for r in peer])))
        hc = median([r["cpu_us_per_send"] for r in herald])
        out.append("| CPU µs per send (client process, user + sys) | {} | {} | {}× less | ≤ 40 | {} |".format(
            spread([r["cpu_us_per_send"] for r in herald], 1), spread([r["cpu_us_per_send"] for r in peer], 1),
            spread(cpu_ratios, 2), verdict(hc is not None and hc <= 40)))
        out.append("| sends per CPU-second (1e6 / CPU µs per send) | {} | {} | – | – | – |".format(
            spread([1e6 / r["cpu_us_per_send"] for r in herald]), spread([1e6 / r["cpu_us_per_send"] for r in peer])))
        out.append("| latency p50 / p99, ms | {} / {} | {} / {} | – | – | – |".format(
            spread([r.get("latency_p50_ms") for r in herald], 1), spread([r.get("latency_p99_ms") for r in herald], 1),
            spread([r.get("latency_p50_ms") for r in peer], 1), spread([r.get("latency_p99_ms") for r in peer], 1)))
        out.append("| client CPU used during the run, cores | {} | {} | – | – | – |".format(
            spread([r.get("cpu_cores_used") for r in herald], 2), spread([r.get("cpu_cores_used") for r in peer], 2)))
        out.append("| mock CPU used during the run, cores | {} | {} | – | – | – |".format(
            spread([r.get("mock_cpu_cores") for r in herald], 2), spread([r.get("mock_cpu_cores") for r in peer], 2)))
        out.append("| TCP connections to the mock | {} | {} | – | – | – |".format(
            spread([r.get("tcp_connections_seen") for r in herald]), spread([r.get("tcp_connections_seen") for r in peer])))

    herald64 = first(rows, small_window=True, bench="apns", impl="herald")
    peer64 = first(rows, small_window=True, bench="apns", impl="aioapns")
    if herald64 or peer64:
        h = herald64 and herald64["sends_per_s"]
        p = peer64 and peer64["sends_per_s"]
        out.append("| APNs sends/s against a 65,535-byte connection window, {} s | {} | {} | {}× | – | – |".format(
            fmt((herald64 or peer64)["duration_s"]), fmt(h), fmt(p), fmt(h / p if h and p else None, 2)))

    queue = first(rows, bench="queue-rss")
    if queue:
        out.append("| RSS with {:,} deliveries queued (idle), MiB | {} | – | – | ≤ 64 | {} |".format(
            queue["deliveries"], fmt(queue["rss_queued_mib"], 1), verdict(queue["rss_queued_mib"] <= 64)))
        out.append("| peak RSS while DeliveryWorker drains them, MiB (live heap at peak) | {} ({}) | – | – | ≤ 64 | {} |".format(
            fmt(queue["rss_peak_drain_mib"], 1), fmt(queue.get("peak_heap_in_use_mib"), 1), verdict(queue["rss_peak_drain_mib"] <= 64)))
        out.append("| DeliveryWorker drain (SQLite + APNs), deliveries/s; CPU µs per delivery | {} ; {} | – | – | – | – |".format(
            fmt(queue["drain_deliveries_per_s"]), fmt(queue["drain_cpu_us_per_delivery"], 1)))

    for mode in ("sign-each", "cached"):
        h = first(rows, bench="webpush-encrypt", impl="herald", mode=mode)
        p = first(rows, bench="webpush-encrypt", impl="pywebpush", mode=mode)
        if h or p:
            hr = h and h["messages_per_cpu_s"]
            pr = p and p["messages_per_cpu_s"]
            out.append("| Web Push encrypt + VAPID ({}), msgs per CPU-second (wall msgs/s) | {} ({}) | {} ({}) | {}× | ≥ 10,000 per core | {} |".format(
                mode, fmt(hr), fmt(h and h["messages_per_s"]), fmt(pr), fmt(p and p["messages_per_s"]),
                fmt(hr / pr if hr and pr else None, 2), verdict(hr is not None and hr >= 10000)))

    p = first(rows, bench="webpush-encrypt", impl="pywebpush", mode="string-key")
    if p:
        out.append("| pywebpush as webpush(vapid_private_key=<text>): key parsed + signed per message, msgs per CPU-second | – | {} ({}) | – | – | – |".format(
            fmt(p["messages_per_cpu_s"]), fmt(p["messages_per_s"])))

    for bench in ("apns-breakdown", "webpush-breakdown", "deadline-memory"):
        row = first(rows, bench=bench)
        if row:
            skip = {"bench", "impl", "cpus", "sink", "mock_impl", "mock_cpu_s", "mock_cpu_cores", "client_wall_s",
                    "tcp_connections_seen", "round", "loadavg_after"}
            parts = ["{}={}".format(k, v) for k, v in row.items() if k not in skip]
            out.append("\n`{}`: {}".format(bench, ", ".join(parts)))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
