"""Socket.IO connection state recovery, spoken frame by frame over a raw WebSocket
(websocket-client): CONNECT replies with {sid, pid}, persisted events carry an offset as
their last argument, and a client that comes back with {token, pid, offset} gets its rooms
back and exactly the events it missed. One SQLite server is shared by the module."""

from __future__ import annotations

import json
import secrets
import socket

import pytest

from conftest import WAIT, RawSocketIO, is_online, issue_token, publish, wait_until

TIMEOUT = WAIT  # waits for what should happen: long, for a loaded machine


@pytest.fixture(scope="module")
def rt(module_herald):
    return module_herald.start()


@pytest.fixture(scope="module")
def tokens(rt):
    cache: dict[tuple[str, str], str] = {}

    def get(user: str, role: str = "customer") -> str:
        if (user, role) not in cache:
            cache[(user, role)] = issue_token(rt.data_dir, user=user, role=role)
        return cache[(user, role)]

    return get


@pytest.fixture(scope="module")
def service_token(tokens):
    return tokens("svc-recovery", "service")


@pytest.fixture
def raw(rt):
    """raw() -> a new RawSocketIO on the module's server (closed after the test)."""
    opened: list[RawSocketIO] = []

    def make(server=None) -> RawSocketIO:
        client = RawSocketIO(server or rt, timeout=TIMEOUT)
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()


def new_user() -> str:
    return f"rec-{secrets.token_hex(4)}"


def receive(client: RawSocketIO, expected_payloads: list) -> list[list]:
    """Reads len(expected_payloads) events named `hello` and checks their payloads."""
    events = [client.next_event() for _ in expected_payloads]
    assert [e[0] for e in events] == ["hello"] * len(events), events
    assert [e[1] for e in events] == expected_payloads, events
    return events


def session_with_events(raw, rt, token: str, service_token: str, user: str, count: int = 2):
    """Connects, receives `count` persisted events; returns (client, connect reply, last offset)."""
    client = raw()
    reply = client.connect({"token": token})
    assert reply.get("sid") and reply.get("pid"), f"CONNECT reply lacks sid/pid: {reply}"
    payloads = [{"before": n} for n in range(count)]
    seqs = [publish(rt, service_token, f"user:{user}", "hello", p)["seq"] for p in payloads]
    events = receive(client, payloads)
    for event, seq in zip(events, seqs):
        assert len(event) == 3 and isinstance(event[2], str), f"persisted event without offset: {event}"
        assert event[2] == str(seq), (event, seq)
    return client, reply, events[-1][2]


def drop(client: RawSocketIO, rt, service_token: str, user: str) -> None:
    """Loses the connection abruptly and waits until the server has noticed (presence)."""
    client.close_abruptly()
    wait_until(lambda: not is_online(rt, service_token, user), TIMEOUT,
               message=f"{user} offline after the connection was dropped")


def assert_nothing_else_pending(client: RawSocketIO) -> None:
    # An ack that comes after the replay proves the replay is over: nothing else was queued.
    client.call("echo", "fence")
    assert client.no_event_pending(), f"unexpected extra events: {client.pending}"


# Recovery ------------------------------------------------------------------------------------
def test_reconnect_with_pid_and_offset_replays_exactly_the_missed_events(raw, rt, tokens, service_token):
    user = new_user()
    token = tokens(user)
    first, reply, offset = session_with_events(raw, rt, token, service_token, user)
    drop(first, rt, service_token, user)

    missed = [{"missed": n, "text": f"event {n}"} for n in range(3)]
    seqs = [publish(rt, service_token, f"user:{user}", "hello", p)["seq"] for p in missed]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3, seqs

    second = raw()
    again = second.connect({"token": token, "pid": reply["pid"], "offset": offset})
    assert again["pid"] == reply["pid"], f"recovered session got another pid: {again} (was {reply})"
    assert again["sid"] == reply["sid"], f"recovered socket got another id: {again} (was {reply})"
    events = receive(second, missed)
    assert all(len(e) == 3 for e in events), f"replayed events must carry an offset: {events}"
    # Each its own: a connection dropped mid-replay comes back with what it really has.
    assert [e[2] for e in events] == [str(s) for s in seqs], (events, seqs)
    # The CONNECT reply came first, then the replay, nothing before it.
    frames = [f for f in second.log if f != "2"]
    assert frames[1].startswith("40"), frames
    assert all(f.startswith("42[") for f in frames[2:5]), frames

    who = second.call("whoami")[0]
    assert who["recovered"] is True, who
    assert who["user_id"] == user, who
    assert f"user:{user}" in who["rooms"], who
    assert second.no_event_pending(), f"more than the 3 missed events were replayed: {second.pending}"

    # The recovered socket is live: new events come with the next offset.
    seq = publish(rt, service_token, f"user:{user}", "hello", {"after": True})["seq"]
    assert second.next_event() == ["hello", {"after": True}, str(seq)]


