"""The container image and the compose cluster, built and run with Podman as docs/deploy.md
tells an operator to (scripts/image, deploy/Containerfile, deploy/compose.yaml).

The image is built from the debug binary this run tested (`scripts/image --dev --stack`: the
suite builds nothing in release mode), on a Debian root file system that mmdebstrap made, so
no registry is needed. The same Containerfile stage takes scripts/release's static binary.

* The image: it runs as its unprivileged user, answers its health check and on its published
  port, takes its configuration from a mounted file and HERALD_* variables, sends one
  notification to a python-socketio client and another as a push to the mock APNs (HTTP/2,
  TLS; the mock runs in the node's pod, where its certificate's name, localhost, holds), stops
  gracefully on SIGTERM (exit 0), and after a restart, and in a new container on the same
  volume, finds both inboxes intact.
* The compose cluster: PostgreSQL, `herald migrate` once, two nodes and HAProxy, started with
  the three commands docs/deploy.md gives for Podman 4.3. HAProxy finds both nodes by DNS; a
  python-socketio client on one node sees that node's container killed, reconnects through
  the balancer to the other, and events reach it there.

When Podman cannot run a container on the machine at all (scripts/image exits 3), both fail
with its reason, unless HERALD_TEST_WITHOUT_CONTAINERS=1 asks to leave them out.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import requests
import socketio

from conftest import WAIT, herald_bin, issue_token, wait_until
from test_push_providers import write_apns_key

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "deploy" / "compose.yaml"
PODMAN_ENV = ROOT / ".cache" / "image" / "podman.env"
MOCK_LISTENING = re.compile(r"^mock-apns listening on (\d+) ca=(\S+)", re.MULTILINE)
BUILD_TIMEOUT = 1800  # apt, three root file systems and three images on a slow machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def podman_environment() -> dict[str, str]:
    """The environment scripts/image found Podman runs in (CONTAINERS_CONF on machines whose
    defaults fail; .cache/image/podman.env says which)."""
    env = dict(os.environ)
    env.pop("CONTAINERS_CONF", None)
    if PODMAN_ENV.exists():
        for line in PODMAN_ENV.read_text().splitlines():
            if line.startswith("export CONTAINERS_CONF="):
                env["CONTAINERS_CONF"] = line.split("=", 1)[1].strip("'")
    return env


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    built = subprocess.run([str(ROOT / "scripts" / "image"), "--dev", "--stack"], capture_output=True, text=True,
                           timeout=BUILD_TIMEOUT)
    if built.returncode == 3:
        # Loud by default: a machine that cannot run containers fails the run. Only an explicit
        # HERALD_TEST_WITHOUT_CONTAINERS=1 (a developer's laptop without Podman) leaves them out.
        message = f"Podman cannot run a container on this machine (scripts/image): {built.stderr[-2000:]}"
        if os.environ.get("HERALD_TEST_WITHOUT_CONTAINERS") == "1":
            pytest.skip(message)
        pytest.fail(message + "\n(HERALD_TEST_WITHOUT_CONTAINERS=1 leaves the container tests out)")
    assert built.returncode == 0, f"scripts/image --dev --stack failed:\n{built.stdout}\n{built.stderr}"
    herald = built.stdout.strip().splitlines()[-1]
    assert herald == "localhost/herald:dev", built.stdout
    return {"herald": herald, "postgres": "localhost/herald-postgres:bookworm", "haproxy": "localhost/herald-haproxy:bookworm"}


class Podman:
    def __init__(self):
        self.env = podman_environment()

    def __call__(self, *args: str, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(["podman", *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check:
            assert result.returncode == 0, f"podman {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        return result

    def logs(self, container: str) -> str:
        result = self("logs", container, check=False)
        return result.stdout + result.stderr


@pytest.fixture(scope="module")
def podman(images) -> Podman:
    return Podman()


def ready(url: str):
    try:
        response = requests.get(f"{url}/readyz", timeout=5)
    except requests.RequestException:
        return None
    return response.json() if response.status_code == 200 else None


def notify(url: str, service: str, users: list[str], title: str) -> list[dict]:
    response = requests.post(f"{url}/api/v1/notifications", headers={"Authorization": f"Bearer {service}"}, timeout=WAIT,
                             json={"user_ids": users, "type": "job_update", "title": title, "body": "Your driver is close",
                                   "data": {"job_id": "job_1"}})
    assert response.status_code == 201, response.text
    return response.json()["data"]["results"]


def inbox(url: str, token: str) -> list[str]:
    response = requests.get(f"{url}/api/v1/notifications", headers={"Authorization": f"Bearer {token}"}, timeout=WAIT)
    assert response.status_code == 200, response.text
    return [item["title"] for item in response.json()["data"]["notifications"]]


# The image ----------------------------------------------------------------------------------------
class PodMockAPNs:
    """`herald-mock-apns` in the test's pod, beside the Herald container: they share the pod's
    loopback, where the mock's certificate (for localhost) holds. Its log and its CA land in a
    directory of the test's, mounted at the mock's /tmp."""

    def __init__(self, podman: Podman, pod: str, image: str, directory: Path):
        self.podman = podman
        self.log_path = directory / "mock.jsonl"
        directory.mkdir()
        mock_bin = Path(herald_bin()).parent / "herald-mock-apns"
        self.container = f"{pod}-apns"
        podman("run", "-d", "--pod", pod, "--name", self.container, "--user", "root", "-v", f"{directory}:/tmp",
               "-v", f"{mock_bin}:/usr/local/bin/herald-mock-apns:ro", "--entrypoint", "herald-mock-apns", image,
               "--port", "8443", "--log", "/tmp/mock.jsonl")
        listening = wait_until(lambda: MOCK_LISTENING.search(podman.logs(self.container)), WAIT, interval=0.2,
                               message="the mock APNs listens")
        self.ca_file = directory / Path(listening.group(2)).relative_to("/tmp")
        self.base_url = f"https://localhost:{listening.group(1)}"

    def lines(self) -> list[dict]:
        if not self.log_path.exists():
            return []
        text = self.log_path.read_text()
        return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]

    def count(self) -> int:
        return len(self.lines())


def test_the_image_serves_pushes_stops_gracefully_and_keeps_its_inbox(images, podman, tmp_path):
    pod = f"herald-it-{secrets.token_hex(3)}"
    name = f"{pod}-herald"
    volume = f"{pod}-data"
    secret = secrets.token_hex(32)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # The node's port published on the host, as an operator runs it.
    podman("pod", "create", "--name", pod, "-p", f"127.0.0.1:{port}:8080")
    try:
        mock = PodMockAPNs(podman, pod, images["herald"], tmp_path / "mock")
        # The configuration the container reads: a mounted directory (the key and the mock's CA
        # inside it), named by HERALD_CONFIG; the secret comes as a HERALD_* variable.
        config_dir = tmp_path / "etc-herald"
        config_dir.mkdir()
        key = write_apns_key(config_dir)
        shutil.copy(mock.ca_file, config_dir / "mock-ca.pem")
        (config_dir / "herald.json").write_text(json.dumps({"push": {
            "request_timeout_ms": 2000, "lease_seconds": 5, "poll_interval_ms": 200,
            "apns": {"team_id": "TEAM123456", "key_id": "KEY1234567", "private_key_file": f"/etc/herald/{key.name}",
                     "topic": "com.example.app", "base_url": mock.base_url, "ca_file": "/etc/herald/mock-ca.pem"},
        }}))
        for path in [config_dir, *config_dir.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # the image's user is not the test's

        def run():
            podman("run", "-d", "--pod", pod, "--name", name, "-v", f"{volume}:/var/lib/herald",
                   "-v", f"{config_dir}:/etc/herald:ro", "-e", "HERALD_CONFIG=/etc/herald/herald.json",
                   "-e", f"HERALD_JWT_SECRET={secret}", images["herald"])
            wait_until(lambda: ready(url), WAIT, interval=0.2,
                       message=f"the container answers /readyz on its published port ({podman.logs(name)[-2000:]})")

        tokens_env = {"HERALD_JWT_SECRET": secret}
        tokens_dir = tmp_path / "tokens"
        ann, ben = f"ann-{secrets.token_hex(3)}", f"ben-{secrets.token_hex(3)}"
        ann_token, ben_token = issue_token(tokens_dir, ann, env=tokens_env), issue_token(tokens_dir, ben, env=tokens_env)
        service = issue_token(tokens_dir, "svc-deploy", "service", env=tokens_env)

        run()
        assert podman("exec", name, "id", "-u").stdout.strip() == "10001", "the image must not run as root"
        assert podman("healthcheck", "run", name, check=False).returncode == 0, "the image's HEALTHCHECK failed"
        version = podman("run", "--rm", "--network", "none", images["herald"], "--version").stdout
        assert version.startswith("0.") and "development build" in version, version

        # Ann has the app open (a python-socketio client); Ben has only an iPhone.
        received = []
        client = socketio.Client(reconnection=False, handle_sigint=False)
        client.on("notification", lambda payload, *rest: received.append(payload["title"]))
        client.connect(url, auth={"token": ann_token}, wait_timeout=WAIT)
        push_token = secrets.token_hex(32)
        register = requests.post(f"{url}/api/v1/push/register", headers={"Authorization": f"Bearer {ben_token}"}, timeout=WAIT,
                                 json={"token": push_token, "provider": "apns", "platform": "ios"})
        assert register.status_code == 201, register.text
        try:
            ann_result, = notify(url, service, [ann], "Your driver is here")
            ben_result, = notify(url, service, [ben], "Your order shipped")
            assert ann_result["channel"] == "socket", ann_result
            assert ben_result["channel"] == "push" and ben_result["push_deliveries"] == 1, ben_result
            wait_until(lambda: received == ["Your driver is here"], WAIT, message="the socket client got its notification")
            wait_until(lambda: mock.count() == 1, WAIT,
                       message=f"the push reached the mock APNs (the node's log: {podman.logs(name)[-3000:]})")
            line = mock.lines()[0]
            assert line["token"] == push_token and line["notification_id"] == ben_result["notification"]["id"], line
            assert line["protocol"] == "h2", line
        finally:
            client.disconnect()

        # SIGTERM: in-flight work finished, exit 0 (podman stop sends SIGKILL only after -t).
        podman("stop", "-t", "30", name)
        assert podman("inspect", name, "--format", "{{.State.ExitCode}}").stdout.strip() == "0", podman.logs(name)[-3000:]
        assert "Herald stopped" in podman.logs(name), podman.logs(name)[-3000:]

        podman("start", name)
        wait_until(lambda: ready(url), WAIT, interval=0.2, message="the restarted container answers /readyz")
        assert inbox(url, ann_token) == ["Your driver is here"]
        assert inbox(url, ben_token) == ["Your order shipped"]

        # A new container on the same volume: the data lives in the volume, not the container.
        podman("rm", "-f", "-t", "30", name)
        run()
        assert inbox(url, ann_token) == ["Your driver is here"]
        assert inbox(url, ben_token) == ["Your order shipped"]
        assert mock.count() == 1, "a push went out twice across the restarts"
    finally:
        podman("pod", "rm", "-f", "-t", "30", pod, check=False)
        podman("volume", "rm", "-f", volume, check=False)


# The compose cluster ------------------------------------------------------------------------------
class Compose:
    def __init__(self, podman: Podman, images: dict[str, str], project: str, port: int):
        self.podman = podman
        self.project = project
        self.url = f"http://127.0.0.1:{port}"
        self.secret = secrets.token_hex(32)
        self.env = dict(podman.env, HERALD_IMAGE=images["herald"], POSTGRES_IMAGE=images["postgres"],
                        HAPROXY_IMAGE=images["haproxy"], HERALD_PORT=str(port), HERALD_NODES="2",
                        HERALD_JWT_SECRET=self.secret, POSTGRES_PASSWORD=secrets.token_hex(12))

    def __call__(self, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(Path(os.environ.get("HERALD_TEST_PYTHON", "python3")).parent / "podman-compose"),
                   "-p", self.project, "-f", str(COMPOSE_FILE), *args]
        result = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check:
            assert result.returncode == 0, f"podman-compose {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr[-4000:]}"
        return result

    def node_containers(self) -> dict[str, str]:
        """Each running node's id (as its /readyz names it) to its container."""
        listed = self.podman("ps", "--filter", f"label=io.podman.compose.project={self.project}",
                             "--filter", "label=com.docker.compose.service=herald", "--format", "{{.Names}}").stdout.split()
        nodes = {}
        for container in listed:
            answer = self.podman("exec", container, "curl", "-fsS", "http://127.0.0.1:8080/readyz", check=False)
            if answer.returncode == 0:
                nodes[json.loads(answer.stdout)["node"]] = container
        return nodes


