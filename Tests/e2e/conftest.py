"""Fixtures for the end-to-end suite: real `herald` processes on free ports.

Run it through `scripts/test` (or `scripts/test --e2e-only`), which builds the binary,
starts a throwaway PostgreSQL and sets HERALD_BIN and HERALD_TEST_POSTGRES_URL.
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import requests

REPO_ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"^Herald (\S+) listening on http://(\S+):(\d+) \(database: (.*)\)\s*$")
# How long a test waits for something that should happen (a server answering, a frame, an
# effect showing up). Long on purpose: a wait ends as soon as its condition holds, so an idle
# machine never spends it, while a two-core machine busy with other work delays anything by
# tens of seconds. Only checks that something does NOT happen use short windows (they cannot
# fail from load). HERALD_E2E_WAIT_SECONDS overrides it.
WAIT = float(os.environ.get("HERALD_E2E_WAIT_SECONDS") or 120)
START_TIMEOUT = max(WAIT, 180.0)  # a debug binary, migrations on PostgreSQL
# Herald's own bound is a 6 s graceful limit plus 3 s of cancellation; the rest is for a
# loaded machine. A stop that hangs still fails.
STOP_TIMEOUT = 60.0


def herald_bin() -> str:
    path = os.environ.get("HERALD_BIN") or str(REPO_ROOT / ".build" / "debug" / "herald")
    if not os.access(path, os.X_OK):
        pytest.fail(f"herald binary not found at {path}: run the suite through scripts/test (it builds it and sets HERALD_BIN)")
    return path


def base_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a herald process: ours without any HERALD_* setting (so a
    developer's shell cannot change what a test sees), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env.update(extra or {})
    return env


def run_herald(*args: str, env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None,
               timeout: float = 300.0) -> subprocess.CompletedProcess:
    """Runs a one-shot herald command (migrate, token, a serve that must fail)."""
    return subprocess.run(
        [herald_bin(), *args], env=base_env(env), cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


class HeraldServer:
    """One `herald serve` process. Its stdout and stderr go line by line (read by a thread)
    into `lines` and a log file, so a failing test can show what the server said."""

    def __init__(self, args: list[str], env: dict[str, str], log_path: Path, cwd: Path, data_dir: Path,
                 wrapper: list[str] | None = None):
        self.args = args
        self.log_path = log_path
        self.data_dir = data_dir
        self.stopped = False
        self.lines: list[str] = []
        self._listening = threading.Event()
        self._lock = threading.Lock()
        self.host = self.port = self.database = None
        self.proc = subprocess.Popen(
            [*(wrapper or []), herald_bin(), *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with open(self.log_path, "a", encoding="utf-8") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()
                with self._lock:
                    self.lines.append(line.rstrip("\n"))
                match = LISTENING.match(line)
                if match and not self._listening.is_set():
                    self.host, self.port, self.database = match.group(2), int(match.group(3)), match.group(4)
                    self._listening.set()

    def wait_listening(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._listening.wait(0.05):
                return
            if self.proc.poll() is not None:
                self.stopped = True
                self._reader.join(2)
                raise AssertionError(
                    f"herald serve exited with {self.proc.returncode} before listening:\n{self.output()}")
        self.stopped = True
        self.kill()
        raise AssertionError(f"herald serve printed no listening line within {timeout:.0f}s:\n{self.output()}")

    def wait_loaded(self, timeout: float = 600) -> None:
        """Waits while /readyz says `loading` (the node listens before its feeds are loaded).
        Any other answer (ready, or unavailable: some tests stop the database) ends the wait."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.running:
            try:
                answer = requests.get(self.url + "/readyz", timeout=WAIT)
                if answer.status_code == 200 or answer.json().get("status") != "loading":
                    return
            except (requests.RequestException, ValueError):
                return
            time.sleep(0.05)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", None) else self.host
        return f"http://{host}:{self.port}"

    def output(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int:
        """Sends `sig` and waits for the exit; returns the exit code (the process is killed
        and an AssertionError raised when it does not exit in time)."""
        self.stopped = True
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(
                    f"herald serve did not exit within {timeout:.0f}s of {signal.Signals(sig).name}:\n{self.output()}")
        self._reader.join(5)
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    # HTTP helpers (a new connection per request) ------------------------------------------
    def get(self, path: str, token: str | None = None, **kwargs) -> requests.Response:
        return self.request("GET", path, token, **kwargs)

    def put(self, path: str, token: str | None = None, **kwargs) -> requests.Response:
        return self.request("PUT", path, token, **kwargs)

    def request(self, method: str, path: str, token: str | None = None, **kwargs) -> requests.Response:
        headers = _headers(token, kwargs.pop("headers", None))
        with http_session() as session:
            return session.request(method, self.url + path, headers=headers, timeout=kwargs.pop("timeout", WAIT), **kwargs)


def http_session() -> requests.Session:
    """A session that ignores proxy settings from the environment (the server is on loopback)."""
    session = requests.Session()
    session.trust_env = False
    return session


def _headers(token: str | None, headers: dict | None) -> dict:
    result = dict(headers or {})
    if token is not None:
        result["Authorization"] = f"Bearer {token}"
    return result


class HeraldLauncher:
    """Starts servers and makes sure every one is stopped (SIGTERM, exit 0 within STOP_TIMEOUT)."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.servers: list[HeraldServer] = []

    def new_data_dir(self) -> Path:
        path = self.workdir / f"data-{secrets.token_hex(4)}"
        return path  # herald creates it

    def start(self, *extra_args: str, data_dir: Path | str | None = None, env: dict[str, str] | None = None,
              database: str | None = None, host: str = "127.0.0.1", wait: bool = True,
              wrapper: list[str] | None = None) -> HeraldServer:
        """`wrapper` runs herald through another command (e.g. `prlimit --nofile=300:300 --`)."""
        data_dir = Path(data_dir) if data_dir is not None else self.new_data_dir()
        args = ["serve", "--host", host, "--port", "0", "--data-dir", str(data_dir)]
        if database:
            args += ["--database", database]
        args += list(extra_args)
        log_path = self.workdir / f"server-{len(self.servers) + 1}.log"
        server = HeraldServer(args, base_env(env), log_path, cwd=self.workdir, data_dir=data_dir, wrapper=wrapper)
        self.servers.append(server)
        if wait:
            server.wait_listening()
            server.wait_loaded()
        return server

    def close(self) -> list[str]:
        """Stops whatever still runs; returns the problems (non-zero exits, hangs)."""
        problems = []
        for server in self.servers:
            if server.stopped:
                continue
            if not server.running:
                problems.append(f"herald serve {' '.join(server.args)} died on its own with exit code "
                                f"{server.proc.returncode}:\n{server.output()}")
                continue
            try:
                code = server.stop(signal.SIGTERM)
                if code != 0:
                    problems.append(f"herald serve {' '.join(server.args)} exited with {code} on SIGTERM:\n{server.output()}")
            except AssertionError as error:
                problems.append(str(error))
        return problems


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
    if report.when == "call" and report.failed:
        # Show what the servers this test used said (shared servers included).
        servers = []
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, HeraldLauncher):
                servers += value.servers
            elif isinstance(value, HeraldServer):
                servers.append(value)
        seen = set()
        for server in servers:
            if id(server) in seen:
                continue
            seen.add(id(server))
            report.sections.append((f"herald {' '.join(server.args)} (log {server.log_path})", server.output()))


def _finish(launcher: HeraldLauncher) -> None:
    problems = launcher.close()
    assert not problems, "\n\n".join(problems)


@pytest.fixture
def herald(tmp_path) -> HeraldLauncher:
    """Starts `herald serve` processes for one test; each gets a fresh data dir unless told."""
    launcher = HeraldLauncher(tmp_path)
    yield launcher
    _finish(launcher)


@pytest.fixture(scope="module")
def module_herald(tmp_path_factory) -> HeraldLauncher:
    """Like `herald`, for servers shared by a module's tests."""
    launcher = HeraldLauncher(tmp_path_factory.mktemp("herald"))
    yield launcher
    _finish(launcher)


@pytest.fixture
def server(herald) -> HeraldServer:
    """A server on SQLite with a fresh data dir."""
    return herald.start()


# PostgreSQL ------------------------------------------------------------------------------
def _psql() -> str:
    candidates = []
    if os.environ.get("HERALD_TEST_PG_BIN"):
        candidates.append(os.path.join(os.environ["HERALD_TEST_PG_BIN"], "psql"))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"),
                         key=lambda p: int(re.search(r"/(\d+)/bin", p).group(1)), reverse=True)
    candidates.append(shutil.which("psql") or "")
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    pytest.fail("psql not found: install PostgreSQL (scripts/test does)")


