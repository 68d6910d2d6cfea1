#!/usr/bin/env python3
"""Peer measurement for Herald's transit benchmark: "next departures at a stop".

    python peer_departures.py --peer gtfs-kit|partridge --feed PATH.zip --stop STOP_ID \
        --date YYYYMMDD --after HH:MM:SS --limit 10 --queries N --out result.json

One process measures, for one peer library:
  1. load: wall time (time.perf_counter) to bring the feed into memory ready to
     answer the question, and peak RSS (VmHWM from /proc/self/status, bytes)
     after loading (also after the imports, so the load's own share shows);
  2. answer: the next --limit departures at --stop at or after --after on
     service date --date: stop_times of trips whose service is active on the
     date (calendar.txt + calendar_dates.txt), plus stop_times of trips of the
     PREVIOUS service date whose times are past 24:00:00 and, minus 24 h, fall
     at or after --after. Sorted by (time relative to --date's midnight,
     trip_id). No filter on pickup_type;
  3. throughput: the same query --queries times (no reload): queries/s and
     p50/p99 latency in ms.
It writes everything as JSON to --out and a one-line summary to stdout.

What each peer loads and does
-----------------------------
gtfs-kit 13.0.1
  load:  gtfs_kit.read_feed(path, dist_units="km") - every GTFS table in the
         zip into pandas DataFrames (string dtypes for ids and times; shapes.txt
         too, it is read eagerly). No further precomputation: its timetable
         call needs none.
  query: gtfs_kit.build_stop_timetable(feed, stop, [date - 1 day, date]):
         the library's own per-stop timetable. It resolves active services per
         date itself (calendar + calendar_dates, gtfs_kit.get_active_services)
         and returns one row per (date, stop_time) with a 'date' column, sorted
         by its own numeric time key (helpers.timestr_to_seconds). The
         "at or after --after" cut and the previous-day shift are ours, done
         numerically with gtfs_kit.helpers.timestr_to_seconds. Each call walks
         all trips (compute_trip_activity), so the per-query cost is O(feed).
  times: kept as the raw strings of the file. int(" 5") == 5, so its numeric
         helper copes with Halifax's space-padded hours (" 5:49:00"), and the
         timetable's order is right. The trap is elsewhere: a plain string
         comparison against a zero-padded time, as gtfs_kit.get_trips(feed,
         date, time) does internally (start <= time <= end on raw strings),
         or `departure_time >= "08:00:00"` on get_stop_times(feed, date), is
         wrong for every space-padded value, because " " sorts before "0":
         " 9:00:00" < "08:00:00". Space padding keeps the width fixed, so the
         raw strings sort among themselves in the right order (verified on
         Halifax: string order == numeric order over all 67,881 distinct
         values); it is only the comparison with a "0"-padded query time that
         breaks. The JSON's "diagnostics" shows what that naive string filter
         returns (gtfs-kit only). gtfs_kit.clean_times(feed) would rewrite
         them to "05:49:00"; we do not call it, to keep the file's strings.
  past 24:00:00: yes - times are strings ("25:10:00"), the timetable for the
         previous date carries them, and we shift those rows by -24 h.

partridge 1.1.2
  load:  ids = partridge.read_service_ids_by_date(path) (unzips the feed and
         reads calendar/calendar_dates/trips), then
         partridge.load_feed(path, view={"trips.txt": {"service_id":
         ids[date] | ids[date - 1 day]}}) - partridge's intended way to work on
         a date: a view that keeps only those trips, and through its
         dependency graph only their stop_times/routes/stops/... That call
         unzips the feed again into a temp dir and is lazy, so the load also
         touches feed.trips and feed.stop_times (the tables the query uses) to
         read, filter and convert them. The loaded feed is therefore specific
         to the date (and its previous day): another date needs another load.
         Not read: shapes, stops, routes, agency (not needed for the answer).
  query: plain pandas on partridge's frames (partridge has no query API):
         stop_times of the stop, joined to trips for service_id, the two
         service days cut at --after and shifted, sorted, head(limit).
  times: partridge strips every value and parses times to float seconds since
         service-day midnight (parsers.parse_time), so space padding is
         harmless; it does not keep the GTFS string. departure_time in our
         output is formatted back from its seconds (HH:MM:SS, zero-padded),
         and departure_seconds is its own value.
  past 24:00:00: yes - seconds >= 86400 are kept as they are; the
         previous-day service ids are in the view and we shift those rows.
"""

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time


