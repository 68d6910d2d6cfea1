"""Two apps in one deployment, through the real binary on both engines: a customer app (the
default one) and a driver app, each with its own APNs key and topic, and one user with both
apps on a phone plus a development build. Two mock APNs hosts (production and sandbox) know
both apps' keys and refuse a push whose provider token was not signed by its topic's key, so
every push that reaches them with 200 was sent with its own app's credentials."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from conftest import run_herald, wait_until
from test_push_providers import (  # noqa: F401 (fixtures)
    TIMEOUT, database, mint_token, mock_apns, new_user, no_new_requests, write_apns_key)

CUSTOMER, DRIVER = "com.example.customer", "com.example.driver"


def register(server, auth: str, **body) -> dict:
    response = server.request("POST", "/api/v1/push/register", auth, json={"provider": "apns", "platform": "ios", **body})
    assert response.status_code == 201, f"register: {response.status_code} {response.text}"
    return response.json()["data"]


def send(server, service: str, user: str, type_: str, title: str) -> str:
    response = server.request("POST", "/api/v1/notifications", service, json={"user_ids": [user], "type": type_, "title": title})
    assert response.status_code == 201, response.text
    return response.json()["data"]["results"][0]["notification"]["id"]


def test_each_app_pushes_with_its_own_key_and_topic_to_its_tokens_environment(database, mock_apns, herald, tmp_path):  # noqa: F811
    customer_key, driver_key = write_apns_key(tmp_path), write_apns_key(tmp_path)
    apps = ("--app", f"{CUSTOMER}=KEYCUST001={customer_key}", "--app", f"{DRIVER}=KEYDRIV001={driver_key}")
    production, sandbox = mock_apns("--log-payloads", *apps), mock_apns("--log-payloads", *apps)
    # One CA file trusting both mocks' certificates.
    ca = tmp_path / "mocks-ca.pem"
    ca.write_text(Path(production.ca_file).read_text() + Path(sandbox.ca_file).read_text(), encoding="utf-8")

    def apns(key: Path, key_id: str, topic: str) -> dict:
        return {"team_id": "TEAM123456", "key_id": key_id, "private_key_file": str(key), "topic": topic,
                "base_url": production.base_url, "sandbox_base_url": sandbox.base_url, "ca_file": str(ca)}

    config = tmp_path / "herald.json"
    config.write_text(json.dumps({
        "push": {"request_timeout_ms": 5000, "poll_interval_ms": 200, "apns": apns(customer_key, "KEYCUST001", CUSTOMER),
                 "apps": [{"id": "driver", "apns": apns(driver_key, "KEYDRIV001", DRIVER)}]},
        "notifications": {"type_apps": {"job_new": ["driver"]}},
    }), encoding="utf-8")
    extra = ("--database", database) if database else ()
    server = herald.start("--config", str(config), *extra)
    service = mint_token(server.data_dir, "svc-apps", role="service")
    user = new_user("dan")
    token = mint_token(server.data_dir, user)
    tokens = {name: secrets.token_hex(32) for name in ("customer", "driver", "debug")}
    assert register(server, token, token=tokens["customer"], device_id="phone")["app_id"] == "default"
    driver = register(server, token, token=tokens["driver"], device_id="phone", app_id="driver")
    assert driver["app_id"] == "driver" and driver["active"] is True
    debug = register(server, token, token=tokens["debug"], device_id="laptop-simulator", environment="sandbox")
    assert debug["environment"] == "sandbox"
    # Both apps on one phone share its device_id: neither token replaced the other.
    listed = server.get("/api/v1/push/devices", token=token).json()["data"]["devices"]
    assert sorted(d["app_id"] for d in listed if d["active"]) == ["default", "default", "driver"], listed

    update = send(server, service, user, "job_update", "Your job is on its way")
    wait_until(lambda: production.count() >= 2 and sandbox.count() >= 1, TIMEOUT, message="the update at both APNs hosts")
    offer = send(server, service, user, "job_new", "New job nearby")  # the driver app only
    wait_until(lambda: production.count() >= 3, TIMEOUT, message="the offer at production")
    no_new_requests(lambda: production.count() + sandbox.count(), 4, 2.0, "pushes at the mocks")

    seen = {(line["token"], line["notification_id"]): line for line in production.lines() + sandbox.lines()}
    assert set(seen) == {(tokens["customer"], update), (tokens["driver"], update), (tokens["debug"], update), (tokens["driver"], offer)}, seen
    for (device, _), line in seen.items():
        expected = (DRIVER, "KEYDRIV001") if device == tokens["driver"] else (CUSTOMER, "KEYCUST001")
        assert (line["topic"], line["kid"], line["iss"]) == (*expected, "TEAM123456"), line
        assert line["answer"] == 200, line  # the mock verified the token's signature with the topic's key
    assert {line["token"] for line in sandbox.lines()} == {tokens["debug"]}
    assert tokens["debug"] not in {line["token"] for line in production.lines()}


def test_an_unknown_app_and_a_misplaced_environment_are_refused(herald):
    server = herald.start()
    token = mint_token(server.data_dir, new_user("eve"))
    for body, field in [({"token": secrets.token_hex(32), "provider": "apns", "platform": "ios", "app_id": "driver"}, "app_id"),
                        ({"token": "fcm-" + secrets.token_hex(20), "provider": "fcm", "platform": "android", "environment": "sandbox"},
                         "environment")]:
        response = server.request("POST", "/api/v1/push/register", token, json=body)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "VALIDATION_FAILED" and field in json.dumps(error["details"]), error


def test_doctor_checks_every_apps_credentials(mock_apns, tmp_path):  # noqa: F811
    customer_key, driver_key, stray_key = write_apns_key(tmp_path), write_apns_key(tmp_path), write_apns_key(tmp_path)
    mock = mock_apns("--app", f"{CUSTOMER}=KEYCUST001={customer_key}", "--app", f"{DRIVER}=KEYDRIV001={driver_key}")

    def config(driver_key_path: Path, name: str) -> Path:
        def apns(key: Path, key_id: str, topic: str) -> dict:
            return {"team_id": "TEAM123456", "key_id": key_id, "private_key_file": str(key), "topic": topic,
                    "base_url": mock.base_url, "ca_file": mock.ca_file}
        path = tmp_path / name
        path.write_text(json.dumps({"push": {"apns": apns(customer_key, "KEYCUST001", CUSTOMER),
                                             "apps": [{"id": "driver", "apns": apns(driver_key_path, "KEYDRIV001", DRIVER)}]}}))
        return path

    def findings(result) -> dict[str, str]:
        return {line.split()[1]: line for line in result.stdout.splitlines() if line[:4] in ("ok  ", "warn", "FAIL", "skip")}

    good = run_herald("doctor", "--config", str(config(driver_key, "good.json")), "--data-dir", str(tmp_path / "d1"))
    assert good.returncode == 0, good.stdout + good.stderr
    lines = findings(good)
    assert lines["push.apns"].startswith("ok ") and lines["push.apps[driver].apns"].startswith("ok "), good.stdout
    # The driver app's key is not the one its topic expects: that app's line fails, the other stays ok.
    bad = run_herald("doctor", "--config", str(config(stray_key, "bad.json")), "--data-dir", str(tmp_path / "d2"))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    lines = findings(bad)
    assert lines["push.apns"].startswith("ok ") and lines["push.apps[driver].apns"].startswith("FAIL"), bad.stdout
    assert "InvalidProviderToken" in lines["push.apps[driver].apns"], bad.stdout
    # The hint names that app's own keys.
    assert "check push.apps[driver].apns.team_id, key_id" in lines["push.apps[driver].apns"], bad.stdout
