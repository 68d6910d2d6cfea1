#!/usr/bin/env python3
"""The storage floor of Herald's durable notification path (issue 37 part 1): only the rows Herald
must keep for one notification, written and marked with Herald's own schema and durability, as
many per commit as arrive together. Herald's CPU per notification is stated as a ratio to this.

    python storage_floor.py --engine sqlite --path /tmp/floor.sqlite --batch 1,16,64 --duration 5
    python storage_floor.py --engine postgres --database postgres://postgres@127.0.0.1:5432/floor --batch 1,16,64

Per notification (NotificationService.write / publishLive / acknowledged, DeliveryWorker):
  * commit 1 (the outbox, before anything is sent): one `notifications` row and one
    `notification_deliveries` row — for an online user a `socket` delivery `awaiting_ack` (ack
    deadline in next_attempt_at), for an offline user a `push` delivery `pending` for its one
    APNs device — written as Herald writes them, multi-row INSERTs (NotificationStore.bulkRows,
    DeliveryStore.bulkRows: every column, Herald-shaped ids and values);
  * commit 2 (the outcome): socket — the ack UPDATE (DeliveryStore.acknowledge: status
    acknowledged, completed_at, WHERE status = 'awaiting_ack') and `sent_via = 'socket'`
    (NotificationStore.setSentVia); push — the outcome UPDATE (DeliveryStore.finishAttempts'
    `WITH ended (...) AS (VALUES ...) UPDATE ... FROM ended`: status sent, apns-id, latency,
    attempts + 1) and `sent_via = 'push' WHERE sent_via IS NULL`
    (NotificationStore.markSentViaPushIfUnset).
  That is 2 rows inserted, 2 updated and 2 commits per batch of K notifications; online and
  offline users alternate as in notify_driver.py. Not counted: the push worker's lease (a claim
  UPDATE and its commit before sending; a delivery handed to its sender in memory on the node
  that wrote it needs none), reads of preferences, presence and devices, the unread count.

Schema: every CREATE/ALTER statement of Sources/HeraldNotifications/Storage/NotificationMigrations.swift,
read from that file (tables dropped and created again for each configuration).
Durability: SQLite as Sources/HeraldStorage/SQLiteDatabase.swift opens it — journal_mode WAL,
synchronous NORMAL (durable across process crashes; a power loss may take the last commits),
foreign_keys ON, busy_timeout 5000, one connection, `BEGIN IMMEDIATE` … `COMMIT`; PostgreSQL with
the server's settings (fsync and synchronous_commit on by default; both are printed), statements
prepared once per connection (psycopg 3), `--connections` threads each on its own connection.

CPU: this process (time.process_time: every thread) and, on PostgreSQL, the postmaster's whole
process tree (/proc/<pid>/stat utime+stime of it and every descendant: backends, WAL writer,
checkpointer), over the measured time. Prints one JSON line per configuration (engine × K).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import sqlite3
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS = ROOT / "Sources/HeraldNotifications/Storage/NotificationMigrations.swift"
ACK_TIMEOUT_MS = 5000  # notifications.ack_timeout_ms default


# The schema, from the Swift migration ----------------------------------------------------------------------
def migration_statements(path: Path = MIGRATIONS) -> list[str]:
    source = path.read_text()
    source = re.sub(r"^\s*//.*$", "", source, flags=re.M)  # comments (they hold apostrophes, no SQL)
    statements = []
    for match in re.finditer(r'"""\n(.*?)\n\s*"""|"((?:[^"\\\n]|\\.)*)"', source, flags=re.S):
        text = textwrap.dedent(match.group(1)) if match.group(1) is not None else match.group(2)
        text = text.strip()
        if re.match(r"(CREATE|ALTER)\s", text):
            statements.append(text)
    if not any(s.startswith("CREATE TABLE notifications ") for s in statements) or \
            not any(s.startswith("CREATE TABLE notification_deliveries ") for s in statements):
        raise SystemExit(f"storage_floor: no notifications/notification_deliveries tables found in {path}")
    return statements


def tables_of(statements: list[str]) -> list[str]:
    return [re.match(r"CREATE TABLE (\w+)", s).group(1) for s in statements if s.startswith("CREATE TABLE")]


# Herald-shaped rows -------------------------------------------------------------------------------------
def identifier(prefix: str) -> str:
    """`prefix_` and 22 URL-safe random characters (Herald: 22 base-62 characters, Identifier.make)."""
    return prefix + "_" + secrets.token_urlsafe(17)[:22]


NOTIFICATION_COLUMNS = ["id", "user_id", "type", "severity", "delivery", "title", "body", "data", "category", "thread_id",
                        "collapse_key", "dedupe_key", "interruption_level", "expires_at", "created_at", "read_at", "deleted_at",
                        "sent_via", "push_suppressed", "silent"]
DELIVERY_COLUMNS = ["id", "notification_id", "user_id", "channel", "device_id", "provider", "status", "attempts", "next_attempt_at",
                    "lease_until", "provider_message_id", "reason", "latency_ms", "created_at", "updated_at", "completed_at"]


class Rows:
    """K notifications with their deliveries, online and offline users alternating."""

    def __init__(self, counter: int, k: int, device_ids: dict[str, str]):
        now = time.time_ns() // 1_000_000
        self.notifications, self.deliveries, self.socket, self.push = [], [], [], []
        for i in range(k):
            n = counter + i
            online = n % 2 == 0
            user = f"nb-on-{n // 2 % 200}" if online else f"nb-off-{n // 2 % 200}"
            nid, did = identifier("ntf"), identifier("dlv")
            data = json.dumps({"n": str(n), "sent_ns": str(time.time_ns())}, separators=(",", ":"))
            self.notifications.append((nid, user, "job_update", "warning", "push", "Your driver is close", f"notification {n}", data,
                                       "JOB_UPDATE", None, None, None, "active", None, now, None, None, None, None, 0))
            if online:
                self.deliveries.append((did, nid, user, "socket", None, None, "awaiting_ack", 0, now + ACK_TIMEOUT_MS, None, None, None,
                                        None, now, now, None))
                self.socket.append((did, nid))
            else:
                device = device_ids.setdefault(user, identifier("dev"))
                self.deliveries.append((did, nid, user, "push", device, "apns", "pending", 0, now, None, None, None, None, now, now, None))
                self.push.append((did, nid, str(uuid.uuid4())))  # the apns-id APNs answers with


class Statements:
    """SQL text per engine and batch size (one text per K: prepared once per connection)."""

    def __init__(self, engine: str):
        self.p = "?" if engine == "sqlite" else "%s"
        self.cache: dict[tuple, str] = {}

    def _values(self, rows: int, columns: int) -> str:
        one = "(" + ", ".join([self.p] * columns) + ")"
        return ", ".join([one] * rows)

    def insert(self, table: str, columns: list[str], rows: int) -> str:
        key = ("insert", table, rows)
        if key not in self.cache:
            self.cache[key] = f"INSERT INTO {table} ({', '.join(columns)}) VALUES {self._values(rows, len(columns))}"
        return self.cache[key]

    def in_list(self, rows: int) -> str:
        return "(" + ", ".join([self.p] * rows) + ")"

    def ack(self, rows: int) -> str:
        key = ("ack", rows)
        if key not in self.cache:
            p = self.p
            self.cache[key] = (f"UPDATE notification_deliveries SET status = 'acknowledged', completed_at = {p}, updated_at = {p} "
                               f"WHERE channel = 'socket' AND status = 'awaiting_ack' AND id IN {self.in_list(rows)} RETURNING notification_id")
        return self.cache[key]

    def sent_via_socket(self, rows: int) -> str:
        key = ("sv_socket", rows)
        if key not in self.cache:
            self.cache[key] = f"UPDATE notifications SET sent_via = 'socket' WHERE id IN {self.in_list(rows)}"
        return self.cache[key]

    def finish(self, rows: int) -> str:
        key = ("finish", rows)
        if key not in self.cache:
            p = self.p
            one = f"(CAST({p} AS TEXT), CAST({p} AS TEXT), CAST({p} AS TEXT), CAST({p} AS TEXT), CAST({p} AS INTEGER), " \
                  f"CAST({p} AS BIGINT), CAST({p} AS BIGINT))"
            self.cache[key] = (
                "WITH ended (id, status, provider_message_id, reason, latency_ms, next_attempt_at, completed_at) AS (VALUES "
                + ", ".join([one] * rows) +
                ") UPDATE notification_deliveries SET status = ended.status, provider_message_id = ended.provider_message_id, "
                "reason = ended.reason, latency_ms = ended.latency_ms, lease_until = NULL, next_attempt_at = ended.next_attempt_at, "
                f"completed_at = ended.completed_at, attempts = notification_deliveries.attempts + 1, updated_at = {p} "
                "FROM ended WHERE notification_deliveries.id = ended.id AND notification_deliveries.status = 'pending'")
        return self.cache[key]

    def sent_via_push(self, rows: int) -> str:
        key = ("sv_push", rows)
        if key not in self.cache:
            self.cache[key] = f"UPDATE notifications SET sent_via = 'push' WHERE sent_via IS NULL AND id IN {self.in_list(rows)}"
        return self.cache[key]


def flat(rows: list[tuple]) -> list:
    return [value for row in rows for value in row]


# One writer (a connection) ---------------------------------------------------------------------------------
class Writer:
    """Runs batches on one connection; `execute(sql, params)` and `begin`/`commit` per engine."""

    def __init__(self, engine: str, connection, statements: Statements):
        self.engine, self.conn, self.sql = engine, connection, statements
        self.devices: dict[str, str] = {}
        self.notifications = self.commits = self.statements = self.inserted = self.updated = 0

    def execute(self, sql: str, params: list) -> int:
        self.statements += 1
        if self.engine == "sqlite":
            before = self.conn.total_changes
            cursor = self.conn.execute(sql, params)
            if "RETURNING" in sql:
                return len(cursor.fetchall())
            # sqlite3 leaves rowcount at -1 for a statement starting with WITH
            return cursor.rowcount if cursor.rowcount >= 0 else self.conn.total_changes - before
        cursor = self.conn.execute(sql, params, prepare=True)
        if "RETURNING" in sql:
            return len(cursor.fetchall())
        return cursor.rowcount

    def begin(self) -> None:
        if self.engine == "sqlite":
            self.conn.execute("BEGIN IMMEDIATE")
        # psycopg (autocommit off) begins a transaction with the first statement

    def commit(self) -> None:
        self.conn.commit() if self.engine == "postgres" else self.conn.execute("COMMIT")
        self.commits += 1

    def batch(self, counter: int, k: int) -> None:
        rows = Rows(counter, k, self.devices)
        now = time.time_ns() // 1_000_000
        # commit 1: the notifications and their planned deliveries
        self.begin()
        self.inserted += self.execute(self.sql.insert("notifications", NOTIFICATION_COLUMNS, k), flat(rows.notifications))
        self.inserted += self.execute(self.sql.insert("notification_deliveries", DELIVERY_COLUMNS, k), flat(rows.deliveries))
        self.commit()
        # commit 2: the outcomes (acks and push results)
        self.begin()
        if rows.socket:
            ids = [d for d, _ in rows.socket]
            moved = self.execute(self.sql.ack(len(ids)), [now, now] + ids)
            self.updated += moved
            self.updated += self.execute(self.sql.sent_via_socket(len(ids)), [n for _, n in rows.socket])
        if rows.push:
            params = []
            for did, _, apns_id in rows.push:
                params += [did, "sent", apns_id, None, 1, now, now]
            self.updated += self.execute(self.sql.finish(len(rows.push)), params + [now])
            self.updated += self.execute(self.sql.sent_via_push(len(rows.push)), [n for _, n, _ in rows.push])
        self.commit()
        self.notifications += k


sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
from proc_stats import cpu_of_trees  # noqa: E402


def tree_cpu_seconds(root: int) -> float:
    return cpu_of_trees({"tree": root}).get("tree", 0.0)


def ppid_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return int(text[text.rfind(")") + 2:].split()[1])


# Engines ---------------------------------------------------------------------------------------------------
def open_sqlite(path: str):
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def open_postgres(url: str):
    import psycopg  # noqa: PLC0415
    return psycopg.connect(url, autocommit=False)


def reset_schema(engine: str, conn, statements: list[str]) -> None:
    if engine == "sqlite":
        for table in tables_of(statements):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for s in statements:
            conn.execute(s)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    else:
        with conn.transaction():
            for table in tables_of(statements):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            for s in statements:
                conn.execute(s)
        conn.commit()
        conn.autocommit = True
        conn.execute("CHECKPOINT")
        conn.autocommit = False


def empty(engine: str, conn) -> None:
    if engine == "sqlite":
        conn.execute("DELETE FROM notification_deliveries")
        conn.execute("DELETE FROM notifications")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    else:
        conn.execute("TRUNCATE notification_deliveries, notifications")
        conn.commit()
        conn.autocommit = True
        conn.execute("CHECKPOINT")
        conn.autocommit = False


def verify(engine: str, conn, expected: int) -> dict:
    q = [("notifications", "SELECT COUNT(*), COUNT(sent_via) FROM notifications"),
         ("deliveries", "SELECT COUNT(*), SUM(CASE WHEN status IN ('acknowledged', 'sent') THEN 1 ELSE 0 END) FROM notification_deliveries")]
    out = {}
    for name, sql in q:
        row = conn.execute(sql).fetchone()
        out[name] = [int(row[0]), int(row[1] or 0)]
    if engine == "postgres":
        conn.commit()
    out["ok"] = out["notifications"] == [expected, expected] and out["deliveries"] == [expected, expected]
    return out


def measure(args, k: int, statements: list[str]) -> dict:
    engine = args.engine
    connections = 1 if engine == "sqlite" else args.connections
    conns = [open_sqlite(args.path) if engine == "sqlite" else open_postgres(args.database) for _ in range(connections)]
    reset_schema(engine, conns[0], statements)
    settings: dict = {}
    postmaster = None
    if engine == "sqlite":
        settings["journal_mode"] = conns[0].execute("PRAGMA journal_mode").fetchone()[0]
        settings["synchronous"] = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[conns[0].execute("PRAGMA synchronous").fetchone()[0]]
        settings["sqlite_version"] = sqlite3.sqlite_version
    else:
        for name in ("fsync", "synchronous_commit", "wal_sync_method", "full_page_writes", "commit_delay", "server_version"):
            settings[name] = conns[0].execute(f"SHOW {name}").fetchone()[0]
        backend = conns[0].execute("SELECT pg_backend_pid()").fetchone()[0]
        conns[0].commit()
        postmaster = args.postmaster_pid or ppid_of(backend)
    sql = Statements(engine)
    writers = [Writer(engine, c, sql if connections == 1 else Statements(engine)) for c in conns]
    # warm-up: statements prepared, caches warm (not counted; the tables are emptied again below)
    for w in writers:
        for i in range(args.warmup):
            w.batch(i * k, k)
    empty(engine, conns[0])
    for w in writers:
        w.notifications = w.commits = w.statements = w.inserted = w.updated = 0
        w.devices.clear()

    stop = threading.Event()
    errors: list[str] = []

    def run(index: int, w: Writer) -> None:
        counter = index * 1_000_000_000
        try:
            while not stop.is_set():
                w.batch(counter, k)
                counter += k
        except Exception as e:  # noqa: BLE001
            errors.append(f"{type(e).__name__}: {e}")
            stop.set()

    threads = [threading.Thread(target=run, args=(i, w), daemon=True) for i, w in enumerate(writers)]
    pg_before = tree_cpu_seconds(postmaster) if postmaster else 0.0
    cpu_before, t0 = time.process_time(), time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(args.duration)
    stop.set()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - cpu_before
    pg_cpu = (tree_cpu_seconds(postmaster) - pg_before) if postmaster else 0.0

    n = sum(w.notifications for w in writers)
    commits = sum(w.commits for w in writers)
    stmts = sum(w.statements for w in writers)
    inserted = sum(w.inserted for w in writers)
    updated = sum(w.updated for w in writers)
    check = verify(engine, conns[0], n)
    for c in conns:
        c.close()
    per = (lambda x: round(x / n, 3)) if n else (lambda x: None)
    us = (lambda x: round(x / n * 1e6, 1)) if n else (lambda x: None)
    return {
        "label": f"floor-{engine}-k{k}" + (f"-c{connections}" if connections > 1 else ""),
        "engine": engine, "batch": k, "connections": connections, **settings,
        "seconds": round(seconds, 3), "notifications": n, "notifications_per_s": round(n / seconds, 1),
        "commits": commits, "commits_per_notification": per(commits), "statements_per_notification": per(stmts),
        "rows_inserted_per_notification": per(inserted), "rows_updated_per_notification": per(updated),
        "rows_per_notification": per(inserted + updated), "rows_per_commit": round((inserted + updated) / commits, 2) if commits else None,
        "program_cpu_s": round(cpu, 3), "program_cores": round(cpu / seconds, 3),
        "postgres_cpu_s": round(pg_cpu, 3) if postmaster else None, "postgres_cores": round(pg_cpu / seconds, 3) if postmaster else None,
        "program_cpu_us_per_notification": us(cpu), "postgres_cpu_us_per_notification": us(pg_cpu) if postmaster else None,
        "cpu_us_per_notification": us(cpu + pg_cpu), "verified": check, "errors": errors,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", choices=["sqlite", "postgres"], required=True)
    p.add_argument("--path", help="SQLite file (created)")
    p.add_argument("--database", help="postgres://user@host:port/db")
    p.add_argument("--batch", default="1,16,64", help="notifications per commit, comma-separated (one configuration each)")
    p.add_argument("--duration", type=float, default=5, help="seconds per configuration")
    p.add_argument("--connections", type=int, default=1, help="PostgreSQL: writers, each on its own connection (SQLite: always 1)")
    p.add_argument("--warmup", type=int, default=20, help="batches before the clock starts")
    p.add_argument("--postmaster-pid", type=int, help="default: the parent of this connection's backend")
    p.add_argument("--migrations", default=str(MIGRATIONS))
    args = p.parse_args()
    if args.engine == "sqlite" and not args.path:
        p.error("--path is required with --engine sqlite")
    if args.engine == "postgres" and not args.database:
        p.error("--database is required with --engine postgres")
    statements = migration_statements(Path(args.migrations))
    for k in [int(x) for x in args.batch.replace(" ", ",").split(",") if x]:
        result = measure(args, k, statements)
        print(json.dumps(result), flush=True)
        if result["errors"] or not result["verified"]["ok"]:
            print(f"storage_floor: {result['label']} failed: {result['errors']} {result['verified']}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
