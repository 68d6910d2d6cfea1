"""Transit service alerts matched to favourites and pushed through the real
binary: a GTFS-Realtime Alerts feed written by Google's gtfs-realtime-bindings and served by
a local HTTP server changes, devices registered against `herald-mock-apns` get the pushes
with the transit design's headers and payload, once per alert version; and a server killed with
SIGKILL in the middle of an alert's fan-out is restarted without anyone getting it twice."""

from __future__ import annotations

import json
import secrets
import signal
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from google.transit import gtfs_realtime_pb2

from conftest import REPO_ROOT, WAIT, http_session, issue_token, wait_until
from test_push_providers import database, mock_apns, no_new_requests, register_apns, write_apns_key  # noqa: F401 (fixtures)
from test_transit import FeedHost, feed_host, import_cli  # noqa: F401 (fixture)

SAMPLE = REPO_ROOT / "Tests" / "Fixtures" / "gtfs" / "sample-feed-1"


def alerts_message(*alerts: dict) -> bytes:
    """A FeedMessage of Alerts: each {id, route|stop, header, severity, effect, start, end}."""
    message = gtfs_realtime_pb2.FeedMessage()
    message.header.gtfs_realtime_version = "2.0"
    message.header.timestamp = int(time.time())
    for spec in alerts:
        entity = message.entity.add()
        entity.id = spec["id"]
        selector = entity.alert.informed_entity.add()
        if "route" in spec:
            selector.route_id = spec["route"]
        if "stop" in spec:
            selector.stop_id = spec["stop"]
        period = entity.alert.active_period.add()
        period.start = spec.get("start", int(time.time()) - 60)
        period.end = spec.get("end", int(time.time()) + 3600)
        entity.alert.cause = gtfs_realtime_pb2.Alert.TECHNICAL_PROBLEM
        entity.alert.effect = spec.get("effect", gtfs_realtime_pb2.Alert.SIGNIFICANT_DELAYS)
        entity.alert.severity_level = spec.get("severity", gtfs_realtime_pb2.Alert.WARNING)
        translation = entity.alert.header_text.translation.add()
        translation.text = spec["header"]
        translation.language = "en"
    return message.SerializeToString()


def alerts_config(path: Path, mock, feed_url: str | None, **alerts) -> Path:
    settings = {"interval_seconds": 1, **alerts}
    transit = {"alerts": settings}
    if feed_url:
        transit["realtime"] = [{"name": "alerts", "url": feed_url, "poll_interval_seconds": 1}]
    config = {
        "push": {
            "request_timeout_ms": 2000, "lease_seconds": 5, "poll_interval_ms": 100, "concurrency": 64,
            "apns": {
                "team_id": "TEAM123456", "key_id": "KEY1234567", "private_key_file": str(write_apns_key(path.parent)),
                "topic": "com.example.transit", "base_url": mock.base_url, "ca_file": mock.ca_file,
            },
        },
        "transit": transit,
    }
    path.write_text(json.dumps(config))
    return path


def favourite(server, token: str, stop: str) -> None:
    response = server.request("POST", "/api/v1/favorites", token, json={"stop_id": stop})
    assert response.status_code == 201, response.text


