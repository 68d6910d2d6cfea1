#!/usr/bin/env bash
# The dispatch offer round on the durable path (issue 37, part 3), one command:
#
#   Benchmarks/offer-run.sh
#   DRIVERS=50 JOBS=2 LEGS="herald-sqlite herald-sqlite-handoff-off" Benchmarks/offer-run.sh
#
# One job offered to DRIVERS drivers (default 1000) at once: per driver one `job_new`
# notification and its delivery (a socket delivery with an ack for the half on a Socket.IO
# client; a push through the outbox to the mock APNs for the half with one APNs device and no
# socket), an offer row, and `job:new` on the driver's room. JOBS jobs one after another (GAP s
# apart), each to all drivers (all within the first round's radius of the job's site). Per job:
# time from just before POST /api/v1/jobs until every socket driver had its `job:new` and its
# `notification`, and until the mock had every offline driver's push; p50/p99 per driver;
# missing and duplicated; CPU µs of Herald (+ PostgreSQL) per offered driver. The driver is
# Benchmarks/dispatch/offer_round.py (one asyncio process; its own CPU is reported).
#
# Legs (LEGS, in this order by default); each a fresh `herald serve`, database and mock:
#   herald-sqlite               SQLite file, the default configuration
#   herald-sqlite-handoff-off   the same with push.handoff_capacity: 0 (every push claimed from the database)
#   herald-postgres             a throwaway PostgreSQL (initdb defaults: fsync and synchronous_commit on;
#                               max_connections=300, as scripts/cluster starts it), a fresh one per leg
#   herald-postgres-handoff-off the same with push.handoff_capacity: 0
#
# Configuration (each leg): Benchmarks/realtime-bench-config.yaml (rate limits off, logging
# warning, python-socketio's ping timings) + APNs at the mock as notify-run.sh writes it +
# dispatch: offer_timeout_seconds 3600 (no second round or expiry inside a run) and
# location_max_age_seconds 86400 (setting up 1000 drivers may take longer than the default 300 s
# of position age), radius_km 30 (the default; drivers are within 7 km of the site);
# notifications.max_recipients = max(1000, DRIVERS) (a round offers at most that many drivers).
# Nothing is pinned; the machine's cores are shared by Herald, PostgreSQL, the mock and the
# driver (and whatever else runs: `other_cores` says how busy the machine was besides).
#
# HERALD_BIN defaults to .build-release/release/herald, MOCK_BIN to herald-mock-apns beside it.
# This script builds nothing (swift build -c release --product herald --scratch-path .build-release,
# and --product herald-mock-apns). When HERALD_BIN is not given and the release binary is
# missing, the debug build (.build/debug) is used and the results say so: a debug build's
# figures are not Herald's.
#
# Results: $OUT/results.jsonl (a line per job and per leg), $OUT/summary.md (a table per leg),
# server logs, mock logs (gzipped), the delivery table's final statuses per leg.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)-offers}
LEGS=${LEGS:-"herald-sqlite herald-sqlite-handoff-off herald-postgres herald-postgres-handoff-off"}
DRIVERS=${DRIVERS:-1000}
JOBS=${JOBS:-5}
GAP=${GAP:-3}
SETTLE=${SETTLE:-1}
JOB_TIMEOUT=${JOB_TIMEOUT:-60}
PORT=${OFFER_PORT:-18600}        # herald serve; its PostgreSQL on PORT+100
PG_PORT=$((PORT + 100))
HERALD_BIN_GIVEN=${HERALD_BIN:-}
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
VENV=$BENCH/.venv
PY=$VENV/bin/python
WORK=$(mktemp -d /tmp/herald-offers.XXXXXX)
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl

log() { echo "[offer-run $(date +%H:%M:%S)] $*" >&2; }

# Binaries ------------------------------------------------------------------------------------------------
BUILD_NOTE=release
if [[ ! -x $HERALD_BIN && -z $HERALD_BIN_GIVEN ]]; then
    for candidate in "$ROOT/.build/debug/herald" "$ROOT/.build/$(uname -m)-unknown-linux-gnu/debug/herald"; do
        if [[ -x $candidate ]]; then
            log "no $HERALD_BIN: using the DEBUG build $candidate (its figures are not Herald's)"
            HERALD_BIN=$candidate
            BUILD_NOTE=DEBUG
            break
        fi
    done
