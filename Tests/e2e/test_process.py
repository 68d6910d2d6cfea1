"""Process behaviour: graceful shutdown on signals, and refusing bad configuration."""

import json
import signal

import pytest

from conftest import LISTENING, WAIT, http_session, run_herald


def test_sigint_shuts_down_cleanly(server):
    assert server.get("/healthz").status_code == 200
    assert server.stop(signal.SIGINT) == 0
    # The port is released.
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", server.port))


def test_sigterm_shuts_down_cleanly_with_open_keepalive_connection(herald):
    server = herald.start()
    session = http_session()  # keeps its connection open
    assert session.get(server.url + "/healthz", timeout=WAIT).status_code == 200
    assert server.stop(signal.SIGTERM) == 0
    session.close()


def assert_refuses_to_start(tmp_path, *args, env=None, mentions, port_flag=True):
    # No --port flag where the port itself is under test: the flag would override the config.
    port = ["--port", "0"] if port_flag else []
    result = run_herald("serve", "--host", "127.0.0.1", *port, "--data-dir", str(tmp_path / "data"), *args,
                        env=env, timeout=WAIT)
    output = result.stdout + result.stderr
    if len(output) > 3000:  # a crash prints a long backtrace
        output = output[:3000] + "\n... (truncated)"
    assert result.returncode != 0, f"serve started with a bad configuration:\n{output}"
    assert not any(LISTENING.match(line) for line in result.stdout.splitlines()), output
    assert mentions in output, f"the error does not name {mentions!r}:\n{output}"
    return output


def test_port_env_that_is_not_a_number(tmp_path):
    assert_refuses_to_start(tmp_path, env={"HERALD_PORT": "notanumber"}, mentions="HERALD_PORT", port_flag=False)


def test_port_flag_out_of_range(tmp_path):
    assert_refuses_to_start(tmp_path, "--port", "70000", mentions="server.port", port_flag=False)


@pytest.mark.parametrize("name, text, field", [
    ("limits.yaml", "limits:\n  max_body_bytes: 5\n", "limits.max_body_bytes"),
    ("limits.json", json.dumps({"limits": {"max_body_bytes": 5}}), "limits.max_body_bytes"),
    ("port.yaml", "server:\n  port: 70000\n", "server.port"),
    ("port-type.json", json.dumps({"server": {"port": "eighty"}}), "server.port"),
    ("logging.yml", "logging:\n  level: chatty\n", "logging.level"),
    ("secret.yaml", "auth:\n  jwt_secret: short\n", "auth.jwt_secret"),
])
def test_invalid_config_file(tmp_path, name, text, field):
    config = tmp_path / name
    config.write_text(text)
    assert_refuses_to_start(tmp_path, "--config", str(config), mentions=field, port_flag=field != "server.port")


def test_invalid_config_file_through_env(tmp_path):
    config = tmp_path / "herald.yaml"
    config.write_text("limits:\n  max_body_bytes: 5\n")
    assert_refuses_to_start(tmp_path, env={"HERALD_CONFIG": str(config)}, mentions="limits.max_body_bytes")


def test_short_jwt_secret_env(tmp_path):
    assert_refuses_to_start(tmp_path, env={"HERALD_JWT_SECRET": "too-short"}, mentions="auth.jwt_secret")


def test_missing_jwks_file(tmp_path):
    output = assert_refuses_to_start(tmp_path, env={"HERALD_JWKS_FILE": str(tmp_path / "nope.json")},
                                     mentions="auth.jwks_file")
    assert "Assertion failed" not in output and "Backtracing" not in output, output


def test_jwks_file_without_signing_keys(tmp_path):
    jwks = tmp_path / "jwks.json"
    jwks.write_text('{"keys": [{"kty": "oct", "kid": "k", "k": "c2VjcmV0"}]}')
    output = assert_refuses_to_start(tmp_path, env={"HERALD_JWKS_FILE": str(jwks)}, mentions="JWKS")
    assert "Assertion failed" not in output and "Backtracing" not in output, output


def test_missing_config_file(tmp_path):
    assert_refuses_to_start(tmp_path, "--config", str(tmp_path / "absent.yaml"), mentions="absent.yaml")


