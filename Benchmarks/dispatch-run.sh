#!/usr/bin/env bash
# Dispatch benchmarks against the release binary: claim races (200 drivers, one job, all at
# once) and REST location updates, on SQLite and on PostgreSQL, one reproducible run.
#
#   Benchmarks/dispatch-run.sh             # builds (incremental) unless SKIP_BUILD=1
#   RACES=50 Benchmarks/dispatch-run.sh
#
# The server is pinned to CPU 0 and the Python load generator (aiohttp, Benchmarks/.venv) to
# CPU 1. PostgreSQL is a throwaway cluster (fsync on, defaults otherwise) on CPU 0 with the
# server. Results: one JSON line per measurement in $OUT/results.jsonl.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)-dispatch}
RACES=${RACES:-20}
DRIVERS=${DRIVERS:-200}
LOCATION_SECONDS=${LOCATION_SECONDS:-10}
PORT=${PORT:-18180}
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
SECRET=bench-secret-0123456789abcdef0123456789abcdef
mkdir -p "$OUT"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    swift build -c release --product herald --scratch-path "$ROOT/.build-release" --package-path "$ROOT"
fi
if [ ! -x "$BENCH/.venv/bin/python" ]; then python3 -m venv "$BENCH/.venv"; fi
"$BENCH/.venv/bin/python" -c "import aiohttp" 2>/dev/null || "$BENCH/.venv/bin/pip" install -q aiohttp

{ uname -a; nproc; git -C "$ROOT" rev-parse --short HEAD; "$HERALD_BIN" --version 2>/dev/null || true; } > "$OUT/machine.txt"

run_against() {  # engine database-url
    local engine=$1 url=$2 data
    data=$(mktemp -d)
    # Per-user rate limits off: the generator replays many drivers' traffic from one machine.
    echo '{"rate_limits": {"enabled": false}, "server": {"max_connections_per_client": 0}}' > "$data/bench.json"
    HERALD_JWT_SECRET=$SECRET HERALD_LOG_LEVEL=warning taskset -c 0 "$HERALD_BIN" serve --host 127.0.0.1 --port "$PORT" \
        --data-dir "$data" --config "$data/bench.json" ${url:+--database "$url"} > "$OUT/herald-$engine.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done
    taskset -c 1 "$BENCH/.venv/bin/python" "$BENCH/dispatch/claim_race.py" --url "http://127.0.0.1:$PORT" --secret "$SECRET" \
        --engine "$engine" --drivers "$DRIVERS" --races "$RACES" --location-seconds "$LOCATION_SECONDS" | tee -a "$OUT/results.jsonl"
    kill -TERM "$pid"; wait "$pid" || true
    rm -rf "$data"
}

run_against sqlite ""

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$PGBIN" ]; then
    apt-get install -y -q postgresql >/dev/null
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi
PGDIR=$(mktemp -d)
chown postgres "$PGDIR" 2>/dev/null || true
as_pg() { if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }
as_pg "$PGBIN/initdb -D $PGDIR/data -A trust -U postgres" >/dev/null
as_pg "taskset -c 0 $PGBIN/pg_ctl -D $PGDIR/data -o '-p 55499 -k $PGDIR -c listen_addresses=127.0.0.1' -w -l $PGDIR/log start" >/dev/null
trap 'as_pg "$PGBIN/pg_ctl -D $PGDIR/data -m fast stop" >/dev/null 2>&1; rm -rf "$PGDIR"' EXIT
run_against postgres "postgres://postgres@127.0.0.1:55499/postgres"
echo "results: $OUT/results.jsonl"
