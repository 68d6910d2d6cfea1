#!/usr/bin/env bash
# Herald's transit timetable against gtfs-kit and partridge on the Halifax feed, one run:
#
#   Benchmarks/transit-run.sh                 # everything, ~10 minutes once built
#   SKIP_BUILD=1 Benchmarks/transit-run.sh    # reuse the release builds
#
# The question every side answers: "the next 10 departures at stop 6121 after 08:00 on
# Wednesday 2026-03-04" (stop 6121 has the most stop_times of the feed). Measured:
#   1. load ready to answer (parse + index) and peak RSS: Herald's HeraldGTFS
#      (Benchmarks/TransitLoad) and each peer (Benchmarks/transit/peers), each pinned to
#      CPU $SERVER_CPU, $LOAD_RUNS times; plus Herald's own CSV reader against SwiftCSV and
#      CSV.swift on stop_times.txt;
#   2. a full import (`herald transit import`) into SQLite and into PostgreSQL: rows/s;
#   3. `herald serve` starting from its own database with the feed: time to listening and RSS
#      (against the same server with an empty database);
#   4. departures over HTTP: the server pinned to CPU $SERVER_CPU with one event loop, wrk on
#      CPU $CLIENT_CPU: requests/s, wrk's latency, and the server's own histogram (p99 at the
#      server); the peers' queries/s come from step 1 (in-process, no HTTP);
#   5. whether each peer's answer agrees with Herald's.
# Results: $OUT/*.json, summary.md (Benchmarks/transit/summarize.py), machine.txt.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/transit-$(date +%Y%m%d-%H%M%S)}
STOP=${STOP:-6121}
DATE=${DATE:-20260304}
AFTER=${AFTER:-08:00:00}
AT=${AT:-2026-03-04T08:00:00-04:00}
LIMIT=${LIMIT:-10}
QUERIES=${QUERIES:-50000}
PEER_QUERIES=${PEER_QUERIES:-200}
LOAD_RUNS=${LOAD_RUNS:-3}
WRK_SECONDS=${WRK_SECONDS:-20}
CONNECTIONS=${CONNECTIONS:-16}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TRANSITLOAD=$BENCH/TransitLoad/.build/release/TransitLoad
HERALD=$ROOT/.build/release/herald
PEERS_VENV=$BENCH/transit/.venv-peers
mkdir -p "$OUT"

log() { echo "[transit-run.sh $(date +%H:%M:%S)] $*" >&2; }
pin() { local cpu=$1; shift; if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then taskset -c "$cpu" "$@"; else "$@"; fi; }

if [ -z "${SKIP_BUILD:-}" ]; then
    log "building TransitLoad and herald in release"
    swift build -c release --package-path "$BENCH/TransitLoad"
    swift build -c release --product herald --package-path "$ROOT"
fi
for tool in wrk; do
    command -v "$tool" >/dev/null || { log "installing $tool"; apt-get update -q >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$tool" >/dev/null; }
done
DATA=$("$ROOT/scripts/transit-data" | tail -n 1)
FEED=$DATA/feeds/halifax.zip
if [ ! -x "$PEERS_VENV/bin/python" ]; then
    log "creating the peers' venv"
    python3 -m venv "$PEERS_VENV"
    "$PEERS_VENV/bin/pip" install --quiet -r "$BENCH/transit/peers/requirements.txt"
fi

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD)"
    echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
    echo "kernel: $(uname -r)"
    echo "swift: $(swift --version 2>&1 | head -1)"
    echo "python: $("$PEERS_VENV/bin/python" --version 2>&1)"
    "$PEERS_VENV/bin/pip" freeze | grep -iE '^(gtfs-kit|partridge|pandas|numpy)=='
    echo "feed: $FEED ($(stat -c %s "$FEED") bytes)"
    echo "question: next $LIMIT departures at $STOP after $AFTER on $DATE"
} >"$OUT/machine.txt"

# 1. Load and in-process queries --------------------------------------------------------------
for run in $(seq "$LOAD_RUNS"); do
    log "load run $run: herald"
    pin "$SERVER_CPU" "$TRANSITLOAD" load --feed "$FEED" --stop "$STOP" --date "$DATE" --after "$AFTER" --limit "$LIMIT" \
        --queries "$QUERIES" --out "$OUT/load-herald-$run.json"
    for peer in gtfs-kit partridge; do
        log "load run $run: $peer"
        pin "$SERVER_CPU" "$PEERS_VENV/bin/python" "$BENCH/transit/peers/peer_departures.py" --peer "$peer" --feed "$FEED" --stop "$STOP" \
            --date "$DATE" --after "$AFTER" --limit "$LIMIT" --queries "$PEER_QUERIES" --out "$OUT/load-$peer-$run.json"
    done
done
log "CSV readers"
pin "$SERVER_CPU" "$TRANSITLOAD" csv --feed "$FEED" --out "$OUT/csv.json"

