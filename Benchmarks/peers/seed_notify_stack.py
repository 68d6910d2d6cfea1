"""The seed 004 notification stack (`/work/shared/seeds/004_a1f84379d6dd9ed8.txt`) as that
document builds it: the peer of Herald's durable notification path in Benchmarks/durable-run.sh.

    python seed_notify_stack.py --database sqlite:/tmp/x/seed.sqlite --redis redis://127.0.0.1:6390/0 \
        --port 18480 --secret S --apns-url https://localhost:PORT --apns-ca CA.pem
    python seed_notify_stack.py --database postgres://postgres@127.0.0.1:18500/seed ...

One process: FastAPI on uvicorn (one worker; uvloop, httptools, websockets-sansio, warning logs,
no access log: the flags Benchmarks/run.sh gives the python-socketio peer) with python-socketio's
`AsyncServer(async_mode='asgi', cors_allowed_origins='*', client_manager=AsyncRedisManager(REDIS_URL))`
mounted in front of it (the document's "Configuration" section), a Redis server from Debian, and
the inbox in a database through SQLAlchemy 2 asyncio (the ORM: `Notification.create`,
`Notification.get_by`), asyncpg on PostgreSQL, aiosqlite on SQLite.

What the document specifies and this does:
  * Tables: `notifications` (uuid id, user_id, org_id, type, severity, delivery, title, body,
    data JSON/JSONB, created_at DEFAULT now(), read_at, sent_via) with `idx_user_unread
    (user_id, read_at) WHERE read_at IS NULL` and `idx_created_at (created_at DESC)`;
    `push_devices` (fcm_token UNIQUE, idx_user_tokens); `notification_preferences`
    (PK user_id, notification_type); the foreign keys to `users(id)`.
  * `send_notification` (§ "Delivery Logic"), per recipient: (1) `Notification.create` — the
    row INSERTed (RETURNING created_at) and committed; (2) `get_user_preferences(user, type)` —
    the preference row by primary key, NOTIFICATION_CONFIG's defaults when there is none;
    (3) `is_user_online(user)` in Redis; online: `sio.emit('notification', notification,
    room=f'user:{user_id}')` (through the Redis manager's pub/sub, as every emit is);
    offline: `send_fcm_push` to each of the user's registered devices, an
    Unregistered answer deleting the token (`remove_invalid_token`); then the outcome recorded
    in the row's `sent_via` ('socket' | 'push'; the document's "Delivery tracking" column, the
    only delivery log it keeps) and committed.
  * Socket.IO `connect`: authenticate, join `user:{user_id}`, and (§ "On Reconnection") send
    `sync` with the user's unread notifications; `disconnect` cleans up; `subscribe` joins the
    room and answers {status: 'subscribed'}; `get_unread_count` answers {count}.
  * POST /push/register {fcm_token, platform, device_id}.

Where the document is silent, what it implies (and what was chosen):
  * Presence ("Redis coordinates state across instances", `is_user_online`): a Redis set
    `presence:user:{user_id}` of the user's socket ids, SADD on connect, SREM on disconnect;
    online = SCARD > 0. One round trip per check, as the document's per-notification call.
  * The creation endpoint: the document creates notifications from backend events; here it is
    Herald's `POST /api/v1/notifications` (service or operator token; `user_id` or `user_ids`,
    type, title, body, data, optional severity/delivery) awaiting `send_notification` for each
    recipient, answering 201 `{"data": {"results": [{"notification": {...}, "channel":
    "socket"|"push"|"inbox", "deduplicated": false, "push_deliveries": n, "push_suppressed":
    null}]}}` — the fields notify_driver.py reads. Routes are under Herald's `/api/v1` (the
    document writes `/api/...`). POST /api/v1/push/register also takes Herald's `token` for
    `fcm_token`. GET /api/v1/realtime/presence/{user_id} answers `{"data": {"online": bool}}`
    from the same Redis presence (the driver waits on it). /healthz and /readyz answer 200.
  * Auth ("Authenticate user"): Herald's tokens — HS256 JWTs with `sub`, `role` and `exp`,
    checked with PyJWT and the same secret (--secret, or HERALD_JWT_SECRET); the Socket.IO
    CONNECT carries `{token}` as the document's clients send it.
  * `users`: the host app's table, here just ids; a user row is created the first time the user
    authenticates (socket connect, device registration), so the notifications' foreign key holds.
    user ids are the tokens' `sub` strings, not UUIDs (the driver's users are named).
  * Notification types: the document's NOTIFICATION_CONFIG plus `job_update` (severity
    warning, delivery push, enabled by default — Herald's catalogue entry), the type the driver
    sends; an unknown type is delivery 'push', severity 'info'.
  * Push: the document calls firebase_admin's `messaging.send` (a blocking call inside
    `async def send_fcm_push`). Substituted: aioapns (an asyncio APNs HTTP/2 client, token
    auth, its default pool of at most 10 connections) to the same `herald-mock-apns` Herald
    sends to — awaited, so unlike `messaging.send` it does not block the event loop. The
    payload is what FCM hands APNs for the document's message: aps.alert {title, body} and the
    data keys `notification_id`, `type` at the top level. Two adaptations of aioapns to the
    mock, neither changing its work per push (the same as Benchmarks/peers/seed_alert_pipeline.py):
    its `host` header is sent as `:authority`, and the mock's empty DATA frame ending a 200
    is not parsed as JSON.
  * SQLAlchemy as a FastAPI app usually runs it: one AsyncSession per request
    (`expire_on_commit=False`, the asyncio documentation's setting), the engine's default
    pool (5 connections + 10 overflow; --pool-size/--max-overflow change it). On SQLite:
    WAL (`PRAGMA journal_mode=WAL` on each new connection) with `PRAGMA synchronous=NORMAL`
    by default — the setting Herald runs SQLite with, so both make the same durability promise
    (SQLite's own default, FULL, would fsync the WAL on every commit; --sqlite-synchronous FULL
    measures that); pysqlite's busy timeout raised from 5 s to 30 s so concurrent writers wait
    instead of failing; foreign keys not enforced (SQLAlchemy does not turn them on for SQLite).
    On PostgreSQL: the server's defaults (fsync on, synchronous_commit on).
  * `sync` on connect is sent from a task started by the handler (python-socketio sends the
    CONNECT packet when the handler returns).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import logging
import os
import ssl
import sys
import tempfile
import uuid
from importlib import metadata
from typing import Any, Optional
from urllib.parse import urlparse

import jwt
import redis.asyncio as aioredis
import socketio
from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsProductionClientProtocol
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import (JSON, Boolean, DateTime, ForeignKey, Index, String, Text, Time, Uuid, event, func, select,
                        text)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

log = logging.getLogger("seed004")


# Configuration ---------------------------------------------------------------------------------------
def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--database", required=True,
                   help="sqlite:PATH | postgres://user@host:port/db (or any SQLAlchemy asyncio URL)")
    p.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8090)
    p.add_argument("--secret", default=os.environ.get("HERALD_JWT_SECRET"), help="HS256 secret of the tokens")
    p.add_argument("--apns-url", required=True, help="https://localhost:PORT of herald-mock-apns")
    p.add_argument("--apns-ca", required=True, help="the mock's CA certificate (PEM)")
    p.add_argument("--apns-topic", default="com.example.app")
    p.add_argument("--sqlite-synchronous", default="NORMAL", choices=["OFF", "NORMAL", "FULL", "EXTRA"])
    p.add_argument("--pool-size", type=int, default=5, help="SQLAlchemy pool_size (its default: 5)")
    p.add_argument("--max-overflow", type=int, default=10, help="SQLAlchemy max_overflow (its default: 10)")
    p.add_argument("--reset", action="store_true", help="drop the tables first")
    args = p.parse_args(argv)
    if not args.secret:
        p.error("--secret (or HERALD_JWT_SECRET) is required")
    return args


def sqlalchemy_url(url: str) -> str:
    if url.startswith("sqlite:") and not url.startswith("sqlite+"):
        path = url[len("sqlite:"):]
        path = path[2:] if path.startswith("//") else path
        return "sqlite+aiosqlite:///" + os.path.abspath(path)
    if url.startswith("postgres://"):
        return "postgresql+asyncpg://" + url[len("postgres://"):]
    if url.startswith("postgresql://"):
        return "postgresql+asyncpg://" + url[len("postgresql://"):]
    return url


# The document's NOTIFICATION_CONFIG (plus the benchmark's type, as Herald's catalogue has it).
NOTIFICATION_CONFIG = {
    "payment_received": {"severity": "alert", "delivery": "push", "default_enabled": True},
    "invoice_overdue": {"severity": "warning", "delivery": "push", "default_enabled": True},
    "invoice_created": {"severity": "info", "delivery": "in_app", "default_enabled": True},
    "profile_updated": {"severity": "info", "delivery": "in_app", "default_enabled": True},
    "system_maintenance": {"severity": "warning", "delivery": "in_app", "default_enabled": False},
    "job_update": {"severity": "warning", "delivery": "push", "default_enabled": True},
}
DEFAULT_TYPE = {"severity": "info", "delivery": "push", "default_enabled": True}


# Schema (the document's DDL as SQLAlchemy models) ----------------------------------------------------------
class Base(DeclarativeBase):
    pass


JSONType = JSON().with_variant(JSONB(), "postgresql")


class User(Base):
    __tablename__ = "users"
    id: Mapped[str] = mapped_column(String(255), primary_key=True)


class Notification(Base):
    __tablename__ = "notifications"
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[str] = mapped_column(String(255), ForeignKey("users.id"), nullable=False)
    org_id: Mapped[Optional[uuid.UUID]] = mapped_column(Uuid)
    type: Mapped[str] = mapped_column(String, nullable=False)
    severity: Mapped[str] = mapped_column(String, nullable=False)
    delivery: Mapped[str] = mapped_column(String, nullable=False)
    title: Mapped[str] = mapped_column(String(255), nullable=False)
    body: Mapped[Optional[str]] = mapped_column(Text)
    data: Mapped[Optional[dict]] = mapped_column(JSONType)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
    read_at: Mapped[Optional[dt.datetime]] = mapped_column(DateTime)
    sent_via: Mapped[Optional[str]] = mapped_column(String)

    @classmethod
    async def create(cls, session: AsyncSession, user_id: str, notification: dict) -> "Notification":
        row = cls(user_id=user_id, **notification)
        session.add(row)
        await session.commit()  # INSERT ... RETURNING created_at; COMMIT
        return row

    @classmethod
    async def get_by(cls, session: AsyncSession, user_id: str, read_at=None) -> list["Notification"]:
        assert read_at is None
        query = select(cls).where(cls.user_id == user_id, cls.read_at.is_(None)).order_by(cls.created_at.desc())
        return list((await session.scalars(query)).all())

    def to_dict(self) -> dict:
        return {
            "id": str(self.id), "user_id": self.user_id, "type": self.type, "severity": self.severity,
            "delivery": self.delivery, "title": self.title, "body": self.body, "data": self.data or {},
            "created_at": self.created_at.isoformat() + "Z" if self.created_at else None,
            "read_at": self.read_at.isoformat() + "Z" if self.read_at else None, "sent_via": self.sent_via,
        }


Index("idx_user_unread", Notification.user_id, Notification.read_at,
      postgresql_where=text("read_at IS NULL"), sqlite_where=text("read_at IS NULL"))
Index("idx_created_at", Notification.created_at.desc())


class PushDevice(Base):
    __tablename__ = "push_devices"
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[str] = mapped_column(String(255), ForeignKey("users.id"), nullable=False, index=False)
    fcm_token: Mapped[str] = mapped_column(String(255), nullable=False, unique=True)
    platform: Mapped[str] = mapped_column(String(50), nullable=False)
    device_id: Mapped[Optional[str]] = mapped_column(String(255))
    user_agent: Mapped[Optional[str]] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
    last_used_at: Mapped[dt.datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())


Index("idx_user_tokens", PushDevice.user_id)


class NotificationPreference(Base):
    __tablename__ = "notification_preferences"
    user_id: Mapped[str] = mapped_column(String(255), ForeignKey("users.id"), primary_key=True)
    notification_type: Mapped[str] = mapped_column(String, primary_key=True)
    in_app_enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    push_enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    quiet_hours_start: Mapped[Optional[dt.time]] = mapped_column(Time)
    quiet_hours_end: Mapped[Optional[dt.time]] = mapped_column(Time)


# Request bodies (module level: FastAPI resolves annotations in the module's namespace).
class SendRequest(BaseModel):
    user_id: Optional[str] = None
    user_ids: Optional[list[str]] = None
    type: str
    title: str
    body: Optional[str] = None
    data: Optional[dict[str, Any]] = None
    severity: Optional[str] = None
    delivery: Optional[str] = None


class RegisterRequest(BaseModel):
    fcm_token: Optional[str] = None
    token: Optional[str] = None
    platform: str = "ios"
    device_id: Optional[str] = None
    provider: Optional[str] = None


def make_engine(args: argparse.Namespace):
    url = sqlalchemy_url(args.database)
    if url.startswith("sqlite"):
        engine = create_async_engine(url, pool_size=args.pool_size, max_overflow=args.max_overflow,
                                     connect_args={"timeout": 30})
        synchronous = args.sqlite_synchronous

        @event.listens_for(engine.sync_engine, "connect")
        def _pragmas(dbapi_connection, _record):
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.close()
        return engine
    return create_async_engine(url, pool_size=args.pool_size, max_overflow=args.max_overflow)


async def setup_database(args: argparse.Namespace) -> None:
    engine = make_engine(args)
    async with engine.begin() as conn:
        if args.reset:
            await conn.run_sync(Base.metadata.drop_all)
        await conn.run_sync(Base.metadata.create_all)
        if engine.dialect.name == "sqlite":
            mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
            sync = (await conn.exec_driver_sql("PRAGMA synchronous")).scalar()
            print(f"[seed004] sqlite journal_mode={mode} synchronous={sync} (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA)",
                  file=sys.stderr)
    await engine.dispose()


# The application ----------------------------------------------------------------------------------------
def build_app(args: argparse.Namespace):
    engine = make_engine(args)
    SessionLocal = async_sessionmaker(engine, expire_on_commit=False)
    redis = aioredis.Redis.from_url(args.redis, decode_responses=True)
    sio = socketio.AsyncServer(
        async_mode="asgi",
        cors_allowed_origins="*",
        client_manager=socketio.AsyncRedisManager(args.redis),
    )
    api = FastAPI(title="seed 004 notifications")
    secret = args.secret

    # -- auth
    def authenticate(token: Optional[str]) -> dict:
        if not token:
            raise PermissionError("missing token")
        claims = jwt.decode(token, secret, algorithms=["HS256"], options={"require": ["exp", "sub"]})
        return {"user_id": claims["sub"], "role": claims.get("role", "customer")}

    async def current_identity(request: Request) -> dict:
        header = request.headers.get("authorization", "")
        try:
            return authenticate(header[7:] if header.lower().startswith("bearer ") else None)
        except (PermissionError, jwt.PyJWTError):
            raise HTTPException(status_code=401, detail="Authentication is required.")

    async def get_db():
        async with SessionLocal() as session:
            yield session

    async def ensure_user(session: AsyncSession, user_id: str) -> None:
        if await session.get(User, user_id) is None:
            session.add(User(id=user_id))
            try:
                await session.commit()
            except IntegrityError:
                await session.rollback()

    # -- presence in Redis
    def presence_key(user_id: str) -> str:
        return f"presence:user:{user_id}"

    async def is_user_online(user_id: str) -> bool:
        return await redis.scard(presence_key(user_id)) > 0

    # -- push (firebase_admin messaging.send in the document; aioapns to the mock here)
    apns_holder: dict[str, APNs] = {}

    def apns() -> APNs:
        client = apns_holder.get("client")
        if client is None:
            target = urlparse(args.apns_url)

            def connection_made(self, transport):
                # aioapns names the host in a `host` header; the mock (NIO's HTTP/2 server) wants `:authority`.
                send_headers = self.conn.send_headers
                self.conn.send_headers = lambda stream_id, headers, **kw: send_headers(
                    stream_id, [(":authority", v) if k == "host" else (k, v) for k, v in headers], **kw)
                APNsProductionClientProtocol.connection_made(self, transport)

            def on_data_received(self, raw_data: bytes, stream_id: int) -> None:
                # The mock ends a 200 with an empty DATA frame (Apple ends it on the HEADERS frame).
                if raw_data:
                    APNsProductionClientProtocol.on_data_received(self, raw_data, stream_id)

            protocol = type("MockAPNsProtocol", (APNsProductionClientProtocol,),
                            {"APNS_SERVER": target.hostname, "APNS_PORT": target.port,
                             "connection_made": connection_made, "on_data_received": on_data_received})
            context = ssl.create_default_context(cafile=args.apns_ca)
            context.set_alpn_protocols(["h2"])
            key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
            if int(metadata.version("aioapns").split(".")[0]) < 4:  # aioapns 3 takes the .p8 file's path
                path = os.path.join(tempfile.mkdtemp(), "AuthKey_SEED123456.p8")
                with open(path, "w") as f:
                    f.write(key)
                key = path
            client = APNs(key=key, key_id="SEED123456", team_id="TEAM123456", topic=args.apns_topic, ssl_context=context)
            client.pool.protocol_class = protocol
            apns_holder["client"] = client
        return client

    async def remove_invalid_token(session: AsyncSession, device: PushDevice) -> None:
        await session.delete(device)

    async def send_fcm_push(session: AsyncSession, device: PushDevice, notification: dict) -> bool:
        message = {
            "aps": {"alert": {"title": notification["title"], "body": notification["body"]}},
            "notification_id": notification["id"],
            "type": notification["type"],
        }
        request = NotificationRequest(device_token=device.fcm_token, message=message, priority=10,
                                      push_type=PushType.ALERT)
        result = await apns().send_notification(request)
        if result.is_successful:
            return True
        if result.status == "410" or result.description in ("Unregistered", "BadDeviceToken"):
            await remove_invalid_token(session, device)  # messaging.UnregisteredError
            return False
        log.error("push failed: %s %s", result.status, result.description)
        raise RuntimeError(f"push failed: {result.status} {result.description}")

    async def get_user_preferences(session: AsyncSession, user_id: str, notification_type: str) -> dict:
        row = await session.get(NotificationPreference, (user_id, notification_type))
        if row is None:
            enabled = NOTIFICATION_CONFIG.get(notification_type, DEFAULT_TYPE)["default_enabled"]
            return {"enabled": enabled, "in_app_enabled": enabled, "push_enabled": enabled}
        return {"enabled": row.in_app_enabled or row.push_enabled, "in_app_enabled": row.in_app_enabled,
                "push_enabled": row.push_enabled}

    async def send_notification(session: AsyncSession, user_id: str, fields: dict) -> dict:
        # 1. Persist to database (source of truth)
        row = await Notification.create(session, user_id, fields)
        notification = row.to_dict()
        result = {"notification": notification, "deduplicated": False, "channel": "inbox", "push_deliveries": 0,
                  "push_suppressed": None}
        # 2. Check user preferences
        prefs = await get_user_preferences(session, user_id, row.type)
        if not prefs["enabled"]:
            return result
        channel = None
        # 3. Route based on delivery setting and connection state
        if row.delivery == "push":
            if await is_user_online(user_id):
                await sio.emit("notification", notification, room=f"user:{user_id}")
                channel = "socket"
            else:
                devices = (await session.scalars(select(PushDevice).where(PushDevice.user_id == user_id))).all()
                sent = 0
                for device in devices:
                    if await send_fcm_push(session, device, notification):
                        sent += 1
                result["push_deliveries"] = len(devices)
                if sent:
                    channel = "push"
        elif row.delivery == "in_app":
            if await is_user_online(user_id):
                await sio.emit("notification", notification, room=f"user:{user_id}")
                channel = "socket"
        # The outcome: `sent_via` ("Delivery tracking").
        if channel:
            row.sent_via = channel
            notification["sent_via"] = channel
            result["channel"] = channel
        await session.commit()
        return result

    # -- REST
    @api.post("/api/v1/notifications", status_code=201)
    async def create_notifications(body: SendRequest, identity: dict = Depends(current_identity),
                                   session: AsyncSession = Depends(get_db)):
        if identity["role"] not in ("service", "operator"):
            raise HTTPException(status_code=403, detail="Only services and operators send notifications.")
        users = body.user_ids or ([body.user_id] if body.user_id else [])
        if not users:
            raise HTTPException(status_code=422, detail="user_id or user_ids is required")
        config = NOTIFICATION_CONFIG.get(body.type, DEFAULT_TYPE)
        results = []
        for user_id in dict.fromkeys(users):
            fields = {"type": body.type, "severity": body.severity or config["severity"],
                      "delivery": body.delivery or config["delivery"], "title": body.title, "body": body.body,
                      "data": body.data or {}}
            try:
                results.append(await send_notification(session, user_id, fields))
            except IntegrityError:
                await session.rollback()
                raise HTTPException(status_code=404, detail=f"unknown user {user_id}")
        return {"data": {"results": results}}

    @api.post("/api/v1/push/register")
    async def register_device(body: RegisterRequest, request: Request, identity: dict = Depends(current_identity),
                              session: AsyncSession = Depends(get_db)):
        token = body.fcm_token or body.token
        if not token:
            raise HTTPException(status_code=422, detail="fcm_token is required")
        await ensure_user(session, identity["user_id"])
        device = (await session.scalars(select(PushDevice).where(PushDevice.fcm_token == token))).first()
        created = device is None
        if created:
            device = PushDevice(user_id=identity["user_id"], fcm_token=token, platform=body.platform,
                                device_id=body.device_id, user_agent=request.headers.get("user-agent"))
            session.add(device)
        else:
            device.user_id, device.platform, device.device_id = identity["user_id"], body.platform, body.device_id
            device.last_used_at = dt.datetime.utcnow()
        await session.commit()
        return JSONResponse({"data": {"id": str(device.id), "user_id": device.user_id, "fcm_token": device.fcm_token,
                                      "platform": device.platform, "device_id": device.device_id}},
                            status_code=201 if created else 200)

    @api.get("/api/v1/realtime/presence/{user_id}")
    async def presence(user_id: str, identity: dict = Depends(current_identity)):
        if identity["user_id"] != user_id and identity["role"] not in ("service", "operator"):
            raise HTTPException(status_code=403, detail="forbidden")
        return {"data": {"user_id": user_id, "online": await is_user_online(user_id)}}

    @api.get("/healthz")
    @api.get("/readyz")
    async def health():
        return {"status": "ok"}

    # -- Socket.IO
    async def send_sync(sid: str, user_id: str) -> None:
        async with SessionLocal() as session:
            unread = await Notification.get_by(session, user_id=user_id, read_at=None)
        await sio.emit("sync", {"notifications": [n.to_dict() for n in unread]}, to=sid)

    @sio.event
    async def connect(sid, environ, auth):
        try:
            identity = authenticate((auth or {}).get("token") if isinstance(auth, dict) else None)
        except (PermissionError, jwt.PyJWTError):
            raise socketio.exceptions.ConnectionRefusedError("authentication failed")
        user_id = identity["user_id"]
        await sio.save_session(sid, {"user_id": user_id})
        await sio.enter_room(sid, f"user:{user_id}")
        async with SessionLocal() as session:
            await ensure_user(session, user_id)
        await redis.sadd(presence_key(user_id), sid)
        sio.start_background_task(send_sync, sid, user_id)

    @sio.event
    async def disconnect(sid, *_):
        try:
            user_id = (await sio.get_session(sid))["user_id"]
        except KeyError:
            return
        await redis.srem(presence_key(user_id), sid)

    @sio.event
    async def subscribe(sid, data=None):
        user_id = (await sio.get_session(sid))["user_id"]
        await sio.enter_room(sid, f"user:{user_id}")
        return {"status": "subscribed"}

    @sio.event
    async def get_unread_count(sid, data=None):
        user_id = (await sio.get_session(sid))["user_id"]
        async with SessionLocal() as session:
            count = await session.scalar(select(func.count()).select_from(Notification).where(
                Notification.user_id == user_id, Notification.read_at.is_(None)))
        return {"count": count}

    return socketio.ASGIApp(sio, other_asgi_app=api)


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(setup_database(args))
    import uvicorn  # noqa: PLC0415
    app = build_app(args)
    print(f"[seed004] {sqlalchemy_url(args.database).split('://')[0]} redis={args.redis} "
          f"http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, loop="uvloop", http="httptools", ws="websockets-sansio",
                log_level="warning", access_log=False, backlog=4096)


if __name__ == "__main__":
    main()