def test_recovery_with_nothing_missed_replays_nothing(raw, rt, tokens, service_token):
    user = new_user()
    token = tokens(user)
    first, reply, offset = session_with_events(raw, rt, token, service_token, user)
    drop(first, rt, service_token, user)

    second = raw()
    again = second.connect({"token": token, "pid": reply["pid"], "offset": offset})
    assert again["pid"] == reply["pid"], again
    who = second.call("whoami")[0]
    assert who["recovered"] is True, who
    assert second.no_event_pending(), second.pending


def test_events_lost_in_flight_are_replayed(raw, rt, tokens, service_token):
    """Frames the server wrote but the client never read (they were in the network when the
    connection died) are missed too: the offset the client hands back says what it has."""
    user = new_user()
    token = tokens(user)
    first, reply, offset = session_with_events(raw, rt, token, service_token, user, count=1)

    in_flight = [{"in_flight": n} for n in range(2)]
    for p in in_flight:
        publish(rt, service_token, f"user:{user}", "hello", p)
    # Wait until both frames sit unread in our receive buffer, then drop the connection.
    sock = first.ws.sock

    def buffered() -> bytes:
        try:
            return sock.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return b""

    wait_until(lambda: b'"in_flight":1' in buffered(), TIMEOUT, message="in-flight frames in the receive buffer")
    drop(first, rt, service_token, user)
    after = [{"after_drop": 0}]
    publish(rt, service_token, f"user:{user}", "hello", after[0])

    second = raw()
    again = second.connect({"token": token, "pid": reply["pid"], "offset": offset})
    assert again["pid"] == reply["pid"], again
    # The whoami ack comes after the replay, so every replayed event is pending by then.
    who = second.call("whoami")[0]
    replayed = [event[1] for event in _pending_events(second)]
    assert who["recovered"] is True, who
    assert replayed == in_flight + after, (
        f"offset {offset!r} was handed back, so the 2 in-flight events and the one published after the "
        f"drop should be replayed; got {replayed}")


def _pending_events(client: RawSocketIO) -> list[list]:
    """Takes the buffered EVENT packets (e.g. a replay read while waiting for an ack)."""
    events = [json.loads(f[2:]) for f in client.pending if f.startswith("42[")]
    client.pending = [f for f in client.pending if not f.startswith("42[")]
    return events


# Refusals --------------------------------------------------------------------------------------
def test_wrong_pid_gives_a_fresh_session(raw, rt, tokens, service_token):
    user = new_user()
    token = tokens(user)
    first, reply, offset = session_with_events(raw, rt, token, service_token, user)
    drop(first, rt, service_token, user)
    publish(rt, service_token, f"user:{user}", "hello", {"missed": 0})

    second = raw()
    wrong = "x" + reply["pid"][1:] if not reply["pid"].startswith("x") else "y" + reply["pid"][1:]
    fresh = second.connect({"token": token, "pid": wrong, "offset": offset})
    assert fresh["pid"] not in (wrong, reply["pid"]), fresh
    assert fresh["sid"] != reply["sid"], fresh
    who = second.call("whoami")[0]
    assert who["recovered"] is False, who
    assert who["user_id"] == user and who["rooms"] == [f"user:{user}"], who
    assert second.no_event_pending(), f"a fresh session must not replay anything: {second.pending}"
    # The fresh session is live.
    publish(rt, service_token, f"user:{user}", "hello", {"live": 1})
    assert second.next_event()[1] == {"live": 1}


