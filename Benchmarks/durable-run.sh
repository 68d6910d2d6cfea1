#!/usr/bin/env bash
# The durable notification path against its peer and its floor (issue 37, part 1), one run:
#
#   Benchmarks/durable-run.sh
#   SKIP_BUILD=1 ONLINE=20 OFFLINE=20 RATES=50 CLOSED=16 DURATION=5 FLOOR_DURATION=3 Benchmarks/durable-run.sh
#   LEGS="floor-sqlite seed-sqlite" SKIP_BUILD=1 Benchmarks/durable-run.sh
#
# Legs (LEGS, in this order by default):
#   floor-sqlite     Benchmarks/storage_floor.py on SQLite: Herald's rows for one notification
#                    (notification + delivery, then its ack/outcome) with Herald's schema and PRAGMAs,
#                    K per commit for each K of FLOOR_BATCHES
#   herald-sqlite    one `herald serve` on a SQLite file (HERALD_BIN; JWT secret in HERALD_JWT_SECRET)
#   herald-sqlite-one-by-one, herald-postgres-one-by-one
#                    the same binary with issue 37's changes turned off by configuration: each send
#                    its own transaction (notifications.sends_per_transaction: 1) and every push
#                    through the database (push.handoff_capacity: 0) — the before of the same run
#   herald-sqlite-traced, herald-postgres-traced
#                    the same binary with tracing on (issue 44): every request sampled, its spans and
#                    its notification's delivery spans exported over OTLP/HTTP to Benchmarks/otlp_sink.py
#                    (which discards them; its CPU is probed as `otlp`) — the cost of traces per request
#   seed-sqlite      Benchmarks/peers/seed_notify_stack.py (seed 004: FastAPI + python-socketio with its
#                    Redis manager, presence in Redis, SQLAlchemy on aiosqlite, aioapns) on a SQLite file,
#                    one uvicorn worker, a redis-server of its own
#   floor-postgres   the floor on PostgreSQL (fsync and synchronous_commit on, the defaults)
#   herald-postgres  one Herald node on PostgreSQL (`scripts/cluster up 1`, as notify-run.sh runs it)
#   seed-postgres    the seed stack on PostgreSQL (SQLAlchemy on asyncpg)
# The seed and floor legs on PostgreSQL run on a server started here the way scripts/cluster starts
# Herald's (initdb defaults, max_connections=300, data under /tmp on the same disk), a fresh one
# per measurement, stopped after it.
#
# Every end-to-end leg is driven by Benchmarks/peers/notify_driver.py with the same settings:
# ONLINE users on Socket.IO clients, OFFLINE users with one APNs device each, POST
# /api/v1/notifications with a service token, online and offline users alternating; each offered
# rate of RATES (open loop), then each concurrency of CLOSED (closed loop), DURATION s each, DRAIN s
# for stragglers; pushes go to one herald-mock-apns per measurement (a fresh server, database,
# Redis and mock for each). Probes (CPU of each process tree over the window): herald | seed,
# postgres (postmaster and its backends), redis, mock, driver.
#
# Results: $OUT/results.jsonl (one line per measurement and per floor configuration),
# $OUT/summary.md (Benchmarks/durable_summary.py: the legs side by side, Herald/seed and
# Herald-CPU/floor-CPU ratios), server logs, final delivery states.
#
# HERALD_BIN defaults to .build-release/release/herald (built first unless SKIP_BUILD=1); when it
# is missing with SKIP_BUILD=1, .build/debug/herald is used if present (the run says so: a debug
# build's figures are not Herald's), else the Herald legs are skipped. MOCK_BIN defaults to the
# herald-mock-apns beside HERALD_BIN (then .build-release/release, .build/debug); without one, the
# end-to-end legs are skipped and only the floor runs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)-durable}
LEGS=${LEGS:-"floor-sqlite herald-sqlite seed-sqlite floor-postgres herald-postgres seed-postgres"}
RATES=${RATES-"100"}
CLOSED=${CLOSED-"64"}
ONLINE=${ONLINE:-200}
OFFLINE=${OFFLINE:-200}
DURATION=${DURATION:-15}
DRAIN=${DRAIN:-30}
MAX_INFLIGHT=${MAX_INFLIGHT:-256}
FLOOR_BATCHES=${FLOOR_BATCHES:-"1 16 64"}
FLOOR_DURATION=${FLOOR_DURATION:-$DURATION}
FLOOR_CONNECTIONS=${FLOOR_CONNECTIONS:-1}
PORT=${DURABLE_PORT:-18400}          # Herald cluster: nodes PORT+1.., its PostgreSQL PORT+100
HERALD_PORT=$((PORT + 10))           # herald serve on SQLite
SEED_PORT=$((PORT + 20))             # the seed stack
OTLP_PORT=$((PORT + 40))             # the traced legs' OTLP sink
REDIS_PORT=$((PORT + 30))            # the seed stack's Redis
PG_PORT=$((PORT + 110))              # PostgreSQL for the seed and floor legs
HERALD_BIN_GIVEN=${HERALD_BIN:-}
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
VENV=$BENCH/.venv
PY=$VENV/bin/python
WORK=$(mktemp -d /tmp/herald-durable.XXXXXX)
CLUSTER_DIR=$WORK/cluster
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl

log() { echo "[durable-run $(date +%H:%M:%S)] $*" >&2; }

# Binaries -------------------------------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building herald and herald-mock-apns (release, .build-release)"
    (cd "$ROOT" && swift build -c release --product herald --scratch-path .build-release \
        && swift build -c release --product herald-mock-apns --scratch-path .build-release) >&2
fi
HERALD_NOTE=""
if [[ ! -x $HERALD_BIN && -z $HERALD_BIN_GIVEN && ${SKIP_BUILD:-0} == 1 ]]; then
    for candidate in "$ROOT/.build/debug/herald" "$ROOT/.build/$(uname -m)-unknown-linux-gnu/debug/herald"; do
        if [[ -x $candidate ]]; then
            log "no $HERALD_BIN: using the DEBUG build $candidate (its figures are not Herald's; build release for a real run)"
            HERALD_BIN=$candidate
            HERALD_NOTE=" (DEBUG build)"
            break
        fi
    done
fi
MOCK_BIN=${MOCK_BIN:-}
if [[ -z $MOCK_BIN ]]; then
    for candidate in "$(dirname "$HERALD_BIN")/herald-mock-apns" "$ROOT/.build-release/release/herald-mock-apns" \
        "$ROOT/.build/release/herald-mock-apns" "$ROOT/.build/debug/herald-mock-apns" \
        "$ROOT/.build/$(uname -m)-unknown-linux-gnu/debug/herald-mock-apns"; do
        [[ -x $candidate ]] && { MOCK_BIN=$candidate; break; }
    done
fi
HAVE_HERALD=1; HAVE_MOCK=1
[[ -x $HERALD_BIN ]] || { HAVE_HERALD=0; log "no herald binary ($HERALD_BIN): the Herald legs are skipped"; }
[[ -n $MOCK_BIN && -x $MOCK_BIN ]] || { HAVE_MOCK=0; log "no herald-mock-apns: the end-to-end legs (Herald and seed) are skipped"; }

# Tools: the venv (as notify-run.sh's, plus the seed stack's packages), Redis, PostgreSQL --------------------
[[ -x $PY ]] || python3 -m venv "$VENV"
"$PY" -c 'import aiohttp, socketio, jwt, cryptography' 2>/dev/null \
    || "$VENV/bin/pip" install -q 'python-socketio>=5.18,<6' 'aiohttp>=3.9' 'pyjwt>=2.8,<3' 'cryptography>=42'
