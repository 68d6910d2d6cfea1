"""What a hostile or vanished WebSocket peer can make the real server hold (issue 19):
messages begun and never finished, floods of connections that close mid-message, oversize
messages before authentication, and a client that stops reading. Each test measures the
server process itself (/proc: resident memory, descriptors) or what it says on the wire."""
from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time

import pytest
import requests
import websocket
from websocket import ABNF

from conftest import WAIT, RawSocketIO, issue_token, publish, wait_until

TIMEOUT = WAIT


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def masked_frame(opcode: int, payload: bytes, fin: bool) -> bytes:
    """One client frame (RFC 6455 §5.2), masked with a fixed key."""
    head = bytes([(0x80 if fin else 0) | opcode])
    length = len(payload)
    if length < 126:
        head += bytes([0x80 | length])
    elif length < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", length)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", length)
    key = b"\x11\x22\x33\x44"
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def raw_upgrade(server, path: str) -> socket.socket:
    """A WebSocket opened by hand (so a test can send half a message and vanish)."""
    host, port = server.url[len("http://"):].split(":")
    sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        assert chunk, f"closed during the upgrade: {answer!r}"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return sock


def close_code(sock: socket.socket, within: float) -> int | None:
    """Reads until the server's close frame; its code, or None if the connection just ended."""
    sock.settimeout(within)
    data = b""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
        # Walk the server's (unmasked) frames.
        offset = 0
        while offset + 2 <= len(data):
            opcode, length = data[offset] & 0x0F, data[offset + 1] & 0x7F
            header = 2
            if length == 126:
                if offset + 4 > len(data):
                    break
                length, header = struct.unpack("!H", data[offset + 2:offset + 4])[0], 4
            elif length == 127:
                if offset + 10 > len(data):
                    break
                length, header = struct.unpack("!Q", data[offset + 2:offset + 10])[0], 10
            if offset + header + length > len(data):
                break
            if opcode == 0x8:
                return struct.unpack("!H", data[offset + header:offset + header + 2])[0]
            offset += header + length
    return None


def next_pong(ws: websocket.WebSocket) -> bool:
    """True once a pong message arrives (other messages, such as the inbox `sync`, skipped)."""
    for _ in range(20):
        if json.loads(ws.recv())["type"] == "pong":
            return True
    return False


def with_config(herald, tmp_path, realtime: dict):
    config = tmp_path / "herald.json"
    config.write_text(json.dumps({"realtime": realtime, "rate_limits": {"enabled": False}}), encoding="utf-8")
    return herald.start("--config", str(config))


def test_connections_that_vanish_mid_message_leave_nothing_behind(herald, tmp_path):
    # Strangers may hold messages as large as anyone here (so each connection can pin a
    # megabyte, as in the attack that found the leak): what they held must be freed when
    # they go, round after round.
    server = with_config(herald, tmp_path, {"max_payload": 1_000_000, "unauthenticated_max_payload": 1_000_000})
    pid = server.proc.pid
    fragment = masked_frame(0x1, b"4" + b"x" * 900_000, fin=False)
    partial = masked_frame(0x1, b"4" + b"y" * 900_000, fin=True)[:450_000]  # half a frame

    def round_of(count: int) -> None:
        socks = []
        for index in range(count):
            sock = raw_upgrade(server, "/socket.io/?EIO=4&transport=websocket")
            sock.sendall(fragment if index % 2 == 0 else partial)
            socks.append(sock)
        time.sleep(0.3)  # the server has read what they sent
        for sock in socks:
            sock.close()

    baseline_fds = descriptors(pid)
    round_of(60)
    time.sleep(1.0)
    after_first = rss_kib(pid)
    for _ in range(4):
        round_of(60)
    time.sleep(1.0)
    after_five = rss_kib(pid)
    # 240 more connections each held ~0.9 MB when they vanished: kept, that is ~210 MB.
    # Freed, the allocator hands the same memory to the next round.
    assert after_five - after_first < 40_000, f"RSS grew {after_five - after_first} KiB over four rounds"
    wait_until(lambda: descriptors(pid) <= baseline_fds + 2, timeout=WAIT, message="descriptors back to baseline")
    assert server.get("/healthz").status_code == 200


