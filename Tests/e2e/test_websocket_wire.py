"""The WebSocket layer Herald serves its realtime protocols on, driven by websocket-client
(a client nobody here wrote) over real sockets: fragmented messages, control frames between
fragments, pings, close handshakes, over-size and invalid messages, refused upgrades."""
from __future__ import annotations

import json
import signal
import socket

import pytest
import requests
import websocket
from websocket import ABNF

from conftest import WAIT, issue_token

TIMEOUT = WAIT  # waits for what should happen: long, for a loaded machine


def native(server, token: str) -> websocket.WebSocket:
    ws = websocket.create_connection(server.url.replace("http://", "ws://") + f"/api/v1/realtime?token={token}", timeout=TIMEOUT)
    hello = json.loads(ws.recv())
    assert hello["type"] == "connected"
    return ws


def next_of_type(ws: websocket.WebSocket, kind: str) -> dict:
    for _ in range(20):
        message = json.loads(ws.recv())
        if message["type"] == kind:
            return message
    raise AssertionError(f"no {kind} message")


def recv_frame(ws: websocket.WebSocket) -> ABNF:
    return ws.recv_frame()  # raw: no automatic answer to a close


def test_fragments_are_joined_and_control_frames_between_them_answered(server):
    ws = native(server, issue_token(server.data_dir, user="ann"))
    # {"type":"ping"} in three fragments, with a WebSocket ping between the first two.
    ws.send_frame(ABNF.create_frame('{"type"', ABNF.OPCODE_TEXT, fin=0))
    ws.ping(b"between")
    pong = recv_frame(ws)
    while pong.opcode == ABNF.OPCODE_TEXT:  # whatever the server says on connect
        pong = recv_frame(ws)
    assert pong.opcode == ABNF.OPCODE_PONG and pong.data == b"between"
    ws.send_frame(ABNF.create_frame(':"pi', ABNF.OPCODE_CONT, fin=0))
    ws.send_frame(ABNF.create_frame('ng"}', ABNF.OPCODE_CONT, fin=1))
    assert next_of_type(ws, "pong") == {"type": "pong"}
    ws.close()


def test_a_client_close_is_answered_with_its_code(server):
    ws = native(server, issue_token(server.data_dir, user="ann"))
    ws.send_close(status=4001, reason=b"bye")
    frame = recv_frame(ws)
    while frame.opcode != ABNF.OPCODE_CLOSE:
        frame = recv_frame(ws)
    assert int.from_bytes(frame.data[:2], "big") == 4001
    ws.shutdown()


def closing_code(ws: websocket.WebSocket) -> int:
    while True:
        frame = recv_frame(ws)
        if frame.opcode == ABNF.OPCODE_CLOSE:
            return int.from_bytes(frame.data[:2], "big")


def test_over_size_and_invalid_messages_close_the_connection(herald, tmp_path):
    # A small realtime.max_payload, so that a whole over-size message is in the server's
    # hands before it answers (closing on unread data would reset the connection instead).
    config = tmp_path / "herald.json"
    config.write_text(json.dumps({"realtime": {"max_payload": 2048}}), encoding="utf-8")
    server = herald.start("--config", str(config))
    token = issue_token(server.data_dir, user="ann")
    # Larger than realtime.max_payload in one frame: 1009.
    ws = native(server, token)
    ws.send("x" * 2049)
    assert closing_code(ws) == 1009
    ws.shutdown()
    # …or in fragments that only together exceed it: 1009 as well.
    ws = native(server, token)
    ws.send_frame(ABNF.create_frame("x" * 1500, ABNF.OPCODE_TEXT, fin=0))
    ws.send_frame(ABNF.create_frame("x" * 1500, ABNF.OPCODE_CONT, fin=1))
    assert closing_code(ws) == 1009
    ws.shutdown()
    # Text that is not UTF-8: 1007.
    ws = native(server, token)
    ws.send_frame(ABNF.create_frame(b"\xff\xfe", ABNF.OPCODE_TEXT))
    assert closing_code(ws) == 1007
    ws.shutdown()
    # A continuation without a start: 1002.
    ws = native(server, token)
    ws.send_frame(ABNF.create_frame("stray", ABNF.OPCODE_CONT, fin=1))
    assert closing_code(ws) == 1002
    ws.shutdown()
    # The server is still there for everyone else.
    ws = native(server, token)
    ws.send('{"type":"ping"}')
    assert next_of_type(ws, "pong") == {"type": "pong"}
    ws.close()