"$PY" -c 'import uvloop' 2>/dev/null || "$VENV/bin/pip" install -q 'uvloop>=0.19' || true
"$PY" -c 'import fastapi, uvicorn, httptools, websockets, redis, aioapns, aiosqlite, asyncpg, sqlalchemy, psycopg' 2>/dev/null \
    || "$VENV/bin/pip" install -q fastapi 'uvicorn[standard]>=0.30' 'redis>=5' 'aioapns>=4,<5' aiosqlite asyncpg \
        'sqlalchemy[asyncio]>=2' 'psycopg[binary]>=3.1'
apt_install() {
    if [[ $(id -u) == 0 ]]; then apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
    else sudo apt-get update -q >/dev/null && sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; fi
}
if [[ " $LEGS " == *" seed-"* ]] && ! command -v redis-server >/dev/null; then log "installing redis-server (apt-get)"; apt_install redis-server; fi
pg_bin() { dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)"; }
if [[ " $LEGS " == *"-postgres "* || " $LEGS " == *"-postgres" ]] && [[ ! -x "$(pg_bin)/initdb" ]]; then
    log "installing postgresql (apt-get)"; apt_install postgresql
fi
PG_BIN=$(pg_bin 2>/dev/null || true)

{
    echo "# $(date -Is) $(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    if [[ $HAVE_HERALD == 1 ]]; then
        echo "# herald: $HERALD_BIN$HERALD_NOTE built $(date -r "$HERALD_BIN" -Is) from $(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD -- Sources || echo ' (+ uncommitted changes)')"
    else
        echo "# herald: none"
    fi
    echo "# mock: ${MOCK_BIN:-none}; postgresql: ${PG_BIN:-none}; $(redis-server --version 2>/dev/null | cut -d' ' -f1-3)"
    echo "# legs: $LEGS"
    echo "# driver: online users $ONLINE, offline users $OFFLINE, rates '${RATES}', closed '${CLOSED}', window ${DURATION}s, drain ≤ ${DRAIN}s"
    echo "# floor: K in '$FLOOR_BATCHES', ${FLOOR_DURATION}s each, $FLOOR_CONNECTIONS PostgreSQL connection(s)"
    echo "# $("$PY" --version); $("$VENV/bin/pip" list 2>/dev/null | grep -iE '^(python-socketio|python-engineio|fastapi|uvicorn|uvloop|sqlalchemy|aiosqlite|asyncpg|redis|aioapns|psycopg) ' | awk '{printf "%s %s; ", $1, $2}')"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2
SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

# Processes started here ------------------------------------------------------------------------------------
MOCK_PID=""; SERVER_PID=""; REDIS_PID=""; PG_DIR=""; SINK_PID=""
start_sink() {
    "$PY" "$BENCH/otlp_sink.py" --port "$OTLP_PORT" >> "$RESULTS" 2> "$OUT/otlp-sink.stderr" &
    SINK_PID=$!
    for _ in $(seq 1 100); do grep -q 'listening' "$OUT/otlp-sink.stderr" 2>/dev/null && return 0; sleep 0.1; done
    log "the OTLP sink did not start: $(cat "$OUT/otlp-sink.stderr")"; exit 1
}
start_mock() { # log file
    local out=$WORK/mock.stdout
    "$MOCK_BIN" --port 0 --log "$1" > "$out" 2> "$OUT/mock.stderr" &
    MOCK_PID=$!
    for _ in $(seq 1 100); do grep -q '^mock-apns listening on' "$out" 2>/dev/null && break; sleep 0.1; done
    read -r MOCK_PORT MOCK_CA < <(sed -n 's/^mock-apns listening on \([0-9]*\) ca=\(.*\)$/\1 \2/p' "$out")
    [[ -n ${MOCK_PORT:-} ]] || { log "herald-mock-apns did not start: $(cat "$OUT/mock.stderr")"; exit 1; }
}
stop_pid() { # pid
    [[ -n ${1:-} ]] || return 0
    kill "$1" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
stop_mock() { stop_pid "$MOCK_PID"; MOCK_PID=""; }
stop_server() { stop_pid "$SERVER_PID"; SERVER_PID=""; }
start_redis() {
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/redis.log" 2>&1 &
    REDIS_PID=$!
    for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
    log "redis-server did not start: $(tail -3 "$OUT/redis.log")"; exit 1
}
stop_redis() { stop_pid "$REDIS_PID"; REDIS_PID=""; }
as_postgres() { if [[ $(id -u) == 0 ]]; then su postgres -s /bin/bash -c "cd / && $(printf '%q ' "$@")"; else "$@"; fi; }
psql_seed() { PGOPTIONS='-c client_min_messages=warning' "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qAt "$@"; }
start_pg() { # the seed's and the floor's PostgreSQL (a fresh server for each measurement, as `cluster up` makes Herald's)
    [[ -n $PG_DIR ]] && return 0
    PG_DIR=$(mktemp -d /tmp/herald-durable-pg.XXXXXX)
    [[ $(id -u) == 0 ]] && chown postgres "$PG_DIR"
    as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -A trust > "$OUT/initdb.log" 2>&1
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -t 60 -l "$PG_DIR/log" \
        -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300" start > /dev/null
}
fresh_db() { # name
    psql_seed -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" > /dev/null
}
postmaster_pid() { head -1 "$PG_DIR/data/postmaster.pid"; }
stop_pg() {
    [[ -n $PG_DIR ]] || return 0
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast stop > /dev/null 2>&1 || true
    rm -rf "$PG_DIR"; PG_DIR=""
}
cluster() { CLUSTER_DIR=$CLUSTER_DIR CLUSTER_PORT=$PORT CLUSTER_CONFIG=$CONFIG HERALD_BIN=$HERALD_BIN "$ROOT/scripts/cluster" "$@"; }
cleanup() {
    stop_server; stop_mock; stop_redis; stop_pid "$SINK_PID"
    [[ -f $CLUSTER_DIR/nodes ]] && cluster down > /dev/null 2>&1 || true
    stop_pg
    rm -rf "$WORK"
}
trap cleanup EXIT
wait_ready() { # url pid log
    for _ in $(seq 1 300); do
        curl -sf "$1/readyz" > /dev/null 2>&1 && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    log "$1 did not become ready: $(tail -5 "$3")"; exit 1
}

write_config() { # file [one-by-one] (notify-run.sh's: the realtime bench config, APNs pointed at the mock)
    local key=${TMPDIR:-/tmp}/herald-notify-bench-AuthKey_BENCH12345.p8
    [[ -f $key ]] || openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$key" 2>/dev/null
    cat "$BENCH/realtime-bench-config.yaml" > "$1"
    if [[ ${2:-} == one-by-one ]]; then
        # The durable path as it was before issue 37: each send its own transaction, every push
        # claimed and read back from the outbox by the worker.
        printf 'notifications:\n  sends_per_transaction: 1\n' >> "$1"
        printf 'push:\n  handoff_capacity: 0\n' >> "$1"
    elif [[ ${2:-} == traced ]]; then
        printf 'tracing:\n  otlp_endpoint: http://127.0.0.1:%s\npush:\n' "$OTLP_PORT" >> "$1"
    else
        printf 'push:\n' >> "$1"
    fi
    cat >> "$1" <<EOF
  apns:
    team_id: TEAM123456
    key_id: BENCH12345
    private_key_file: $key
    topic: com.example.app
    base_url: https://localhost:$MOCK_PORT
    ca_file: $MOCK_CA
EOF
}

drive() { # tag mode value url secret mock_log probes...
    local tag=$1 mode=$2 value=$3 url=$4 secret=$5 mock_log=$6
    shift 6
    local rate=0 concurrency=64
    [[ $mode == open ]] && rate=$value || concurrency=$value
    "$PY" "$BENCH/peers/notify_driver.py" --urls "$url" --secret "$secret" \
        --online "$ONLINE" --offline "$OFFLINE" --rate "$rate" --concurrency "$concurrency" --max-inflight "$MAX_INFLIGHT" \
        --duration "$DURATION" --drain "$DRAIN" --mock-log "$mock_log" "$@" --label "$tag" \
        2> >(tee "$OUT/driver-$tag.log" >&2) | tee -a "$RESULTS"
}

# One end-to-end measurement: a fresh server (and its database, Redis, mock) ---------------------------------
measure() { # leg mode value
    local leg=$1 mode=$2 value=$3
    local tag=$leg-$mode-$value mock_log=$OUT/mock-$leg-$mode-$value.jsonl
    log "$leg: $([[ $mode == open ]] && echo "open loop, rate $value/s" || echo "closed loop, concurrency $value"), $ONLINE online + $OFFLINE offline users, ${DURATION}s"
    start_mock "$mock_log"
    local variant="" sink_probe=()
    [[ $leg == *-one-by-one ]] && variant=one-by-one
    if [[ $leg == *-traced ]]; then
        variant=traced
        start_sink
        sink_probe=(--probe "otlp=$SINK_PID")
    fi
    case ${leg%-"$variant"} in
    herald-sqlite)
        local dir=$WORK/$tag
        mkdir -p "$dir"
        CONFIG=$OUT/herald-config-$tag.yaml
        write_config "$CONFIG" $variant
        HERALD_JWT_SECRET=$SECRET "$HERALD_BIN" serve --host 127.0.0.1 --port "$HERALD_PORT" --data-dir "$dir" \
            --database "sqlite:$dir/herald.sqlite" --config "$CONFIG" > "$OUT/server-$tag.log" 2>&1 &
        SERVER_PID=$!
        wait_ready "http://127.0.0.1:$HERALD_PORT" "$SERVER_PID" "$OUT/server-$tag.log"
        drive "$tag" "$mode" "$value" "http://127.0.0.1:$HERALD_PORT" "$SECRET" "$mock_log" \
            --probe "herald=$SERVER_PID" --probe "mock=$MOCK_PID" "${sink_probe[@]}"
        stop_server
        "$PY" - "$dir/herald.sqlite" > "$OUT/deliveries-$tag.txt" 2>&1 <<'PY' || true
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT channel, status, count(*), max(attempts) FROM notification_deliveries GROUP BY 1, 2 ORDER BY 1, 2"):
    print("|".join(map(str, row)))
PY
        ;;
    herald-postgres)
        CONFIG=$OUT/herald-config-$tag.yaml
        write_config "$CONFIG" $variant
        cluster up 1 > "$OUT/cluster-up-$tag.log" 2>&1 || { log "cluster up failed: $(tail -5 "$OUT/cluster-up-$tag.log")"; exit 1; }
        local pgdir
        pgdir=$(readlink "$CLUSTER_DIR/pg")
        drive "$tag" "$mode" "$value" "http://127.0.0.1:$((PORT + 1))" "$(cat "$CLUSTER_DIR/secret")" "$mock_log" \
            --probe "herald=$(cat "$CLUSTER_DIR/node-1.pid")" --probe "postgres=$(head -1 "$pgdir/data/postmaster.pid")" --probe "mock=$MOCK_PID" \
            "${sink_probe[@]}"
        "$PG_BIN/psql" -h 127.0.0.1 -p $((PORT + 100)) -U postgres -d herald -qAt \
            -c "SELECT channel, status, count(*), max(attempts) FROM notification_deliveries GROUP BY 1, 2 ORDER BY 1, 2" \
            > "$OUT/deliveries-$tag.txt" 2>&1 || true
        cp "$CLUSTER_DIR/node-1/herald.log" "$OUT/server-$tag.log" 2>/dev/null || true
        cluster down > /dev/null
        ;;
    seed-sqlite|seed-postgres)
        local dir=$WORK/$tag database probes=()
        mkdir -p "$dir"
        start_redis
        if [[ $leg == seed-sqlite ]]; then
            database=sqlite:$dir/seed.sqlite
        else
            start_pg
            fresh_db seed
            database=postgres://postgres@127.0.0.1:$PG_PORT/seed
            probes+=(--probe "postgres=$(postmaster_pid)")
        fi
        "$PY" "$BENCH/peers/seed_notify_stack.py" --database "$database" --redis "redis://127.0.0.1:$REDIS_PORT/0" \
            --host 127.0.0.1 --port "$SEED_PORT" --secret "$SECRET" --apns-url "https://localhost:$MOCK_PORT" --apns-ca "$MOCK_CA" \
            > "$OUT/server-$tag.log" 2>&1 &
        SERVER_PID=$!
        wait_ready "http://127.0.0.1:$SEED_PORT" "$SERVER_PID" "$OUT/server-$tag.log"
        drive "$tag" "$mode" "$value" "http://127.0.0.1:$SEED_PORT" "$SECRET" "$mock_log" \
            --probe "seed=$SERVER_PID" --probe "redis=$REDIS_PID" "${probes[@]}" --probe "mock=$MOCK_PID"
        stop_server
        stop_redis
        local q="SELECT coalesce(sent_via, 'none'), count(*) FROM notifications GROUP BY 1 ORDER BY 1"
        if [[ $leg == seed-sqlite ]]; then
            "$PY" -c "import sqlite3, sys; [print('|'.join(map(str, r))) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]" \
                "$dir/seed.sqlite" "$q" > "$OUT/deliveries-$tag.txt" 2>&1 || true
        else
            psql_seed -d seed -c "$q" > "$OUT/deliveries-$tag.txt" 2>&1 || true
            stop_pg
        fi
        ;;
    esac
    stop_mock
    stop_pid "$SINK_PID"
    SINK_PID=""
    gzip -f "$mock_log"
    rm -rf "${WORK:?}/$tag"
    sleep 1
}