def proc_status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS"):
                out[k] = int(v.split()[0]) * 1024  # kB -> bytes
    return out


def hms_to_seconds(s):
    h, m, sec = s.strip().split(":")
    return int(h) * 3600 + int(m) * 60 + int(sec)


def seconds_to_hms(x):
    x = int(x)
    return f"{x // 3600:02d}:{x % 3600 // 60:02d}:{x % 60:02d}"


class GtfsKitPeer:
    name = "gtfs-kit"

    def __init__(self):
        import gtfs_kit
        import pandas

        self.gk = gtfs_kit
        self.pd = pandas
        self.version = gtfs_kit.__version__ if hasattr(gtfs_kit, "__version__") else _dist_version("gtfs-kit")

    def load(self, path, date, prev):
        self.feed = self.gk.read_feed(path, dist_units="km")

    def loaded_rows(self):
        f = self.feed
        return {t: int(len(getattr(f, t))) for t in ("stops", "routes", "trips", "stop_times", "shapes")
                if getattr(f, t) is not None}

    def query(self, stop, date, prev, after_s, limit):
        tts = self.gk.helpers.timestr_to_seconds
        tt = self.gk.build_stop_timetable(self.feed, stop, [prev, date])
        if tt.empty:
            return []
        secs = tt["departure_time"].map(tts).astype("float64")
        eff = secs.where(tt["date"] == date, secs - 86400)
        tt = tt.assign(eff_s=eff).loc[lambda x: x["eff_s"] >= after_s]
        tt = tt.sort_values(["eff_s", "trip_id"], kind="stable").head(limit)
        return [
            {
                "trip_id": str(r.trip_id),
                "route_id": str(r.route_id),
                "departure_time": str(r.departure_time),
                "stop_sequence": int(r.stop_sequence),
                "service_date": str(r.date),
            }
            for r in tt.itertuples(index=False)
        ]

    def diagnostics(self, stop, date, after, limit):
        """What a naive string comparison with the --after string returns."""
        st = self.gk.get_stop_times(self.feed, date)
        st = st.loc[(st["stop_id"] == stop) & (st["departure_time"] >= after)]
        st = st.sort_values(["departure_time", "trip_id"]).head(limit)
        return {
            "naive_string_filter": f'get_stop_times(feed, "{date}") where stop_id == stop and '
                                   f'departure_time >= "{after}" (string compare), sorted by departure_time',
            "first_results": [{"trip_id": str(r.trip_id), "departure_time": str(r.departure_time)}
                              for r in st.itertuples(index=False)],
            "space_padded_departure_times_in_feed": int(
                self.feed.stop_times["departure_time"].str.startswith(" ").fillna(False).sum()),
        }


class PartridgePeer:
    name = "partridge"

    def __init__(self):
        import pandas
        import partridge

        self.ptg = partridge
        self.pd = pandas
        self.version = partridge.__version__

    def load(self, path, date, prev):
        t0 = time.perf_counter()
        by_date = self.ptg.read_service_ids_by_date(path)
        self.steps = {"read_service_ids_by_date": round(time.perf_counter() - t0, 4)}
        t0 = time.perf_counter()
        self.today = set(by_date.get(_d(date), frozenset()))
        self.yday = set(by_date.get(_d(prev), frozenset()))
        view = {"trips.txt": {"service_id": sorted(self.today | self.yday)}}
        self.feed = self.ptg.load_feed(path, view=view)
        # partridge reads lazily: force the tables the query uses.
        self.trips = self.feed.trips[["trip_id", "route_id", "service_id"]]
        self.stop_times = self.feed.stop_times
        self.steps["load_feed_with_view_and_read_trips_stop_times"] = round(time.perf_counter() - t0, 4)

    def loaded_rows(self):
        return {"trips": int(len(self.trips)), "stop_times": int(len(self.stop_times))}

    def query(self, stop, date, prev, after_s, limit):
        pd = self.pd
        st = self.stop_times
        st = st.loc[st["stop_id"] == stop, ["trip_id", "departure_time", "stop_sequence"]]
        st = st.merge(self.trips, on="trip_id")
        dep = st["departure_time"]
        a = st.loc[st["service_id"].isin(self.today) & (dep >= after_s)].assign(eff_s=lambda x: x["departure_time"],
                                                                                 service_date=date)
        b = st.loc[st["service_id"].isin(self.yday) & (dep - 86400 >= after_s)].assign(
            eff_s=lambda x: x["departure_time"] - 86400, service_date=prev)
        out = pd.concat([a, b]).sort_values(["eff_s", "trip_id"], kind="stable").head(limit)
        return [
            {
                "trip_id": str(r.trip_id),
                "route_id": str(r.route_id),
                "departure_time": seconds_to_hms(r.departure_time),
                "departure_seconds": float(r.departure_time),
                "stop_sequence": int(r.stop_sequence),
                "service_date": r.service_date,
            }
            for r in out.itertuples(index=False)
        ]

    def diagnostics(self, stop, date, after, limit):
        return {"view_service_ids": {"date": sorted(self.today), "previous_date": sorted(self.yday)}}


