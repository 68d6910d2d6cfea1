"""The official Socket.IO JavaScript client (4.8.1, `socket.io.min.js`) in headless Chromium, on
a page served from another origin than Herald's: long-polling then the upgrade to WebSocket,
the auth token, acks both ways, binary, a REST call with CORS, a notification acknowledged,
and connection state recovery after a forced disconnect. Then the same page against a server
whose `cors.allowed_origins` does not list it: the browser refuses to connect.

The client file comes from the PyPI wheel `nicegui==3.18.0` (scripts/test fetches it into the
ignored .cache/browser and exports HERALD_TEST_SOCKETIO_JS); Chromium and its driver from Debian.
"""

import secrets

from browser_support import TIMEOUT, browser, page_state, page_url, run_async  # noqa: F401 (fixtures)
from conftest import issue_token, publish, wait_until

CONNECT = """
const [url, token] = arguments;
window.received = { news: [], notifications: [] };
const socket = io(url, { auth: { token }, reconnectionDelay: 2000, randomizationFactor: 0 });
window.socket = socket;
socket.io.once("open", () => { window.firstTransport = socket.io.engine.transport.name; });
socket.on("news", (payload) => window.received.news.push(payload.n));
socket.on("notification", (notification, ack) => { window.received.notifications.push(notification.id); ack(); });
socket.once("connect", () => done({ transport: window.firstTransport, recovered: socket.recovered }));
socket.once("connect_error", (error) => done({ error: error.message }));
"""


def test_the_official_client_from_another_origin(module_herald, browser, page_url):
    server = module_herald.start()
    user = f"web-{secrets.token_hex(4)}"
    token = issue_token(server.data_dir, user=user)
    service = issue_token(server.data_dir, user="svc-web", role="service")
    browser.get(page_url)
    assert page_state(browser, "location.origin") != server.url, "the page must be on another origin"
    assert page_state(browser, "typeof io") == "function", "socket.io.min.js did not load"

    # Long-polling first (the client's default: the transport it opened with), then the
    # upgrade to WebSocket (which may finish before or after the CONNECT answer).
    connected = run_async(browser, CONNECT, server.url, token)
    assert connected == {"transport": "polling", "recovered": False}, connected
    wait_until(lambda: page_state(browser, "socket.io.engine.transport.name") == "websocket", TIMEOUT,
               message="the client upgraded to WebSocket")

    # An ack the client asks for, and binary both ways.
    me = run_async(browser, 'socket.emit("whoami", (me) => done(me));')
    assert me["user_id"] == user and f"user:{user}" in me["rooms"], me
    echoed = run_async(browser, """
        socket.emit("echo", "text", new Uint8Array([1, 2, 255]), (text, bytes) =>
            done([text, bytes instanceof ArrayBuffer, Array.from(new Uint8Array(bytes))]));
    """)
    assert echoed == ["text", True, [1, 2, 255]], echoed

    # The REST API from the same page: a preflighted request (Authorization) the browser allows.
    data = run_async(browser, """
        fetch(arguments[0] + "/api/v1/me", { headers: { Authorization: "Bearer " + arguments[1] } })
            .then((r) => r.json()).then((body) => done(body.data), (error) => done({ error: String(error) }));
    """, server.url, token)
    assert data.get("id") == user, data

    # A notification the server asks to acknowledge: the page's ack marks it delivered.
    response = server.request("POST", "/api/v1/notifications", service,
                              json={"user_id": user, "type": "job_new", "title": "New job", "body": "From the browser test"})
    assert response.status_code == 201, response.text
    notification_id = response.json()["data"]["results"][0]["notification"]["id"]

    def acknowledged():
        rows = server.get(f"/api/v1/deliveries?notification_id={notification_id}", token=service).json()["data"]["deliveries"]
        return any(row["channel"] == "socket" and row["status"] == "acknowledged" for row in rows)

    wait_until(acknowledged, TIMEOUT, message="the browser acknowledged the notification")
    assert page_state(browser, "window.received.notifications") == [notification_id]

    # Connection state recovery: an event before, one while the transport is gone; after the
    # reconnection (2 s later) the session is recovered and each event arrived once, in order.
    publish(server, service, f"user:{user}", "news", {"n": 1})
    wait_until(lambda: page_state(browser, "window.received.news") == [1], TIMEOUT, message="the first event")
    browser.execute_script("window.reconnected = null; socket.once('connect', () => { window.reconnected = socket.recovered; }); socket.io.engine.close();")
    wait_until(lambda: page_state(browser, "socket.connected") is False, TIMEOUT, message="the forced disconnect")
    publish(server, service, f"user:{user}", "news", {"n": 2})
    wait_until(lambda: page_state(browser, "window.reconnected") is not None, TIMEOUT, message="the reconnection")
    assert page_state(browser, "window.reconnected") is True, "the session was not recovered"
    wait_until(lambda: page_state(browser, "window.received.news") == [1, 2], TIMEOUT, message="the missed event replayed")
    browser.execute_script("socket.disconnect();")


def test_a_page_on_an_origin_not_listed_cannot_connect(herald, browser, page_url, tmp_path):
    config = tmp_path / "cors.yaml"
    config.write_text("cors:\n  allowed_origins: [\"https://app.example.com\"]\n")
    server = herald.start("--config", str(config))
    token = issue_token(server.data_dir, user="web-refused")
    browser.get(page_url)
    refused = run_async(browser, CONNECT, server.url, token)
    assert "error" in refused, refused
    browser.execute_script("socket.disconnect();")
    # Not even a WebSocket-only client gets through: the upgrade's Origin is checked too.
    refused = run_async(browser, """
        const s = io(arguments[0], { auth: { token: arguments[1] }, transports: ["websocket"], reconnection: false });
        s.once("connect", () => { s.disconnect(); done("connected"); });
        s.once("connect_error", (error) => { s.disconnect(); done("refused"); });
    """, server.url, token)
    assert refused == "refused"
