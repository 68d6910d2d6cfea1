"""Two `herald serve` nodes on one PostgreSQL database: events published on one node reach
Socket.IO clients on the other (LISTEN/NOTIFY), presence is cluster-wide, and a session
lost on one node is recovered on the other."""

from __future__ import annotations

import queue
import secrets

import pytest
import socketio

from conftest import (WAIT, HeraldLauncher, RawSocketIO, _finish, http_session, is_online, issue_token, publish,
                      wait_until)

# Every wait here is for something that should happen (it ends as soon as it does): long, for
# a loaded machine.
TIMEOUT = WAIT
PRESENCE_TIMEOUT = WAIT  # written within ~0.25 s of a change; read on the other node


class Cluster:
    def __init__(self, launcher: HeraldLauncher, database: str):
        self.secret = secrets.token_urlsafe(48)
        self.env = {"HERALD_JWT_SECRET": self.secret}
        self.workdir = launcher.workdir
        # One after the other: the first one migrates the database.
        self.a = launcher.start(data_dir=launcher.workdir / "node-a", database=database, env=self.env)
        self.b = launcher.start(data_dir=launcher.workdir / "node-b", database=database, env=self.env)
        self._tokens: dict[tuple[str, str], str] = {}

    def token(self, user: str, role: str = "customer") -> str:
        if (user, role) not in self._tokens:
            self._tokens[(user, role)] = issue_token(self.workdir / "token-data", user=user, role=role, env=self.env)
        return self._tokens[(user, role)]

    @property
    def service(self) -> str:
        return self.token("svc-cluster", "service")


@pytest.fixture(scope="module")
def cluster(module_pg_url, tmp_path_factory):
    launcher = HeraldLauncher(tmp_path_factory.mktemp("cluster"))
    try:
        yield Cluster(launcher, module_pg_url)
    finally:
        # Before module_pg_url drops the database.
        _finish(launcher)


@pytest.fixture
def node_a(cluster):
    return cluster.a


@pytest.fixture
def node_b(cluster):
    return cluster.b


@pytest.fixture
def sio_clients():
    created: list[socketio.Client] = []

    def make() -> tuple[socketio.Client, queue.Queue]:
        sio = socketio.Client(reconnection=False, handle_sigint=False, http_session=http_session())
        received: queue.Queue = queue.Queue()
        sio.on("hello", lambda *args: received.put(args))
        created.append(sio)
        return sio, received

    yield make
    for sio in created:
        if sio.connected:
            sio.disconnect()


def new_user() -> str:
    return f"cl-{secrets.token_hex(4)}"


def next_event(received: queue.Queue, timeout: float = TIMEOUT):
    try:
        return received.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no event received within {timeout}s") from None


def test_both_nodes_share_the_database_and_accept_the_same_tokens(cluster, node_a, node_b):
    assert node_a.database.startswith("postgres") and node_b.database == node_a.database
    assert node_a.port != node_b.port
    for node in (node_a, node_b):
        me = node.get("/api/v1/me", token=cluster.token("cl-both"))
        assert me.status_code == 200, me.text
        assert me.json()["data"]["id"] == "cl-both"


def test_event_published_on_b_reaches_client_on_a(cluster, node_a, node_b, sio_clients):
    user = new_user()
    sio, received = sio_clients()
    sio.connect(node_a.url, auth={"token": cluster.token(user)}, transports=["websocket"], wait_timeout=TIMEOUT)

    data = publish(node_b, cluster.service, f"user:{user}", "hello", {"from": "b", "n": 1})
    assert next_event(received) == ({"from": "b", "n": 1}, str(data["seq"]))

    # Ephemeral events cross nodes too, without an offset.
    publish(node_b, cluster.service, f"user:{user}", "hello", {"from": "b", "ephemeral": True}, persist=False)
    assert next_event(received) == ({"from": "b", "ephemeral": True},)

    # Sequences are per room across the cluster: the next one published on A follows B's.
    data2 = publish(node_a, cluster.service, f"user:{user}", "hello", {"from": "a"})
    assert data2["seq"] == data["seq"] + 1, (data, data2)
    assert next_event(received) == ({"from": "a"}, str(data2["seq"]))

    # An event for someone else's room does not arrive (the next one for ours proves it).
    publish(node_b, cluster.service, f"user:{new_user()}", "hello", {"not": "mine"})
    publish(node_b, cluster.service, f"user:{user}", "hello", {"mine": True})
    assert next_event(received)[0] == {"mine": True}
    assert received.empty(), list(received.queue)