@pytest.fixture(scope="module")
def cluster(images, podman, tmp_path_factory):
    compose = Compose(podman, images, f"herald-it-{secrets.token_hex(3)}", free_port())
    # The steps are docs/deploy.md's, word for word (there without -p, which keeps a test's
    # project apart from an operator's).
    steps = [["up", "-d", "postgres"], ["run", "--rm", "--no-deps", "migrate"], ["up", "-d", "--no-deps", "herald", "haproxy"]]
    documented = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    for step in steps:
        assert f"podman-compose -f deploy/compose.yaml {' '.join(step)}\n" in documented, f"docs/deploy.md lacks step {step}"
    try:
        compose(*steps[0])
        migrated = compose(*steps[1])
        compose.migrate_output = migrated.stdout + migrated.stderr
        compose(*steps[2])
        yield compose
    finally:
        compose("down", "-v", "-t", "30", check=False)


def test_the_compose_cluster_migrates_once_and_clients_move_when_a_node_dies(cluster, tmp_path):
    assert "applied migrations users/1" in cluster.migrate_output, cluster.migrate_output[-3000:]

    # HAProxy finds both nodes by DNS and spreads new requests over them.
    seen = set()
    wait_until(lambda: seen.add((ready(cluster.url) or {}).get("node")) or len(seen - {None}) == 2, WAIT, interval=0.2,
               message="the balancer reached both nodes")
    nodes = cluster.node_containers()
    assert set(nodes) == seen - {None}, (nodes, seen)
    for container in nodes.values():
        assert "applied migration" not in cluster.podman.logs(container), "a node migrated: the migration job ran first"

    tokens_env = {"HERALD_JWT_SECRET": cluster.secret}
    user = f"rider-{secrets.token_hex(3)}"
    token = issue_token(tmp_path, user, env=tokens_env)
    service = issue_token(tmp_path, "svc-compose", "service", env=tokens_env)

    def publish(n: int):
        response = requests.post(f"{cluster.url}/api/v1/realtime/publish", headers={"Authorization": f"Bearer {service}"},
                                 json={"room": f"user:{user}", "event": "news", "payload": {"n": n}}, timeout=WAIT)
        assert response.status_code == 202, response.text

    received: list[int] = []
    client = socketio.Client(reconnection=True, reconnection_delay=0.5, reconnection_delay_max=1, randomization_factor=0,
                             handle_sigint=False, http_session=requests.Session())
    client.on("news", lambda payload, *rest: received.append(payload["n"]))
    client.connect(cluster.url, auth={"token": token}, wait_timeout=WAIT)
    try:
        victim = client.call("whoami", timeout=WAIT)["node"]
        assert victim in nodes, (victim, nodes)
        publish(1)
        wait_until(lambda: received == [1], WAIT, message="the first event reached the client")

        cluster.podman("kill", nodes[victim])
        def node_now():
            # Until the client notices, a call to the dead node goes unanswered: ask briefly, again.
            try:
                return client.connected and client.call("whoami", timeout=5)["node"]
            except (socketio.exceptions.TimeoutError, socketio.exceptions.BadNamespaceError):
                return None

        survivor = wait_until(lambda: (node := node_now()) and node != victim and node, WAIT,
                              message="the client reconnected through the balancer to another node")
        assert survivor != victim and survivor in nodes, (survivor, victim, nodes)
        publish(2)
        wait_until(lambda: received[-1:] == [2], WAIT, message="an event after the kill reached the client")
        assert received.count(2) == 1, received
    finally:
        client.disconnect()