floor() { # engine
    log "storage floor on $1: K in $FLOOR_BATCHES, ${FLOOR_DURATION}s each"
    local batches
    batches=$(echo "$FLOOR_BATCHES" | tr ' ' ',')
    if [[ $1 == sqlite ]]; then
        "$PY" "$BENCH/storage_floor.py" --engine sqlite --path "$WORK/floor.sqlite" --batch "$batches" \
            --duration "$FLOOR_DURATION" | tee -a "$RESULTS"
        rm -f "$WORK"/floor.sqlite*
    else
        start_pg
        fresh_db floor
        "$PY" "$BENCH/storage_floor.py" --engine postgres --database "postgres://postgres@127.0.0.1:$PG_PORT/floor" \
            --postmaster-pid "$(postmaster_pid)" --connections "$FLOOR_CONNECTIONS" --batch "$batches" \
            --duration "$FLOOR_DURATION" | tee -a "$RESULTS"
        stop_pg
    fi
}

for leg in $LEGS; do
    case $leg in
    floor-sqlite) floor sqlite ;;
    floor-postgres) floor postgres ;;
    herald-sqlite|herald-postgres|seed-sqlite|seed-postgres|herald-sqlite-one-by-one|herald-postgres-one-by-one|herald-sqlite-traced|herald-postgres-traced)
        if [[ $HAVE_MOCK == 0 ]]; then log "$leg skipped: no herald-mock-apns"; continue; fi
        if [[ $leg == herald-* && $HAVE_HERALD == 0 ]]; then log "$leg skipped: no herald binary"; continue; fi
        for rate in $RATES; do measure "$leg" open "$rate"; done
        for c in $CLOSED; do measure "$leg" closed "$c"; done
        ;;
    *) log "unknown leg: $leg (floor-sqlite herald-sqlite seed-sqlite floor-postgres herald-postgres seed-postgres)"; exit 2 ;;
    esac
done

log "results: $RESULTS"
"$PY" "$BENCH/durable_summary.py" "$RESULTS" "$OUT" | tee "$OUT/summary.md"