def test_frames_a_server_must_refuse_close_with_1002(server):
    """RFC 6455 §5.1/§5.2: a client's frames are masked, use no reserved bit without an
    extension, and carry a known opcode; control frames are short and never fragmented.
    Written as raw bytes, since no client library sends them."""
    token = issue_token(server.data_dir, user="ann")
    mask = b"\x37\xfa\x21\x3d"
    masked_hi = bytes(b ^ mask[i % 4] for i, b in enumerate(b"hi"))
    refused = {
        "unmasked text": b"\x81\x02hi",
        "reserved bit": b"\xc1\x82" + mask + masked_hi,
        "reserved opcode": b"\x83\x82" + mask + masked_hi,
        "fragmented ping": b"\x09\x82" + mask + masked_hi,
        "ping of 126 bytes": b"\x89\xfe\x00\x7e" + mask + bytes(126),
    }
    for name, frame in refused.items():
        ws = native(server, token)
        ws.sock.sendall(frame)
        assert closing_code(ws) == 1002, name
        ws.shutdown()
    # A masked frame split over several writes is read once whole.
    ws = native(server, token)
    text = b'{"type":"ping"}'
    frame = b"\x81" + bytes([0x80 | len(text)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(text))
    for i in range(0, len(frame), 3):
        ws.sock.sendall(frame[i:i + 3])
    assert next_of_type(ws, "pong") == {"type": "pong"}
    ws.close()


def raw_upgrade(server, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    extra = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
             "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    extra.update(headers or {})
    response = requests.get(server.url + path, headers=extra, timeout=TIMEOUT)
    return response.status_code, response.json()


def test_refused_upgrades_say_why(server):
    status, body = raw_upgrade(server, "/api/v1/realtime?token=garbage")
    assert status == 401 and body["error"]["code"] == "UNAUTHORIZED"
    status, body = raw_upgrade(server, "/api/v1/realtime")
    assert status == 401 and body["error"]["code"] == "UNAUTHORIZED"
    status, body = raw_upgrade(server, "/socket.io/?EIO=3&transport=websocket")
    assert status == 400 and body == {"code": 5, "message": "Unsupported protocol version"}
    status, body = raw_upgrade(server, "/api/v1/nothing-here")
    assert status == 404 and body["error"]["code"] == "NOT_FOUND"
    # An upgrade with a good token in the Authorization header instead of the query works.
    token = issue_token(server.data_dir, user="ann")
    # A browser page on another site may not open a WebSocket (CORS does not cover them):
    # Herald checks Origin against cors.allowed_origins; this server runs on its development
    # secret, so loopback pages are allowed and others are not.
    for path in (f"/api/v1/realtime?token={token}", "/socket.io/?EIO=4&transport=websocket"):
        status, body = raw_upgrade(server, path, {"Origin": "https://evil.example"})
        assert status == 403 and body["error"]["code"] == "ORIGIN_NOT_ALLOWED", (path, body)
    status, body = raw_upgrade(server, "/api/v1/realtime", {"Origin": "http://localhost:5173"})
    assert status == 401, "past the origin check the endpoint's own rules answer"
    ws = websocket.create_connection(server.url.replace("http://", "ws://") + f"/api/v1/realtime?token={token}",
                                     origin="http://localhost:5173", timeout=TIMEOUT)
    assert json.loads(ws.recv())["type"] == "connected"
    ws.close()
    ws = websocket.create_connection(server.url.replace("http://", "ws://") + "/api/v1/realtime",
                                     header=[f"Authorization: Bearer {token}"], timeout=TIMEOUT)
    assert json.loads(ws.recv())["type"] == "connected"
    ws.close()


def test_a_server_shutting_down_tells_native_clients_to_reconnect(herald):
    """The rideshare design's SERVER_CLOSING: on SIGTERM a connected native client is told to reconnect
    (then closed) instead of seeing its socket vanish, and the server exits cleanly."""
    server = herald.start()
    ws = native(server, issue_token(server.data_dir, user="ann"))
    server.proc.send_signal(signal.SIGTERM)
    message = next_of_type(ws, "error")
    assert message["code"] == "SERVER_CLOSING" and "reconnect" in message["message"]
    frame = recv_frame(ws)
    while frame.opcode == ABNF.OPCODE_TEXT:
        frame = recv_frame(ws)
    assert frame.opcode == ABNF.OPCODE_CLOSE
    assert server.stop() == 0
