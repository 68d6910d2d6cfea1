"""`scripts/cluster up 2` as a user runs it: PostgreSQL, two Herald nodes and HAProxy in front
(sticky sessions for Socket.IO long-polling). Two clients that nobody here wrote go through the
balancer — the official Socket.IO JavaScript client in headless Chromium (polling then
WebSocket, from a page on another origin) and python-socketio — and land on one node. That node
is killed with SIGKILL mid-flow: it saves nothing on the way out. Both clients reconnect
through the balancer to the other node; the browser's session is recovered there (same
session, the event published while it was away replayed once), python-socketio (which does
not implement recovery) starts a fresh one, and events keep reaching both.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
from pathlib import Path

import pytest
import requests
import socketio

from browser_support import TIMEOUT, browser, page_state, page_url, run_async  # noqa: F401 (fixtures)
from conftest import WAIT, herald_bin, issue_token, psql, wait_until

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "cluster"


def free_port_block() -> int:
    """A port P with P, P+1, P+2 (balancer, nodes) and P+100 (PostgreSQL) free on loopback."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + 100 > 65535:
            continue
        ports = [base, base + 1, base + 2, base + 100]
        try:
            for port in ports:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise AssertionError("no free block of ports")


class Balanced:
    def __init__(self, directory: Path, port: int, env: dict[str, str]):
        self.directory = directory
        self.port = port
        self.env = env
        self.url = f"http://127.0.0.1:{port}"
        self.secret_env = {"HERALD_JWT_SECRET": (directory / "secret").read_text().strip()}

    def script(self, *args: str, timeout: float = 240) -> str:
        result = subprocess.run([str(SCRIPT), *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        assert result.returncode == 0, f"scripts/cluster {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def token(self, user: str, role: str = "customer") -> str:
        return issue_token(self.directory / "tokens", user=user, role=role, env=self.secret_env)

    def node_ids(self) -> dict[str, int]:
        """Each live node's id (as `/readyz` and `whoami` name it) to its index in the cluster."""
        ids = {}
        for index in (1, 2):
            try:
                ready = requests.get(f"http://127.0.0.1:{self.port + index}/readyz", timeout=5)
            except requests.ConnectionError:
                continue
            ids[ready.json()["node"]] = index
        return ids

    def live_rooms(self, user: str, socket_id: str, node: str) -> set[str]:
        """The rooms of socket `socket_id`'s live session as `node` last wrote it to PostgreSQL
        (empty when it has not yet): what a client of a node killed now recovers."""
        rows = psql(f"postgres://postgres@127.0.0.1:{self.port + 100}/herald",
                    f"SELECT rooms FROM realtime_sessions WHERE user_id = '{user}' AND node_id = '{node}'")
        sessions = [json.loads(line) for line in rows.splitlines() if line]
        return {room["room"] for session in sessions if session["socketID"] == socket_id for room in session["rooms"]}

    def publish(self, token: str, room: str, event: str, payload) -> dict:
        response = requests.post(f"{self.url}/api/v1/realtime/publish", headers={"Authorization": f"Bearer {token}"},
                                 json={"room": room, "event": event, "payload": payload}, timeout=WAIT)
        assert response.status_code == 202, response.text
        return response.json()["data"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, page_url):
    directory = tmp_path_factory.mktemp("balanced")
    origin = page_url.rsplit("/", 1)[0]
    config = directory / "nodes.yaml"
    # The page's origin may use the API and the polling transport with credentials: the
    # balancer's stickiness cookie must travel with the browser's requests.
    config.write_text(f'cors:\n  allowed_origins: ["{origin}"]\n  allow_credentials: true\n')
    port = free_port_block()
    env = dict(os.environ, CLUSTER_PORT=str(port), CLUSTER_DIR=str(directory / "cluster"),
               CLUSTER_CONFIG=str(config), HERALD_BIN=herald_bin())
    up = subprocess.run([str(SCRIPT), "up", "2"], env=env, capture_output=True, text=True, timeout=300)
    try:
        assert up.returncode == 0, f"scripts/cluster up 2 failed:\n{up.stdout}\n{up.stderr}"
        assert f"herald: http://127.0.0.1:{port}" in up.stdout, up.stdout
        yield Balanced(directory / "cluster", port, env)
    finally:
        down = subprocess.run([str(SCRIPT), "down"], env=env, capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, f"scripts/cluster down failed:\n{down.stdout}\n{down.stderr}"


BROWSER_CONNECT = """
const [url, token] = arguments;
window.news = [];
window.connects = [];
const socket = io(url, { auth: { token }, withCredentials: true, reconnectionDelay: 500, randomizationFactor: 0 });
window.socket = socket;
socket.io.once("open", () => { window.firstTransport = socket.io.engine.transport.name; });
socket.on("news", (payload) => window.news.push(payload.n));
socket.on("connect", () => window.connects.push({ recovered: socket.recovered, id: socket.id }));
socket.once("connect", () => done({ transport: window.firstTransport }));
socket.once("connect_error", (error) => done({ error: error.message }));
"""


def python_client_on(cluster: Balanced, token: str, node: str, received: list):
    """A python-socketio client (polling then WebSocket, reconnecting) that the balancer put on
    `node`: new clients go round-robin, so at most a few tries."""
    for _ in range(6):
        client = socketio.Client(reconnection=True, reconnection_delay=0.5, reconnection_delay_max=1,
                                 randomization_factor=0, handle_sigint=False, http_session=requests.Session())
        client.on("news", lambda payload, *offset: received.append(payload["n"]))
        client.connect(cluster.url, auth={"token": token}, wait_timeout=TIMEOUT)
        if client.call("whoami", timeout=TIMEOUT)["node"] == node:
            return client
        client.disconnect()
    raise AssertionError(f"the balancer never put a python-socketio client on {node}")


def test_a_node_killed_mid_flow_its_clients_recover_on_the_other(cluster, browser, page_url):
    user = f"lb-{secrets.token_hex(4)}"
    token = cluster.token(user)
    service = cluster.token("svc-lb", "service")
    nodes = cluster.node_ids()
    assert sorted(nodes.values()) == [1, 2], nodes

    # The browser, through the balancer, from another origin: it opens on polling (the
    # transport it opened with; the upgrade may finish before the CONNECT answer), then WebSocket.
    browser.get(page_url)
    connected = run_async(browser, BROWSER_CONNECT, cluster.url, token)
    assert connected == {"transport": "polling"}, connected
    wait_until(lambda: page_state(browser, "socket.io.engine.transport.name") == "websocket", TIMEOUT,
               message="the browser upgraded to WebSocket through the balancer")
    me = run_async(browser, 'socket.emit("whoami", (me) => done(me));')
    victim = me["node"]
    assert victim in nodes and me["user_id"] == user, (me, nodes)
    survivor = next(node for node in nodes if node != victim)
    first_id = page_state(browser, "socket.id")

    python_news: list = []
    client = python_client_on(cluster, token, victim, python_news)
    try:
        cluster.publish(service, f"user:{user}", "news", {"n": 1})
        wait_until(lambda: page_state(browser, "window.news") == [1] and python_news == [1], TIMEOUT,
                   message="the first event reached both clients")

        # A node writes its live sockets' sessions every quarter second (docs/realtime.md: what a crash
        # may lose); the kill comes once the browser's session stands in the database as it is.
        rooms = set(run_async(browser, 'socket.emit("whoami", (me) => done(me));')["rooms"])
        assert f"user:{user}" in rooms, rooms
        wait_until(lambda: cluster.live_rooms(user, first_id, victim) == rooms, TIMEOUT,
                   message="the victim wrote the browser's live session with its rooms")

        # SIGKILL: no goodbye, no session saved on the way out.
        cluster.script("kill", str(nodes[victim]))
        wait_until(lambda: page_state(browser, "socket.connected") is False or len(page_state(browser, "window.connects")) > 1,
                   TIMEOUT, message="the browser noticed its node was gone")
        # Published while the browser is away (the balancer sends it to the node still up).
        cluster.publish(service, f"user:{user}", "news", {"n": 2})

        wait_until(lambda: len(page_state(browser, "window.connects")) >= 2, WAIT, message="the browser reconnected")
        again = page_state(browser, "window.connects")[1]
        assert again == {"recovered": True, "id": first_id}, f"not recovered on the other node: {again}"
        me = run_async(browser, 'socket.emit("whoami", (me) => done(me));')
        assert me["node"] == survivor and me["recovered"] is True and f"user:{user}" in me["rooms"], me
        wait_until(lambda: page_state(browser, "window.news") == [1, 2], TIMEOUT, message="the missed event replayed")

        # python-socketio reconnects through the balancer to the survivor (a fresh session).
        wait_until(lambda: client.connected and client.call("whoami", timeout=TIMEOUT)["node"] == survivor, WAIT,
                   message="python-socketio reconnected to the other node")
        cluster.publish(service, f"user:{user}", "news", {"n": 3})
        wait_until(lambda: page_state(browser, "window.news") == [1, 2, 3] and python_news[-1] == 3, TIMEOUT,
                   message="events after the kill reach both clients")
        assert python_news.count(3) == 1 and python_news.count(1) == 1, python_news
        assert page_state(browser, "window.news") == [1, 2, 3], "an event twice or out of order"

        # The REST API through the balancer answers from the survivor too.
        me_rest = requests.get(f"{cluster.url}/api/v1/me", headers={"Authorization": f"Bearer {token}"}, timeout=WAIT)
        assert me_rest.status_code == 200 and me_rest.json()["data"]["id"] == user, me_rest.text
    finally:
        client.disconnect()
        browser.execute_script("if (window.socket) socket.disconnect();")
