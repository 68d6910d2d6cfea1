#!/usr/bin/env bash
# A legitimate rider's journey plan while sixteen addresses plan at their rate limit
# (issue 38 item 6), on the Halifax feed, one `herald serve` (release) on SQLite:
#
#   Benchmarks/planner-run.sh                  # builds herald in release first
#   SKIP_BUILD=1 Benchmarks/planner-run.sh     # reuse .build-release
#
# Legs (LEGS): `pool` (the default configuration: PlannerPool, max_searches_per_plan 48) and
# `shared` (one planner thread and an unbounded budget: transit.planner.threads 1,
# max_searches_per_plan 1000, max_queued 100000, max_queue_ms 600000, as close as the
# configuration gets to the single shared thread before the fix). Each leg: the rider's
# latency unloaded, then under the attack (Benchmarks/planner/starvation.py).
# Results: $OUT/results.jsonl, server logs beside it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/planner-$(date +%Y%m%d-%H%M%S)}
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
PORT=${PLANNER_PORT:-18900}
SECONDS_UNDER_ATTACK=${SECONDS_UNDER_ATTACK:-90}
LEGS=${LEGS:-pool shared}
SECRET=planner-bench-secret-0123456789abcdef0123456789
mkdir -p "$OUT"
log() { echo "[planner-run.sh $(date +%H:%M:%S)] $*" >&2; }

if [ -z "${SKIP_BUILD:-}" ]; then
    log "building herald in release"
    swift build -c release --product herald --scratch-path "$ROOT/.build-release" --package-path "$ROOT"
fi
DATA=$("$ROOT/scripts/transit-data" | tail -n 1)
FEED=$DATA/feeds/halifax.zip
VENV=$ROOT/.venv-test
[ -x "$VENV/bin/python" ] || { log "run scripts/test once (it makes .venv-test)"; exit 1; }
{ echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD) $(nproc) CPUs"; } > "$OUT/machine.txt"

for leg in $LEGS; do
    data=$(mktemp -d)
    case $leg in
        pool) planner='{}' ;;
        shared) planner='{"threads": 1, "max_searches_per_plan": 1000, "max_queued": 100000, "max_queue_ms": 600000}' ;;
        *) log "unknown leg $leg"; exit 2 ;;
    esac
    cat > "$data/bench.json" <<JSON
{"transit": {"planner": $planner}, "server": {"max_connections_per_client": 0}, "logging": {"level": "warning"}}
JSON
    log "$leg: importing Halifax"
    HERALD_JWT_SECRET=$SECRET "$HERALD_BIN" transit import "$FEED" --data-dir "$data" --config "$data/bench.json" > "$OUT/import-$leg.log" 2>&1
    HERALD_JWT_SECRET=$SECRET "$HERALD_BIN" serve --host 0.0.0.0 --port "$PORT" --data-dir "$data" --config "$data/bench.json" > "$OUT/herald-$leg.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" = 200 ] && break
        sleep 0.2
    done
    log "$leg: measuring"
    "$VENV/bin/python" "$BENCH/planner/starvation.py" --url "http://127.0.0.1:$PORT" --seconds "$SECONDS_UNDER_ATTACK" \
        | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); r['leg']='$leg'; print(json.dumps(r))" | tee -a "$OUT/results.jsonl"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    rm -rf "$data"
done
log "results: $OUT/results.jsonl"
