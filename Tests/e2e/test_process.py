"""Process behaviour: graceful shutdown on signals, and refusing bad configuration."""

import json
import signal

import pytest

from conftest import LISTENING, http_session, run_herald


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
    assert session.get(server.url + "/healthz", timeout=10).status_code == 200
    assert server.stop(signal.SIGTERM) == 0
    session.close()


def assert_refuses_to_start(tmp_path, *args, env=None, mentions, port_flag=True):
    # No --port flag where the port itself is under test: the flag would override the config.
    port = ["--port", "0"] if port_flag else []
    result = run_herald("serve", "--host", "127.0.0.1", *port, "--data-dir", str(tmp_path / "data"), *args,
                        env=env, timeout=30)
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
