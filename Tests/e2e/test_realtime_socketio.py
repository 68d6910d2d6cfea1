"""The Socket.IO gateway through the python-socketio client (a real third-party client):
auth, built-in events, binary, server events published over REST, transports, and the
publish endpoint's validation. One SQLite server is shared by the module."""

from __future__ import annotations

import queue
import secrets

import pytest
import socketio

from conftest import WAIT, assert_error, http_session, issue_token, publish, wait_until

TIMEOUT = WAIT  # waits for what should happen: long, for a loaded machine
TRANSPORTS = {
    "websocket": ["websocket"],
    "polling-upgrade": None,  # the client's default: long-polling first, then the upgrade
}


@pytest.fixture(scope="module")
def rt(module_herald):
    return module_herald.start()


@pytest.fixture(scope="module")
def tokens(rt):
    """tokens(user, role="customer") -> a JWT (cached per user and role)."""
    cache: dict[tuple[str, str], str] = {}

    def get(user: str, role: str = "customer") -> str:
        if (user, role) not in cache:
            cache[(user, role)] = issue_token(rt.data_dir, user=user, role=role)
        return cache[(user, role)]

    return get


@pytest.fixture(scope="module")
def service_token(tokens):
    return tokens("svc-publisher", "service")


class Client:
    """A python-socketio client that records the events it receives."""

    def __init__(self, events=("hello",)):
        self.sio = socketio.Client(reconnection=False, handle_sigint=False, http_session=http_session())
        self.received: queue.Queue = queue.Queue()
        self.errors: list = []
        for name in events:
            self.sio.on(name, self._recorder(name))
        self.sio.on("connect_error", lambda *data: self.errors.append(data))

    def _recorder(self, name):
        def record(*args):
            self.received.put((name, args))
        return record

    def connect(self, url: str, token: str | None, transports) -> None:
        auth = {"token": token} if token is not None else None
        self.sio.connect(url, auth=auth, transports=transports, wait_timeout=TIMEOUT)

    def next_event(self, timeout: float = TIMEOUT):
        try:
            return self.received.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event received within {timeout}s") from None

    def call(self, event: str, *args):
        # python-socketio passes a single argument as-is and several as a tuple.
        data = args[0] if len(args) == 1 else (args if args else None)
        return self.sio.call(event, data, timeout=TIMEOUT)

    def close(self) -> None:
        if self.sio.connected:
            self.sio.disconnect()


@pytest.fixture
def client():
    created: list[Client] = []

    def make(events=("hello",)) -> Client:
        c = Client(events)
        created.append(c)
        return c

    yield make
    for c in created:
        c.close()


def new_user() -> str:
    return f"rt-{secrets.token_hex(4)}"


@pytest.fixture(params=list(TRANSPORTS), ids=list(TRANSPORTS))
def transports(request):
    return TRANSPORTS[request.param]


def connected(client, rt, tokens, transports, user: str, events=("hello",)) -> Client:
    c = client(events)
    c.connect(rt.url, tokens(user), transports)
    if transports is None:
        # The default transports start on long-polling and must upgrade to WebSocket.
        wait_until(lambda: c.sio.transport() == "websocket", TIMEOUT, message="upgrade to websocket")
    else:
        assert c.sio.transport() == transports[0]
    return c


# Connecting --------------------------------------------------------------------------------
def test_whoami_reports_user_and_user_room(client, rt, tokens, transports):
    user = new_user()
    c = connected(client, rt, tokens, transports, user)
    who = c.call("whoami")
    assert who["user_id"] == user, who
    assert who["role"] == "customer", who
    assert f"user:{user}" in who["rooms"], who
    assert who["recovered"] is False, who


def test_bad_token_is_refused(client, rt, transports):
    c = client()
    with pytest.raises(socketio.exceptions.ConnectionError):
        c.connect(rt.url, "not.a.jwt", transports)
    assert not c.sio.connected
    assert c.errors, "no connect_error event was raised"
    assert isinstance(c.errors[0][0], dict) and c.errors[0][0].get("message"), c.errors


def test_token_signed_with_another_secret_is_refused(client, rt, transports, tmp_path):
    foreign = issue_token(tmp_path / "other-data", user="intruder", role="operator")
    c = client()
    with pytest.raises(socketio.exceptions.ConnectionError):
        c.connect(rt.url, foreign, transports)
    assert c.errors and c.errors[0][0].get("message"), c.errors


