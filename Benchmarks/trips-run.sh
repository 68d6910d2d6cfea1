#!/usr/bin/env bash
# Trip location ingest benchmark (issue 8): drivers stream `location` over the native
# WebSocket (/api/v1/realtime), the server rate-limits, runs the fraud checks, keeps the audit
# trail and broadcasts `driver_location` to each trip's rider; the generator holds both
# sockets of every trip and times driver frame written → rider's driver_location received.
# On SQLite, then on a throwaway PostgreSQL; one reproducible run.
#
#   Benchmarks/trips-run.sh                      # builds (incremental) unless SKIP_BUILD=1
#   TRIPS=1000 PHASES=open:5000,closed:1 ENGINES=sqlite Benchmarks/trips-run.sh
#
# The server is pinned to CPU 0 (PostgreSQL, a throwaway cluster with default settings and
# fsync on, shares CPU 0), the setup script (Python + aiohttp, Benchmarks/.venv) and the load
# generator (Benchmarks/TripLoad, Swift + NIO) to CPU 1. Per-user REST rate limits are off,
# the per-trip location limit is raised to 1000/s (burst 1000) and the per-connection message
# limit to 100,000/s, so nothing is throttled by policy: the figures are the server's own.
# Results: one JSON line per measurement in $OUT/results.jsonl (summary: trips/summarize.py).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)-trips}
TRIPS=${TRIPS:-2000}
PHASES=${PHASES:-open:1000,open:5000,closed:1,open:10000,open:20000,open:30000}
WARMUP=${WARMUP:-5}
DURATION=${DURATION:-15}
SETTLE_MAX=${SETTLE_MAX:-120}   # after a phase, wait up to this long for the server's backlog to clear
ENGINES=${ENGINES:-sqlite postgres}
PORT=${PORT:-18181}
PGPORT=${PGPORT:-55498}
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
LOAD_BIN=$BENCH/TripLoad/.build/release/TripLoad
SECRET=bench-secret-0123456789abcdef0123456789abcdef
mkdir -p "$OUT"
ulimit -n 20000 2>/dev/null || true

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    swift build -c release --product herald --scratch-path "$ROOT/.build-release" --package-path "$ROOT"
    swift build -c release --package-path "$BENCH/TripLoad"
fi
if [ ! -x "$BENCH/.venv/bin/python" ]; then python3 -m venv "$BENCH/.venv"; fi
"$BENCH/.venv/bin/python" -c "import aiohttp" 2>/dev/null || "$BENCH/.venv/bin/pip" install -q aiohttp

{
    uname -a; echo "cpus: $(nproc)"; grep -m1 "model name" /proc/cpuinfo || true
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD) (working tree: $(git -C "$ROOT" status --porcelain -- Sources Package.swift | wc -l) changed files under Sources/Package.swift)"
    "$HERALD_BIN" --version 2>/dev/null || true
    swift --version 2>&1 | head -1
    echo "loadavg at start: $(cat /proc/loadavg)"
    echo "trips=$TRIPS phases=$PHASES warmup=$WARMUP duration=$DURATION settle_max=$SETTLE_MAX"
} > "$OUT/machine.txt"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

SERVER_PID=""
PGBIN=""
PGDIR=""
as_pg() { if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    if [ -n "$PGDIR" ]; then as_pg "$PGBIN/pg_ctl -D $PGDIR/data -m fast stop" >/dev/null 2>&1 || true; rm -rf "$PGDIR"; fi
}
trap cleanup EXIT

run_against() {  # engine database-url [pid to watch as postgres]
    local engine=$1 url=$2 pgpid=${3:-} data
    data=$(mktemp -d)
    cat > "$data/bench.json" <<'JSON'
{"rate_limits": {"enabled": false}, "server": {"max_connections_per_client": 0},
 "trips": {"location": {"active_per_second": 1000, "burst": 1000}, "surge": {"enabled": false}},
 "realtime": {"client_messages_per_second": 100000}}
JSON
    HERALD_JWT_SECRET=$SECRET HERALD_LOG_LEVEL=warning taskset -c 0 "$HERALD_BIN" serve --host 127.0.0.1 --port "$PORT" \
        --data-dir "$data" --config "$data/bench.json" ${url:+--database "$url"} > "$OUT/herald-$engine.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || { echo "herald did not become ready" >&2; exit 1; }

    taskset -c 1 "$BENCH/.venv/bin/python" "$BENCH/trips/setup_trips.py" --url "http://127.0.0.1:$PORT" --secret "$SECRET" \
        --trips "$TRIPS" --engine "$engine" --out "$data/trips.jsonl" | tee -a "$OUT/results.jsonl"

    # The server's CPU use with nothing to do, after the setup (3 s, after 2 s of quiet).
    sleep 2
    local a b
    a=$(cpu_ticks "$SERVER_PID"); sleep 3; b=$(cpu_ticks "$SERVER_PID")
    echo "{\"measurement\":\"server_idle_cpu\",\"engine\":\"$engine\",\"cpu_server_pct\":$(( (b - a) * 100 / ($(getconf CLK_TCK) * 3) )),\"loadavg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}" | tee -a "$OUT/results.jsonl"

    local watch=(--watch "server=$SERVER_PID")
    if [ -n "$pgpid" ]; then watch+=(--watch "postgres=$pgpid"); fi
    taskset -c 1 "$LOAD_BIN" --url "http://127.0.0.1:$PORT" --trips-file "$data/trips.jsonl" --engine "$engine" \
        --phases "$PHASES" --warmup "$WARMUP" --duration "$DURATION" --settle-max "$SETTLE_MAX" "${watch[@]}" | tee -a "$OUT/results.jsonl"

    kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true
    SERVER_PID=""
    rm -rf "$data"
}

for engine in $ENGINES; do
    case $engine in
    sqlite) run_against sqlite "" ;;
    postgres)
        PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
        if [ -z "$PGBIN" ]; then
            apt-get install -y -q postgresql >/dev/null
            PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
        fi
        PGDIR=$(mktemp -d)
        chown postgres "$PGDIR" 2>/dev/null || true
        as_pg "$PGBIN/initdb -D $PGDIR/data -A trust -U postgres" >/dev/null
        as_pg "taskset -c 0 $PGBIN/pg_ctl -D $PGDIR/data -o '-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1' -w -l $PGDIR/log start" >/dev/null
        run_against postgres "postgres://postgres@127.0.0.1:$PGPORT/postgres" "$(head -1 "$PGDIR/data/postmaster.pid")"
        as_pg "$PGBIN/pg_ctl -D $PGDIR/data -m fast stop" >/dev/null 2>&1 || true
        rm -rf "$PGDIR"
        PGDIR=""
        ;;
    *) echo "unknown engine $engine" >&2; exit 2 ;;
    esac
done
echo "loadavg at end: $(cat /proc/loadavg)" >> "$OUT/machine.txt"
"$BENCH/.venv/bin/python" "$BENCH/trips/summarize.py" "$OUT/results.jsonl" | tee "$OUT/summary.md"
echo "results: $OUT/results.jsonl"