def _admin_url() -> str:
    url = os.environ.get("HERALD_TEST_POSTGRES_URL")
    if not url:
        pytest.fail("HERALD_TEST_POSTGRES_URL is not set: run the e2e suite through scripts/test "
                    "(scripts/test --e2e-only), which starts a throwaway PostgreSQL and sets it")
    return url


def psql(url: str, sql: str) -> str:
    result = subprocess.run([_psql(), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"psql {sql!r} failed: {result.stderr}"
    return result.stdout


@pytest.fixture
def pg_url(request) -> str:
    """A fresh, empty PostgreSQL database on HERALD_TEST_POSTGRES_URL's server.

    The test's servers are stopped before the database is dropped, whatever order the test
    requested its fixtures in (`test_stops_when_database_vanishes` covers the other case)."""
    admin = _admin_url()
    name = f"e2e_{secrets.token_hex(6)}"
    psql(admin, f'CREATE DATABASE "{name}"')
    yield admin.rsplit("/", 1)[0] + "/" + name
    launcher = getattr(request.node, "funcargs", {}).get("herald")
    problems = launcher.close() if isinstance(launcher, HeraldLauncher) else []  # a no-op if it already stopped them
    psql(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert not problems, "\n\n".join(problems)


@pytest.fixture(scope="module")
def module_pg_url() -> str:
    """Like `pg_url`, for a database shared by a module's tests (stop the module's servers
    before this fixture is finalized: request it first)."""
    admin = _admin_url()
    name = f"e2e_{secrets.token_hex(6)}"
    psql(admin, f'CREATE DATABASE "{name}"')
    yield admin.rsplit("/", 1)[0] + "/" + name
    psql(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# Helpers shared by the test modules --------------------------------------------------------
def issue_token(data_dir: Path | str, user: str = "user-1", role: str = "customer", ttl: str = "1h",
                env: dict[str, str] | None = None) -> str:
    result = run_herald("token", "--user", user, "--role", role, "--ttl", ttl, "--data-dir", str(data_dir), env=env)
    assert result.returncode == 0, f"herald token failed ({result.returncode}): {result.stdout}{result.stderr}"
    token = result.stdout.strip().splitlines()[-1]
    assert token.count(".") == 2, f"herald token printed no JWT: {result.stdout!r}"
    return token


def assert_error(response: requests.Response, status: int, code: str) -> dict:
    """Checks the error envelope and returns its `error` object."""
    assert response.status_code == status, f"expected {status}, got {response.status_code}: {response.text}"
    assert response.headers.get("Content-Type", "").startswith("application/json"), response.headers
    body = response.json()
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    assert body["meta"]["request_id"] == response.headers["X-Request-ID"], (body, response.headers)
    assert body["meta"]["timestamp"], body
    return body["error"]


# Realtime helpers (Socket.IO tests) -------------------------------------------------------
def pages(server, path: str, token: str, key: str) -> list[dict]:
    """Every item of a paged list (`limit`/`offset`, `total`), read 100 at a time."""
    items, offset = [], 0
    while True:
        separator = "&" if "?" in path else "?"
        response = requests.get(server.url + f"{path}{separator}limit=100&offset={offset}",
                                headers={"Authorization": f"Bearer {token}"}, timeout=WAIT)
        assert response.status_code == 200, response.text
        page = response.json()["data"]
        items += page[key]
        offset += 100
        if offset >= page["total"]:
            return items


def wait_until(predicate, timeout: float = WAIT, interval: float = 0.05, message: str = "condition"):
    """Polls `predicate` until it returns something truthy (returned) or `timeout` passes
    (long by default: it returns as soon as the predicate holds)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{message}: not true within {timeout:.1f}s (last value {value!r})")
        time.sleep(interval)


def publish(server: HeraldServer, token: str, room: str, event: str, payload=None, persist: bool = True) -> dict:
    """POST /api/v1/realtime/publish; asserts 202 and returns `data`."""
    response = server.request("POST", "/api/v1/realtime/publish", token,
                              json={"room": room, "event": event, "payload": payload, "persist": persist})
    assert response.status_code == 202, f"publish to {room} failed: {response.status_code} {response.text}"
    data = response.json()["data"]
    assert data["room"] == room and data["event"] == event, data
    return data


def is_online(server: HeraldServer, token: str, user: str) -> bool:
    """GET /api/v1/realtime/presence/{user}'s `online`."""
    response = server.get(f"/api/v1/realtime/presence/{user}", token=token)
    assert response.status_code == 200, f"presence of {user}: {response.status_code} {response.text}"
    data = response.json()["data"]
    assert data["user_id"] == user, data
    return data["online"]


class RawSocketIO:
    """A hand-rolled Socket.IO v5 client over one Engine.IO v4 WebSocket (text frames only):
    it sees every frame the server sends, so tests can check recovery replays exactly.

    Frames other than pings are kept in `pending` until a reader asks for them; pings ("2")
    are answered ("3") whenever the socket is read. Every text frame received is in `log`.
    Events named in `ignore_events` (by default the notifications module's `sync`, which the
    server sends on every fresh connect) are logged but never kept or returned."""

    def __init__(self, server: HeraldServer, timeout: float = WAIT, query: str = "",
                 ignore_events: tuple[str, ...] = ("sync",)):
        self.ignored_prefixes = tuple(f'42["{name}",' for name in ignore_events)
        import websocket  # websocket-client

        self.timeout = timeout
        address = server.url[len("http://"):]
        self.url = f"ws://{address}/socket.io/?EIO=4&transport=websocket{query}"
        self.ws = websocket.create_connection(self.url, timeout=timeout)
        self.pending: list[str] = []
        self.log: list[str] = []
        self.next_ack = 1
        self.closed = False
        first = self._read(timeout)
        assert first.startswith("0"), f"expected an Engine.IO open packet, got {first!r}"
        self.handshake = json.loads(first[1:])
        assert self.handshake.get("sid"), self.handshake

    # Frames -----------------------------------------------------------------------------
    def _read(self, timeout: float) -> str:
        """The next non-ping frame from the socket (answering pings), or AssertionError."""
        import websocket

        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no frame within {timeout:.1f}s; frames so far: {self.log}")
            self.ws.settimeout(left)
            try:
                frame = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                raise AssertionError(f"no frame within {timeout:.1f}s; frames so far: {self.log}") from None
            except websocket.WebSocketConnectionClosedException:
                raise AssertionError(f"the server closed the WebSocket; frames so far: {self.log}") from None
            if isinstance(frame, bytes):
                raise AssertionError(f"unexpected binary frame {frame!r}; frames so far: {self.log}")
            self.log.append(frame)
            if frame == "2":
                self.ws.send("3")
                continue
            if self.ignored_prefixes and frame.startswith(self.ignored_prefixes):
                continue
            return frame

    def next_frame(self, match=lambda frame: True, timeout: float | None = None) -> str:
        """The first frame (buffered or new) for which `match` is true; others stay pending."""
        for index, frame in enumerate(self.pending):
            if match(frame):
                return self.pending.pop(index)
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            frame = self._read(max(0.0, deadline - time.monotonic()) or 0.001)
            if match(frame):
                return frame
            self.pending.append(frame)

    def send(self, frame: str) -> None:
        self.ws.send(frame)

    # Socket.IO --------------------------------------------------------------------------
    def connect(self, auth: dict | None) -> dict:
        """Sends CONNECT for "/" and returns the reply's data; AssertionError on CONNECT_ERROR."""
        self.send("40" + (json.dumps(auth) if auth is not None else ""))
        reply = self.next_frame(lambda f: f.startswith("40") or f.startswith("44"))
        assert reply.startswith("40"), f"CONNECT was refused: {reply!r}"
        return json.loads(reply[2:])

    def connect_error(self, auth: dict | None) -> dict:
        """Sends CONNECT and expects CONNECT_ERROR; returns its data."""
        self.send("40" + (json.dumps(auth) if auth is not None else ""))
        reply = self.next_frame(lambda f: f.startswith("40") or f.startswith("44"))
        assert reply.startswith("44"), f"CONNECT was accepted: {reply!r}"
        return json.loads(reply[2:])

    def next_event(self, timeout: float | None = None) -> list:
        """The next EVENT packet's array: [name, *arguments]."""
        frame = self.next_frame(lambda f: f.startswith("42") and f[2:3] == "[", timeout)
        return json.loads(frame[2:])

    def no_event_pending(self) -> bool:
        return not any(f.startswith("42") for f in self.pending)

    def call(self, event: str, *args, timeout: float | None = None) -> list:
        """Emits `event` with an ack id and returns the ack's arguments."""
        ack_id = self.next_ack
        self.next_ack += 1
        self.send(f"42{ack_id}" + json.dumps([event, *args]))
        prefix = f"43{ack_id}["
        frame = self.next_frame(lambda f: f.startswith(prefix), timeout)
        return json.loads(frame[len(prefix) - 1:])

    def close_abruptly(self) -> None:
        """Drops the TCP connection without a WebSocket or Engine.IO close (a lost network)."""
        if not self.closed:
            self.closed = True
            self.ws.shutdown()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.ws.close(timeout=1)
            except Exception:
                self.ws.shutdown()
