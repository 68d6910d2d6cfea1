#!/usr/bin/env bash
# Where Herald's CPU goes in a fan-out: one release Herald pinned to CPU 0, the generator on
# CPU 1 (as Benchmarks/run.sh pins them), CONNECTIONS clients in one room, RATE events/s for
# DURATION s, and `perf record -g` on the server for 20 s from 25 s after the start.
#
#   Benchmarks/perf-fanout.sh OUT RATE [DURATION]     # e.g. OUT=/tmp/ceiling RATE=60 (600,000 deliveries/s offered)
#
# Leaves OUT/gen.out (the generator's JSON line), OUT/herald.log, OUT/perf.data,
# OUT/perf-children.txt (inclusive shares by symbol) and OUT/breakdown.txt (the CPU of one
# broadcast and its parts, by Benchmarks/fanout_breakdown.py). Needs the release builds of Herald
# (.build-release) and the generator (Benchmarks/build-realtime.sh) and `perf`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
OUT=$1; RATE=${2:-0.5}; DURATION=${3:-30}
CONNECTIONS=${CONNECTIONS:-10000}
PORT=${PORT:-18080}
BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
mkdir -p "$OUT"
DATA=$(mktemp -d /tmp/herald-perf.XXXXXX)
cp "$BENCH/realtime-bench-config.yaml" "$DATA/config.yaml"
taskset -c 0 "$BIN" serve --host 127.0.0.1 --port "$PORT" --data-dir "$DATA" --config "$DATA/config.yaml" > "$OUT/herald.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
token() { "$BIN" token --user "$1" --role "$2" --ttl 1h --data-dir "$DATA" --config "$DATA/config.yaml"; }
CLIENT=$(token bench customer)
SERVICE=$(token bench-publisher service)
( sleep 25; perf record -F 4000 -g -p "$PID" -o "$OUT/perf.data" -- sleep 20 > /dev/null 2>&1 ) &
PERF=$!
taskset -c 1 "$BENCH/SocketIOLoad/.build/release/SocketIOLoad" fanout --url "http://127.0.0.1:$PORT" --token "$CLIENT" \
    --server-pid "$PID" --label herald --publish-token "$SERVICE" --room user:bench --connections "$CONNECTIONS" \
    --rate "$RATE" --duration "$DURATION" --threads 1 > "$OUT/gen.out" 2>&1 || true
wait "$PERF" || true
perf report -i "$OUT/perf.data" --children -g none --sort sym 2>/dev/null | grep -v '^$' | head -80 | cut -c1-200 > "$OUT/perf-children.txt" || true
perf script -F comm,time,ip,sym,dso -i "$OUT/perf.data" 2>/dev/null | python3 "$BENCH/fanout_breakdown.py" > "$OUT/breakdown.txt" || true
cat "$OUT/breakdown.txt" >&2
grep '^{' "$OUT/gen.out" | tail -1