# 2. Imports ----------------------------------------------------------------------------------
import_into() { # name, database URL (empty: SQLite in a fresh data dir)
    local name=$1 url=$2 dir
    dir=$(mktemp -d)
    local args=(transit import "$FEED" --feed halifax --data-dir "$dir")
    [ -n "$url" ] && args+=(--database "$url")
    HERALD_LOG_LEVEL=warning pin "$SERVER_CPU" "$HERALD" "${args[@]}" >"$OUT/import-$name.txt" 2>&1
    grep -E '^imported' "$OUT/import-$name.txt" >&2
    echo "$dir"
}
log "import into SQLite"
SQLITE_DIR=$(import_into sqlite "")

PG_BIN=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
PG_TMP=$(mktemp -d /tmp/herald-bench-pg.XXXXXX)
cleanup() {
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true
    su postgres -s /bin/bash -c "$PG_BIN/pg_ctl -D $PG_TMP/data -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "$PG_TMP"
}
trap cleanup EXIT
chown postgres "$PG_TMP"
PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
su postgres -s /bin/bash -c "$PG_BIN/initdb -D $PG_TMP/data -U postgres -A trust >/dev/null && $PG_BIN/pg_ctl -D $PG_TMP/data -o '-p $PG_PORT -k $PG_TMP -c listen_addresses=127.0.0.1' -w -l $PG_TMP/log start >/dev/null"
"$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc 'CREATE DATABASE bench' >/dev/null
log "import into PostgreSQL (its server on CPU $CLIENT_CPU)"
for pid in $(pgrep -u postgres -f "$PG_TMP" || true); do taskset -p -c "$CLIENT_CPU" "$pid" >/dev/null 2>&1 || true; done
import_into postgres "postgres://postgres@127.0.0.1:$PG_PORT/bench" >/dev/null

# 3. Start from the database, and 4. departures over HTTP -------------------------------------------
cat >"$OUT/bench-config.yaml" <<EOF
server: { threads: 1, max_connections_per_client: 0 }
rate_limits: { enabled: false }
logging: { level: warning }
EOF
start_server() { # data dir → sets SERVER_PID, SERVER_PORT and STARTED_SECONDS (to listening)
    local dir=$1 log=$2 started
    started=$(date +%s.%N)
    # Not through pin (a shell function): `&` would fork a subshell and SERVER_PID would be
    # that shell's, not the server's (taskset execs the server, so its pid is the server's).
    if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
        taskset -c "$SERVER_CPU" "$HERALD" serve --config "$OUT/bench-config.yaml" --data-dir "$dir" --port 0 --host 127.0.0.1 >"$log" 2>&1 &
    else
        "$HERALD" serve --config "$OUT/bench-config.yaml" --data-dir "$dir" --port 0 --host 127.0.0.1 >"$log" 2>&1 &
    fi
    SERVER_PID=$!
    for _ in $(seq 600); do
        if grep -q 'listening on' "$log"; then break; fi
        sleep 0.02
    done
    SERVER_PORT=$(grep -m1 'listening on' "$log" | sed -E 's/.*:([0-9]+) \(database.*/\1/')
    STARTED_SECONDS=$(echo "$(date +%s.%N) - $started" | bc)
}
memory_of() { awk '/^VmHWM:/ {hwm = $2 * 1024} /^VmRSS:/ {rss = $2 * 1024} END {printf "%d %d", hwm, rss}' "/proc/$1/status"; }
EMPTY_DIR=$(mktemp -d)
log "server start: empty database"
start_server "$EMPTY_DIR" "$OUT/server-empty.log"
EMPTY_START=$STARTED_SECONDS
sleep 1
EMPTY_MEMORY=$(memory_of "$SERVER_PID")
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
log "server start: Halifax in SQLite"
start_server "$SQLITE_DIR" "$OUT/server-halifax.log"
FEED_START=$STARTED_SECONDS
sleep 1
FEED_MEMORY=$(memory_of "$SERVER_PID")
URL="http://127.0.0.1:$SERVER_PORT/api/v1/stops/$STOP/departures?limit=$LIMIT&at=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))" "$AT")"
curl -s "$URL" >"$OUT/answer-herald-http.json"
log "wrk: warm-up, then $WRK_SECONDS s with $CONNECTIONS connections"
pin "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d3s "$URL" >/dev/null
curl -s "http://127.0.0.1:$SERVER_PORT/metrics" >"$OUT/metrics-before.txt"
pin "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${WRK_SECONDS}s" --latency "$URL" >"$OUT/wrk.txt"
curl -s "http://127.0.0.1:$SERVER_PORT/metrics" >"$OUT/metrics-after.txt"
SERVING_MEMORY=$(memory_of "$SERVER_PID")
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
python3 - "$OUT/server.json" "$EMPTY_START" "$FEED_START" $EMPTY_MEMORY $FEED_MEMORY $SERVING_MEMORY <<'PY'
import json, sys
out, empty_start, feed_start, *m = sys.argv[1:]
m = [int(x) for x in m]
json.dump({
    "empty_start_seconds": float(empty_start), "feed_start_seconds": float(feed_start),
    "empty_memory": {"vmhwm": m[0], "vmrss": m[1]}, "feed_memory": {"vmhwm": m[2], "vmrss": m[3]},
    "serving_memory": {"vmhwm": m[4], "vmrss": m[5]},
}, open(out, "w"), indent=2)
PY

python3 "$BENCH/transit/summarize.py" "$OUT" | tee "$OUT/summary.md"
log "results in $OUT"