def test_a_message_left_unfinished_is_cut_at_its_deadline(herald, tmp_path):
    server = with_config(herald, tmp_path, {"partial_message_timeout_ms": 600})
    token = issue_token(server.data_dir, user="ann")
    # Fragments without the last one (a ping between them keeps the connection lively).
    ws = websocket.create_connection(server.url.replace("http://", "ws://") + f"/api/v1/realtime?token={token}", timeout=TIMEOUT)
    assert json.loads(ws.recv())["type"] == "connected"
    started = time.monotonic()
    ws.send_frame(ABNF.create_frame('{"type"', ABNF.OPCODE_TEXT, fin=0))
    ws.ping(b"still here")
    while True:
        frame = ws.recv_frame()
        if frame.opcode == ABNF.OPCODE_CLOSE:
            break
    assert int.from_bytes(frame.data[:2], "big") == 1008
    # Not before the deadline (however late a loaded machine fires it).
    assert 0.5 <= time.monotonic() - started
    # Half a frame, never finished.
    sock = raw_upgrade(server, f"/api/v1/realtime?token={token}")
    sock.sendall(masked_frame(0x1, b'{"type":"ping"}' * 10, fin=True)[:20])
    assert close_code(sock, within=60) == 1008
    sock.close()
    # A message finished in time is served as usual.
    ws = websocket.create_connection(server.url.replace("http://", "ws://") + f"/api/v1/realtime?token={token}", timeout=TIMEOUT)
    assert json.loads(ws.recv())["type"] == "connected"
    ws.send_frame(ABNF.create_frame('{"type"', ABNF.OPCODE_TEXT, fin=0))
    ws.send_frame(ABNF.create_frame(':"ping"}', ABNF.OPCODE_CONT, fin=1))
    assert next_pong(ws)
    time.sleep(1.0)  # past the deadline the first fragment would have had
    ws.send('{"type":"ping"}')
    assert next_pong(ws)
    ws.close()


def test_strangers_may_send_only_small_messages_until_they_authenticate(herald, tmp_path):
    server = with_config(herald, tmp_path, {"unauthenticated_max_payload": 4096})
    token = issue_token(server.data_dir, user="ann")
    # Before CONNECT: a message over the small limit closes with 1009, in one frame or in fragments.
    stranger = RawSocketIO(server)
    stranger.ws.send("4" + "z" * 5000)
    code = None
    while code is None:
        frame = stranger.ws.recv_frame()
        if frame.opcode == ABNF.OPCODE_CLOSE:
            code = int.from_bytes(frame.data[:2], "big")
    assert code == 1009
    stranger = RawSocketIO(server)
    stranger.ws.send_frame(ABNF.create_frame("4" + "z" * 3000, ABNF.OPCODE_TEXT, fin=0))
    stranger.ws.send_frame(ABNF.create_frame("z" * 3000, ABNF.OPCODE_CONT, fin=1))
    frame = stranger.ws.recv_frame()
    while frame.opcode != ABNF.OPCODE_CLOSE:
        frame = stranger.ws.recv_frame()
    assert int.from_bytes(frame.data[:2], "big") == 1009
    # After CONNECT with a valid token, the same size is an ordinary message.
    member = RawSocketIO(server)
    member.connect({"token": token})
    member.send("42" + json.dumps(["unknown_event", "z" * 20_000]))
    assert member.call("get_unread_count") == [{"count": 0}]
    member.close()


