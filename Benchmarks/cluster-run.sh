#!/usr/bin/env bash
# Two nodes, measured (issue 24): Herald on one PostgreSQL (the store and the LISTEN/NOTIFY bus)
# against python-socketio with its Redis manager (AsyncRedisManager, seed 004's choice for
# many instances), same machine, same run.
#
#   Benchmarks/cluster-run.sh
#   RATES_HERALD="1 10 30" RATES_PYTHON="0.25 1" ONLY="herald2 python2" Benchmarks/cluster-run.sh
#
# Each measurement: a fresh cluster, CONNECTIONS clients alternating between the nodes (client
# i on node i mod 2), one room holding all of them, events published over HTTP on node 1 only,
# so half of every event's deliveries cross from node 1 to node 2. Measurements (ONLY):
#   herald1  — one Herald node on PostgreSQL, every client on it (the deliveries that cross nothing)
#   herald2  — two Herald nodes on one PostgreSQL
#   python2  — two python-socketio processes (uvicorn, uvloop) on one Redis
# at each rate of RATES_HERALD / RATES_PYTHON (events per second into the room), and many
# small rooms, one per user (each client signs in as its own user, bench-<n>, and each event
# goes to one user's room, so every event is one delivery and the bus carries one message
# per delivery):
#   herald1-rooms — one Herald node, USERS1 users (one server process holds at most ~19,900
#                   sockets here, so fewer than USERS)
#   herald2-rooms, python2-rooms — USERS users over the two nodes
# at each of ROOM_RATES_HERALD / ROOM_RATES_PYTHON events per second in all (PUBLISHERS requests
# in flight per generator process). Presence churn: CHURN_USERS clients, each its own user, spread
# over the nodes; CHURN_RATES of them per second disconnect and come back CHURN_OFFLINE s later
# (Herald writes who is online per node to PostgreSQL and publishes presence events; the python
# peer has no presence, so it measures the connection handling alone):
#   herald1-churn, herald2-churn, python2-churn
# USERS clients
# need two generator processes (the same limit): each holds half the users and publishes
# half the rate to their rooms, both on node 1. Nothing is
# pinned: the two cores are shared by the nodes, the database, Redis and the generator, so the
# figures to compare are CPU per delivery (every process's CPU over the publishing window,
# counted from /proc with its children) as well as deliveries per second and latency.
# Results: one JSON line per measurement in $OUT/results.jsonl; summary in $OUT/summary.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)-cluster}
ONLY=${ONLY:-"herald1 herald2 python2 herald1-rooms herald2-rooms python2-rooms herald1-churn herald2-churn python2-churn"}
CONNECTIONS=${CONNECTIONS:-10000}
DURATION=${DURATION:-20}
RATES_HERALD=${RATES_HERALD:-"0.25 5 20 40"}
RATES_PYTHON=${RATES_PYTHON:-"0.25 0.5 1"}
USERS=${USERS:-20000}
USERS1=${USERS1:-10000}
ROOM_RATES_HERALD=${ROOM_RATES_HERALD:-"1000 4000 8000"}
ROOM_RATES_PYTHON=${ROOM_RATES_PYTHON:-"500 1000 2000"}
CHURN_USERS=${CHURN_USERS:-10000}
CHURN_RATES=${CHURN_RATES:-"100 500 1000"}   # users leaving per second (each comes back CHURN_OFFLINE s later)
CHURN_OFFLINE=${CHURN_OFFLINE:-1}
PUBLISHERS=${PUBLISHERS:-4}  # small rooms: keep-alive publishing connections per generator (each one request in flight)
BATCH=${BATCH:-1}            # small rooms: events per publish request (above 1: POST …/publish/batch, on both servers)
PORT=${PORT:-18200}          # scripts/cluster: HAProxy on PORT, nodes on PORT+1, PORT+2, PostgreSQL on PORT+100
PY_PORT=${PY_PORT:-18250}    # python nodes on PY_PORT+1, PY_PORT+2
REDIS_PORT=${REDIS_PORT:-18270}
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
GEN=$BENCH/SocketIOLoad/.build/release/SocketIOLoad
VENV=$BENCH/.venv
CLUSTER_DIR=$(mktemp -d /tmp/herald-bench-cluster.XXXXXX)
rmdir "$CLUSTER_DIR"
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl

