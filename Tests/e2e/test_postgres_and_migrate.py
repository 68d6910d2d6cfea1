"""PostgreSQL as the database, and `herald migrate` on both engines."""

import re
import secrets
import signal
import socket
import threading
import time
from urllib.parse import urlsplit

from conftest import _admin_url, assert_error, issue_token, psql, run_herald

# Each step as module/version, modules in the order they run (`HeraldSchema.sets`).
APPLIED = re.compile(r": applied migrations ([a-z]+/\d+(?:, [a-z]+/\d+)*)$")
UP_TO_DATE = re.compile(r": schema is up to date$")


def last_line(result) -> str:
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert lines, f"no output: {result.stderr}"
    return lines[-1]


def assert_migrates_then_up_to_date(*args: str):
    first = run_herald("migrate", *args)
    assert first.returncode == 0, f"{first.stdout}\n{first.stderr}"
    match = APPLIED.search(last_line(first))
    assert match, f"first migrate did not report applied migrations: {first.stdout}"
    versions = [(step.split("/")[0], int(step.split("/")[1])) for step in match.group(1).split(", ")]
    by_module: dict[str, list[int]] = {}
    for module, version in versions:
        by_module.setdefault(module, []).append(version)
    # Every module's steps from 1, in order, each once; the users table first.
    assert all(steps == list(range(1, len(steps) + 1)) for steps in by_module.values()), versions
    assert versions[0] == ("users", 1) and {"notifications", "dispatch", "trips", "transit"} <= set(by_module), versions

    second = run_herald("migrate", *args)
    assert second.returncode == 0, f"{second.stdout}\n{second.stderr}"
    assert UP_TO_DATE.search(last_line(second)), f"second migrate was not a no-op: {second.stdout}"
    return versions


def test_serve_on_postgres(herald, pg_url, tmp_path):
    data_dir = tmp_path / "pg-data"
    server = herald.start(data_dir=data_dir, database=pg_url)
    assert server.database.startswith("postgres")
    assert "e2e_" in server.database

    assert server.get("/healthz").json() == {"status": "ok"}
    ready = server.get("/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body.pop("node").startswith("node_"), ready.json()  # which node answered
    assert body == {"status": "ready", "database": "postgres", "transit": {"loaded": True, "problems": []}}

    assert_error(server.get("/api/v1/me"), 401, "UNAUTHORIZED")

    token = issue_token(data_dir, user="pg-user", role="driver")
    me = server.get("/api/v1/me", token=token)
    assert me.status_code == 200, me.text
    assert me.json()["data"]["id"] == "pg-user"
    assert me.json()["data"]["role"] == "driver"
    assert me.json()["data"]["time_zone"] == "UTC"

    put = server.put("/api/v1/me", token=token,
                     json={"time_zone": "Europe/Berlin", "display_name": "Dora", "locale": "de-DE"})
    assert put.status_code == 200, put.text
    assert put.json()["data"]["time_zone"] == "Europe/Berlin"

    # The row really is in PostgreSQL (not in a stray SQLite file).
    assert not (data_dir / "herald.sqlite").exists()
    tables = psql(pg_url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    assert tables.strip(), "no tables were created in the PostgreSQL database"

    # A restart against the same database keeps the user and accepts the earlier token.
    assert server.stop(signal.SIGTERM) == 0
    restarted = herald.start(data_dir=data_dir, database=pg_url)
    again = restarted.get("/api/v1/me", token=token)
    assert again.status_code == 200, again.text
    assert again.json()["data"]["display_name"] == "Dora"
    assert again.json()["data"]["locale"] == "de-DE"


def test_stops_when_database_vanishes(herald, tmp_path):
    """A database that disappears (failover, DROP ... WITH (FORCE)) must not keep a graceful
    stop waiting: every background loop gives up its database wait on SIGTERM."""
    admin = _admin_url()
    name = f"e2e_{secrets.token_hex(6)}"
    psql(admin, f'CREATE DATABASE "{name}"')
    server = herald.start(database=admin.rsplit("/", 1)[0] + "/" + name)
    assert server.get("/readyz").status_code == 200
    psql(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    time.sleep(1)  # the background loops are now waiting for a connection that cannot come
    # Exit 0 within stop()'s STOP_TIMEOUT: the loops give up their database waits at once, and
    # the 6 s graceful limit plus 3 s of cancellation bound anything stuck inside the driver
    # (the rest of STOP_TIMEOUT is for a loaded machine; a stop that waits for ever still fails).
    assert server.stop(signal.SIGTERM) == 0, server.output()


def test_database_url_from_environment(herald, pg_url):
    server = herald.start(env={"HERALD_DATABASE_URL": pg_url})
    assert server.get("/readyz").json()["database"] == "postgres"


def test_migrate_fresh_postgres(pg_url, tmp_path):
    versions = assert_migrates_then_up_to_date("--database", pg_url, "--data-dir", str(tmp_path / "d"))
    assert len(versions) >= 2


def test_migrate_fresh_sqlite_default_path(tmp_path):
    data_dir = tmp_path / "sqlite-data"
    assert_migrates_then_up_to_date("--data-dir", str(data_dir))
    assert (data_dir / "herald.sqlite").is_file()


def test_migrate_explicit_sqlite_url(tmp_path):
    path = tmp_path / "explicit.sqlite"
    assert_migrates_then_up_to_date("--database", f"sqlite:{path}", "--data-dir", str(tmp_path / "unused"))
    assert path.is_file()


def test_serve_after_migrate_applies_nothing_new(herald, tmp_path):
    data_dir = tmp_path / "premigrated"
    assert_migrates_then_up_to_date("--data-dir", str(data_dir))
    server = herald.start(data_dir=data_dir)
    assert server.get("/readyz").status_code == 200
    assert "applied migration" not in server.output()



class LateForwarder:
    """A TCP port that refuses connections until `open()`, then forwards each to `target`:
    a database that comes up after its migration job started (a container beside it)."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.listener: socket.socket | None = None

    def open(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()


def test_migrate_waits_for_a_database_that_comes_up_later(pg_url, tmp_path):
    url = urlsplit(pg_url)
    forwarder = LateForwarder((url.hostname, url.port))
    late_url = pg_url.replace(f"{url.hostname}:{url.port}", f"127.0.0.1:{forwarder.port}")
    try:
        # Refused connections for a few seconds, then the database: `--wait` rides it out.
        threading.Timer(3.0, forwarder.open).start()
        migrated = run_herald("migrate", "--wait", "300", "--database", late_url, "--data-dir", str(tmp_path / "d"))
        assert migrated.returncode == 0, f"{migrated.stdout}\n{migrated.stderr}"
        assert APPLIED.search(last_line(migrated)), migrated.stdout
    finally:
        forwarder.close()


def test_migrate_without_a_database_gives_up_after_its_wait(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe closes
    started = time.monotonic()
    result = run_herald("migrate", "--wait", "2", "--database", f"postgres://postgres@127.0.0.1:{port}/none",
                        "--data-dir", str(tmp_path / "d"))
    assert result.returncode != 0
    assert "the database did not answer within 2 s" in result.stderr + result.stdout, result.stderr[-2000:]
    assert time.monotonic() - started >= 2, "gave up before its wait"

    invalid = run_herald("migrate", "--wait", "3601", "--data-dir", str(tmp_path / "d"))
    assert invalid.returncode != 0 and "--wait must be 0 to 3600 seconds" in invalid.stderr, invalid.stderr