def test_offset_beyond_history_gives_a_fresh_session(raw, rt, tokens, service_token):
    user = new_user()
    token = tokens(user)
    first, reply, offset = session_with_events(raw, rt, token, service_token, user)
    drop(first, rt, service_token, user)

    second = raw()
    fresh = second.connect({"token": token, "pid": reply["pid"], "offset": str(int(offset) + 1000)})
    assert fresh["pid"] != reply["pid"], fresh
    who = second.call("whoami")[0]
    assert who["recovered"] is False, who
    assert who["rooms"] == [f"user:{user}"], who
    assert second.no_event_pending(), second.pending


def test_malformed_offset_gives_a_fresh_session(raw, rt, tokens, service_token):
    user = new_user()
    token = tokens(user)
    first, reply, offset = session_with_events(raw, rt, token, service_token, user)
    drop(first, rt, service_token, user)

    second = raw()
    fresh = second.connect({"token": token, "pid": reply["pid"], "offset": "not-an-offset"})
    assert fresh["pid"] != reply["pid"], fresh
    assert second.call("whoami")[0]["recovered"] is False


def test_pid_and_offset_of_another_user_are_not_recovered(raw, rt, tokens, service_token):
    victim, thief = new_user(), new_user()
    first, reply, offset = session_with_events(raw, rt, tokens(victim), service_token, victim)
    drop(first, rt, service_token, victim)
    publish(rt, service_token, f"user:{victim}", "hello", {"secret": "for the victim"})

    second = raw()
    fresh = second.connect({"token": tokens(thief), "pid": reply["pid"], "offset": offset})
    assert fresh["pid"] != reply["pid"], fresh
    assert fresh["sid"] != reply["sid"], fresh
    who = second.call("whoami")[0]
    assert who["recovered"] is False, who
    assert who["user_id"] == thief, who
    assert who["rooms"] == [f"user:{thief}"], f"another user's rooms were handed over: {who}"
    assert second.no_event_pending(), f"another user's events were replayed: {second.pending}"
    assert all("for the victim" not in f for f in second.log), second.log


def test_foreign_recovery_attempt_does_not_destroy_the_owners_session(raw, rt, tokens, service_token):
    """Someone else presenting the pid must not use up the owner's recoverable session."""
    owner, other = new_user(), new_user()
    first, reply, offset = session_with_events(raw, rt, tokens(owner), service_token, owner)
    drop(first, rt, service_token, owner)
    missed = {"missed": "owner"}
    publish(rt, service_token, f"user:{owner}", "hello", missed)

    attempt = raw()
    attempt.connect({"token": tokens(other), "pid": reply["pid"], "offset": offset})
    assert attempt.call("whoami")[0]["recovered"] is False
    attempt.close()

    back = raw()
    again = back.connect({"token": tokens(owner), "pid": reply["pid"], "offset": offset})
    who = back.call("whoami")[0]
    assert again["pid"] == reply["pid"] and who["recovered"] is True, (
        f"the owner could not recover after another user presented their pid: {again}, {who}")
    assert [e[1] for e in _pending_events(back)] == [missed]


def test_bad_token_is_refused_with_connect_error(raw):
    client = raw()
    error = client.connect_error({"token": "nope"})
    assert isinstance(error.get("message"), str) and error["message"], error


def test_missing_token_is_refused_with_connect_error(raw):
    client = raw()
    error = client.connect_error(None)
    assert isinstance(error.get("message"), str) and error["message"], error


def test_token_in_query_is_accepted(rt, tokens):
    user = new_user()
    client = RawSocketIO(rt, timeout=TIMEOUT, query=f"&token={tokens(user)}")
    try:
        reply = client.connect(None)
        assert reply.get("sid"), reply
        assert client.call("whoami")[0]["user_id"] == user
    finally:
        client.close()
