"""The alert benchmark's data, the same for Herald and the seed's design: riders, their
favourite stops and their iPhones, on the Halifax feed.

100,000 users with 5 favourite stops each; one route-wide alert reaches exactly 20,000 of
them: those users have one favourite at a stop of the route (or its station) and four
elsewhere, the others have five stops the route does not reach. Deterministic (seeded).
"""

from __future__ import annotations

import csv
import io
import random
import zipfile
from collections import defaultdict


def read_feed(path: str):
    """stops → parent, route → its stops, stop → the routes serving it (with stations)."""
    with zipfile.ZipFile(path) as archive:
        def rows(name):
            with archive.open(name) as raw:
                text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
                yield from csv.DictReader(text)

        parents = {}
        for row in rows("stops.txt"):
            parents[row["stop_id"].strip()] = (row.get("parent_station") or "").strip()
        trip_route = {row["trip_id"].strip(): row["route_id"].strip() for row in rows("trips.txt")}
        route_stops = defaultdict(set)
        for row in rows("stop_times.txt"):
            route = trip_route.get(row["trip_id"].strip())
            if route:
                route_stops[route].add(row["stop_id"].strip())
    stop_routes = defaultdict(set)
    for route, stops in route_stops.items():
        for stop in stops:
            stop_routes[stop].add(route)
            if parents.get(stop):
                stop_routes[parents[stop]].add(route)
    return parents, route_stops, stop_routes


def choose_route(route_stops) -> str:
    """A route of ordinary length: the one whose stop count is the median of the feed's."""
    ranked = sorted(route_stops, key=lambda r: (len(route_stops[r]), r))
    return ranked[len(ranked) // 2]


def build(feed: str, users: int = 100_000, per_user: int = 5, affected: int = 20_000, seed: int = 3):
    parents, route_stops, stop_routes = read_feed(feed)
    route = choose_route(route_stops)
    reached = set(route_stops[route]) | {parents[s] for s in route_stops[route] if parents.get(s)}
    on_route = sorted(route_stops[route])
    elsewhere = sorted(s for s in stop_routes if s not in reached)
    rng = random.Random(seed)
    favourites, tokens = [], {}
    for index in range(users):
        user = f"rider-{index:06d}"
        stops = rng.sample(elsewhere, per_user)
        if index < affected:
            stops[0] = rng.choice(on_route)
        favourites += [(user, stop) for stop in stops]
        tokens[user] = "%064x" % rng.getrandbits(256)
    return {
        "route": route, "route_stops": sorted(reached), "favourites": favourites, "tokens": tokens,
        "affected": [f"rider-{index:06d}" for index in range(affected)], "stop_routes": stop_routes,
    }