def _d(yyyymmdd):
    return dt.date(int(yyyymmdd[:4]), int(yyyymmdd[4:6]), int(yyyymmdd[6:]))


def _dist_version(name):
    from importlib.metadata import version

    return version(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", required=True, choices=["gtfs-kit", "partridge"])
    ap.add_argument("--feed", required=True)
    ap.add_argument("--stop", required=True)
    ap.add_argument("--date", required=True, help="YYYYMMDD")
    ap.add_argument("--after", required=True, help="HH:MM:SS")
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    date = args.date
    prev = (_d(date) - dt.timedelta(days=1)).strftime("%Y%m%d")
    after_s = hms_to_seconds(args.after)

    t0 = time.perf_counter()
    peer = GtfsKitPeer() if args.peer == "gtfs-kit" else PartridgePeer()
    import_s = time.perf_counter() - t0
    mem_imports = proc_status()

    t0 = time.perf_counter()
    peer.load(os.path.abspath(args.feed), date, prev)
    load_s = time.perf_counter() - t0
    mem_loaded = proc_status()

    t0 = time.perf_counter()
    answer = peer.query(args.stop, date, prev, after_s, args.limit)
    first_query_s = time.perf_counter() - t0

    lat = []
    last = None
    t_all = time.perf_counter()
    for _ in range(args.queries):
        t0 = time.perf_counter()
        last = peer.query(args.stop, date, prev, after_s, args.limit)
        lat.append(time.perf_counter() - t0)
    total_s = time.perf_counter() - t_all
    mem_end = proc_status()
    if args.queries and last != answer:
        print("error: repeated query gave a different answer", file=sys.stderr)
        return 1

    lat_ms = sorted(x * 1000 for x in lat)

    def pct(p):
        # nearest-rank percentile
        if not lat_ms:
            return None
        k = max(1, -(-len(lat_ms) * p // 100))
        return round(lat_ms[int(k) - 1], 3)

    import pandas

    result = {
        "peer": peer.name,
        "peer_version": peer.version,
        "pandas_version": pandas.__version__,
        "python": platform.python_version(),
        "feed": os.path.abspath(args.feed),
        "feed_bytes": os.path.getsize(args.feed),
        "query": {"stop_id": args.stop, "date": date, "previous_service_date": prev, "after": args.after,
                  "limit": args.limit},
        "import_seconds": round(import_s, 4),
        "load": {"seconds": round(load_s, 4), "rows": peer.loaded_rows(), "steps": getattr(peer, "steps", None)},
        "memory_bytes": {
            "vmhwm_after_imports": mem_imports["VmHWM"],
            "vmhwm_after_load": mem_loaded["VmHWM"],
            "vmrss_after_load": mem_loaded["VmRSS"],
            "vmhwm_after_queries": mem_end["VmHWM"],
        },
        "first_query_ms": round(first_query_s * 1000, 3),
        "departures": answer,
        "throughput": {
            "queries": args.queries,
            "total_seconds": round(total_s, 4),
            "qps": round(args.queries / total_s, 2) if total_s > 0 else None,
            "p50_ms": pct(50),
            "p99_ms": pct(99),
            "max_ms": round(lat_ms[-1], 3) if lat_ms else None,
            "mean_ms": round(statistics.fmean(lat_ms), 3) if lat_ms else None,
        },
        "diagnostics": peer.diagnostics(args.stop, date, args.after, args.limit),
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    tp = result["throughput"]
    first = answer[0]["departure_time"] if answer else "-"
    print(f"{peer.name} {peer.version}: load {load_s:.3f} s, VmHWM {mem_loaded['VmHWM'] / 2**20:.1f} MiB "
          f"(imports {mem_imports['VmHWM'] / 2**20:.1f} MiB), {len(answer)} departures (first {first!r}), "
          f"{args.queries} queries: {tp['qps']} q/s, p50 {tp['p50_ms']} ms, p99 {tp['p99_ms']} ms -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