def test_a_native_client_that_stops_reading_is_cut_when_its_queue_overflows(herald, tmp_path):
    server = with_config(herald, tmp_path, {"outbound_limit_bytes": 65_536})
    pid = server.proc.pid
    token = issue_token(server.data_dir, user="ann")
    service = issue_token(server.data_dir, user="backend", role="service")

    def slow_disconnects() -> float:
        for line in server.get("/metrics").text.splitlines():
            if line.startswith("herald_realtime_slow_disconnects_total "):
                return float(line.split()[1])
        return 0.0

    before = slow_disconnects()
    host, port = server.url[len("http://"):].split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window, never read
    sock.settimeout(TIMEOUT)
    sock.connect((host, int(port)))
    sock.sendall((f"GET /api/v1/realtime?token={token} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    assert sock.recv(12).startswith(b"HTTP/1.1 101")
    fds_with_client = descriptors(pid)
    blob = "p" * 16_000
    # Far more than the kernel's buffers and the 64 KiB queue together; the client reads nothing.
    for index in range(400):
        publish(server, service, "user:ann", "bulk", {"index": index, "blob": blob}, persist=False)
        if index % 50 == 49 and slow_disconnects() > before:
            break
    wait_until(lambda: slow_disconnects() > before, timeout=WAIT, message="the stalled client counted as a slow disconnect")
    wait_until(lambda: descriptors(pid) < fds_with_client, timeout=WAIT, message="the stalled client's descriptor closed")
    sock.close()


def test_floods_of_idle_half_open_and_unused_connections_return_to_baseline(herald, tmp_path):
    """Resource test: rounds of strangers that connect and send nothing, trickle half a
    request head, or open an Engine.IO session and never use it. The server cuts the first
    two at `server.request_head_timeout_ms` (the peers keep their sockets open) and expires
    the sessions; descriptors return to the baseline and memory stops growing. Prints the
    bytes kept per 1,000 hostile connections for RELIABILITY.md."""
    config = tmp_path / "flood.json"
    config.write_text(json.dumps({
        "server": {"request_head_timeout_ms": 1000},
        "realtime": {"ping_interval_ms": 500, "ping_timeout_ms": 500},
        "rate_limits": {"enabled": False},
    }), encoding="utf-8")
    server = herald.start("--config", str(config))
    pid = server.proc.pid
    host, port = server.url[len("http://"):].split(":")
    per_round = 300

    def flood() -> list[socket.socket]:
        held = []
        for index in range(per_round):
            kind = index % 3
            if kind == 2:
                answer = requests.get(server.url + "/socket.io/?EIO=4&transport=polling", timeout=TIMEOUT)
                assert answer.status_code == 200 and answer.text.startswith("0{"), answer.text[:80]
                continue
            sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
            if kind == 1:
                sock.sendall(b"GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(sock)
        return held

    def closed_by_server(sock: socket.socket) -> bool:
        sock.settimeout(60)
        try:
            return sock.recv(1) == b""
        except (ConnectionResetError, socket.timeout):
            return False

    baseline_fds = descriptors(pid)
    requests.get(server.url + "/healthz", timeout=TIMEOUT)
    samples = []
    for round_ in range(5):
        held = flood()
        # The peers never close: the server must.
        assert all(closed_by_server(sock) for sock in held), "a stranger's connection outlived the head timeout"
        for sock in held:
            sock.close()
        wait_until(lambda: descriptors(pid) <= baseline_fds + 3, timeout=WAIT, message="descriptors back to baseline")
        time.sleep(1.5)  # unused Engine.IO sessions expire after ping interval + timeout
        samples.append(rss_kib(pid))
    growth = samples[-1] - samples[0]
    per_thousand = growth * 1024 * 1000 // (per_round * 4)
    print(f"\n[flood] {per_round * 5} hostile connections in 5 rounds; RSS by round (KiB) {samples}; "
          f"kept after round 1: {growth} KiB = {per_thousand} bytes per 1,000 connections; "
          f"descriptors back to {descriptors(pid)} (baseline {baseline_fds})")
    assert growth < 8_000, f"RSS grew {growth} KiB over four rounds of {per_round} connections"
    assert server.get("/healthz").status_code == 200


def raw_connection(server, source: str = "127.0.0.1") -> socket.socket:
    host, port = server.url[len("http://"):].split(":")
    return socket.create_connection((host, int(port)), timeout=TIMEOUT, source_address=(source, 0))


def read_response(sock: socket.socket) -> bytes:
    """One whole response (head and Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed inside a response body"
        body += chunk
    return head + b"\r\n\r\n" + body


def cut_by_server(sock: socket.socket, patience: float = 120) -> bool:
    """True once the server closes the connection (the peer itself never does)."""
    sock.settimeout(patience)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_slow_bodies_idle_keep_alives_and_trickled_second_heads_are_cut(herald, tmp_path):
    """After the first request head: a body must keep arriving (server.request_body_timeout_ms
    plus a second per request_body_min_bytes_per_second bytes), and a kept-alive connection
    must bring its next head within server.idle_timeout_ms. A long-poll waiting for its
    answer and an upload at a decent rate are never cut."""
    config = tmp_path / "deadlines.json"
    config.write_text(json.dumps({
        "server": {"idle_timeout_ms": 1500, "request_body_timeout_ms": 1500, "request_body_min_bytes_per_second": 1000},
        "realtime": {"ping_interval_ms": 5000, "ping_timeout_ms": 5000},
        "rate_limits": {"enabled": False},
    }), encoding="utf-8")
    server = herald.start("--config", str(config))
    started = time.monotonic()

    idle = raw_connection(server)
    idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(idle).startswith(b"HTTP/1.1 200")

    trickled_body = raw_connection(server)
    trickled_body.sendall(b"POST /api/v1/notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")

    second_head = raw_connection(server)
    second_head.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(second_head).startswith(b"HTTP/1.1 200")
    second_head.sendall(b"GET /healthz HTTP/1.1\r\n")

    # A long-poll: the Engine.IO GET is answered only by the server's ping, 5 s later,
    # longer than every deadline above.
    sid = json.loads(requests.get(server.url + "/socket.io/?EIO=4&transport=polling", timeout=TIMEOUT).text[1:])["sid"]

    sent = {"body": 0, "head": 0}

    def trickle() -> None:
        # A byte every 0.4 s to each trickler, until the server cuts them.
        for _ in range(150):
            for name, sock in (("body", trickled_body), ("head", second_head)):
                try:
                    sock.sendall(b"x" if name == "body" else b"X")
                    sent[name] += 1
                except OSError:
                    pass
            time.sleep(0.4)
            if all(s.fileno() < 0 for s in (trickled_body, second_head)):
                return

    feeder = threading.Thread(target=trickle, daemon=True)
    feeder.start()
    poll = requests.get(server.url + f"/socket.io/?EIO=4&transport=polling&sid={sid}", timeout=60)
    assert poll.status_code == 200 and poll.text == "2", poll.text
    for name, sock in (("idle keep-alive", idle), ("trickled body", trickled_body), ("trickled second head", second_head)):
        assert cut_by_server(sock), f"the {name} was never cut"
        sock.close()
    # The body never reached its 100 bytes: it was cut, not finished.
    assert sent["body"] < 100
    assert time.monotonic() - started >= 1.5

    # An upload at 2,500 bytes a second, longer in all than the body timeout, is served.
    upload = raw_connection(server)
    token = issue_token(server.data_dir, user="svc", role="service")
    body = json.dumps({"user_id": "u1", "type": "job_update", "title": "t", "data": {"note": "x" * 5800}}).encode()
    upload.sendall(f"POST /api/v1/notifications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode())
    for offset in range(0, len(body), 2000):
        upload.sendall(body[offset:offset + 2000])
        time.sleep(0.8)
    answer = read_response(upload)
    assert not answer.startswith(b"HTTP/1.1 5"), answer[:200]
    upload.close()
    assert server.get("/healthz").status_code == 200


def test_nine_hundred_held_connections_from_one_client_leave_others_served(herald, tmp_path):
    """The attack: a descriptor limit of 1,024 and 900 sockets held open by one address.
    That client gets its share (server.max_connections_per_client: a quarter of the node's
    connection limit by default), the rest are answered 503 TOO_MANY_CONNECTIONS and closed,
    and another address is served throughout."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    server = herald.start(wrapper=["prlimit", "--nofile=1024:1024", "--"])
    held, refused = [], 0
    for index in range(900):
        sock = raw_connection(server)
        if index % 2 == 0:
            # An idle keep-alive after one request...
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        else:
            # ...or a body that never comes.
            sock.sendall(b"POST /api/v1/notifications HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        held.append(sock)
    for sock in held:
        sock.settimeout(60)
        try:
            first = sock.recv(4096)
        except socket.timeout:
            continue  # a body still being waited for: admitted
        if first.startswith(b"HTTP/1.1 503"):
            while b"}}" not in first:
                more = sock.recv(4096)
                if not more:
                    break
                first += more
            assert b"TOO_MANY_CONNECTIONS" in first, first
            refused += 1
    admitted = 900 - refused
    print(f"\n[connection cap] one address: {admitted} of 900 admitted, {refused} refused 503")
    assert 8 <= admitted <= 450, admitted
    # Another client is served while the 900 are held.
    for _ in range(20):
        other = raw_connection(server, source="127.0.0.2")
        other.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert read_response(other).startswith(b"HTTP/1.1 200")
        other.close()
    for sock in held:
        sock.close()
    # Its slots come back once its connections close.
    wait_until(lambda: requests.get(server.url + "/healthz", timeout=TIMEOUT).status_code == 200, timeout=120, message="served again")