elif [[ -n $HERALD_BIN_GIVEN && $HERALD_BIN == */debug/* ]]; then
    BUILD_NOTE=DEBUG
fi
[[ -x $HERALD_BIN ]] || { log "no herald binary at $HERALD_BIN (build it: see the header)"; exit 1; }
MOCK_BIN=${MOCK_BIN:-$(dirname "$HERALD_BIN")/herald-mock-apns}
[[ -x $MOCK_BIN ]] || { log "no herald-mock-apns at $MOCK_BIN"; exit 1; }

# Tools ---------------------------------------------------------------------------------------------------
[[ -x $PY ]] || python3 -m venv "$VENV"
"$PY" -c 'import aiohttp, socketio, jwt, cryptography' 2>/dev/null \
    || "$VENV/bin/pip" install -q 'python-socketio>=5.18,<6' 'aiohttp>=3.9' 'pyjwt>=2.8,<3' 'cryptography>=42'
"$PY" -c 'import uvloop' 2>/dev/null || "$VENV/bin/pip" install -q 'uvloop>=0.19' || true
pg_bin() { dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)"; }
if [[ " $LEGS " == *postgres* && ! -x "$(pg_bin)/initdb" ]]; then
    log "installing postgresql (apt-get)"
    if [[ $(id -u) == 0 ]]; then apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null
    else sudo apt-get update -q >/dev/null && sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null; fi
fi
PG_BIN=$(pg_bin 2>/dev/null || true)

BINARY_DESC="$HERALD_BIN ($BUILD_NOTE) built $(date -r "$HERALD_BIN" -Is) from $(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD -- Sources || echo ' + uncommitted changes')"
{
    echo "# $(date -Is) $(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "# herald: $BINARY_DESC"
    echo "# mock: $MOCK_BIN; postgresql: ${PG_BIN:-none}"
    echo "# legs: $LEGS; drivers $DRIVERS (half on sockets, half push-only), jobs $JOBS, gap ${GAP}s, settle ${SETTLE}s, job timeout ${JOB_TIMEOUT}s"
    echo "# $("$PY" --version); $("$VENV/bin/pip" list 2>/dev/null | grep -iE '^(python-socketio|python-engineio|aiohttp|uvloop|pyjwt) ' | awk '{printf "%s %s; ", $1, $2}')"
    echo "# load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2
SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

# Processes started here ----------------------------------------------------------------------------------
MOCK_PID=""; SERVER_PID=""; PG_DIR=""
stop_pid() { # pid
    [[ -n ${1:-} ]] || return 0
    kill "$1" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
start_mock() { # log file
    local out=$WORK/mock.stdout
    : > "$out"
    "$MOCK_BIN" --port 0 --log "$1" > "$out" 2> "$WORK/mock.stderr" &
    MOCK_PID=$!
    for _ in $(seq 1 100); do grep -q '^mock-apns listening on' "$out" 2>/dev/null && break; sleep 0.1; done
    read -r MOCK_PORT MOCK_CA < <(sed -n 's/^mock-apns listening on \([0-9]*\) ca=\(.*\)$/\1 \2/p' "$out")
    [[ -n ${MOCK_PORT:-} ]] || { log "herald-mock-apns did not start: $(cat "$WORK/mock.stderr")"; exit 1; }
}
as_postgres() { if [[ $(id -u) == 0 ]]; then su postgres -s /bin/bash -c "cd / && $(printf '%q ' "$@")"; else "$@"; fi; }
start_pg() {
    PG_DIR=$(mktemp -d /tmp/herald-offers-pg.XXXXXX)
    [[ $(id -u) == 0 ]] && chown postgres "$PG_DIR"
    as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -A trust > "$WORK/initdb.log" 2>&1
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -t 60 -l "$PG_DIR/log" \
        -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300" start > /dev/null
    "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE herald" > /dev/null
}
stop_pg() {
    [[ -n $PG_DIR ]] || return 0
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast stop > /dev/null 2>&1 || true
    rm -rf "$PG_DIR"; PG_DIR=""
}
cleanup() {
    stop_pid "$SERVER_PID"; SERVER_PID=""
    stop_pid "$MOCK_PID"; MOCK_PID=""
    stop_pg
    rm -rf "$WORK"
}
trap cleanup EXIT

write_config() { # file handoff(on|off)
    # A throwaway signing key for the mock (outside the results).
    local key=$WORK/AuthKey_BENCH12345.p8
    [[ -f $key ]] || openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$key" 2>/dev/null
    cat "$BENCH/realtime-bench-config.yaml" > "$1"
    cat >> "$1" <<EOF
dispatch:
  radius_km: 30
  offer_timeout_seconds: 3600
  location_max_age_seconds: 86400
notifications:
  max_recipients: $((DRIVERS > 1000 ? DRIVERS : 1000))
push:
$([[ $2 == off ]] && echo "  handoff_capacity: 0" || true)
  apns:
    team_id: TEAM123456
    key_id: BENCH12345
    private_key_file: $key
    topic: com.example.app
    base_url: https://localhost:$MOCK_PORT
    ca_file: $MOCK_CA
EOF
}

measure() { # leg
    local leg=$1 engine handoff=on url="" data config mock_log probes=()
    case $leg in
    herald-sqlite) engine=sqlite ;;
    herald-sqlite-handoff-off) engine=sqlite; handoff=off ;;
    herald-postgres) engine=postgres ;;
    herald-postgres-handoff-off) engine=postgres; handoff=off ;;
    *) log "unknown leg $leg"; exit 2 ;;
    esac
    log "$leg: $DRIVERS drivers, $JOBS jobs"
    mock_log=$OUT/mock-$leg.jsonl
    start_mock "$mock_log"
    config=$OUT/herald-config-$leg.yaml
    write_config "$config" "$handoff"
    data=$WORK/data-$leg
    if [[ $engine == postgres ]]; then
        start_pg
        url="postgres://postgres@127.0.0.1:$PG_PORT/herald"
    fi
    HERALD_JWT_SECRET=$SECRET "$HERALD_BIN" serve --host 127.0.0.1 --port "$PORT" --data-dir "$data" --config "$config" \
        ${url:+--database "$url"} > "$OUT/herald-$leg.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 600); do
        curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null 2>&1 && break
        kill -0 "$SERVER_PID" 2>/dev/null || { log "herald exited: $(tail -5 "$OUT/herald-$leg.log")"; exit 1; }
        sleep 0.1
    done
    probes+=(--probe "herald=$SERVER_PID" --probe "mock=$MOCK_PID")
    [[ $engine == postgres ]] && probes+=(--probe "postgres=$(head -1 "$PG_DIR/data/postmaster.pid")")
    "$PY" "$BENCH/dispatch/offer_round.py" run --url "http://127.0.0.1:$PORT" --secret "$SECRET" --mock-log "$mock_log" \
        --leg "$leg" --engine "$engine" --handoff "$handoff" --binary "$BUILD_NOTE" --drivers "$DRIVERS" --jobs "$JOBS" \
        --gap "$GAP" --settle "$SETTLE" --timeout "$JOB_TIMEOUT" "${probes[@]}" | tee -a "$RESULTS" | cut -c1-240
    # The outbox's final statuses (by channel).
    local q="SELECT channel, status, count(*), max(attempts) FROM notification_deliveries GROUP BY 1, 2 ORDER BY 1, 2"
    if [[ $engine == postgres ]]; then
        "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d herald -qAt -c "$q" > "$OUT/deliveries-$leg.txt" 2>&1 || true
    elif command -v sqlite3 > /dev/null; then
        sqlite3 "$(ls "$data"/*.sqlite | head -1)" "$q" > "$OUT/deliveries-$leg.txt" 2>&1 || true
    fi
    stop_pid "$SERVER_PID"; SERVER_PID=""
    stop_pid "$MOCK_PID"; MOCK_PID=""
    stop_pg
    rm -rf "$data"
    gzip -f "$mock_log"
    sleep 1
}

for leg in $LEGS; do measure "$leg"; done

"$PY" "$BENCH/dispatch/offer_round.py" summary "$RESULTS" > "$OUT/summary.md"
sed -i "2i\\
\\
Herald: $BINARY_DESC. Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)." "$OUT/summary.md"
cat "$OUT/summary.md"
log "results: $RESULTS"