def test_valid_config_file_is_used(herald, tmp_path):
    config = tmp_path / "herald.yaml"
    config.write_text("limits:\n  max_body_bytes: 2048\nlogging:\n  format: json\n")
    server = herald.start("--config", str(config))
    response = server.put("/api/v1/me", data=b"{" + b" " * 4096 + b"}", headers={"Content-Type": "application/json"})
    assert response.status_code == 413, response.text
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    # JSON logs: every log line is a JSON object (the listening line aside).
    log_lines = [line for line in server.output().splitlines() if line and not LISTENING.match(line)]
    assert log_lines
    for line in log_lines:
        json.loads(line)


def _answered(sockets, timeout: float, enough: int | None = None) -> set:
    """The sockets that received an HTTP answer within `timeout` (returns early once `enough`
    of them, by default all, have)."""
    import select
    import time
    enough = len(sockets) if enough is None else enough
    done, deadline = set(), time.monotonic() + timeout
    while len(done) < enough and time.monotonic() < deadline:
        pending = [s for s in sockets if s not in done]
        readable, _, _ = select.select(pending, [], [], max(0.0, min(0.5, deadline - time.monotonic())))
        for s in readable:
            if s.recv(4096).startswith(b"HTTP/1.1 200"):
                done.add(s)
    return done


def uncapped_config(tmp_path) -> str:
    """No per-client cap: these tests are one client filling the whole node on purpose."""
    config = tmp_path / "uncapped.json"
    config.write_text('{"server": {"max_connections_per_client": 0}}', encoding="utf-8")
    return str(config)


def test_more_connections_than_descriptors_wait_and_the_server_survives(herald, tmp_path):
    # 300 descriptors: 128 + database.max_connections (20) + database.background_connections (4)
    # stay reserved, so 148 clients at once.
    import socket
    server = herald.start("--config", uncapped_config(tmp_path), wrapper=["prlimit", "--nofile=300:300", "--"])
    assert "accepting at most 148 connections at once" in server.output()
    clients = []
    try:
        for _ in range(296):  # 148 served, the other 148 in the listen backlog
            s = socket.create_connection((server.host, server.port), timeout=WAIT)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: herald\r\n\r\n")
            clients.append(s)
        # Every client the node took is answered (a loaded machine takes a while: up to WAIT).
        served = _answered(clients, timeout=WAIT, enough=148)
        assert 0 < len(served) <= 148
        assert server.running
        # As served clients leave, the waiting ones are accepted and answered.
        for s in served:
            s.close()
        waiting = [s for s in clients if s not in served]
        assert 0 < len(waiting) <= 148
        assert len(_answered(waiting, timeout=WAIT)) == len(waiting)
    finally:
        for s in clients:
            s.close()
    assert http_session().get(server.url + "/healthz", timeout=WAIT).status_code == 200
    assert server.running


def test_a_burst_beyond_the_limit_waits_in_a_listen_backlog_as_long_as_the_kernel_allows(herald, tmp_path):
    # A reconnect storm: at its limit the server stops accepting, and the kernel completes
    # further handshakes into the listen backlog. With Hummingbird's default of 256 places
    # the rest would have their SYNs dropped (and retried only after 1 s); Herald asks for
    # net.core.somaxconn.
    import socket
    with open("/proc/sys/net/core/somaxconn") as f:
        somaxconn = int(f.read())
    assert somaxconn > 300, "this machine's somaxconn cannot tell 256 from the kernel's maximum"
    burst = min(600, somaxconn - 16)
    server = herald.start("--config", uncapped_config(tmp_path), wrapper=["prlimit", "--nofile=300:300", "--"])
    assert "accepting at most 148 connections at once" in server.output()
    clients = []
    try:
        for _ in range(148):
            clients.append(socket.create_connection((server.host, server.port), timeout=WAIT))
        # 0.9 s: a SYN the kernel dropped would be sent again only after 1 s (the margin below
        # that is for a loaded machine).
        for index in range(burst):
            try:
                clients.append(socket.create_connection((server.host, server.port), timeout=0.9))
            except OSError as error:
                pytest.fail(f"connection {index + 1} of {burst} beyond the limit was not queued: {error}")
        assert server.running
    finally:
        for s in clients:
            s.close()
    assert http_session().get(server.url + "/healthz", timeout=WAIT).status_code == 200
    assert server.running
