"""HTTP behaviour through a real socket: request ids, body handling, /me, metrics and docs."""

import json
import socket

import pytest

from conftest import WAIT, assert_error, issue_token


@pytest.fixture(scope="module")
def api(module_herald):
    return module_herald.start()


@pytest.fixture(scope="module")
def token(api):
    return issue_token(api.data_dir, user="http-user", role="customer")


# X-Request-ID ------------------------------------------------------------------------------
def test_sane_request_id_is_echoed(api, token):
    response = api.get("/api/v1/me", token=token, headers={"X-Request-ID": "abc-123"})
    assert response.status_code == 200, response.text
    assert response.headers["X-Request-ID"] == "abc-123"
    assert response.json()["meta"]["request_id"] == "abc-123"

    error = api.get("/api/v1/me", headers={"X-Request-ID": "abc-124"})
    assert error.headers["X-Request-ID"] == "abc-124"
    assert_error(error, 401, "UNAUTHORIZED")

    health = api.get("/healthz", headers={"X-Request-ID": "probe.1:a_b"})
    assert health.headers["X-Request-ID"] == "probe.1:a_b"


@pytest.mark.parametrize("unsafe", ["x" * 200, "abc 123", "a/b", "<script>", "ü-id"])
def test_unsafe_request_id_is_replaced(api, token, unsafe):
    response = api.get("/api/v1/me", token=token, headers={"X-Request-ID": unsafe.encode("utf-8")})
    assert response.status_code == 200, response.text
    generated = response.headers["X-Request-ID"]
    assert generated != unsafe and generated.startswith("req_"), generated
    assert response.json()["meta"]["request_id"] == generated


def test_generated_request_ids_are_unique(api):
    ids = {api.get("/healthz").headers["X-Request-ID"] for _ in range(5)}
    assert len(ids) == 5
    assert all(i.startswith("req_") for i in ids)


# Body handling -----------------------------------------------------------------------------
def test_two_mebibyte_body_is_refused(api, token):
    body = b'{"display_name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    response = api.put("/api/v1/me", token=token, data=body, headers={"Content-Type": "application/json"})
    error = assert_error(response, 413, "PAYLOAD_TOO_LARGE")
    assert error["details"]["limit_bytes"] == 1048576


def test_two_mebibyte_chunked_body_is_refused(api, token):
    chunk = b"x" * 65536

    def chunks():
        yield b'{"display_name": "'
        for _ in range(32):
            yield chunk
        yield b'"}'

    response = api.put("/api/v1/me", token=token, data=chunks(), headers={"Content-Type": "application/json"})
    assert "Content-Length" not in response.request.headers  # really sent chunked
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


def test_server_still_serves_after_oversized_bodies(api, token):
    assert api.get("/api/v1/me", token=token).status_code == 200


def test_malformed_json_is_400(api, token):
    response = api.put("/api/v1/me", token=token, data=b'{"time_zone": ', headers={"Content-Type": "application/json"})
    assert_error(response, 400, "INVALID_JSON")


def test_json_that_is_not_an_object_is_400(api, token):
    response = api.put("/api/v1/me", token=token, data=b'["time_zone"]', headers={"Content-Type": "application/json"})
    assert_error(response, 400, "INVALID_JSON")


def test_empty_body_is_400(api, token):
    response = api.put("/api/v1/me", token=token, data=b"", headers={"Content-Type": "application/json"})
    assert_error(response, 400, "INVALID_JSON")


def test_text_plain_body_is_415(api, token):
    response = api.put("/api/v1/me", token=token, data=b'{"time_zone": "UTC"}', headers={"Content-Type": "text/plain"})
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


def test_json_with_charset_is_accepted(api, token):
    response = api.put("/api/v1/me", token=token, data=json.dumps({"locale": "en-GB"}).encode(),
                       headers={"Content-Type": "application/json; charset=utf-8"})
    assert response.status_code == 200, response.text
    assert response.json()["data"]["locale"] == "en-GB"


def test_raw_socket_request_with_oversized_content_length(api, token):
    """A client that announces a huge body and sends none gets 413 at once (no read hang)."""
    request = (
        f"PUT /api/v1/me HTTP/1.1\r\nHost: {api.host}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {50 * 1024 * 1024}\r\n\r\n"
    ).encode()
    # A hang would end in the server's own body timeout, with another status than 413.
    with socket.create_connection((api.host, api.port), timeout=WAIT) as sock:
        sock.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received:
            data = sock.recv(65536)
            if not data:
                break
            received += data
    assert received.startswith(b"HTTP/1.1 413"), received[:200]


