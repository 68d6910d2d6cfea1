"""Notifications end to end: routing over sockets or push, the ack fallback, read sync,
dedupe and the push outbox surviving a crash.

Until real push providers exist the server sends pushes through the log sender, which
appends one JSON line per send to `push.log_file`; these tests read that file to see exactly
which pushes went out. A small `notifications.ack_timeout_ms` keeps the fallback tests quick.

Most tests share one SQLite server (each with its own users); the crash tests start their
own servers, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import queue
import re
import secrets
import signal
import time
from pathlib import Path

import pytest
import socketio

from conftest import WAIT, RawSocketIO, http_session, is_online, issue_token, wait_until

# The server's ack deadline: an app's ack must beat it, so it leaves room for a loaded machine
# (800 ms was beaten by a starved client); the fallback tests wait for it to pass.
ACK_TIMEOUT_MS = 5000
TIMEOUT = WAIT  # waits for what should happen; `stays` checks keep their own short windows
# A socket event that asks for an ack: 42<ack id>[name, args…]
EVENT_WITH_ACK = re.compile(r"^42(\d+)(\[.*)$", re.DOTALL)


# Configuration and servers ------------------------------------------------------------------
def write_config(directory: Path, *, worker_enabled: bool = True, name: str = "herald.json") -> tuple[Path, Path]:
    """Writes a config file; returns (config path, push log path)."""
    log_file = directory / f"{Path(name).stem}-push.jsonl"
    config = {
        "notifications": {"ack_timeout_ms": ACK_TIMEOUT_MS, "dedupe_cooldown_seconds": 1800},
        "push": {
            "worker_enabled": worker_enabled,
            "log_file": str(log_file),
            "poll_interval_ms": 200,
            "lease_seconds": 60,
            "request_timeout_ms": 5000,
        },
    }
    path = directory / name
    path.write_text(json.dumps(config), encoding="utf-8")
    return path, log_file


class PushLog:
    """The log sender's file: one JSON object per push sent."""

    def __init__(self, path: Path):
        self.path = path

    def lines(self) -> list[dict]:
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8")
        # Only complete lines: the server may be in the middle of appending one.
        complete = text[: text.rfind("\n") + 1]
        return [json.loads(line) for line in complete.splitlines() if line.strip()]

    def for_notification(self, notification_id: str) -> list[dict]:
        return [line for line in self.lines() if line["notification_id"] == notification_id]


@pytest.fixture(scope="module")
def shared(module_herald, tmp_path_factory):
    """(server, push log) shared by the module's routing tests."""
    config, log_file = write_config(tmp_path_factory.mktemp("notifications"))
    server = module_herald.start("--config", str(config))
    return server, PushLog(log_file)


@pytest.fixture(scope="module")
def rt(shared):
    return shared[0]


@pytest.fixture(scope="module")
def push_log(shared):
    return shared[1]


@pytest.fixture(scope="module")
def service_token(rt):
    return issue_token(rt.data_dir, user="svc-notifier", role="service")


def new_user(prefix: str = "ntf") -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


# REST helpers ---------------------------------------------------------------------------
def apns_token() -> str:
    return secrets.token_hex(32)  # 64 hex characters


def fcm_token() -> str:
    return "fcm:" + secrets.token_urlsafe(48)  # [A-Za-z0-9_:-], 68 characters


def register_device(server, token: str, provider: str, push_token: str, platform: str) -> dict:
    response = server.request("POST", "/api/v1/push/register", token, json={
        "token": push_token, "provider": provider, "platform": platform,
        "device_id": f"hw-{secrets.token_hex(3)}", "app_version": "1.0.0", "locale": "en-US",
    })
    assert response.status_code == 201, f"register {provider}: {response.status_code} {response.text}"
    device = response.json()["data"]
    assert device["active"] is True and device["provider"] == provider, device
    return device