def test_alert_feed_changes_reach_favourites_through_apns(mock_apns, herald, tmp_path, feed_host):
    mock = mock_apns("--log-payloads")
    data = herald.new_data_dir()
    import_cli(SAMPLE, data)
    feed_host.files["/alerts.pb"] = alerts_message()
    config = alerts_config(tmp_path / "herald.json", mock, feed_host.url("/alerts.pb"))
    server = herald.start("--config", str(config), data_dir=data)

    # Ann favours Stagecoach and Bob the airport (both on the STBA shuttle); Cat Amargosa Valley.
    tokens, push_tokens = {}, {}
    for user, stop in [("ann", "STAGECOACH"), ("bob", "BEATTY_AIRPORT"), ("cat", "AMV")]:
        tokens[user] = issue_token(data, user)
        favourite(server, tokens[user], stop)
        push_tokens[user] = secrets.token_hex(32)
        register_apns(server, tokens[user], push_tokens[user])

    sent_at = int(time.time())
    feed_host.files["/alerts.pb"] = alerts_message({"id": "stba-1", "route": "STBA", "header": "Shuttle delayed"})
    wait_until(lambda: mock.count() >= 2, WAIT, message="the alert's pushes at the mock APNs")
    seen_at = int(time.time())
    no_new_requests(mock.count, 2, 2.5, "pushes for one alert version")  # polls repeat it unchanged
    lines = mock.lines()
    assert {line["token"] for line in lines} == {push_tokens["ann"], push_tokens["bob"]}, lines
    for line in lines:
        headers, payload = line["headers"], line["payload"]
        assert headers["apns-collapse-id"] == "stba-1", headers
        assert headers["apns-push-type"] == "alert" and headers["apns-priority"] == "10", headers
        assert headers["apns-topic"] == "com.example.transit", headers
        # An hour after it was sent: between the alert's arrival and its push being seen (no
        # bound on how long that took; a loaded machine is slow).
        assert sent_at + 3600 - 5 <= int(headers["apns-expiration"]) <= seen_at + 3600 + 5, headers
        aps = payload["aps"]
        assert aps["category"] == "SERVICE_ALERT" and aps["thread-id"] == "stba-1", aps
        assert aps["interruption-level"] == "time-sensitive", aps
        assert aps["alert"]["title-loc-key"] == "ALERT_TITLE_DELAY" and aps["alert"]["title-loc-args"] == ["30"], aps
        assert aps["alert"]["loc-key"] == "ALERT_BODY_DELAY", aps
        assert aps["alert"]["loc-args"] == ["Shuttle delayed", "technical problem"], aps
        assert aps["badge"] == 1 and aps["sound"] == "default", aps
        # The plain text beside the keys, for an app build without them.
        assert aps["alert"]["title"] == "Shuttle delayed", aps
        assert payload["alert_id"] == "stba-1" and payload["route_id"] == "STBA", payload
        assert payload["severity"] == "major" and payload["deep_link"] == "transitapp://alerts/stba-1", payload
    # It is in GET /alerts at once.
    listed = server.get("/api/v1/alerts?route_id=STBA").json()["data"]
    assert [alert["alert_id"] for alert in listed["alerts"]] == ["stba-1"], listed

    # The alert changes: one more push each, same collapse id but quiet (inside the 30-minute
    # cooldown: passive, no sound, the new text replacing the old); a cancellation of the
    # Airport - Amargosa Valley route reaches Cat and Bob (his airport is on it too).
    changed_at = int(time.time())
    # (Its periods fixed, so the same cancellation repeated below is the same version.)
    aamv_off = {"id": "aamv-off", "route": "AAMV", "header": "No Amargosa buses", "severity": gtfs_realtime_pb2.Alert.SEVERE,
                "effect": gtfs_realtime_pb2.Alert.NO_SERVICE, "start": changed_at - 60, "end": changed_at + 3600}
    feed_host.files["/alerts.pb"] = alerts_message(
        {"id": "stba-1", "route": "STBA", "header": "Shuttle delayed 20 minutes"}, aamv_off)
    wait_until(lambda: mock.count() >= 6, WAIT, message="the changed alert's pushes")
    seen_again_at = int(time.time())
    no_new_requests(mock.count, 6, 2.5, "pushes after the change")
    later = mock.lines()[2:]
    changed = [line for line in later if line["payload"]["alert_id"] == "stba-1"]
    assert {line["token"] for line in changed} == {push_tokens["ann"], push_tokens["bob"]}, later
    assert all(line["headers"]["apns-collapse-id"] == "stba-1" for line in changed)
    assert all(line["payload"]["aps"]["badge"] >= 2 for line in changed), changed
    for line in changed:
        aps = line["payload"]["aps"]
        assert aps["interruption-level"] == "passive" and "sound" not in aps, aps
        assert aps["alert"]["title"] == "Shuttle delayed 20 minutes" and line["payload"]["update"] is True, aps
    cancelled = [line for line in later if line["payload"]["alert_id"] == "aamv-off"]
    assert {line["token"] for line in cancelled} == {push_tokens["cat"], push_tokens["bob"]}, later
    for line in cancelled:
        assert line["payload"]["severity"] == "cancelled", line
        assert changed_at + 7200 - 5 <= int(line["headers"]["apns-expiration"]) <= seen_again_at + 7200 + 5, line

    # The shuttle is then cancelled: an escalation sounds again inside the cooldown.
    feed_host.files["/alerts.pb"] = alerts_message(
        {"id": "stba-1", "route": "STBA", "header": "Shuttle cancelled", "severity": gtfs_realtime_pb2.Alert.SEVERE,
         "effect": gtfs_realtime_pb2.Alert.NO_SERVICE}, aamv_off)
    wait_until(lambda: mock.count() >= 8, WAIT, message="the escalated alert's pushes")
    no_new_requests(mock.count, 8, 2.5, "pushes after the escalation")
    escalated = mock.lines()[6:]
    assert {line["token"] for line in escalated} == {push_tokens["ann"], push_tokens["bob"]}, escalated
    for line in escalated:
        aps = line["payload"]["aps"]
        assert aps["sound"] == "default" and aps["interruption-level"] == "time-sensitive", aps
        assert line["payload"]["severity"] == "cancelled" and "update" not in line["payload"], line

    # Ann opens it: her unread count (the next badge) drops.
    response = server.request("POST", "/api/v1/alerts/stba-1/opened", tokens["ann"])
    assert response.status_code == 204, response.text
    assert server.get("/api/v1/notifications/unread-count", token=tokens["ann"]).json()["data"]["count"] == 0
    metrics = server.get("/metrics").text
    assert "herald_transit_alert_pushes_queued_total 8" in metrics, metrics