log() { echo "[cluster-run $(date +%H:%M:%S)] $*" >&2; }
# shellcheck source=Benchmarks/realtime-lib.sh
source "$BENCH/realtime-lib.sh"

[[ ${SKIP_BUILD:-0} == 1 ]] || "$BENCH/build-realtime.sh"
command -v redis-server >/dev/null || { log "installing redis-server"; apt-get update -q >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null; }
if [[ ! -x $VENV/bin/uvicorn ]] || ! "$VENV/bin/python" -c 'import redis' 2>/dev/null; then
    log "preparing the python-socketio venv (with redis)"
    [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q 'python-socketio>=5.18,<6' 'uvicorn[standard]>=0.30' 'redis>=5,<7'
fi
"$VENV/bin/python" -c 'import jwt' 2>/dev/null || "$VENV/bin/pip" install -q 'pyjwt>=2.8,<3'


{
    echo "# $(date -Is) $(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "# herald: $HERALD_BIN built $(date -r "$HERALD_BIN" -Is) from $(cd "$ROOT" && git rev-parse --short HEAD)"
    echo "# redis: $(redis-server --version)"
    "$VENV/bin/pip" list 2>/dev/null | grep -iE '^(python-socketio|python-engineio|uvicorn|uvloop|redis) '
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

CONFIG=$OUT/herald-config.yaml
cp "$BENCH/realtime-bench-config.yaml" "$CONFIG"

cluster() { CLUSTER_DIR=$CLUSTER_DIR CLUSTER_PORT=$PORT CLUSTER_CONFIG=$CONFIG HERALD_BIN=$HERALD_BIN "$ROOT/scripts/cluster" "$@"; }
PY_PIDS=()
REDIS_PID=""
stop_python() {
    for pid in "${PY_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PY_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    PY_PIDS=()
    [[ -n $REDIS_PID ]] && { kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; }
    REDIS_PID=""
}
cleanup() {
    stop_python
    [[ -f $CLUSTER_DIR/nodes ]] && cluster down >/dev/null 2>&1 || true
}
trap cleanup EXIT


gen() { "$GEN" "$@" --threads 1 | tee -a "$RESULTS"; }

# Many small rooms: USERS clients in two generator processes (or one for `users` ≤ 10,000), each
# holding its half of the users and publishing half of `rate` to their rooms.
rooms_gen() { # label users rate tokens url-list server-pid probes…
    local label=$1 users=$2 rate=$3 tokens=$4 urls=$5 pid=$6
    shift 6
    local parts=2 pids=()
    (( users <= ${GEN_CLIENTS_MAX:-10000} )) && parts=1
    local each=$((users / parts))
    for part in $(seq 0 $((parts - 1))); do
        "$GEN" fanout --url "$urls" --tokens-file "$tokens" --client-offset $((part * each)) --rooms "$each" \
            --room user:bench- --server-pid "$pid" "$@" --label "$label" --connections "$each" --publishers "$PUBLISHERS" --batch "$BATCH" \
            --rate "$(python3 -c "print($rate / $parts)")" --duration "$DURATION" --threads 1 >> "$OUT/rooms-part$part.jsonl" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    for part in $(seq 0 $((parts - 1))); do tail -1 "$OUT/rooms-part$part.jsonl" | tee -a "$RESULTS"; done
}

# Starts a Herald cluster of $1 nodes and sets URLS, SECRET, NODE1_PID, PROBES (node 2 and
# PostgreSQL) and the CLIENT and SERVICE tokens.
herald_up() { # nodes
    cluster up "$1" > "$OUT/cluster-up.log" 2>&1
    SECRET=$(cat "$CLUSTER_DIR/secret")
    CLIENT=$(HERALD_JWT_SECRET=$SECRET "$HERALD_BIN" token --user bench --role customer --ttl 1h --config "$CONFIG" --data-dir "$CLUSTER_DIR/node-1")
    SERVICE=$(HERALD_JWT_SECRET=$SECRET "$HERALD_BIN" token --user bench-publisher --role service --ttl 1h --config "$CONFIG" --data-dir "$CLUSTER_DIR/node-1")
    URLS=http://127.0.0.1:$((PORT + 1))
    PROBES=()
    [[ $1 == 2 ]] && { URLS=$URLS,http://127.0.0.1:$((PORT + 2)); PROBES+=(--probe "node2=$(cat "$CLUSTER_DIR/node-2.pid")"); }
    PROBES+=(--probe "postgres=$(head -1 "$(readlink "$CLUSTER_DIR/pg")/data/postmaster.pid")")
    NODE1_PID=$(cat "$CLUSTER_DIR/node-1.pid")
}

herald_down() { # nodes label
    for i in $(seq 1 "$1"); do cp "$CLUSTER_DIR/node-$i/herald.log" "$OUT/herald-$2-node$i.log" 2>/dev/null || true; done
    cluster down > /dev/null
    sleep 1
}

herald() { # nodes rate: one room of CONNECTIONS
    log "herald, $1 node(s) on PostgreSQL: $CONNECTIONS clients, $2 events/s, ${DURATION}s"
    herald_up "$1"
    gen fanout --url "$URLS" --token "$CLIENT" --server-pid "$NODE1_PID" "${PROBES[@]}" \
        --label "herald-$1node" --publish-token "$SERVICE" --room user:bench \
        --connections "$CONNECTIONS" --rate "$2" --duration "$DURATION"
    herald_down "$1" "$1node-$2"
}

herald_rooms() { # nodes rate: a room per user
    local users=$USERS
    [[ $1 == 1 ]] && users=$USERS1
    log "herald, $1 node(s) on PostgreSQL: $users users, a room each, $2 events/s in all, ${DURATION}s"
    herald_up "$1"
    "$VENV/bin/python" "$BENCH/peers/bench_tokens.py" --secret "$SECRET" --users "$users" > "$OUT/tokens.txt"
    rooms_gen "herald-$1node-rooms" "$users" "$2" "$OUT/tokens.txt" "$URLS" "$NODE1_PID" "${PROBES[@]}" --publish-token "$SERVICE"
    rm -f "$OUT/tokens.txt"
    herald_down "$1" "$1node-rooms-$2"
}

herald_churn() { # nodes rate: CHURN_USERS users, `rate` of them leave per second and come back CHURN_OFFLINE s later
    log "herald, $1 node(s) on PostgreSQL: $CHURN_USERS users, $2 leave per second, each away ${CHURN_OFFLINE}s, ${DURATION}s"
    herald_up "$1"
    "$VENV/bin/python" "$BENCH/peers/bench_tokens.py" --secret "$SECRET" --users "$CHURN_USERS" > "$OUT/tokens.txt"
    gen churn --url "$URLS" --tokens-file "$OUT/tokens.txt" --server-pid "$NODE1_PID" "${PROBES[@]}" --label "herald-$1node-churn" \
        --connections "$CHURN_USERS" --rate "$2" --offline "$CHURN_OFFLINE" --duration "$DURATION"
    rm -f "$OUT/tokens.txt"
    herald_down "$1" "$1node-churn-$2"
}

# Starts Redis and two python-socketio processes on it; sets URLS and PY_PIDS.
python_up() { # label
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/redis.log" 2>&1 &
    REDIS_PID=$!
    for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    for i in 1 2; do
        REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0 "$VENV/bin/uvicorn" python_socketio_server:app --app-dir "$BENCH/peers" \
            --host 127.0.0.1 --port $((PY_PORT + i)) --loop uvloop --ws websockets-sansio --http httptools \
            --log-level warning --no-access-log --backlog 4096 > "$OUT/python-2node-$1-node$i.log" 2>&1 &
        PY_PIDS+=($!)
        wait_healthy "$((PY_PORT + i))"
    done
    URLS="http://127.0.0.1:$((PY_PORT + 1)),http://127.0.0.1:$((PY_PORT + 2))"
}

python_down() { stop_python; sleep 1; }

# The python peer reads a token's `sub` without checking its signature.
python_tokens() { "$VENV/bin/python" "$BENCH/peers/bench_tokens.py" --secret python-peer-reads-the-sub-and-ignores-the-signature --users "$1" > "$OUT/tokens.txt"; }

python2() { # rate: one room of CONNECTIONS
    log "python-socketio, 2 nodes on Redis: $1 events/s, ${DURATION}s"
    python_up "$1"
    gen fanout --url "$URLS" --server-pid "${PY_PIDS[0]}" \
        --probe "node2=${PY_PIDS[1]}" --probe "redis=$REDIS_PID" --label python-socketio-2node --room bench \
        --connections "$CONNECTIONS" --rate "$1" --duration "$DURATION"
    python_down
}

python2_rooms() { # rate: a room per user
    log "python-socketio, 2 nodes on Redis: $USERS users, a room each, $1 events/s, ${DURATION}s"
    python_up "rooms-$1"
    python_tokens "$USERS"
    rooms_gen python-socketio-2node-rooms "$USERS" "$1" "$OUT/tokens.txt" "$URLS" "${PY_PIDS[0]}" \
        --probe "node2=${PY_PIDS[1]}" --probe "redis=$REDIS_PID"
    rm -f "$OUT/tokens.txt"
    python_down
}

python2_churn() { # rate
    log "python-socketio, 2 nodes on Redis: $CHURN_USERS users, $1 leave per second, each away ${CHURN_OFFLINE}s, ${DURATION}s"
    python_up "churn-$1"
    python_tokens "$CHURN_USERS"
    gen churn --url "$URLS" --tokens-file "$OUT/tokens.txt" --server-pid "${PY_PIDS[0]}" \
        --probe "node2=${PY_PIDS[1]}" --probe "redis=$REDIS_PID" --label python-socketio-2node-churn \
        --connections "$CHURN_USERS" --rate "$1" --offline "$CHURN_OFFLINE" --duration "$DURATION"
    rm -f "$OUT/tokens.txt"
    python_down
}

for what in $ONLY; do
    case $what in
    herald1) for rate in $RATES_HERALD; do herald 1 "$rate"; done ;;
    herald2) for rate in $RATES_HERALD; do herald 2 "$rate"; done ;;
    python2) for rate in $RATES_PYTHON; do python2 "$rate"; done ;;
    herald1-rooms) for rate in $ROOM_RATES_HERALD; do herald_rooms 1 "$rate"; done ;;
    herald2-rooms) for rate in $ROOM_RATES_HERALD; do herald_rooms 2 "$rate"; done ;;
    python2-rooms) for rate in $ROOM_RATES_PYTHON; do python2_rooms "$rate"; done ;;
    herald1-churn) for rate in $CHURN_RATES; do herald_churn 1 "$rate"; done ;;
    herald2-churn) for rate in $CHURN_RATES; do herald_churn 2 "$rate"; done ;;
    python2-churn) for rate in $CHURN_RATES; do python2_churn "$rate"; done ;;
    *) log "unknown measurement: $what"; exit 2 ;;
    esac
done

log "results: $RESULTS"
"$VENV/bin/python" "$BENCH/cluster_summary.py" "$RESULTS" | tee "$OUT/summary.md"
