"""A fresh data dir on the embedded SQLite database: the development setup."""

import os
import re
import signal
import stat

from conftest import assert_error, issue_token, run_herald


def test_fresh_data_dir_serves_and_accepts_its_own_tokens(herald, tmp_path):
    data_dir = tmp_path / "fresh" / "herald-data"  # does not exist yet
    server = herald.start(data_dir=data_dir)
    assert server.database == f"sqlite:{data_dir}/herald.sqlite"

    health = server.get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    assert health.headers["X-Request-ID"]

    ready = server.get("/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body.pop("node").startswith("node_"), ready.json()
    assert body == {"status": "ready", "database": "sqlite", "transit": {"loaded": True, "problems": []}}

    anonymous = server.get("/api/v1/me")
    error = assert_error(anonymous, 401, "UNAUTHORIZED")
    assert anonymous.headers["X-Request-ID"].startswith("req_")
    assert anonymous.headers.get("WWW-Authenticate", "").startswith("Bearer")
    assert "authenticat" in error["message"].lower(), error

    # The development secret was generated into the data dir, readable by the owner only.
    secret_file = data_dir / "jwt-secret"
    assert secret_file.is_file()
    assert stat.S_IMODE(os.stat(secret_file).st_mode) == 0o600
    assert len(secret_file.read_text().strip()) >= 32

    token = issue_token(data_dir, user="ann", role="customer")
    me = server.get("/api/v1/me", token=token)
    assert me.status_code == 200, me.text
    body = me.json()
    assert body["data"]["id"] == "ann"
    assert body["data"]["role"] == "customer"
    assert body["data"]["time_zone"] == "UTC"
    assert body["meta"]["request_id"] == me.headers["X-Request-ID"]
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", body["meta"]["timestamp"]), body["meta"]

    changed = server.put("/api/v1/me", token=token, json={"display_name": "Ann", "time_zone": "Australia/Sydney"})
    assert changed.status_code == 200, changed.text

    # A restart on the same data dir keeps the secret (the earlier token still works) and the data.
    assert server.stop(signal.SIGTERM) == 0
    assert secret_file.read_text() and stat.S_IMODE(os.stat(secret_file).st_mode) == 0o600
    restarted = herald.start(data_dir=data_dir)
    again = restarted.get("/api/v1/me", token=token)
    assert again.status_code == 200, again.text
    assert again.json()["data"]["id"] == "ann"
    assert again.json()["data"]["display_name"] == "Ann"
    assert again.json()["data"]["time_zone"] == "Australia/Sydney"


def test_token_from_another_data_dir_is_refused(herald, tmp_path):
    server = herald.start()
    foreign = issue_token(tmp_path / "other-data", user="mallory", role="operator")
    assert_error(server.get("/api/v1/me", token=foreign), 401, "UNAUTHORIZED")


def test_token_command_validates_its_arguments(tmp_path):
    data_dir = tmp_path / "data"
    for role in ("customer", "driver", "operator", "service"):
        token = issue_token(data_dir, user=f"u-{role}", role=role, ttl="90s")
        assert token.startswith("eyJ")

    bad_role = run_herald("token", "--user", "u1", "--role", "admin", "--data-dir", str(data_dir))
    assert bad_role.returncode != 0
    assert "role" in (bad_role.stderr + bad_role.stdout)

    for ttl in ("soon", "0s", "-5m", "10y", "400d"):
        bad_ttl = run_herald("token", "--user", "u1", "--role", "driver", "--ttl", ttl, "--data-dir", str(data_dir))
        assert bad_ttl.returncode != 0, f"--ttl {ttl} was accepted: {bad_ttl.stdout}"
        assert "ttl" in (bad_ttl.stderr + bad_ttl.stdout)

    bad_user = run_herald("token", "--user", "has space", "--role", "driver", "--data-dir", str(data_dir))
    assert bad_user.returncode != 0


def test_token_with_configured_secret_is_accepted(herald, tmp_path):
    secret = "s" * 16 + "e2e-configured-secret-0123456789"
    server = herald.start(env={"HERALD_JWT_SECRET": secret})
    token = issue_token(tmp_path / "unrelated", user="svc-1", role="service", env={"HERALD_JWT_SECRET": secret})
    me = server.get("/api/v1/me", token=token)
    assert me.status_code == 200, me.text
    assert me.json()["data"]["role"] == "service"
    # With a configured secret no development secret is written.
    assert not (server.data_dir / "jwt-secret").exists()
