#!/usr/bin/env bash
# End-to-end notification throughput (issue 24, part 2): one Herald node vs two Herald nodes
# sharing one PostgreSQL, same machine, same run.
#
#   Benchmarks/notify-run.sh
#   ONLY=notify2 RATES="300 600" CLOSED="" DURATION=15 SKIP_BUILD=1 Benchmarks/notify-run.sh
#
# Each measurement: a fresh cluster (`scripts/cluster up 1|2`, PostgreSQL on CLUSTER_PORT+100)
# whose config points APNs at one `herald-mock-apns`; ONLINE users hold a Socket.IO client each
# (user n on node n mod N) and acknowledge every `notification` (as a foregrounded app);
# OFFLINE users registered one APNs device each and hold no socket, so theirs go outbox ->
# delivery worker -> APNs -> the mock. POST /api/v1/notifications (service token, one user
# each, online and offline users alternating, requests alternating over the nodes) at each
# offered rate of RATES (open loop, at most MAX_INFLIGHT requests in flight; the rest is
# counted `not_offered`), then closed loop with each concurrency of CLOSED (senders waiting
# for their answer), which shows the ceiling. The driver is Benchmarks/peers/notify_driver.py
# (one asyncio process; its own CPU is reported, so a result says whether it was the limit).
#
# Latency creation->device: data.sent_ns (CLOCK_REALTIME just before the POST) against the
# socket client's receive time, or the mock's `received_ns` for pushes. After the window the
# driver waits up to DRAIN s for what is still queued, then counts notifications that never
# arrived (missing) and that arrived more than once (duplicated). CPU (utime+stime of each
# process tree, /proc) over the sending window: node1, node2, postgres (the postmaster and
# all its backends), the mock, the driver. Nothing is pinned; the machine's cores are shared
# by all of them, so CPU µs per notification is the figure to compare.
#
# Results: one JSON line per measurement in $OUT/results.jsonl, summary in $OUT/summary.md,
# node logs, the delivery table's final statuses per run (deliveries-*.txt).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)-notify}
ONLY=${ONLY:-"notify1 notify2"}
RATES=${RATES-"150 300 600"}
CLOSED=${CLOSED-"64"}
ONLINE=${ONLINE:-200}
OFFLINE=${OFFLINE:-200}
DURATION=${DURATION:-15}
DRAIN=${DRAIN:-30}
MAX_INFLIGHT=${MAX_INFLIGHT:-256}
BACKGROUND_CONNECTIONS=${BACKGROUND_CONNECTIONS:-}   # database.background_connections (unset: the default; 0: the worker shares the pool)
PORT=${CLUSTER_PORT:-18400}   # nodes on PORT+1, PORT+2, PostgreSQL on PORT+100
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
MOCK_BIN=${MOCK_BIN:-$(dirname "$HERALD_BIN")/herald-mock-apns}
VENV=$BENCH/.venv
CLUSTER_DIR=$(mktemp -d /tmp/herald-bench-notify.XXXXXX)
rmdir "$CLUSTER_DIR"
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl

