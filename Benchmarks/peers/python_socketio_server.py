"""python-socketio peer for Herald's realtime benchmarks.

An ASGI app served by uvicorn (see Benchmarks/run.sh for the exact command):

* Socket.IO (python-socketio 5.x AsyncServer, Engine.IO v4) at /socket.io/. Every client
  that connects joins the room "bench" (Herald puts every authenticated socket in
  "user:<sub>"; the one-room benchmarks give all their clients the same sub, so both servers
  fan out to one room holding every client). When the CONNECT auth carries a token, the
  client also joins "user:<sub>", the sub read from the token without checking it (the
  many-small-rooms benchmark gives each client its own user).
* POST /api/v1/realtime/publish with Herald's body
  {"room": ..., "event": ..., "payload": {...}, "persist": bool}: emits `event` with
  `payload` to `room` and answers 202, the same contract as Herald's publish endpoint (a
  backend publishing over HTTP). python-socketio has no persistence and no connection state
  recovery, so "persist" is ignored.
* POST /api/v1/realtime/publish/batch with Herald's batch body {"events": [...]}: each event
  emitted in turn (python-socketio has no batch emit). No auth is checked here (Herald checks a service JWT
  on every publish: that cost stays on Herald's side of the comparison).

With REDIS_URL set (redis://127.0.0.1:6379/0), the server runs python-socketio's
AsyncRedisManager: several such processes form one Socket.IO server across nodes (an emit on
any of them reaches the room's members on all of them through Redis pub/sub), the
arrangement seed 004 chose for many instances (Benchmarks/cluster-run.sh).

Run: uvicorn python_socketio_server:app --app-dir Benchmarks/peers --loop uvloop \
        --ws websockets-sansio --host 127.0.0.1 --port 8090
"""

import base64
import json
import os

import socketio

ROOM = "bench"
REDIS_URL = os.environ.get("REDIS_URL")

sio = socketio.AsyncServer(
    async_mode="asgi",
    client_manager=socketio.AsyncRedisManager(REDIS_URL) if REDIS_URL else None,
    cors_allowed_origins="*",
    ping_interval=25,
    ping_timeout=20,
    max_http_buffer_size=1_000_000,
    logger=False,
    engineio_logger=False,
)


def _subject(auth):
    """The token's sub, read without checking the signature (Herald checks it; the peer only
    needs the user's room), or None."""
    token = auth.get("token") if isinstance(auth, dict) else None
    if not isinstance(token, str) or token.count(".") != 2:
        return None
    try:
        body = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        return claims.get("sub")
    except ValueError:
        return None


@sio.event
async def connect(sid, environ, auth):
    await sio.enter_room(sid, ROOM)
    # As Herald puts every signed-in socket in user:<sub> (the many-small-rooms benchmark).
    subject = _subject(auth)
    if subject:
        await sio.enter_room(sid, f"user:{subject}")


@sio.event
async def echo(sid, *args):
    return args


async def _read_body(receive):
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def _respond(send, status, obj):
    data = json.dumps(obj).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def http_app(scope, receive, send):
    """Everything that is not /socket.io/: the publish endpoint and a health check."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/healthz":
        await _respond(send, 200, {"status": "ok"})
        return
    if path == "/api/v1/realtime/publish" and scope["method"] == "POST":
        try:
            body = json.loads(await _read_body(receive))
            room, event = body["room"], body["event"]
            payload = body.get("payload")
        except (ValueError, KeyError, TypeError):
            await _respond(send, 400, {"error": {"code": "INVALID_JSON"}})
            return
        await sio.emit(event, payload, room=room)
        await _respond(send, 202, {"data": {"room": room, "event": event, "event_id": None, "seq": None}})
        return
    if path == "/api/v1/realtime/publish/batch" and scope["method"] == "POST":
        # Herald's batch body {"events": [publish body, ...]}. python-socketio has no batch
        # emit: each event is its own sio.emit (with the Redis manager, its own PUBLISH), as a
        # backend using python-socketio publishes many events.
        try:
            events = json.loads(await _read_body(receive))["events"]
            parsed = [(e["room"], e["event"], e.get("payload")) for e in events]
        except (ValueError, KeyError, TypeError):
            await _respond(send, 400, {"error": {"code": "INVALID_JSON"}})
            return
        for room, event, payload in parsed:
            await sio.emit(event, payload, room=room)
        await _respond(send, 202, {"data": {"events": [
            {"room": room, "event": event, "event_id": None, "seq": None} for room, event, _ in parsed]}})
        return
    await _respond(send, 404, {"error": {"code": "NOT_FOUND"}})


app = socketio.ASGIApp(sio, other_asgi_app=http_app, socketio_path="socket.io")
