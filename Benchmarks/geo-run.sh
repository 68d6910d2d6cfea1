#!/usr/bin/env bash
# Herald's driver spatial index (HeraldGeo) vs Redis GEOSEARCH, one reproducible run (loopback only).
#
#   Benchmarks/geo-run.sh                              # everything: ~6 minutes once built
#   SWEEP="" Benchmarks/geo-run.sh                     # without the cell-size sweep
#   DRIVERS=200000 EXTRA_DRIVERS="" QUERIES=2000 Benchmarks/geo-run.sh  # a quick one
#
# Builds Benchmarks/GeoIndex in release (its own .build; SKIP_BUILD=1 skips it), installs
# redis-server with apt-get if it is missing, starts a throwaway redis-server (no RDB, no AOF)
# on a free port pinned to CPU $REDIS_CPU, and runs `GeoIndex herald` and `GeoIndex redis`
# pinned to CPU $CLIENT_CPU (taskset, when present and there are 2+ CPUs). Both sides build
# the same seeded workload: 1M drivers in a 60 km box around San Francisco, 10,000 query
# points, "20 nearest within 3 km"; then the same with $EXTRA_DRIVERS drivers.
# Results: $OUT/results.jsonl (one JSON line per measurement), summary.md, machine.txt, redis.log.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/geo-$(date +%Y%m%d-%H%M%S)}
DRIVERS=${DRIVERS:-1000000}
EXTRA_DRIVERS=${EXTRA_DRIVERS:-"100000"}   # sparser scenarios in the same box (same queries), Herald and Redis only
QUERIES=${QUERIES:-10000}
SEED=${SEED:-1}
RADIUS=${RADIUS:-3000}
LIMIT=${LIMIT:-20}
QPS_SECONDS=${QPS_SECONDS:-5}       # Herald: seconds of back-to-back queries per QPS figure
UPDATES=${UPDATES:-2000000}          # Herald: location updates timed
REDIS_QPS_QUERIES=${REDIS_QPS_QUERIES:-2000}  # Redis: queries per throughput run
PIPELINE=${PIPELINE:-32}
CONNECTIONS=${CONNECTIONS:-4}
SWEEP=${SWEEP:-"125 500 1000"}       # extra cell sizes (m) measured with fewer updates
REDIS_CPU=${REDIS_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
GEOINDEX=$BENCH/GeoIndex/.build/release/GeoIndex
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
COMMON=(--drivers "$DRIVERS" --queries "$QUERIES" --seed "$SEED" --radius "$RADIUS" --limit "$LIMIT")

log() { echo "[geo-run.sh $(date +%H:%M:%S)] $*" >&2; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building GeoIndex (release, Benchmarks/GeoIndex/.build)"
    swift build -c release --package-path "$BENCH/GeoIndex" >&2
fi
if ! command -v redis-server >/dev/null; then
    log "installing redis-server"
    if [[ $(id -u) == 0 ]]; then SUDO=""; else SUDO=sudo; fi
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >&2
fi

PIN_REDIS=()
PIN_CLIENT=()
if command -v taskset >/dev/null && (( $(nproc) >= 2 )); then
    PIN_REDIS=(taskset -c "$REDIS_CPU")
    PIN_CLIENT=(taskset -c "$CLIENT_CPU")
else
    log "no taskset or a single CPU: running unpinned"
fi

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "uname: $(uname -a)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "memory: $(free -h | awk '/^Mem:/ {print $2}')"
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "swift: $(swift --version 2>/dev/null | head -1)"
    echo "redis: $(redis-server --version)"
    echo "git: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ($(git -C "$ROOT" status --porcelain -- Sources/HeraldGeo | wc -l) uncommitted files under Sources/HeraldGeo)"
    echo "HeraldGeo sources sha256: $(cat "$ROOT"/Sources/HeraldGeo/*.swift | sha256sum | cut -c1-16)"
    echo "pinning: redis ${PIN_REDIS[*]:-none}, client ${PIN_CLIENT[*]:-none}"
    echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "settings: drivers=$DRIVERS extra_drivers=\"$EXTRA_DRIVERS\" queries=$QUERIES seed=$SEED radius=$RADIUS limit=$LIMIT qps_seconds=$QPS_SECONDS updates=$UPDATES redis_qps_queries=$REDIS_QPS_QUERIES pipeline=$PIPELINE connections=$CONNECTIONS sweep=\"$SWEEP\""
} > "$OUT/machine.txt"

run() { # label, command...: appends the command's JSON lines (plus the load average) to results.jsonl
    local label=$1; shift
    log "$label: $*"
    "$@" | while IFS= read -r line; do
        echo "${line%\}},\"run\":\"$label\",\"loadavg_after\":$(cut -d' ' -f1 /proc/loadavg)}" | tee -a "$RESULTS"
    done
}

# ---------------------------------------------------------------- Herald (in process)
run herald "${PIN_CLIENT[@]}" "$GEOINDEX" herald "${COMMON[@]}" --qps-seconds "$QPS_SECONDS" --updates "$UPDATES"
for cell in $SWEEP; do
    run "herald-cell-$cell" "${PIN_CLIENT[@]}" "$GEOINDEX" herald "${COMMON[@]}" --cell-size "$cell" --qps-seconds 3 --updates 500000
done

# ---------------------------------------------------------------- Redis
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log "starting redis-server on 127.0.0.1:$PORT"
"${PIN_REDIS[@]}" redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    > "$OUT/redis.log" 2>&1 &
REDIS_PID=$!
trap 'kill "$REDIS_PID" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
    redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
done
run redis "${PIN_CLIENT[@]}" "$GEOINDEX" redis "${COMMON[@]}" --port "$PORT" \
    --pipeline "$PIPELINE" --connections "$CONNECTIONS" --qps-queries "$REDIS_QPS_QUERIES"
for n in $EXTRA_DRIVERS; do
    EXTRA=(--drivers "$n" --queries "$QUERIES" --seed "$SEED" --radius "$RADIUS" --limit "$LIMIT")
    run "herald-n$n" "${PIN_CLIENT[@]}" "$GEOINDEX" herald "${EXTRA[@]}" --qps-seconds 3 --updates 500000
    run "redis-n$n" "${PIN_CLIENT[@]}" "$GEOINDEX" redis "${EXTRA[@]}" --port "$PORT" \
        --pipeline "$PIPELINE" --connections "$CONNECTIONS" --qps-queries "$REDIS_QPS_QUERIES"
done
redis-cli -p "$PORT" info memory | grep -E '^(used_memory|used_memory_rss|mem_allocator):' > "$OUT/redis-memory.txt" || true
kill "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null || true
trap - EXIT

python3 "$BENCH/GeoIndex/summarize.py" "$RESULTS" > "$OUT/summary.md"
cat "$OUT/summary.md"
log "results in $OUT"