log() { echo "[notify-run $(date +%H:%M:%S)] $*" >&2; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building herald and herald-mock-apns (release, .build-release)"
    (cd "$ROOT" && swift build -c release --product herald --scratch-path .build-release \
        && swift build -c release --product herald-mock-apns --scratch-path .build-release) >&2
fi
[[ -x $HERALD_BIN && -x $MOCK_BIN ]] || { log "missing $HERALD_BIN or $MOCK_BIN (build them, or unset SKIP_BUILD)"; exit 1; }
[[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import aiohttp, socketio, jwt, cryptography' 2>/dev/null \
    || "$VENV/bin/pip" install -q 'python-socketio>=5.18,<6' 'aiohttp>=3.9' 'pyjwt>=2.8,<3' 'cryptography>=42'
"$VENV/bin/python" -c 'import uvloop' 2>/dev/null || "$VENV/bin/pip" install -q 'uvloop>=0.19' || true

{
    echo "# $(date -Is) $(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "# herald: $HERALD_BIN built $(date -r "$HERALD_BIN" -Is) from $(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD -- Sources || echo ' (+ uncommitted changes)')"
    echo "# postgresql: $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
    echo "# online users $ONLINE, offline users $OFFLINE, window ${DURATION}s, drain ≤ ${DRAIN}s"
    "$VENV/bin/pip" list 2>/dev/null | grep -iE '^(python-socketio|python-engineio|aiohttp|uvloop) '
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

# The mock APNs, started once per measurement (a fresh log each).
MOCK_PID=""
start_mock() { # log file
    local out=$OUT/mock.stdout
    "$MOCK_BIN" --port 0 --log "$1" > "$out" 2> "$OUT/mock.stderr" &
    MOCK_PID=$!
    for _ in $(seq 1 100); do grep -q '^mock-apns listening on' "$out" 2>/dev/null && break; sleep 0.1; done
    read -r MOCK_PORT MOCK_CA < <(sed -n 's/^mock-apns listening on \([0-9]*\) ca=\(.*\)$/\1 \2/p' "$out")
    [[ -n ${MOCK_PORT:-} ]] || { log "herald-mock-apns did not start: $(cat "$OUT/mock.stderr")"; exit 1; }
}
stop_mock() {
    [[ -n $MOCK_PID ]] && { kill "$MOCK_PID" 2>/dev/null || true; wait "$MOCK_PID" 2>/dev/null || true; }
    MOCK_PID=""
}

write_config() { # file
    # A throwaway signing key for the mock (outside the results, which are committed).
    local key=${TMPDIR:-/tmp}/herald-notify-bench-AuthKey_BENCH12345.p8
    [[ -f $key ]] || openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$key" 2>/dev/null
    cat "$BENCH/realtime-bench-config.yaml" > "$1"
    [[ -z $BACKGROUND_CONNECTIONS ]] || printf 'database:\n  background_connections: %s\n' "$BACKGROUND_CONNECTIONS" >> "$1"
    cat >> "$1" <<EOF
push:
  apns:
    team_id: TEAM123456
    key_id: BENCH12345
    private_key_file: $key
    topic: com.example.app
    base_url: https://localhost:$MOCK_PORT
    ca_file: $MOCK_CA
EOF
}

cluster() { CLUSTER_DIR=$CLUSTER_DIR CLUSTER_PORT=$PORT CLUSTER_CONFIG=$CONFIG HERALD_BIN=$HERALD_BIN "$ROOT/scripts/cluster" "$@"; }
cleanup() {
    [[ -f $CLUSTER_DIR/nodes ]] && cluster down >/dev/null 2>&1 || true
    stop_mock
}
trap cleanup EXIT

measure() { # nodes mode(open|closed) value
    local nodes=$1 mode=$2 value=$3
    local tag=notify${nodes}-$mode-$value
    log "$nodes node(s): $mode ${mode/open/rate}${mode/closed/ concurrency} $value, $ONLINE online + $OFFLINE offline users, ${DURATION}s"
    local mock_log=$OUT/mock-$tag.jsonl
    start_mock "$mock_log"
    CONFIG=$OUT/herald-config-$tag.yaml
    write_config "$CONFIG"
    cluster up "$nodes" > "$OUT/cluster-up-$tag.log" 2>&1 || { log "cluster up failed: $(tail -5 "$OUT/cluster-up-$tag.log")"; cat "$CLUSTER_DIR"/node-*/herald.log >&2 || true; exit 1; }
    local secret urls probes=() pgdir
    secret=$(cat "$CLUSTER_DIR/secret")
    urls=http://127.0.0.1:$((PORT + 1))
    probes+=(--probe "node1=$(cat "$CLUSTER_DIR/node-1.pid")")
    if [[ $nodes == 2 ]]; then
        urls=$urls,http://127.0.0.1:$((PORT + 2))
        probes+=(--probe "node2=$(cat "$CLUSTER_DIR/node-2.pid")")
    fi
    pgdir=$(readlink "$CLUSTER_DIR/pg")
    probes+=(--probe "postgres=$(head -1 "$pgdir/data/postmaster.pid")" --probe "mock=$MOCK_PID")
    local psql
    psql="$(dirname "$(ls -d /usr/lib/postgresql/*/bin/psql | sort -V | tail -1)")/psql -h 127.0.0.1 -p $((PORT + 100)) -U postgres -d herald -qAt"
    if [[ ${PG_STATEMENTS:-0} == 1 ]]; then  # a diagnosis: every statement logged (costs PostgreSQL CPU)
        $psql -c "ALTER SYSTEM SET log_min_duration_statement = 0" -c "ALTER SYSTEM SET log_lock_waits = on" \
            -c "ALTER SYSTEM SET deadlock_timeout = '100ms'" -c "SELECT pg_reload_conf()" >/dev/null
        tag=$tag-pgstatements
    fi
    local rate=0 concurrency=64
    [[ $mode == open ]] && rate=$value || concurrency=$value
    "$VENV/bin/python" "$BENCH/peers/notify_driver.py" --urls "$urls" --secret "$secret" \
        --online "$ONLINE" --offline "$OFFLINE" --rate "$rate" --concurrency "$concurrency" --max-inflight "$MAX_INFLIGHT" \
        --duration "$DURATION" --drain "$DRAIN" --mock-log "$mock_log" "${probes[@]}" --label "$tag" --samples "$OUT/samples-$tag.jsonl" \
        2> >(tee "$OUT/driver-$tag.log" >&2) | tee -a "$RESULTS"
    # What the outbox says at the end (statuses per channel), and errors in the node logs.
    $psql -c "SELECT channel, status, count(*), max(attempts) FROM notification_deliveries GROUP BY 1, 2 ORDER BY 1, 2" \
        > "$OUT/deliveries-$tag.txt" 2>&1 || true
    if [[ ${PG_STATEMENTS:-0} == 1 ]]; then
        local row
        row=$(tail -1 "$RESULTS")
        "$VENV/bin/python" "$BENCH/pg_statements.py" "$pgdir/log" \
            "$(jq -r .window_start_ns <<<"$row")" "$(jq -r .window_end_ns <<<"$row")" "$(jq -r .created <<<"$row")" \
            > "$OUT/pg-statements-$tag.md" || true
        head -30 "$OUT/pg-statements-$tag.md" >&2
        grep -A3 'still waiting\|acquired .*after' "$pgdir/log" > "$OUT/pg-lock-waits-$tag.txt" || true
        log "lock waits over 100 ms: $(grep -c 'still waiting' "$OUT/pg-lock-waits-$tag.txt" || true)"
    fi
    for i in $(seq 1 "$nodes"); do cp "$CLUSTER_DIR/node-$i/herald.log" "$OUT/node$i-$tag.log" 2>/dev/null || true; done
    cluster down > /dev/null
    stop_mock
    gzip -f "$mock_log" "$OUT/samples-$tag.jsonl"
    sleep 1
}

for what in $ONLY; do
    case $what in
    notify1) nodes=1 ;;
    notify2) nodes=2 ;;
    *) log "unknown measurement: $what (notify1, notify2)"; exit 2 ;;
    esac
    for rate in $RATES; do measure "$nodes" open "$rate"; done
    for c in $CLOSED; do measure "$nodes" closed "$c"; done
done

log "results: $RESULTS"
"$VENV/bin/python" "$BENCH/notify_summary.py" "$RESULTS" "$OUT" | tee "$OUT/summary.md"
