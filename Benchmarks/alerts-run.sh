#!/usr/bin/env bash
# Transit alert pushes (issue 18): one route-wide alert reaching 20,000 of 100,000 riders
# (5 favourite stops each, one iPhone each) on the Halifax feed, from the alert's arrival to
# every push queued and to every push accepted by a mock APNs, for Herald on SQLite and on
# PostgreSQL and for the seed's own design (Redis reverse index + aioapns), in one run:
#
#   Benchmarks/alerts-run.sh                 # builds herald and herald-mock-apns in release first
#   SKIP_BUILD=1 Benchmarks/alerts-run.sh
#   ONE_BY_ONE=1 SKIP_BUILD=1 Benchmarks/alerts-run.sh   # also each engine with push.handoff_capacity: 0
#                                                        # (every push through the database: before issue 37)
#
# The subject (herald serve, or the seed's pipeline) runs on CPU $SERVER_CPU; what it talks
# to (herald-mock-apns, PostgreSQL, Redis) on CPU $INFRA_CPU. Results: $OUT/*.json, summary.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/alerts-$(date +%Y%m%d-%H%M%S)}
SERVER_CPU=${SERVER_CPU:-0}
INFRA_CPU=${INFRA_CPU:-1}
USERS=${USERS:-100000}
AFFECTED=${AFFECTED:-20000}
VENV=$BENCH/alerts/.venv
mkdir -p "$OUT"
log() { echo "[alerts-run.sh $(date +%H:%M:%S)] $*" >&2; }

if [ -z "${SKIP_BUILD:-}" ]; then
    log "building herald and herald-mock-apns in release"
    swift build -c release --product herald --package-path "$ROOT" --scratch-path "$ROOT/.build-release"
    swift build -c release --product herald-mock-apns --package-path "$ROOT" --scratch-path "$ROOT/.build-release"
fi
HERALD=${HERALD_BIN:-$ROOT/.build-release/release/herald}
MOCK=${MOCK_BIN:-$(dirname "$HERALD")/herald-mock-apns}
command -v redis-server >/dev/null || { log "installing redis-server"; apt-get update -q >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null; }
if [ ! -x "$VENV/bin/python" ]; then
    log "creating the venv (redis, aioapns, gtfs-realtime-bindings)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet redis==5.2.1 aioapns==3.3.1 gtfs-realtime-bindings==1.0.0 protobuf
fi
PY=$VENV/bin/python
DATA=$("$ROOT/scripts/transit-data" | tail -n 1)
FEED=$DATA/feeds/halifax.zip
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD)"
    echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
    echo "swift: $(swift --version 2>&1 | head -1)"
    echo "python: $("$PY" --version 2>&1); $("$VENV/bin/pip" freeze | grep -iE '^(redis|aioapns|h2|gtfs-realtime-bindings)==' | tr '\n' ' ')"
    echo "redis: $(redis-server --version)"
    echo "feed: $FEED; $USERS riders x 5 favourites, $AFFECTED reached"
} >"$OUT/machine.txt"

log "Herald on SQLite"
"$PY" "$BENCH/alerts/herald_alerts.py" --herald "$HERALD" --mock "$MOCK" --feed "$FEED" --engine sqlite \
    --users "$USERS" --affected "$AFFECTED" --server-cpu "$SERVER_CPU" --infra-cpu "$INFRA_CPU" --out "$OUT/herald-sqlite.json"
if [ -n "${ONE_BY_ONE:-}" ]; then
    log "Herald on SQLite, every push through the database (push.handoff_capacity: 0)"
    "$PY" "$BENCH/alerts/herald_alerts.py" --herald "$HERALD" --mock "$MOCK" --feed "$FEED" --engine sqlite --handoff-capacity 0 \
        --users "$USERS" --affected "$AFFECTED" --server-cpu "$SERVER_CPU" --infra-cpu "$INFRA_CPU" --out "$OUT/herald-sqlite-one-by-one.json"
fi