def register_two_devices(server, token: str) -> tuple[dict, dict, str, str]:
    """An iPhone (APNs) and an Android phone (FCM): (apns device, fcm device, apns token, fcm token)."""
    apns, fcm = apns_token(), fcm_token()
    return (register_device(server, token, "apns", apns, "ios"),
            register_device(server, token, "fcm", fcm, "android"), apns, fcm)


def send_notification(server, service_token: str, expect_status: int = 201, **body) -> dict:
    """POST /api/v1/notifications for one user; returns the single result."""
    response = server.request("POST", "/api/v1/notifications", service_token, json=body)
    assert response.status_code == expect_status, f"send: {response.status_code} {response.text}"
    results = response.json()["data"]["results"]
    assert len(results) == 1, results
    return results[0]


def deliveries(server, token: str, notification_id: str) -> list[dict]:
    response = server.get(f"/api/v1/deliveries?notification_id={notification_id}", token=token)
    assert response.status_code == 200, f"deliveries: {response.status_code} {response.text}"
    rows = response.json()["data"]["deliveries"]
    assert all(row["notification_id"] == notification_id for row in rows), rows
    return rows


def by_channel(rows: list[dict], channel: str) -> list[dict]:
    return [row for row in rows if row["channel"] == channel]


def inbox(server, token: str) -> dict:
    response = server.get("/api/v1/notifications", token=token)
    assert response.status_code == 200, f"inbox: {response.status_code} {response.text}"
    return response.json()["data"]


def stays(predicate, seconds: float, message: str, interval: float = 0.1) -> None:
    """Asserts `predicate` holds throughout the next `seconds` (for "nothing more happens")."""
    deadline = time.monotonic() + seconds
    while True:
        assert predicate(), message
        if time.monotonic() >= deadline:
            return
        time.sleep(interval)


# Socket.IO clients -----------------------------------------------------------------------------
class AppClient:
    """A python-socketio client standing for a foregrounded app: it records `sync`,
    `notification` and `notification_read`. python-socketio acks every event that asks for
    one (with the handler's return value, or no arguments when it returns None), so this
    client always acknowledges notifications."""

    EVENTS = ("sync", "notification", "notification_read")

    def __init__(self):
        self.sio = socketio.Client(reconnection=False, handle_sigint=False, http_session=http_session())
        self.events: dict[str, queue.Queue] = {name: queue.Queue() for name in self.EVENTS}
        for name in self.EVENTS:
            self.sio.on(name, self._recorder(name))

    def _recorder(self, name: str):
        def record(*args):
            # Persisted events carry the connection-state-recovery offset as a last argument.
            self.events[name].put(args)
            return "ok"
        return record

    def connect(self, server, token: str) -> dict:
        """Connects and returns the `sync` the server sends on connect."""
        self.sio.connect(server.url, auth={"token": token}, transports=["websocket"], wait_timeout=TIMEOUT)
        return self.next("sync")[0]

    def next(self, name: str, timeout: float = TIMEOUT) -> tuple:
        try:
            return self.events[name].get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no {name!r} event within {timeout}s") from None

    def call(self, event: str, data=None):
        return self.sio.call(event, data, timeout=TIMEOUT)

    def close(self) -> None:
        if self.sio.connected:
            self.sio.disconnect()


@pytest.fixture
def app_client():
    created: list[AppClient] = []

    def make() -> AppClient:
        client = AppClient()
        created.append(client)
        return client

    yield make
    for client in created:
        client.close()


@pytest.fixture
def raw_client():
    created: list[RawSocketIO] = []

    def make(server) -> RawSocketIO:
        client = RawSocketIO(server, timeout=TIMEOUT, ignore_events=())
        created.append(client)
        return client

    yield make
    for client in created:
        client.close()


def wait_online(server, service_token: str, user: str) -> None:
    wait_until(lambda: is_online(server, service_token, user), TIMEOUT, message=f"{user} online")


