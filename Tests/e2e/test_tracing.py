"""Traces: one notification followed from the API call to the provider's answer and across
the cluster, read from the spans Herald exports over OTLP/HTTP.

The OpenTelemetry Collector is not on this machine: `OTLPReceiver` is a small OTLP/HTTP
receiver that decodes each `ExportTraceServiceRequest` with the official protobuf messages
(`opentelemetry-proto`), so what is checked is what a collector would receive.

Two nodes share one PostgreSQL database. A notification sent to node A with a
`traceparent` goes to an offline user's iPhone (the mock APNs) and to an online user whose
socket is on node B. Its trace must hold, under the caller's span:
  request (A, server) → deliver push (A, consumer) → send push (A, client, the apns-id)
  request (A, server) → publish notification (A, producer) → deliver event (B, consumer)
"""

from __future__ import annotations

import gzip
import http.server
import queue
import secrets
import sqlite3
import threading
import time
from pathlib import Path

import jwt
import pytest
import socketio
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                       ExportTraceServiceResponse)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from conftest import WAIT, HeraldLauncher, _finish, http_session, is_online, issue_token, psql, wait_until
from test_push_providers import MockAPNs, mock_apns, register_apns, write_config  # noqa: F401 (fixture)
from test_transit import feed_host, import_cli  # noqa: F401 (fixture)
from test_transit_alerts import SAMPLE, alerts_config, alerts_message, favourite

KIND = {value: name for name, value in Span.SpanKind.items()}


def attribute_value(value):
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


