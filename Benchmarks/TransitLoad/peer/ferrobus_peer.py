"""The peer planner for `TransitLoad plan`: ferrobus (PyPI; a RAPTOR in Rust with a
street network from OpenStreetMap) answering the same one-to-one queries on the same feed.

ferrobus walks on an OpenStreetMap street graph, which these machines have no extract of.
This script writes one from the feed itself so both planners walk the same way: a node at
every stop and a footway between every two stops within `--walk-meters` (Herald's footpath
rule: stops within 400 m straight line). ferrobus then walks along those straight segments;
Herald multiplies the straight line by its detour factor, so walking times differ by that
factor and arrivals are compared for information, not asserted equal.

    python ferrobus_peer.py --gtfs DIR --pairs pairs.json --date 2026-03-04 --out peer.json
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import math
import os
import time
from pathlib import Path

import ferrobus
import osmium


def stops_of(gtfs: Path) -> dict[str, tuple[float, float]]:
    with open(gtfs / "stops.txt", newline="", encoding="utf-8-sig") as handle:
        return {row["stop_id"]: (float(row["stop_lat"]), float(row["stop_lon"])) for row in csv.DictReader(handle) if row.get("stop_lat")}


def meters(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6_372_797.560856 * math.asin(math.sqrt(h))


def write_osm(stops: dict[str, tuple[float, float]], path: Path, walk_meters: float) -> int:
    """A footway between every two stops within `walk_meters`; returns the number of ways."""
    if path.exists():
        path.unlink()
    ids = {stop: index + 1 for index, stop in enumerate(sorted(stops))}
    cell = walk_meters / 111_000
    grid: dict[tuple[int, int], list[str]] = {}
    for stop, (lat, lon) in stops.items():
        grid.setdefault((int(lat / cell), int(lon / cell)), []).append(stop)
    writer = osmium.SimpleWriter(str(path))
    for stop, (lat, lon) in sorted(stops.items(), key=lambda item: ids[item[0]]):
        writer.add_node(osmium.osm.mutable.Node(id=ids[stop], location=osmium.osm.Location(lon, lat), tags={}))
    pairs: set[tuple[str, str]] = set()
    for stop, (lat, lon) in stops.items():
        key = (int(lat / cell), int(lon / cell))
        for dlat in (-1, 0, 1):
            # Cells are degrees of latitude wide; at Halifax's latitude a degree of longitude
            # is shorter, so look two cells each way east and west.
            for dlon in (-2, -1, 0, 1, 2):
                for other in grid.get((key[0] + dlat, key[1] + dlon), []):
                    if other != stop and meters(stops[stop], stops[other]) <= walk_meters:
                        pairs.add(tuple(sorted((stop, other))))
    # A minimum spanning tree joins every stop to the graph: ferrobus keeps only the part of
    # the street graph it can reach, and stops outside it cannot be routed from; its
    # transfer limit (`--max-transfer-seconds`) still keeps walks between stops short.
    ordered = sorted(stops)
    distance = {ordered[0]: 0.0}
    parent: dict[str, str] = {}
    best = {stop: (meters(stops[ordered[0]], stops[stop]), ordered[0]) for stop in ordered[1:]}
    while best:
        stop = min(best, key=lambda key: best[key][0])
        _, via = best.pop(stop)
        parent[stop] = via
        for other, (current, _) in best.items():
            candidate = meters(stops[stop], stops[other])
            if candidate < current:
                best[other] = (candidate, stop)
    for stop, via in parent.items():
        pairs.add(tuple(sorted((stop, via))))
    for number, (a, b) in enumerate(sorted(pairs), start=1):
        writer.add_way(osmium.osm.mutable.Way(id=number, nodes=[ids[a], ids[b]], tags={"highway": "residential"}))
    writer.close()
    return len(pairs)


def normalized(gtfs: Path) -> Path:
    """A copy of the feed ferrobus reads: its parser wants `HH:MM:SS` where GTFS allows
    `H:MM:SS` and Halifax writes `" 5:49:00"`; values are trimmed, times zero-padded, an
    empty calendar.txt is added where the feed has none, nothing else changes."""
    target = gtfs.parent / (gtfs.name + "-hhmmss")
    target.mkdir(exist_ok=True)
    for source in gtfs.glob("*.txt"):
        with open(source, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
        header = [name.strip() for name in rows[0]]
        times = {index for index, name in enumerate(header) if name.endswith("_time")}
        with open(target / source.name, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(header)
            for row in rows[1:]:
                values = [value.strip() for value in row]
                for index in times:
                    if index < len(values) and values[index].count(":") == 2:
                        values[index] = values[index].zfill(8)
                writer.writerow(values)
    # GTFS allows a feed with calendar_dates.txt alone (Barrie); ferrobus opens calendar.txt.
    if not (target / "calendar.txt").exists():
        (target / "calendar.txt").write_text("service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gtfs", required=True, type=Path)
    parser.add_argument("--pairs", required=True, type=Path)
    parser.add_argument("--date", required=True)
    parser.add_argument("--walk-meters", type=float, default=400)
    parser.add_argument("--max-transfers", type=int, default=8)
    parser.add_argument("--max-transfer-seconds", type=int, default=434)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    args.gtfs = normalized(args.gtfs)
    stops = stops_of(args.gtfs)
    osm = args.gtfs.parent / (args.gtfs.name + "-footways.osm.pbf")
    ways = write_osm(stops, osm, args.walk_meters)
    began = time.perf_counter()
    # Transfers: Herald walks at most 400 m straight line × 1.3 at 1.2 m/s, 434 s.
    model = ferrobus.create_transit_model(str(osm), [str(args.gtfs)], datetime.date.fromisoformat(args.date), max_transfer_time=args.max_transfer_seconds)
    build_seconds = time.perf_counter() - began
    pairs = json.loads(args.pairs.read_text())
    points = {}
    for pair in pairs:
        for stop in (pair["from"], pair["to"]):
            if stop not in points:
                lat, lon = stops[stop]
                points[stop] = ferrobus.create_transit_point(lat, lon, model, max_walking_time=600, max_nearest_stops=10)
    latencies = []
    answers = []
    started = time.perf_counter()
    for pair in pairs:
        began = time.perf_counter()
        route = ferrobus.find_route(model, points[pair["from"]], points[pair["to"]], pair["second"], max_transfers=args.max_transfers)
        latencies.append((time.perf_counter() - began) * 1000)
        answers.append(None if route is None else pair["second"] + route["travel_time_seconds"])
    total = time.perf_counter() - started
    ordered = sorted(latencies)

    def percentile(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * p))]

    herald = [pair.get("herald_arrival") for pair in pairs]
    both = [(h, f) for h, f in zip(herald, answers) if h is not None and f is not None]
    result = {
        "peer": "ferrobus " + getattr(ferrobus, "__version__", "0.2.1"), "osm_footways": ways, "model_build_seconds": build_seconds,
        "queries": len(pairs), "queries_per_second": len(pairs) / total, "p50_ms": percentile(0.5), "p90_ms": percentile(0.9),
        "p99_ms": percentile(0.99), "p999_ms": percentile(0.999), "max_ms": ordered[-1], "found": sum(answer is not None for answer in answers),
        "herald_found": sum(h is not None for h in herald), "both_found": len(both),
        "same_arrival": sum(1 for h, f in both if h == f), "herald_earlier": sum(1 for h, f in both if h < f),
        "peer_earlier": sum(1 for h, f in both if f < h),
        "median_arrival_difference_seconds": sorted(f - h for h, f in both)[len(both) // 2] if both else None,
        "pid": os.getpid(),
    }
    print(json.dumps(result, indent=2, sort_keys=True))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