PG_BIN=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
PG_TMP=$(mktemp -d /tmp/herald-alerts-pg.XXXXXX)
REDIS_PID=""
cleanup() {
    [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null || true
    su postgres -s /bin/bash -c "$PG_BIN/pg_ctl -D $PG_TMP/data -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "$PG_TMP"
}
trap cleanup EXIT
chown postgres "$PG_TMP"
PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
su postgres -s /bin/bash -c "$PG_BIN/initdb -D $PG_TMP/data -U postgres -A trust >/dev/null && $PG_BIN/pg_ctl -D $PG_TMP/data -o '-p $PG_PORT -k $PG_TMP -c listen_addresses=127.0.0.1' -w -l $PG_TMP/log start >/dev/null"
for pid in $(pgrep -u postgres -f "$PG_TMP" || true); do taskset -p -c "$INFRA_CPU" "$pid" >/dev/null 2>&1 || true; done
"$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc 'CREATE DATABASE bench' >/dev/null
log "Herald on PostgreSQL"
PATH=$PG_BIN:$PATH "$PY" "$BENCH/alerts/herald_alerts.py" --herald "$HERALD" --mock "$MOCK" --feed "$FEED" --engine postgres \
    --database "postgres://postgres@127.0.0.1:$PG_PORT/bench" --users "$USERS" --affected "$AFFECTED" \
    --server-cpu "$SERVER_CPU" --infra-cpu "$INFRA_CPU" --out "$OUT/herald-postgres.json"
if [ -n "${ONE_BY_ONE:-}" ]; then
    log "Herald on PostgreSQL, every push through the database (push.handoff_capacity: 0)"
    "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc 'CREATE DATABASE bench2' >/dev/null
    PATH=$PG_BIN:$PATH "$PY" "$BENCH/alerts/herald_alerts.py" --herald "$HERALD" --mock "$MOCK" --feed "$FEED" --engine postgres \
        --database "postgres://postgres@127.0.0.1:$PG_PORT/bench2" --users "$USERS" --affected "$AFFECTED" --handoff-capacity 0 \
        --server-cpu "$SERVER_CPU" --infra-cpu "$INFRA_CPU" --out "$OUT/herald-postgres-one-by-one.json"
fi

log "the seed's design (Redis + aioapns)"
REDIS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c "$INFRA_CPU" redis-server --port "$REDIS_PORT" --save "" --appendonly no --daemonize no >"$OUT/redis.log" 2>&1 &
REDIS_PID=$!
MOCK_LOG=$OUT/peer-mock.jsonl
coproc MOCKP { exec taskset -c "$INFRA_CPU" "$MOCK" --port 0 --h2-only; }
read -r line <&"${MOCKP[0]}"
MOCK_PORT=$(echo "$line" | sed -E 's/^mock-apns listening on ([0-9]+) ca=.*/\1/')
MOCK_CA=$(echo "$line" | sed -E 's/^.* ca=(.*)$/\1/')
sleep 0.5
taskset -c "$SERVER_CPU" "$PY" "$BENCH/peers/seed_alert_pipeline.py" --feed "$FEED" --redis-port "$REDIS_PORT" \
    --mock-url "https://localhost:$MOCK_PORT" --ca "$MOCK_CA" --users "$USERS" --affected "$AFFECTED" --out "$OUT/seed.json"
kill "$MOCKP_PID" 2>/dev/null || true

"$PY" - "$OUT" <<'PY' | tee "$OUT/summary.md"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
files = ["herald-sqlite.json", "herald-postgres.json", "seed.json", "herald-sqlite-one-by-one.json", "herald-postgres-one-by-one.json"]
rows = [json.loads((out / f).read_text()) for f in files if (out / f).exists()]
print("# Alert pushes: one route-wide alert to %d of %d riders\n" % (rows[0]["affected"], rows[0]["users"]))
print("```\n" + (out / "machine.txt").read_text() + "```\n")
print("| | queued (s) | accepted by the mock APNs (s) | pushes | exactly the riders reached |")
print("|---|---:|---:|---:|---|")
names = ["Herald, SQLite", "Herald, PostgreSQL", "seed design (Redis + aioapns)",
         "Herald, SQLite, every push through the database", "Herald, PostgreSQL, every push through the database"]
for name, row in zip(names, rows):
    exact = row.get("exactly_the_affected", "n/a")
    print(f"| {name} | {row['queued_seconds']} | {row['accepted_seconds']} | {row['pushes']} | {exact} |")
seed = rows[2]
for name, row in [(names[i], rows[i]) for i in range(len(rows)) if i != 2]:
    print(f"\n- {name}: accepted {seed['accepted_seconds'] / row['accepted_seconds']:.1f}x faster than the seed's design, "
          f"queued {seed['queued_seconds'] / row['queued_seconds']:.1f}x; matching {row['match_seconds'] * 1000:.0f} ms")
PY
log "results in $OUT"