# Routing -----------------------------------------------------------------------------------------
def test_online_user_gets_socket_notification_and_ack_prevents_push(rt, push_log, service_token, app_client):
    user = new_user()
    token = issue_token(rt.data_dir, user=user)
    register_device(rt, token, "apns", apns_token(), "ios")

    client = app_client()
    sync = client.connect(rt, token)
    assert sync["notifications"] == [] and sync["unread_count"] == 0, sync
    assert sync["synced_at"], sync
    wait_online(rt, service_token, user)

    result = send_notification(rt, service_token, user_id=user, type="job_new", title="New job nearby",
                               body="Pickup at 5th Ave", data={"job_id": "job_42", "fare": 18.5})
    notification = result["notification"]
    assert result["deduplicated"] is False, result
    assert result["channel"] == "socket", result
    assert result["push_deliveries"] == 0, result
    sent_at = time.monotonic()

    args = client.next("notification")
    # It asks for an ack, so it carries no recovery offset (as the reference server does).
    assert len(args) == 1, f"expected (notification,), got {args!r}"
    received = args[0]
    assert received["id"] == notification["id"], (received, notification)
    assert received["type"] == "job_new", received
    assert received["title"] == "New job nearby" and received["body"] == "Pickup at 5th Ave", received
    assert received["data"] == {"job_id": "job_42", "fare": 18.5}, received
    assert received["severity"] == "alert" and received["delivery"] == "push", received
    assert received["read_at"] is None and received["unread_count"] == 1, received

    def acknowledged():
        rows = deliveries(rt, service_token, notification["id"])
        socket_rows = by_channel(rows, "socket")
        return rows if len(socket_rows) == 1 and socket_rows[0]["status"] == "acknowledged" else None

    wait_until(acknowledged, TIMEOUT, message="socket delivery acknowledged")

    # Past the ack deadline (and a few fallback sweeps and worker polls) nothing was pushed.
    left = sent_at + ACK_TIMEOUT_MS / 1000 * 2 + 1.0 - time.monotonic()
    if left > 0:
        time.sleep(left)
    assert push_log.for_notification(notification["id"]) == [], "an acknowledged notification was pushed"
    rows = deliveries(rt, service_token, notification["id"])
    assert by_channel(rows, "push") == [], rows
    assert [row["status"] for row in by_channel(rows, "socket")] == ["acknowledged"], rows