class OTLPReceiver:
    """Accepts `POST /v1/traces` (protobuf, optionally gzip) and keeps every span, flattened."""

    def __init__(self):
        self.spans: list[dict] = []
        self.requests = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver._keep(ExportTraceServiceRequest.FromString(body))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _keep(self, request: ExportTraceServiceRequest) -> None:
        flattened = []
        for resource_spans in request.resource_spans:
            resource = {kv.key: attribute_value(kv.value) for kv in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    flattened.append({
                        "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(), "name": span.name, "kind": KIND[span.kind],
                        "attributes": {kv.key: attribute_value(kv.value) for kv in span.attributes},
                        "status": span.status.code, "resource": resource,
                    })
        with self._lock:
            self.requests += 1
            self.spans += flattened

    def trace(self, trace_id: str) -> list[dict]:
        with self._lock:
            return [span for span in self.spans if span["trace_id"] == trace_id]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def one(spans: list[dict], name: str, **attributes) -> dict:
    matching = [span for span in spans if span["name"] == name
                and all(span["attributes"].get(key) == value for key, value in attributes.items())]
    assert len(matching) == 1, f"{len(matching)} spans {name} {attributes} in {spans}"
    return matching[0]


@pytest.fixture(scope="module")
def traced(module_pg_url, tmp_path_factory):
    """Two traced nodes on one database, beside a mock APNs, exporting to one receiver."""
    workdir = tmp_path_factory.mktemp("tracing")
    receiver = OTLPReceiver()
    apns = MockAPNs(workdir)
    launcher = HeraldLauncher(workdir)
    secret = secrets.token_urlsafe(48)
    # The batch exporter's delay is its standard variable: short, so spans arrive soon.
    env = {"HERALD_JWT_SECRET": secret, "HERALD_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    config = write_config(workdir, apns=apns)
    try:
        a = launcher.start("--config", str(config), data_dir=workdir / "node-a", database=module_pg_url, env=env)
        b = launcher.start("--config", str(config), data_dir=workdir / "node-b", database=module_pg_url, env=env)
        yield {"a": a, "b": b, "receiver": receiver, "apns": apns, "secret": secret, "database": module_pg_url}
    finally:
        _finish(launcher)
        apns.stop()
        receiver.stop()


def token(secret: str, user: str, role: str = "customer") -> str:
    now = int(time.time())
    return jwt.encode({"sub": user, "role": role, "iat": now, "exp": now + 3600}, secret, algorithm="HS256")


def test_one_notification_is_one_trace_from_the_request_to_apns_and_across_nodes(traced):
    a, b, receiver, apns, secret = traced["a"], traced["b"], traced["receiver"], traced["apns"], traced["secret"]
    service = token(secret, "svc-trace", "service")
    offline, online = f"tr-{secrets.token_hex(4)}", f"tr-{secrets.token_hex(4)}"
    push_token = secrets.token_hex(32)
    register_apns(a, token(secret, offline), push_token)

    received: queue.Queue = queue.Queue()
    sio = socketio.Client(reconnection=False, handle_sigint=False, http_session=http_session())
    sio.on("notification", lambda payload: received.put(payload))
    sio.connect(b.url, auth={"token": token(secret, online)}, transports=["websocket"], wait_timeout=WAIT)
    try:
        wait_until(lambda: is_online(a, service, online), WAIT, message=f"{online} online as node A sees it")

        trace_id, caller_span = secrets.token_hex(16), secrets.token_hex(8)
        response = a.request(
            "POST", "/api/v1/notifications", service, timeout=60,
            headers={"traceparent": f"00-{trace_id}-{caller_span}-01"},
            json={"user_ids": [offline, online], "type": "job_update", "title": "Driver close", "body": "2 min",
                  "data": {"job_id": "job_trace"}})
        assert response.status_code == 201, response.text
        ids = {user: result["notification"]["id"] for user, result in zip([offline, online], response.json()["data"]["results"])}

        payload = received.get(timeout=WAIT)
        assert payload["id"] == ids[online], payload
        line = wait_until(lambda: next((line for line in apns.lines() if line["token"] == push_token), None), WAIT,
                          message="the push at the mock APNs")

        expected = {"POST /api/v1/notifications", "deliver push", "send push", "publish notification", "deliver event"}
        try:
            wait_until(lambda: expected <= {span["name"] for span in receiver.trace(trace_id)}, WAIT,
                       message=f"the trace's spans ({expected}) at the receiver")
        except AssertionError as error:
            raise AssertionError(f"{error}; the trace has {receiver.trace(trace_id)}") from None
        spans = receiver.trace(trace_id)
        node_a = f"/{a.proc.pid}"
        node_b = f"/{b.proc.pid}"

        request = one(spans, "POST /api/v1/notifications")
        assert request["kind"] == "SPAN_KIND_SERVER" and request["parent_span_id"] == caller_span, request
        assert request["attributes"]["http.response.status_code"] == 201, request
        assert request["resource"]["service.name"] == "herald" and request["resource"]["service.instance.id"].endswith(node_a)

        deliver = one(spans, "deliver push", **{"herald.notification.id": ids[offline]})
        assert deliver["kind"] == "SPAN_KIND_CONSUMER" and deliver["parent_span_id"] == request["span_id"], deliver
        assert deliver["attributes"]["herald.delivery.status"] == "sent", deliver
        assert deliver["attributes"]["herald.push.provider"] == "apns", deliver

        send = one(spans, "send push")
        assert send["kind"] == "SPAN_KIND_CLIENT" and send["parent_span_id"] == deliver["span_id"], send
        assert send["attributes"]["herald.push.result"] == "accepted", send
        assert send["attributes"]["herald.push.provider_message_id"].lower() == line["apns_id"].lower(), (send, line)

        publish = one(spans, "publish notification", **{"herald.notification.id": ids[online]})
        assert publish["kind"] == "SPAN_KIND_PRODUCER" and publish["parent_span_id"] == request["span_id"], publish
        assert publish["resource"]["service.instance.id"].endswith(node_a), publish

        crossed = one(spans, "deliver event", **{"herald.room": f"user:{online}"})
        assert crossed["kind"] == "SPAN_KIND_CONSUMER" and crossed["parent_span_id"] == publish["span_id"], crossed
        assert crossed["resource"]["service.instance.id"].endswith(node_b), crossed
        assert crossed["attributes"]["herald.event"] == "notification", crossed

        # The caller's trace is the notification's: what the worker continued is stored with it.
        stored = psql(traced["database"], f"SELECT trace_parent FROM notifications WHERE id = '{ids[offline]}'").strip()
        assert stored == f"00-{trace_id}-{request['span_id']}-01", stored
        assert all(span["status"] != Status.STATUS_CODE_ERROR for span in spans), spans

        # docs/tracing.md names every span and every attribute of Herald's own these spans carry.
        doc = (Path(__file__).resolve().parents[2] / "docs" / "tracing.md").read_text(encoding="utf-8")
        for name in sorted(expected):
            assert f"`{name}`" in doc, f"docs/tracing.md does not name the span {name}"
        for key in sorted({key for span in spans for key in span["attributes"]}):
            assert f"`{key}`" in doc, f"docs/tracing.md does not name the attribute {key}"
    finally:
        sio.disconnect()


def test_a_refused_push_marks_its_spans_and_a_malformed_traceparent_starts_a_new_trace(herald, tmp_path):
    """One node on SQLite, its mock APNs refusing every push (400 BadDeviceToken)."""
    receiver = OTLPReceiver()
    apns = MockAPNs(tmp_path, "--status", "400", "--reason", "BadDeviceToken")
    try:
        secret = secrets.token_urlsafe(48)
        server = herald.start("--config", str(write_config(tmp_path, apns=apns)),
                              env={"HERALD_JWT_SECRET": secret, "HERALD_OTLP_ENDPOINT": receiver.url + "/",
                                   "OTEL_BSP_SCHEDULE_DELAY": "100"})
        user = f"tr-{secrets.token_hex(4)}"
        register_apns(server, token(secret, user), secrets.token_hex(32))
        response = server.request(
            "POST", "/api/v1/notifications", token(secret, "svc-trace", "service"), timeout=60,
            headers={"traceparent": "00-not-a-trace-01"},
            json={"user_ids": [user], "type": "job_update", "title": "Refused", "body": "x", "data": {}})
        assert response.status_code == 201, response.text
        notification = response.json()["data"]["results"][0]["notification"]["id"]

        def delivery_span():
            with receiver._lock:
                return next((span for span in receiver.spans if span["name"] == "deliver push"
                             and span["attributes"].get("herald.notification.id") == notification), None)

        deliver = wait_until(delivery_span, WAIT, message="the refused push's delivery span")
        wait_until(lambda: {"send push", "POST /api/v1/notifications"} <= {span["name"] for span in receiver.trace(deliver["trace_id"])},
                   WAIT, message="the refused push's trace")
        trace = receiver.trace(deliver["trace_id"])
        request = one(trace, "POST /api/v1/notifications")
        assert request["parent_span_id"] == "", f"a malformed traceparent is no parent: {request}"
        assert deliver["parent_span_id"] == request["span_id"], (deliver, request)
        assert deliver["status"] == Status.STATUS_CODE_ERROR, deliver
        assert deliver["attributes"]["herald.delivery.status"] in ("dead", "failed"), deliver
        send = one(trace, "send push")
        assert send["status"] == Status.STATUS_CODE_ERROR and send["parent_span_id"] == deliver["span_id"], send
        assert send["attributes"]["herald.push.result"] in ("refused", "token_gone"), send
    finally:
        apns.stop()
        receiver.stop()


def test_without_an_endpoint_nothing_is_traced_or_stored(herald, tmp_path):
    """Tracing off (the default): no span leaves, the request's traceparent is not stored."""
    receiver = OTLPReceiver()
    try:
        secret = secrets.token_urlsafe(48)
        server = herald.start(env={"HERALD_JWT_SECRET": secret, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
                                   "OTEL_BSP_SCHEDULE_DELAY": "100"})
        user = f"tr-{secrets.token_hex(4)}"
        response = server.request(
            "POST", "/api/v1/notifications", token(secret, "svc-trace", "service"), timeout=60,
            headers={"traceparent": f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"},
            json={"user_ids": [user], "type": "job_update", "title": "Untraced", "body": "x", "data": {}})
        assert response.status_code == 201, response.text
        inbox = server.get("/api/v1/notifications", token=token(secret, user))
        assert inbox.status_code == 200 and len(inbox.json()["data"]["notifications"]) == 1, inbox.text
        # The OTel variables alone do not turn tracing on (Herald's `tracing.otlp_endpoint` does).
        time.sleep(1)
        assert receiver.requests == 0 and receiver.spans == [], receiver.spans
        stored = sqlite_value(server.data_dir, "SELECT COUNT(*) FROM notifications WHERE trace_parent IS NOT NULL")
        assert stored == 0, stored
    finally:
        receiver.stop()


def sqlite_value(data_dir, sql: str):
    with sqlite3.connect(f"file:{data_dir}/herald.sqlite?mode=ro", uri=True) as db:
        return db.execute(sql).fetchone()[0]


def test_a_transit_alert_is_one_trace_with_every_riders_push(mock_apns, herald, tmp_path, feed_host):
    """No request starts an alert's pushes (a GTFS-Realtime poll does): the alert version's
    own span is the trace every rider's delivery continues."""
    receiver = OTLPReceiver()
    try:
        mock = mock_apns()
        data = herald.new_data_dir()
        import_cli(SAMPLE, data)
        feed_host.files["/alerts.pb"] = alerts_message()
        config = alerts_config(tmp_path / "herald.json", mock, feed_host.url("/alerts.pb"))
        server = herald.start("--config", str(config), data_dir=data,
                              env={"HERALD_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"})
        for user, stop in [("ann", "STAGECOACH"), ("bob", "BEATTY_AIRPORT")]:
            rider = issue_token(data, user)
            favourite(server, rider, stop)
            register_apns(server, rider, secrets.token_hex(32))

        feed_host.files["/alerts.pb"] = alerts_message({"id": "stba-1", "route": "STBA", "header": "Shuttle delayed"})
        wait_until(lambda: mock.count() >= 2, WAIT, message="the alert's pushes at the mock APNs")

        def alert_span():
            with receiver._lock:
                return next((span for span in receiver.spans
                             if span["name"] == "transit alert" and span["attributes"].get("herald.alert.id") == "stba-1"), None)

        alert = wait_until(alert_span, WAIT, message="the alert version's span")
        wait_until(lambda: len([s for s in receiver.trace(alert["trace_id"]) if s["name"] == "send push"]) == 2, WAIT,
                   message="both riders' pushes in the alert's trace")
        trace = receiver.trace(alert["trace_id"])
        assert alert["parent_span_id"] == "" and alert["kind"] == "SPAN_KIND_INTERNAL", alert
        assert alert["attributes"]["herald.alert.status"] == "done", alert
        assert alert["attributes"]["herald.alert.matched"] == 2 and alert["attributes"]["herald.alert.queued"] == 2, alert
        delivered = [span for span in trace if span["name"] == "deliver push"]
        assert len(delivered) == 2 and all(span["parent_span_id"] == alert["span_id"] for span in delivered), trace
        assert all(span["attributes"]["herald.delivery.status"] == "sent" for span in delivered), delivered
        doc = (Path(__file__).resolve().parents[2] / "docs" / "tracing.md").read_text(encoding="utf-8")
        for key in sorted({"transit alert"} | set(alert["attributes"])):
            assert f"`{key}`" in doc, f"docs/tracing.md does not name {key}"
    finally:
        receiver.stop()