def test_presence_is_cluster_wide(cluster, node_a, node_b, sio_clients):
    user = new_user()
    assert not is_online(node_a, cluster.service, user)
    assert not is_online(node_b, cluster.service, user)

    sio, _ = sio_clients()
    sio.connect(node_a.url, auth={"token": cluster.token(user)}, transports=["websocket"], wait_timeout=TIMEOUT)
    wait_until(lambda: is_online(node_b, cluster.service, user), PRESENCE_TIMEOUT, message=f"{user} online on node B")
    assert is_online(node_a, cluster.service, user)
    # The user may read their own presence, on either node.
    assert is_online(node_b, cluster.token(user), user)

    sio.disconnect()
    wait_until(lambda: not is_online(node_a, cluster.service, user), PRESENCE_TIMEOUT, message=f"{user} offline on node A")
    wait_until(lambda: not is_online(node_b, cluster.service, user), PRESENCE_TIMEOUT, message=f"{user} offline on node B")


def test_presence_of_someone_else_is_forbidden_to_customers(cluster, node_b):
    response = node_b.get("/api/v1/realtime/presence/cl-someone-else", token=cluster.token("cl-nosy"))
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "FORBIDDEN"


def test_session_lost_on_a_is_recovered_on_b(cluster, node_a, node_b):
    user = new_user()
    token = cluster.token(user)
    first = RawSocketIO(node_a, timeout=TIMEOUT)
    second = None
    try:
        reply = first.connect({"token": token})
        assert reply.get("sid") and reply.get("pid"), reply
        seqs = [publish(node_a, cluster.service, f"user:{user}", "hello", {"before": n})["seq"] for n in range(2)]
        got = [first.next_event() for _ in seqs]
        assert [e[1] for e in got] == [{"before": 0}, {"before": 1}], got
        offset = got[-1][2]
        assert offset == str(seqs[-1]), (got, seqs)

        first.close_abruptly()
        wait_until(lambda: not is_online(node_a, cluster.service, user), PRESENCE_TIMEOUT,
                   message=f"{user} offline after the connection to A was dropped")

        missed = [{"missed": n} for n in range(3)]
        missed_seqs = [publish(node_a, cluster.service, f"user:{user}", "hello", p)["seq"] for p in missed]

        second = RawSocketIO(node_b, timeout=TIMEOUT)
        again = second.connect({"token": token, "pid": reply["pid"], "offset": offset})
        assert again["pid"] == reply["pid"], f"not recovered on B: {again} (session on A was {reply})"
        replayed = [second.next_event() for _ in missed]
        assert [e[0] for e in replayed] == ["hello"] * 3, replayed
        assert [e[1] for e in replayed] == missed, replayed
        assert replayed[-1][2] == str(missed_seqs[-1]), (replayed, missed_seqs)

        who = second.call("whoami")[0]
        assert who["recovered"] is True and who["user_id"] == user, who
        assert f"user:{user}" in who["rooms"], who
        assert second.no_event_pending(), f"more than the missed events were replayed: {second.pending}"

        # Live on B now, for events published on A.
        seq = publish(node_a, cluster.service, f"user:{user}", "hello", {"live": "via A"})["seq"]
        assert second.next_event() == ["hello", {"live": "via A"}, str(seq)]
        wait_until(lambda: is_online(node_a, cluster.service, user), PRESENCE_TIMEOUT, message=f"{user} online again (on B)")
    finally:
        first.close()
        if second is not None:
            second.close()