def test_missing_token_is_refused(client, rt, transports):
    c = client()
    with pytest.raises(socketio.exceptions.ConnectionError):
        c.connect(rt.url, None, transports)
    assert not c.sio.connected
    assert c.errors and isinstance(c.errors[0][0], dict) and c.errors[0][0].get("message"), c.errors


# Built-in events -------------------------------------------------------------------------------
def test_echo_round_trips_json(client, rt, tokens, transports):
    c = connected(client, rt, tokens, transports, new_user())
    body = {"text": "héllo ✓", "n": 42, "f": 1.5, "list": [1, None, True, "x"], "nested": {"a": {"b": []}}}
    assert c.call("echo", body) == body
    # Several arguments come back as several arguments.
    assert c.call("echo", "a", 2, {"three": 3}) == ("a", 2, {"three": 3})


def test_echo_round_trips_binary(client, rt, tokens, transports):
    c = connected(client, rt, tokens, transports, new_user())
    data = b"\x00\x01\xff"
    back = c.call("echo", data)
    assert isinstance(back, bytes), back
    assert back == data
    # Binary nested in JSON, next to text.
    mixed = c.call("echo", {"blob": bytes(range(256)), "name": "bytes"})
    assert mixed == {"blob": bytes(range(256)), "name": "bytes"}


# Server events -------------------------------------------------------------------------------
def test_persisted_event_arrives_with_offset(client, rt, tokens, transports, service_token):
    user = new_user()
    c = connected(client, rt, tokens, transports, user)
    payload = {"trip": "tr_1", "status": "assigned", "eta": 7}
    data = publish(rt, service_token, f"user:{user}", "hello", payload)
    assert data["event_id"] and data["seq"] >= 1, data

    name, args = c.next_event()
    assert name == "hello"
    assert len(args) == 2, f"expected (payload, offset), got {args!r}"
    assert args[0] == payload
    assert isinstance(args[1], str) and args[1], args
    assert args[1] == str(data["seq"]), (args, data)


def test_ephemeral_event_has_no_offset(client, rt, tokens, transports, service_token):
    user = new_user()
    c = connected(client, rt, tokens, transports, user)
    payload = {"lat": 52.52, "lng": 13.405}
    data = publish(rt, service_token, f"user:{user}", "hello", payload, persist=False)
    assert data["seq"] is None and data["event_id"] is None, data

    name, args = c.next_event()
    assert name == "hello"
    assert args == (payload,), f"an ephemeral event must carry only its payload, got {args!r}"


def test_event_to_another_users_room_is_not_received(client, rt, tokens, transports, service_token):
    me, other = new_user(), new_user()
    c = connected(client, rt, tokens, transports, me)
    publish(rt, service_token, f"user:{other}", "hello", {"for": other})
    # A later event to our own room: once it is here, the other one would have been too.
    publish(rt, service_token, f"user:{me}", "hello", {"for": me})
    name, args = c.next_event()
    assert args[0] == {"for": me}, f"received an event published to user:{other}: {args!r}"
    assert c.received.empty(), list(c.received.queue)


def test_events_arrive_in_publish_order(client, rt, tokens, transports, service_token):
    user = new_user()
    c = connected(client, rt, tokens, transports, user)
    seqs = [publish(rt, service_token, f"user:{user}", "hello", {"n": n})["seq"] for n in range(5)]
    got = [c.next_event()[1] for _ in range(5)]
    assert [args[0]["n"] for args in got] == list(range(5)), got
    assert [args[1] for args in got] == [str(s) for s in seqs], (got, seqs)


def test_disconnect_then_reconnect(client, rt, tokens, transports, service_token):
    user = new_user()
    c = connected(client, rt, tokens, transports, user)
    first_sid = c.sio.get_sid()
    assert c.call("whoami")["user_id"] == user
    c.sio.disconnect()
    assert not c.sio.connected

    c.connect(rt.url, tokens(user), transports)
    assert c.sio.connected
    assert c.sio.get_sid() != first_sid
    who = c.call("whoami")
    assert who["user_id"] == user, who
    assert f"user:{user}" in who["rooms"], who
    publish(rt, service_token, f"user:{user}", "hello", {"again": True})
    name, args = c.next_event()
    assert args[0] == {"again": True}, args