def test_unacknowledged_socket_notification_falls_back_to_push(rt, push_log, service_token, raw_client):
    user = new_user()
    token = issue_token(rt.data_dir, user=user)
    apns, fcm, _, _ = register_two_devices(rt, token)

    # A backgrounded app: its socket stays open but it never answers the server's ack request.
    client = raw_client(rt)
    client.connect({"token": token})
    sync = client.next_event()
    assert sync[0] == "sync", sync
    wait_online(rt, service_token, user)

    started = time.monotonic()
    result = send_notification(rt, service_token, user_id=user, type="job_new", title="Job offer",
                               data={"job_id": "job_7"})
    notification_id = result["notification"]["id"]
    assert result["channel"] == "socket" and result["push_deliveries"] == 0, result

    frame = client.next_frame(lambda f: EVENT_WITH_ACK.match(f) is not None)
    event = json.loads(EVENT_WITH_ACK.match(frame).group(2))
    assert event[0] == "notification" and event[1]["id"] == notification_id, event
    assert event[1]["data"] == {"job_id": "job_7"}, event
    # No recovery offset before the ack id: Socket.IO clients could not record it (issue 19).
    assert len(event) == 2, f"an event that asks for an ack carries no offset: {event}"

    def pushed():
        lines = push_log.for_notification(notification_id)
        return lines if len(lines) >= 2 else None

    lines = wait_until(pushed, TIMEOUT, message="fallback pushes in the log")
    elapsed = time.monotonic() - started
    assert elapsed >= ACK_TIMEOUT_MS / 1000, f"pushed after {elapsed:.3f}s, before the {ACK_TIMEOUT_MS} ms ack timeout"
    assert sorted(line["device_id"] for line in lines) == sorted([apns["id"], fcm["id"]]), lines
    assert sorted(line["provider"] for line in lines) == ["apns", "fcm"], lines
    assert len({line["delivery_id"] for line in lines}) == 2, lines
    for line in lines:
        assert line["user_id"] == user and line["title"] == "Job offer", line
        assert line["data"]["job_id"] == "job_7" and line["data"]["notification_id"] == notification_id, line

    def settled():
        rows = deliveries(rt, service_token, notification_id)
        pushes = by_channel(rows, "push")
        return rows if len(pushes) == 2 and all(row["status"] == "sent" for row in pushes) else None

    rows = wait_until(settled, TIMEOUT, message="both push deliveries sent")
    assert [row["status"] for row in by_channel(rows, "socket")] == ["unacknowledged"], rows
    assert sorted(row["device_id"] for row in by_channel(rows, "push")) == sorted([apns["id"], fcm["id"]]), rows

    # The app comes back and acks late: the delivery stays unacknowledged, nothing more is pushed.
    client.send(f"43{EVENT_WITH_ACK.match(frame).group(1)}[]")
    assert client.call("get_unread_count") == [{"count": 1}]  # the late ack has been read by now

    def unchanged():
        socket_rows = by_channel(deliveries(rt, service_token, notification_id), "socket")
        return ([row["status"] for row in socket_rows] == ["unacknowledged"]
                and len(push_log.for_notification(notification_id)) == 2)

    stays(unchanged, 1.0, "a late ack changed the delivery, or more than one push per device was sent")


def test_a_client_that_never_acknowledges_says_so_and_is_not_pushed_while_open(rt, push_log, service_token, raw_client):
    """The notification design's apps never acknowledge a socket notification: with `acks: false`
    in the handshake the delivery counts once emitted to the live socket (the design's rule), so
    no push follows the ack timeout while the app is open, and the frame asks for no ack."""
    user = new_user()
    token = issue_token(rt.data_dir, user=user)
    register_two_devices(rt, token)
    client = raw_client(rt)
    client.connect({"token": token, "acks": False})
    assert client.next_event()[0] == "sync"
    wait_online(rt, service_token, user)

    sent_at = time.monotonic()
    result = send_notification(rt, service_token, user_id=user, type="job_new", title="Job offer", data={"job_id": "job_8"})
    notification_id = result["notification"]["id"]
    assert result["channel"] == "socket", result
    frame = client.next_frame(lambda f: "notification" in f)
    assert EVENT_WITH_ACK.match(frame) is None, f"the frame asks a client that said acks: false for an ack: {frame}"

    def acknowledged():
        rows = by_channel(deliveries(rt, service_token, notification_id), "socket")
        return rows if rows and rows[0]["status"] == "acknowledged" else None

    wait_until(acknowledged, TIMEOUT, message="the socket delivery counted as delivered once emitted")
    left = sent_at + ACK_TIMEOUT_MS / 1000 * 2 + 1.0 - time.monotonic()
    if left > 0:
        time.sleep(left)
    assert push_log.for_notification(notification_id) == [], "pushed to an app that had it on screen"
    assert by_channel(deliveries(rt, service_token, notification_id), "push") == []