# /me ---------------------------------------------------------------------------------------
def test_put_me_updates_and_get_reflects_it(module_herald, api):
    token = issue_token(api.data_dir, user="put-user", role="driver")
    body = {"time_zone": "Australia/Sydney", "display_name": "Ann", "locale": "en-AU"}
    response = api.put("/api/v1/me", token=token, json=body)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["id"] == "put-user"
    assert data["role"] == "driver"
    assert (data["time_zone"], data["display_name"], data["locale"]) == ("Australia/Sydney", "Ann", "en-AU")
    assert response.json()["meta"]["request_id"] == response.headers["X-Request-ID"]

    again = api.get("/api/v1/me", token=token).json()["data"]
    assert (again["time_zone"], again["display_name"], again["locale"]) == ("Australia/Sydney", "Ann", "en-AU")

    cleared = api.put("/api/v1/me", token=token, json={"display_name": None})
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["data"].get("display_name") is None
    assert cleared.json()["data"]["time_zone"] == "Australia/Sydney"


def test_put_me_invalid_time_zone_is_422(api, token):
    response = api.put("/api/v1/me", token=token, json={"time_zone": "Mars/Olympus_Mons"})
    error = assert_error(response, 422, "VALIDATION_FAILED")
    assert error["details"]["fields"][0]["field"] == "time_zone", error
    assert error["details"]["fields"][0]["message"], error


def test_put_me_unknown_field_is_422(api, token):
    response = api.put("/api/v1/me", token=token, json={"timezone": "Europe/Paris"})
    error = assert_error(response, 422, "VALIDATION_FAILED")
    assert error["details"]["fields"][0]["field"] == "timezone", error


def test_put_me_without_token_is_401(api):
    assert_error(api.put("/api/v1/me", json={"time_zone": "UTC"}), 401, "UNAUTHORIZED")


def test_unknown_route_is_404_envelope(api, token):
    assert_error(api.get("/api/v1/no-such-thing", token=token), 404, "NOT_FOUND")


# Browsers (CORS) ---------------------------------------------------------------------------
def test_loopback_pages_may_call_a_development_server(api, token):
    """Without auth.jwt_secret (development) and without cors.allowed_origins, pages on
    loopback origins get CORS answers (preflight on any path, headers on answers); others do not."""
    preflight = {"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}
    for path in ("/socket.io/?EIO=4&transport=polling", "/api/v1/notifications"):
        answer = api.request("OPTIONS", path, headers=preflight)
        assert answer.status_code == 204, (path, answer.text)
        assert answer.headers["Access-Control-Allow-Origin"] == "http://localhost:5173"
        assert answer.headers["Access-Control-Allow-Headers"] == "authorization, content-type"
        refused = api.request("OPTIONS", path, headers={**preflight, "Origin": "https://evil.example"})
        assert_error(refused, 403, "ORIGIN_NOT_ALLOWED")
        assert "Access-Control-Allow-Origin" not in refused.headers
    me = api.get("/api/v1/me", token=token, headers={"Origin": "http://127.0.0.1:3000"})
    assert me.status_code == 200 and me.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:3000"
    other = api.get("/api/v1/me", token=token, headers={"Origin": "https://evil.example"})
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other.headers


# Operations endpoints ----------------------------------------------------------------------
def test_metrics_count_requests(api):
    api.get("/healthz")
    response = api.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    assert "herald_http_requests_total" in response.text
    samples = [line for line in response.text.splitlines()
               if line.startswith("herald_http_requests_total") and not line.startswith("#")]
    assert samples, response.text
    assert sum(float(line.rsplit(" ", 1)[1]) for line in samples) >= 1


def test_openapi_document(api):
    response = api.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "0.1.0"
    assert "/api/v1/me" in document["paths"]
    assert {"get", "put"} <= set(document["paths"]["/api/v1/me"])
    assert "/healthz" in document["paths"]


def test_docs_page(api):
    response = api.get("/api/v1/docs")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert "<html" in response.text.lower()
    assert "openapi.json" in response.text