def test_polling_only_client_receives_event(client, rt, tokens, service_token):
    user = new_user()
    c = client()
    c.connect(rt.url, tokens(user), ["polling"])
    assert c.sio.transport() == "polling"
    who = c.call("whoami")
    assert who["user_id"] == user and f"user:{user}" in who["rooms"], who
    data = publish(rt, service_token, f"user:{user}", "hello", {"via": "polling"})
    name, args = c.next_event()
    assert name == "hello"
    assert args == ({"via": "polling"}, str(data["seq"])), args
    assert c.call("echo", b"\x00\x01\xff") == b"\x00\x01\xff"
    assert c.sio.transport() == "polling"


# REST publish validation ---------------------------------------------------------------------------
def test_publish_with_customer_token_is_forbidden(rt, tokens):
    response = rt.request("POST", "/api/v1/realtime/publish", tokens("rt-customer"),
                          json={"room": "user:rt-customer", "event": "hello", "payload": {}})
    assert_error(response, 403, "FORBIDDEN")


def test_publish_without_token_is_unauthorized(rt):
    response = rt.request("POST", "/api/v1/realtime/publish", None,
                          json={"room": "user:x", "event": "hello", "payload": {}})
    assert_error(response, 401, "UNAUTHORIZED")


def test_publish_operator_may_publish(rt, tokens):
    response = rt.request("POST", "/api/v1/realtime/publish", tokens("rt-operator", "operator"),
                          json={"room": "user:x", "event": "hello", "payload": {"a": 1}})
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["data"]["event_id"].startswith("evt_"), body
    assert body["meta"]["request_id"], body


def _fields(error: dict) -> list[str]:
    return [f["field"] for f in (error.get("details") or {}).get("fields", [])]


def test_publish_room_with_space_is_422(rt, service_token):
    response = rt.request("POST", "/api/v1/realtime/publish", service_token,
                          json={"room": "user ann", "event": "hello", "payload": {}})
    error = assert_error(response, 422, "VALIDATION_FAILED")
    assert _fields(error) == ["room"], error
    assert "room" in error["message"], error


def test_publish_reserved_event_is_422(rt, service_token):
    response = rt.request("POST", "/api/v1/realtime/publish", service_token,
                          json={"room": "user:ann", "event": "connect", "payload": {}})
    error = assert_error(response, 422, "VALIDATION_FAILED")
    assert _fields(error) == ["event"], error


def test_batch_publish_reaches_each_room_in_order(client, rt, tokens, transports, service_token):
    me, other = new_user(), new_user()
    c = connected(client, rt, tokens, transports, me)
    events = [
        {"room": f"user:{me}", "event": "hello", "payload": {"n": 0}},
        {"room": f"user:{other}", "event": "hello", "payload": {"for": other}},
        {"room": f"user:{me}", "event": "hello", "payload": {"n": 1}, "persist": False},
        {"room": f"user:{me}", "event": "hello", "payload": {"n": 2}},
    ]
    response = rt.request("POST", "/api/v1/realtime/publish/batch", service_token, json={"events": events})
    assert response.status_code == 202, response.text
    answered = response.json()["data"]["events"]
    assert [e["room"] for e in answered] == [e["room"] for e in events], answered
    assert answered[2]["seq"] is None and answered[0]["seq"] + 1 == answered[3]["seq"], answered
    got = [c.next_event() for _ in range(3)]
    assert [args[0] for _, args in got] == [{"n": 0}, {"n": 1}, {"n": 2}], got
    # Persisted events carry their offset, the ephemeral one only its payload.
    assert [len(args) for _, args in got] == [2, 1, 2], got
    assert got[0][1][1] == str(answered[0]["seq"]), got
    assert c.received.empty(), list(c.received.queue)


def test_batch_publish_with_a_wrong_event_publishes_nothing(client, rt, tokens, transports, service_token):
    me = new_user()
    c = connected(client, rt, tokens, transports, me)
    response = rt.request("POST", "/api/v1/realtime/publish/batch", service_token, json={"events": [
        {"room": f"user:{me}", "event": "hello", "payload": {"n": 0}},
        {"room": f"user:{me}", "event": "disconnect"},
    ]})
    error = assert_error(response, 422, "VALIDATION_FAILED")
    assert _fields(error) == ["events[1].event"], error
    # A later event to the same room is the first one the client gets.
    publish(rt, service_token, f"user:{me}", "hello", {"n": "after"})
    assert c.next_event()[1][0] == {"n": "after"}