def test_offline_user_gets_one_push_per_active_device(rt, push_log, service_token):
    user = new_user()
    token = issue_token(rt.data_dir, user=user)
    apns, fcm, _, fcm_push_token = register_two_devices(rt, token)

    response = rt.request("DELETE", "/api/v1/push/unregister", token, json={"token": fcm_push_token})
    assert response.status_code == 200, response.text
    assert response.json()["data"]["id"] == fcm["id"] and response.json()["data"]["active"] is False, response.text

    result = send_notification(rt, service_token, user_id=user, type="job_new", title="Job offer", body="Tap to accept",
                               data={"job_id": "job_9"}, collapse_key="job_9")
    notification_id = result["notification"]["id"]
    assert result["channel"] == "push", result
    assert result["push_deliveries"] == 1, result
    assert result["push_suppressed"] is None, result

    def settled():
        pushes = by_channel(deliveries(rt, service_token, notification_id), "push")
        return pushes if pushes and all(row["status"] == "sent" for row in pushes) else None

    pushes = wait_until(settled, TIMEOUT, message="push delivery sent")
    assert len(pushes) == 1 and pushes[0]["device_id"] == apns["id"] and pushes[0]["attempts"] == 1, pushes

    lines = wait_until(lambda: push_log.for_notification(notification_id), TIMEOUT, message="push in the log")
    assert len(lines) == 1, lines
    line = lines[0]
    assert line["delivery_id"] == pushes[0]["id"], (line, pushes)
    assert line["device_id"] == apns["id"] and line["provider"] == "apns", line
    assert line["user_id"] == user, line
    assert line["title"] == "Job offer" and line["body"] == "Tap to accept", line
    assert line["badge"] == 1, f"badge should be the unread count (1): {line}"
    assert line["collapse_key"] == "job_9", line
    assert line["category"] == "JOB_OFFER" and line["interruption_level"] == "time-sensitive", line
    assert line["attempt"] == 1, line
    assert line["data"] == {"job_id": "job_9", "notification_id": notification_id, "notification_type": "job_new", "type": "job_new"}, line
    stays(lambda: len(push_log.for_notification(notification_id)) == 1, 1.0, "the push was sent more than once")


# Read state ----------------------------------------------------------------------------------------
def test_mark_read_on_one_socket_reaches_the_other(rt, service_token, app_client):
    user = new_user()
    token = issue_token(rt.data_dir, user=user)
    phone, tablet = app_client(), app_client()
    phone.connect(rt, token)
    tablet.connect(rt, token)
    wait_online(rt, service_token, user)

    result = send_notification(rt, service_token, user_id=user, type="trip_update", title="Driver is 2 minutes away")
    notification_id = result["notification"]["id"]
    assert result["channel"] == "socket", result
    assert phone.next("notification")[0]["id"] == notification_id
    assert tablet.next("notification")[0]["id"] == notification_id

    answer = phone.call("mark_read", {"notification_id": notification_id})
    assert answer == {"status": "ok", "notification_id": notification_id}, answer

    read = tablet.next("notification_read")[0]
    assert read["notification_id"] == notification_id, read
    assert read["read_at"], read
    assert read["unread_count"] == 0, read

    assert tablet.call("get_unread_count") == {"count": 0}
    page = inbox(rt, token)
    assert page["unread_count"] == 0 and page["total"] == 1, page
    assert page["notifications"][0]["read_at"] == read["read_at"], (page, read)


# Dedupe ------------------------------------------------------------------------------------------
def test_same_dedupe_key_returns_the_first_notification(rt, service_token):
    user = new_user()
    token = issue_token(rt.data_dir, user=user)
    body = dict(user_id=user, type="service_alert", title="Heavy rain: expect delays", dedupe_key="weather-2024-06-01")

    first = send_notification(rt, service_token, **body)
    assert first["deduplicated"] is False, first
    assert first["channel"] == "inbox", first  # offline, no devices

    second = send_notification(rt, service_token, expect_status=200, **body)
    assert second["deduplicated"] is True, second
    assert second["channel"] == "deduplicated", second
    assert second["notification"]["id"] == first["notification"]["id"], (first, second)
    assert second["push_deliveries"] == 0, second

    page = inbox(rt, token)
    assert page["total"] == 1 and page["unread_count"] == 1, page
    assert [n["id"] for n in page["notifications"]] == [first["notification"]["id"]], page