def test_a_kill_in_the_middle_of_an_alert_fan_out(database, mock_apns, herald, tmp_path):  # noqa: F811
    users = 400
    mock = mock_apns()
    data = herald.new_data_dir()
    extra = ("--database", database) if database else ()
    import_cli(SAMPLE, data, *extra)
    # One user per outbox transaction and a short lease: the fan-out takes long enough to be
    # cut, and a restarted node takes the version back within seconds.
    config = alerts_config(tmp_path / "herald.json", mock, None, batch_size=1, lease_seconds=2)
    first = herald.start("--config", str(config), data_dir=data, database=database)
    service = issue_token(data, "ops", role="service")
    push_tokens = {f"rider-{n:03d}": secrets.token_hex(32) for n in range(users)}
    local = threading.local()

    def enrol(user: str) -> None:
        if not hasattr(local, "session"):
            local.session = http_session()
        token = issue_token(data, user)
        response = local.session.post(first.url + "/api/v1/favorites", json={"stop_id": "STAGECOACH"},
                                      headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert response.status_code == 201, response.text
        register_apns(first, token, push_tokens[user], session=local.session)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(enrol, push_tokens))

    def written() -> int:
        if database:
            from conftest import psql
            return int(psql(database, "SELECT COUNT(*) FROM transit_alert_pushes").strip() or 0)
        with sqlite3.connect(f"file:{data / 'herald.sqlite'}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM transit_alert_pushes").fetchone()[0]

    response = first.request("POST", "/api/v1/alerts", service, json={
        "alert_id": "crash-1", "severity": "warning", "header": "Stagecoach closed", "affected_stops": ["STAGECOACH"]})
    assert response.status_code == 201, response.text
    wait_until(lambda: written() >= 20, WAIT, interval=0.01, message="the fan-out under way")
    assert first.stop(signal.SIGKILL) == -signal.SIGKILL
    at_kill = written()
    assert at_kill < users, f"the fan-out ({at_kill} of {users}) finished before the kill"

    herald.start("--config", str(config), data_dir=data, database=database)
    wait_until(lambda: written() == users, 5 * WAIT, interval=0.2, message="every rider matched after the restart")

    def every_token_reached() -> bool:
        return {line["token"] for line in mock.lines()} >= set(push_tokens.values())

    wait_until(every_token_reached, 5 * WAIT, interval=0.2, message="a push to every rider")
    time.sleep(1.0)
    by_token: dict[str, set[str]] = {}
    for line in mock.lines():
        by_token.setdefault(line["token"], set()).add(line["notification_id"])
    twice = {token: ids for token, ids in by_token.items() if len(ids) > 1}
    assert not twice, f"{len(twice)} riders got the alert in two notifications: {list(twice.items())[:3]}"
    assert written() == users
