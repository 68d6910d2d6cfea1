"""Transit through the real binary: `herald transit import|validate`, the stops,
departures, routes, alerts, favourites and feed endpoints, GTFS-Realtime written by Google's
gtfs-realtime-bindings (posted and polled with conditional GETs), the scheduled refresh of a
static feed, live updates to a python-socketio client, and two nodes on one PostgreSQL."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import http.server
import io
import re
import os
import shutil
import sqlite3
import threading
import zipfile
from pathlib import Path

import pytest
import socketio
from google.transit import gtfs_realtime_pb2

from conftest import REPO_ROOT, WAIT, assert_error, http_session, issue_token, run_herald, wait_until

SAMPLE = REPO_ROOT / "Tests" / "Fixtures" / "gtfs" / "sample-feed-1"


def transit_data(name: str) -> Path:
    base = os.environ.get("HERALD_TEST_TRANSIT_DATA") or str(REPO_ROOT / ".cache" / "transit-data")
    path = Path(base) / "feeds" / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run the suite through scripts/test (it runs scripts/transit-data)")
    return path


def live_feed(folder: Path, runs_every_minutes: int = 10) -> Path:
    """A feed whose trips run today (UTC, every few minutes, all day), so that "now" has
    departures: stops A → B → C, route R1, trips T0000 … leaving A every 10 minutes."""
    folder.mkdir(parents=True, exist_ok=True)
    today = dt.datetime.now(dt.timezone.utc).date()
    start = (today - dt.timedelta(days=2)).strftime("%Y%m%d")
    end = (today + dt.timedelta(days=2)).strftime("%Y%m%d")
    files = {
        "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nA1,Live Transit,https://example.com,UTC\n",
        "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\nA,Alpha,10.0000,10.0000\nB,Bravo,10.0100,10.0000\nC,Charlie,10.0200,10.0000\n",
        "routes.txt": "route_id,agency_id,route_short_name,route_long_name,route_type\nR1,A1,1,Alpha - Charlie,3\n",
        "calendar.txt": f"service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nALL,1,1,1,1,1,1,1,{start},{end}\n",
    }
    trips = ["route_id,service_id,trip_id,trip_headsign,direction_id"]
    stop_times = ["trip_id,arrival_time,departure_time,stop_id,stop_sequence"]
    for minute in range(0, 24 * 60 + 60, runs_every_minutes):
        trip = f"T{minute:04d}"
        trips.append(f"R1,ALL,{trip},Charlie,0")
        for sequence, (stop, offset) in enumerate([("A", 0), ("B", 5), ("C", 10)], start=1):
            t = minute + offset
            stop_times.append(f"{trip},{t // 60:02d}:{t % 60:02d}:00,{t // 60:02d}:{t % 60:02d}:00,{stop},{sequence}")
    files["trips.txt"] = "\n".join(trips) + "\n"
    files["stop_times.txt"] = "\n".join(stop_times) + "\n"
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def zip_folder(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
    return buffer.getvalue()


def next_trip(after_minutes: int = 15) -> tuple[str, dt.datetime]:
    """The live feed's first trip leaving A at least `after_minutes` from now, and when."""
    now = dt.datetime.now(dt.timezone.utc)
    later = now + dt.timedelta(minutes=after_minutes)
    minute = (later.hour * 60 + later.minute + 9) // 10 * 10
    day = later.date() if minute < 24 * 60 else later.date() + dt.timedelta(days=1)
    minute %= 24 * 60
    leaves = dt.datetime.combine(day, dt.time(minute // 60, minute % 60), tzinfo=dt.timezone.utc)
    return f"T{minute:04d}", leaves


def feed_message(entities=(), timestamp: int | None = None) -> gtfs_realtime_pb2.FeedMessage:
    message = gtfs_realtime_pb2.FeedMessage()
    message.header.gtfs_realtime_version = "2.0"
    message.header.timestamp = int(timestamp if timestamp is not None else dt.datetime.now(dt.timezone.utc).timestamp())
    for add in entities:
        add(message.entity.add())
    return message


def delay(trip: str, date: str, seconds: int, sequence: int = 1):
    def add(entity):
        entity.id = f"tu-{trip}"
        entity.trip_update.trip.trip_id = trip
        entity.trip_update.trip.start_date = date
        update = entity.trip_update.stop_time_update.add()
        update.stop_sequence = sequence
        update.departure.delay = seconds
    return add


def cancel(trip: str, date: str):
    def add(entity):
        entity.id = f"cancel-{trip}"
        entity.trip_update.trip.trip_id = trip
        entity.trip_update.trip.start_date = date
        entity.trip_update.trip.schedule_relationship = gtfs_realtime_pb2.TripDescriptor.CANCELED
    return add


def write_config(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def import_cli(source: Path | str, data_dir: Path, *extra: str) -> str:
    result = run_herald("transit", "import", str(source), "--data-dir", str(data_dir), *extra)
    assert result.returncode == 0, f"import failed ({result.returncode}): {result.stdout}{result.stderr}"
    return result.stdout


# ---------------------------------------------------------------------------------------------
def test_cli_import_validate_and_refusals(herald, tmp_path):
    data = herald.new_data_dir()
    out = import_cli(SAMPLE, data)
    assert "imported default" in out and "0 error(s)" in out, out
    # Progress as it goes: read, checked, the rows written, the switch.
    assert re.search(r"^read \d+(\.\d)? [kM]B$", out, re.M), out
    assert "checked: " in out and "100% of the rows written" in out and "now serves" in out, out
    # The same bytes again: nothing changes.
    assert "is unchanged" in import_cli(SAMPLE, data), "a re-import changed something"
    # A broken feed is refused with a report naming file, line, field and value; exit 1.
    broken = tmp_path / "broken"
    shutil.copytree(SAMPLE, broken)
    text = (broken / "stop_times.txt").read_text().replace("AB1,8:10:00,8:15:00,BULLFROG", "AB1,8:10:00,8:15:00,NOWHERE")
    (broken / "stop_times.txt").write_text(text)
    refused = run_herald("transit", "import", str(broken), "--data-dir", str(data))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "ERROR foreign_key_violation" in refused.stdout, refused.stdout
    assert 'stop_times.txt:line 15:stop_id value "NOWHERE"' in refused.stdout, refused.stdout
    # validate reads a real feed without storing anything.
    checked = run_herald("transit", "validate", str(transit_data("halifax.zip")), timeout=180)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "valid; 2381 stops, 80 routes, 9253 trips, 327575 stop times" in checked.stdout, checked.stdout
    assert "leading_or_trailing_whitespaces" in checked.stdout
    # The server serves what the CLI imported (the sample's version, not the refused one).
    server = herald.start(data_dir=data)
    board = server.get("/api/v1/stops/STAGECOACH/departures?limit=2&at=2007-06-05T08:05:00-07:00")
    assert board.status_code == 200, board.text
    assert [d["scheduled_time"] for d in board.json()["data"]["departures"]] == [
        "2007-06-05T08:10:00-07:00", "2007-06-05T08:20:00-07:00"]
    assert board.headers["X-RateLimit-Limit"] == "60"
    assert_error(server.get("/api/v1/stops/NOPE/departures"), 404, "STOP_NOT_FOUND")
    assert_error(server.get("/api/v1/stops/nearby?lat=100&lon=0"), 422, "VALIDATION_FAILED")
    version = server.get("/api/v1/gtfs/version")
    etag = version.headers["ETag"]
    assert server.get("/api/v1/gtfs/version", headers={"If-None-Match": etag}).status_code == 304
    data = version.json()["data"]
    download = server.get(data["gtfs_zip_url"])
    assert download.headers["Content-Type"] == "application/zip"
    assert hashlib.sha256(download.content).hexdigest() == data["gtfs_zip_sha256"]
    with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
        assert "stop_times.txt" in archive.namelist()
    # The app's offline database, opened with Python's own sqlite3 (what an app's SQLite reads).
    offline = server.get(data["download_url"])
    assert offline.headers["Content-Type"] == "application/vnd.sqlite3", offline.headers
    assert len(offline.content) == data["file_size_bytes"]
    assert hashlib.sha256(offline.content).hexdigest() == data["checksum_sha256"]
    path = tmp_path / "offline.db"
    path.write_bytes(offline.content)
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        meta = dict(db.execute("SELECT key, value FROM meta"))
        assert meta["schema_version"] == "1" and meta["version_id"] == data["version_id"], meta
        assert db.execute("SELECT name FROM stops WHERE stop_id = 'STAGECOACH'").fetchone() == ("Stagecoach Hotel & Casino (Demo)",)
        assert db.execute("SELECT COUNT(*) FROM routes").fetchone() == (5,)
    spec = server.get("/api/v1/openapi.json").json()["paths"]
    for path in ["/api/v1/stops/nearby", "/api/v1/stops/{id}/departures", "/api/v1/routes/{id}/trips", "/api/v1/favorites/{id}",
                 "/api/v1/gtfs/version", "/api/v1/transit/realtime", "/api/v1/user/device"]:
        assert path in spec, path


def test_realtime_posted_with_google_bindings(herald, tmp_path):
    data = herald.new_data_dir()
    import_cli(live_feed(tmp_path / "live"), data)
    config = write_config(tmp_path / "herald.yaml", "transit:\n  stale_after_seconds: 3\n")
    server = herald.start("--config", str(config), data_dir=data)
    svc = issue_token(data, "feeds-backend", "service")
    trip, leaves = next_trip()
    date = leaves.strftime("%Y%m%d")
    message = feed_message([delay(trip, date, 240)])
    posted = server.request("POST", "/api/v1/transit/realtime", svc, data=message.SerializeToString(),
                            headers={"Content-Type": "application/x-protobuf"})
    assert posted.status_code == 200, posted.text
    assert posted.json()["data"]["trip_updates"] == 1 and posted.json()["data"]["unmatched"] == 0
    board = server.get("/api/v1/stops/B/departures?limit=20").json()["data"]
    row = next(d for d in board["departures"] if d["trip_id"] == trip)
    # Delayed at A by 4 minutes, carried to B (5 minutes after A).
    assert row["delay_seconds"] == 240, row
    scheduled = leaves + dt.timedelta(minutes=5)
    assert row["scheduled_time"] == scheduled.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    assert row["estimated_time"] == (scheduled + dt.timedelta(minutes=4)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    assert board["stale"] is False
    # A cancellation shows as cancelled; garbage is refused and the last good message serves.
    server.request("POST", "/api/v1/transit/realtime", svc, data=feed_message([cancel(trip, date)]).SerializeToString(),
                   headers={"Content-Type": "application/x-protobuf"})
    row = next(d for d in server.get("/api/v1/stops/A/departures?limit=20").json()["data"]["departures"] if d["trip_id"] == trip)
    assert row["is_cancelled"] is True and row["schedule_relationship"] == "CANCELED", row
    bad = server.request("POST", "/api/v1/transit/realtime", svc, data=b"\x0a\xff\xff\xff",
                         headers={"Content-Type": "application/x-protobuf"})
    assert_error(bad, 400, "INVALID_FEED_MESSAGE")
    assert "herald_transit_realtime_rejected_total{source=\"push-default\"} 1" in server.get("/metrics").text
    # No new data for longer than stale_after_seconds: the answer says so.
    stale = wait_until(lambda: (lambda body: body if body["data"]["stale"] else None)(server.get("/api/v1/stops/A/departures").json()),
                       timeout=WAIT, message="departures turning stale")
    assert stale["meta"]["stale"] is True and stale["meta"]["cached_at"], stale["meta"]


class FeedHost:
    """A local HTTP server for feeds with ETag support: it answers If-None-Match with 304 and
    records what each request carried."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None, int]] = []
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = host.files.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    host.requests.append((self.path, self.headers.get("If-None-Match"), 404))
                    return
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    host.requests.append((self.path, etag, 304))
                    return
                host.requests.append((self.path, self.headers.get("If-None-Match"), 200))
                self.send_response(200)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def count(self, path: str, status: int) -> int:
        return sum(1 for p, _, s in list(self.requests) if p == path and s == status)

    def close(self):
        self.server.shutdown()


@pytest.fixture
def feed_host():
    host = FeedHost()
    yield host
    host.close()


def test_realtime_polled_with_conditional_gets(herald, tmp_path, feed_host):
    data = herald.new_data_dir()
    import_cli(live_feed(tmp_path / "live"), data)
    trip, leaves = next_trip()
    date = leaves.strftime("%Y%m%d")
    feed_host.files["/rt.pb"] = feed_message([delay(trip, date, 120)]).SerializeToString()
    config = write_config(tmp_path / "herald.yaml", f"""
transit:
  realtime:
    - name: agency-rt
      url: {feed_host.url('/rt.pb')}
      poll_interval_seconds: 1
""")
    server = herald.start("--config", str(config), data_dir=data)

    def delay_of():
        rows = server.get("/api/v1/stops/A/departures?limit=20").json()["data"]["departures"]
        return next((d["delay_seconds"] for d in rows if d["trip_id"] == trip), None)

    wait_until(lambda: delay_of() == 120, timeout=WAIT, message="the polled delay")
    # Unchanged: each later poll is a conditional GET answered 304.
    wait_until(lambda: feed_host.count("/rt.pb", 304) >= 2, timeout=WAIT, message="conditional polls")
    assert feed_host.count("/rt.pb", 200) == 1
    # The feed moves: the new delay is taken.
    feed_host.files["/rt.pb"] = feed_message([delay(trip, date, 300)]).SerializeToString()
    wait_until(lambda: delay_of() == 300, timeout=WAIT, message="the new delay")
    # A broken message is refused and counted; the last good one keeps serving.
    feed_host.files["/rt.pb"] = b"this is not a protobuf"
    wait_until(lambda: 'herald_transit_realtime_rejected_total{source="agency-rt"}' in server.get("/metrics").text,
               timeout=WAIT, message="the refusal on /metrics")
    assert delay_of() == 300


def test_a_configured_feed_is_fetched_and_then_checked_conditionally(herald, tmp_path, feed_host):
    feed_host.files["/gtfs.zip"] = zip_folder(SAMPLE)
    config = write_config(tmp_path / "herald.yaml", f"""
transit:
  feeds:
    - name: demo
      url: {feed_host.url('/gtfs.zip')}
      refresh_interval_seconds: 5
""")
    server = herald.start("--config", str(config))
    version = wait_until(lambda: (lambda r: r.json()["data"] if r.status_code == 200 else None)(server.get("/api/v1/gtfs/version")),
                         timeout=WAIT, message="the configured feed loaded")
    assert version["feed"] == "demo"
    wait_until(lambda: feed_host.count("/gtfs.zip", 304) >= 1, timeout=WAIT, message="a conditional re-check")
    assert feed_host.count("/gtfs.zip", 200) == 1
    assert 'herald_transit_imports_total{status="succeeded"} 1' in server.get("/metrics").text
    assert server.get("/api/v1/gtfs/version").json()["data"]["version_id"] == version["version_id"]


REGION_BUSES = {
    "agency.txt": "agency_name,agency_url,agency_timezone\nCity Buses,https://buses.example,Europe/Berlin\n",
    "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\n1,Harbour,52.5000,13.4000\n2,Market,52.5200,13.4000\n",
    "routes.txt": "route_id,route_short_name,route_type\n1,B1,3\n",
    "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n"
                    "WK,1,1,1,1,1,1,1,20260101,20271231\n",
    "trips.txt": "route_id,service_id,trip_id\n1,WK,1\n",
    "stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n1,08:00:00,08:00:00,1,1\n1,08:10:00,08:10:00,2,2\n",
}
# Its ids collide with the buses' (stop 1, route 1, trip 1, WK); its Market station is 150 m
# from the buses' Market stop.
REGION_RAIL = {
    "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nDB,Rail,https://rail.example,Europe/Berlin\n",
    "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\n1,Market station,52.5213,13.4005\n2,Airport,52.6000,13.5000\n",
    "routes.txt": "route_id,agency_id,route_short_name,route_type\n1,DB,R1,2\n",
    "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n"
                    "WK,1,1,1,1,1,1,1,20260101,20271231\n",
    "trips.txt": "route_id,service_id,trip_id\n1,WK,1\n",
    "stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n1,08:20:00,08:20:00,1,1\n1,08:45:00,08:45:00,2,2\n",
}


def test_a_region_of_two_agencies_is_fetched_merged_and_planned_across(herald, tmp_path, feed_host):
    for name, files in (("buses", REGION_BUSES), ("rail", REGION_RAIL)):
        folder = tmp_path / name
        folder.mkdir()
        for file, text in files.items():
            (folder / file).write_text(text)
        feed_host.files[f"/{name}.zip"] = zip_folder(folder)
    config = write_config(tmp_path / "herald.yaml", f"""
transit:
  feeds:
    - name: city
      refresh_interval_seconds: 5
      parts:
        - name: bus
          url: {feed_host.url('/buses.zip')}
        - name: rail
          url: {feed_host.url('/rail.zip')}
""")
    server = herald.start("--config", str(config))
    version = wait_until(lambda: (lambda r: r.json()["data"] if r.status_code == 200 else None)(server.get("/api/v1/gtfs/version")),
                         timeout=WAIT, message="the region loaded")
    assert version["feed"] == "city"
    # Tomorrow (the calendars run every day), from the buses' Harbour to the rail's Airport.
    day = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).date().isoformat()
    reply = server.request("POST", "/api/v1/trips/plan", json={
        "origin": {"type": "stop_id", "stop_id": "bus:1"}, "destination": {"type": "stop_id", "stop_id": "rail:2"},
        "depart_at": f"{day}T07:55:00+01:00", "max_itineraries": 1})
    assert reply.status_code == 200, reply.text
    legs = reply.json()["data"]["itineraries"][0]["legs"]
    assert [leg["mode"] for leg in legs] == ["BUS", "WALK", "RAIL"]
    assert legs[0]["route_short_name"] == "B1" and legs[0]["trip_id"] == "bus:1"
    assert legs[1]["from"]["stop_id"] == "bus:2" and legs[1]["to"]["stop_id"] == "rail:1"
    assert legs[2]["route_short_name"] == "R1" and legs[2]["to"]["arrival_time"] == f"{day}T08:45:00+01:00"
    # The next check fetches both parts again; the same merge is the same version.
    wait_until(lambda: feed_host.count("/rail.zip", 200) >= 2, timeout=WAIT, message="a second check of the region")
    wait_until(lambda: 'herald_transit_imports_total{status="unchanged"}' in server.get("/metrics").text,
               timeout=WAIT, message="the unchanged region counted")
    assert server.get("/api/v1/gtfs/version").json()["data"]["version_id"] == version["version_id"]
    # A part moved to another time zone cannot join the region: the import fails, saying
    # which zones, and the region in service stays.
    elsewhere = tmp_path / "rail-elsewhere"
    shutil.copytree(tmp_path / "rail", elsewhere)
    (elsewhere / "agency.txt").write_text(REGION_RAIL["agency.txt"].replace("Europe/Berlin", "Europe/London"))
    feed_host.files["/rail.zip"] = zip_folder(elsewhere)
    wait_until(lambda: 'herald_transit_imports_total{status="failed"}' in server.get("/metrics").text,
               timeout=WAIT, message="the failed import of the mixed region")
    assert server.get("/api/v1/gtfs/version").json()["data"]["version_id"] == version["version_id"]


def test_favourites_and_the_transit_apps_device_alias(herald):
    data = herald.new_data_dir()
    import_cli(SAMPLE, data)
    server = herald.start(data_dir=data)
    ann = issue_token(data, "ann")
    created = server.request("POST", "/api/v1/favorites", ann, json={"stop_id": "BULLFROG", "label": "Home"})
    assert created.status_code == 201, created.text
    fav = created.json()["data"]
    assert fav["id"].startswith("fav_") and fav["stop_name"] == "Bullfrog (Demo)" and fav["sort_order"] == 0
    assert_error(server.request("POST", "/api/v1/favorites", ann, json={"stop_id": "BULLFROG"}), 409, "FAVORITE_EXISTS")
    assert server.request("DELETE", f"/api/v1/favorites/{fav['id']}", ann).status_code == 204
    assert server.get("/api/v1/favorites", ann).json()["data"]["favorites"] == []
    device = server.request("POST", "/api/v1/user/device", ann,
                            json={"apns_token": "a1b2c3d4" * 8, "device_id": "unique", "platform": "ios", "app_version": "1.0.0"})
    assert device.status_code == 201, device.text
    assert device.json()["data"]["device_id"].startswith("dev_")


def test_socketio_clients_follow_a_stop(herald, tmp_path):
    data = herald.new_data_dir()
    import_cli(live_feed(tmp_path / "live"), data)
    server = herald.start(data_dir=data)
    svc = issue_token(data, "feeds-backend", "service")
    ann = issue_token(data, "ann")
    updates = []
    client = socketio.Client(reconnection=False)
    client.on("departures_update", lambda payload, *rest: updates.append(payload))
    client.connect(server.url, auth={"token": ann}, transports=["websocket"], wait_timeout=WAIT)
    try:
        assert client.call("subscribe", {"channel": "stop:NOPE"}, timeout=WAIT)["code"] == "FORBIDDEN"
        assert client.call("subscribe", {"channel": "stop:A"}, timeout=WAIT) == {"status": "subscribed", "channel": "stop:A"}
        trip, leaves = next_trip()
        body = feed_message([delay(trip, leaves.strftime("%Y%m%d"), 180)]).SerializeToString()
        assert server.request("POST", "/api/v1/transit/realtime", svc, data=body,
                              headers={"Content-Type": "application/x-protobuf"}).status_code == 200
        first = wait_until(lambda: updates[0] if updates else None, timeout=WAIT, message="a departures_update")
        assert first["stop_id"] == "A"
        assert any(d["trip_id"] == trip and d["delay_seconds"] == 180 for d in first["changed"]), first
        # Only what changed comes next: one departure.
        updates.clear()
        body = feed_message([delay(trip, leaves.strftime("%Y%m%d"), 200)]).SerializeToString()
        server.request("POST", "/api/v1/transit/realtime", svc, data=body, headers={"Content-Type": "application/x-protobuf"})
        second = wait_until(lambda: updates[0] if updates else None, timeout=WAIT, message="a second update")
        assert [(d["trip_id"], d["delay_seconds"]) for d in second["changed"]] == [(trip, 200)], second
        assert second["removed"] == []
    finally:
        client.disconnect()


def test_two_nodes_on_postgres_switch_versions_together(herald, pg_url, tmp_path):
    first = herald.start(database=pg_url)
    second = herald.start(database=pg_url, data_dir=first.data_dir)
    ops = issue_token(first.data_dir, "ops", "operator")
    started = first.request("POST", "/api/v1/transit/feeds/default/import", ops, data=zip_folder(SAMPLE),
                            headers={"Content-Type": "application/zip"})
    assert started.status_code == 202, started.text
    import_id = started.json()["data"]["id"]
    wait_until(lambda: first.get(f"/api/v1/transit/imports/{import_id}", ops).json()["data"]["status"] == "succeeded",
               timeout=WAIT, message="the import")
    version = first.get("/api/v1/gtfs/version").json()["data"]["version_id"]
    # The other node hears of it over the PostgreSQL bus and loads the same version.
    wait_until(lambda: second.get("/api/v1/gtfs/version").status_code == 200
               and second.get("/api/v1/gtfs/version").json()["data"]["version_id"] == version,
               timeout=WAIT, message="the second node on the new version")
    query = "/api/v1/stops/STAGECOACH/departures?limit=5&at=2007-06-05T08:05:00-07:00"
    assert first.get(query).json()["data"]["departures"] == second.get(query).json()["data"]["departures"]
    # A new version imported on the second node reaches the first.
    live = zip_folder(live_feed(tmp_path / "live"))
    started = second.request("POST", "/api/v1/transit/feeds/default/import", ops, data=live, headers={"Content-Type": "application/zip"})
    import_id = started.json()["data"]["id"]
    wait_until(lambda: second.get(f"/api/v1/transit/imports/{import_id}", ops).json()["data"]["status"] == "succeeded",
               timeout=WAIT, message="the second import")
    newer = second.get("/api/v1/gtfs/version").json()["data"]["version_id"]
    assert newer != version
    wait_until(lambda: first.get("/api/v1/gtfs/version").json()["data"]["version_id"] == newer, timeout=WAIT,
               message="the first node on the newer version")
    assert first.get("/api/v1/stops/A").status_code == 200
    assert_error(first.get("/api/v1/stops/STAGECOACH"), 404, "STOP_NOT_FOUND")