# The outbox survives a crash ------------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgres"])
def database(request):
    """None (SQLite in the data dir) or a fresh PostgreSQL database URL."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_url")


def test_pending_pushes_are_sent_exactly_once_after_a_crash(database, herald, tmp_path):
    # `database` comes first so that a PostgreSQL database is dropped after the servers stopped.
    data_dir = herald.new_data_dir()
    quiet_config, quiet_log = write_config(tmp_path, worker_enabled=False, name="no-worker.json")
    first = herald.start("--config", str(quiet_config), data_dir=data_dir, database=database)
    service = issue_token(data_dir, user="svc-crash", role="service")
    user = new_user("crash")
    token = issue_token(data_dir, user=user)
    apns, fcm, _, _ = register_two_devices(first, token)

    notification_ids = []
    for n in range(3):
        result = send_notification(first, service, user_id=user, type="job_update", title=f"Update {n}")
        assert result["channel"] == "push" and result["push_deliveries"] == 2, result
        notification_ids.append(result["notification"]["id"])
    for notification_id in notification_ids:
        rows = deliveries(first, service, notification_id)
        assert sorted(row["status"] for row in rows) == ["pending", "pending"], rows
    assert PushLog(quiet_log).lines() == [], "a server without a push worker sent pushes"

    code = first.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL, code

    config, log_file = write_config(tmp_path, worker_enabled=True, name="worker.json")
    push_log = PushLog(log_file)
    second = herald.start("--config", str(config), data_dir=data_dir, database=database)

    wait_until(lambda: len(push_log.lines()) >= 6, TIMEOUT, message="6 pushes after the restart")
    stays(lambda: len(push_log.lines()) == 6, 2.0, f"more than 6 pushes: {push_log.lines()}")
    lines = push_log.lines()
    assert len({line["delivery_id"] for line in lines}) == 6, f"a delivery was sent twice: {lines}"
    sent = sorted((line["notification_id"], line["device_id"]) for line in lines)
    assert sent == sorted((n, d) for n in notification_ids for d in (apns["id"], fcm["id"])), lines
    assert all(line["attempt"] == 1 for line in lines), lines

    def all_sent():
        rows = [row for n in notification_ids for row in deliveries(second, service, n)]
        return rows if len(rows) == 6 and all(row["status"] == "sent" for row in rows) else None

    rows = wait_until(all_sent, TIMEOUT, message="all 6 deliveries sent")
    assert all(row["attempts"] == 1 and row["channel"] == "push" for row in rows), rows
    assert {row["id"] for row in rows} == {line["delivery_id"] for line in lines}, (rows, lines)


def test_resync_over_socketio_returns_what_changed_since_and_refuses_a_bad_time(rt, service_token, app_client):
    """The notification design's `resync {last_sync_at}` from python-socketio: the notifications
    since then, the ids read meanwhile, and every time in the answer decodes as its app reads it."""
    user = new_user()
    token = issue_token(rt.data_dir, user=user)
    old = send_notification(rt, service_token, user_id=user, type="trip_update", title="Old")["notification"]["id"]
    client = app_client()
    first = client.connect(rt, token)
    assert [n["id"] for n in first["notifications"]] == [old], first
    synced_at = first["synced_at"]
    # ISO 8601 without fractional seconds (what Foundation's default .iso8601 decoding takes).
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", synced_at), synced_at
    time.sleep(1.1)
    fresh = send_notification(rt, service_token, user_id=user, type="trip_update", title="Fresh")["notification"]["id"]
    client.next("notification")
    assert rt.request("POST", f"/api/v1/notifications/{old}/read", token).status_code == 200
    answer = client.call("resync", {"last_sync_at": synced_at})
    assert fresh in [n["id"] for n in answer["notifications"]], answer
    assert answer["read_ids"] == [old] and answer["unread_count"] == 1, answer
    assert answer["changes_truncated"] is False, answer
    bad = client.call("resync", {"last_sync_at": "yesterday"})
    assert bad["status"] == "error" and bad["code"] == "INVALID_ARGUMENT", bad
