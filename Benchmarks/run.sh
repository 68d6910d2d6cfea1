#!/usr/bin/env bash
# Herald vs python-socketio realtime benchmarks, one reproducible run (loopback only).
#
#   Benchmarks/run.sh                 # everything (about 10 minutes once built)
#   ONLY="fanout memory" Benchmarks/run.sh
#   ONLY=floor Benchmarks/run.sh      # the kernel's own floor for one fan-out (needs gcc)
#   ONLY=nio-floor Benchmarks/run.sh  # the same with SwiftNIO around the writes (Herald's framework)
#
# SKIP_PYTHON=1 measures Herald alone at light load (fanout-light), for A/B runs of two builds.
# Builds first (incremental, seconds when up to date): the generator (Benchmarks/SocketIOLoad,
# release) and Herald in release into .build-release (about 13 minutes the first time), and
# a venv with python-socketio. SKIP_BUILD=1 uses the binaries as they are.
# Every server gets a fresh process (and Herald a fresh data dir) per measurement, pinned to
# CPU 0 with taskset; the generator is pinned to CPU 1 with one event-loop thread.
# Results: one JSON line per measurement in $OUT/results.jsonl, server logs beside it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)}
ONLY=${ONLY:-"floor fanout fanout-light memory memory-19k storm memory-21k"}
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
HERALD_PORT=${HERALD_PORT:-18080}
PY_PORT=${PY_PORT:-18090}
CONNECTIONS=${CONNECTIONS:-10000}
RATE=${RATE:-30}              # events/s into a room of CONNECTIONS: 30 x 10,000 = 300,000 deliveries/s offered
LIGHT_RATE=${LIGHT_RATE:-0.25} # a load python-socketio sustains on one core (2,500 deliveries/s)
DURATION=${DURATION:-30}
STORM_CONNECTIONS=${STORM_CONNECTIONS:-5000}
STORM_RATE=${STORM_RATE:-1}   # 1 x 5,000 = 5,000 deliveries/s: inside what both servers sustain on one core
HERALD_BIN=${HERALD_BIN:-$ROOT/.build-release/release/herald}
GEN=$BENCH/SocketIOLoad/.build/release/SocketIOLoad
PY=$BENCH/.venv/bin/python
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl

log() { echo "[run.sh $(date +%H:%M:%S)] $*" >&2; }
# shellcheck source=Benchmarks/realtime-lib.sh
source "$BENCH/realtime-lib.sh"

# ---------------------------------------------------------------- builds
[[ ${SKIP_BUILD:-0} == 1 ]] || "$BENCH/build-realtime.sh"
if [[ ! -x $BENCH/.venv/bin/uvicorn ]]; then
    log "creating the python-socketio venv"
    python3 -m venv "$BENCH/.venv"
    "$BENCH/.venv/bin/pip" install -q 'python-socketio>=5.18,<6' 'uvicorn[standard]>=0.30'
fi

# ---------------------------------------------------------------- servers
SERVER_PID=""
HERALD_DIR=""
cleanup() { # SIGTERM, then SIGKILL after 30 s (a server tearing down 20,000 sockets can be slow)
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        local started=$SECONDS
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 300); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            log "server $SERVER_PID still running 30 s after SIGTERM: SIGKILL"
            kill -9 "$SERVER_PID" 2>/dev/null || true
        else
            log "server stopped $((SECONDS - started)) s after SIGTERM"
        fi
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
trap cleanup EXIT


start_herald() { # name
    HERALD_DIR=$(mktemp -d /tmp/herald-bench.XXXXXX)
    cp "$BENCH/realtime-bench-config.yaml" "$HERALD_DIR/config.yaml"
    taskset -c "$SERVER_CPU" "$HERALD_BIN" serve --host 127.0.0.1 --port "$HERALD_PORT" \
        --data-dir "$HERALD_DIR" --config "$HERALD_DIR/config.yaml" > "$OUT/herald-$1.log" 2>&1 &
    SERVER_PID=$!
    wait_healthy "$HERALD_PORT"
    CLIENT_TOKEN=$("$HERALD_BIN" token --user bench --role customer --ttl 1h --data-dir "$HERALD_DIR" --config "$HERALD_DIR/config.yaml")
    SERVICE_TOKEN=$("$HERALD_BIN" token --user bench-publisher --role service --ttl 1h --data-dir "$HERALD_DIR" --config "$HERALD_DIR/config.yaml")
}

start_python() { # name
    taskset -c "$SERVER_CPU" "$BENCH/.venv/bin/uvicorn" python_socketio_server:app --app-dir "$BENCH/peers" \
        --host 127.0.0.1 --port "$PY_PORT" --loop uvloop --ws websockets-sansio --http httptools \
        --log-level warning --no-access-log --backlog 4096 > "$OUT/python-$1.log" 2>&1 &
    SERVER_PID=$!
    wait_healthy "$PY_PORT"
}

stop_server() { # name
    if [[ -n $SERVER_PID ]]; then
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            log "SERVER DIED during $1 (see its log)"
            echo "{\"test\":\"server-died\",\"label\":\"$1\"}" >> "$RESULTS"
        fi
    fi
    cleanup
    [[ -n $HERALD_DIR ]] && rm -rf "$HERALD_DIR"
    HERALD_DIR=""
    sleep 1
}

gen() { # generator arguments…
    taskset -c "$GEN_CPU" "$GEN" "$@" --threads 1 | tee -a "$RESULTS"
}

herald_args() { echo --url "http://127.0.0.1:$HERALD_PORT" --token "$CLIENT_TOKEN" --server-pid "$SERVER_PID" --label herald; }
herald_pub() { echo --publish-token "$SERVICE_TOKEN" --room user:bench; }
python_args() { echo --url "http://127.0.0.1:$PY_PORT" --server-pid "$SERVER_PID" --label python-socketio; }
python_pub() { echo --room bench; }

{
    echo "# $(date -Is) $(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "# herald: $HERALD_BIN built $(date -r "$HERALD_BIN" -Is) from $(cd "$ROOT" && git rev-parse --short HEAD) + working tree (git diff sha1 $(cd "$ROOT" && git diff HEAD -- Sources Package.swift | sha1sum | cut -c1-12))"
    echo "# generator: $GEN (swift-nio $(grep -A6 '"identity" : "swift-nio"' "$BENCH/SocketIOLoad/Package.resolved" 2>/dev/null | grep -o '"version" : "[^"]*"' | head -1 | cut -d'"' -f4))"
} > "$OUT/machine.txt"
"$BENCH/.venv/bin/pip" list 2>/dev/null | grep -iE 'socketio|engineio|uvicorn|uvloop|websockets|httptools' >> "$OUT/machine.txt" || true
cat "$OUT/machine.txt" >&2

for what in $ONLY; do
    case $what in
    fanout)
        log "fanout: $CONNECTIONS clients, $RATE events/s, ${DURATION}s"
        start_herald fanout
        # shellcheck disable=SC2046
        gen fanout $(herald_args) $(herald_pub) --connections "$CONNECTIONS" --rate "$RATE" --duration "$DURATION"
        stop_server herald-fanout
        start_python fanout
        # shellcheck disable=SC2046
        gen fanout $(python_args) $(python_pub) --connections "$CONNECTIONS" --rate "$RATE" --duration "$DURATION"
        stop_server python-fanout
        ;;
    floor)
        # What one fan-out costs a "server" that only calls write(2): the latency floor of
        # this machine's kernel, to read the servers' fan-out latencies against.
        log "kernel floor: a C program writes one message to $CONNECTIONS loopback sockets, 20 rounds"
        mkdir -p "$BENCH/KernelFloor/.build"
        gcc -O2 -o "$BENCH/KernelFloor/.build/floor" "$BENCH/KernelFloor/floor.c"
        "$BENCH/KernelFloor/.build/floor" "$CONNECTIONS" 20 "$SERVER_CPU" "$GEN_CPU" | tee -a "$RESULTS"
        ;;
    nio-floor)
        # The floor of the framework Herald writes through: a SwiftNIO server that only calls
        # writeAndFlush, read by the C floor's reader; once in one go, once in Herald's write
        # rounds (64 connections, then a 20 us timer for I/O), once in rounds with a pipe's
        # wake-up for I/O instead of the timer.
        log "SwiftNIO floor: writeAndFlush of one message to $CONNECTIONS loopback sockets, 20 rounds"
        mkdir -p "$BENCH/KernelFloor/.build"
        gcc -O2 -o "$BENCH/KernelFloor/.build/floor" "$BENCH/KernelFloor/floor.c"
        taskset -c "$SERVER_CPU" "$BENCH/SocketIOLoad/.build/release/NIOFloor" "$BENCH/KernelFloor/.build/floor" \
            "$CONNECTIONS" 20 "$GEN_CPU" | tee -a "$RESULTS"
        taskset -c "$SERVER_CPU" "$BENCH/SocketIOLoad/.build/release/NIOFloor" "$BENCH/KernelFloor/.build/floor" \
            "$CONNECTIONS" 20 "$GEN_CPU" 64 20 | tee -a "$RESULTS"
        taskset -c "$SERVER_CPU" "$BENCH/SocketIOLoad/.build/release/NIOFloor" "$BENCH/KernelFloor/.build/floor" \
            "$CONNECTIONS" 20 "$GEN_CPU" 64 pipe | tee -a "$RESULTS"
        ;;
    fanout-light)
        log "fanout at a rate python-socketio sustains: $CONNECTIONS clients, $LIGHT_RATE events/s"
        start_herald fanout-light
        # shellcheck disable=SC2046
        gen fanout $(herald_args) $(herald_pub) --connections "$CONNECTIONS" --rate "$LIGHT_RATE" --duration "$DURATION"
        stop_server herald-fanout-light
        [ "${SKIP_PYTHON:-0}" = 1 ] && continue
        start_python fanout-light
        # shellcheck disable=SC2046
        gen fanout $(python_args) $(python_pub) --connections "$CONNECTIONS" --rate "$LIGHT_RATE" --duration "$DURATION"
        stop_server python-fanout-light
        ;;
    memory)
        log "memory: $CONNECTIONS idle connections"
        start_herald memory
        # shellcheck disable=SC2046
        gen memory $(herald_args) --connections "$CONNECTIONS"
        stop_server herald-memory
        start_python memory
        # shellcheck disable=SC2046
        gen memory $(python_args) --connections "$CONNECTIONS"
        stop_server python-memory
        ;;
    memory-21k)
        # Beyond one process's 20,000 open files: what each server does when it runs out.
        log "memory: 21,000 connection attempts (more than one server process can hold)"
        start_herald memory21k
        # shellcheck disable=SC2046
        # A short handshake deadline: at its limit Herald stops accepting, and the attempts
        # beyond it wait in the accept queue (or for SYN retries) until the deadline.
        gen memory $(herald_args) --connections 21000 --processes 3 --source-ips 127.0.0.1,127.0.0.2,127.0.0.3 --connect-timeout 3 || true
        stop_server herald-memory21k
        start_python memory21k
        # shellcheck disable=SC2046
        gen memory $(python_args) --connections 21000 --processes 3 --source-ips 127.0.0.1,127.0.0.2,127.0.0.3 --connect-timeout 3 || true
        stop_server python-memory21k
        ;;
    memory-19k)
        # One server process can hold about 19,900 sockets (20,000 open files per process).
        log "memory: 19,000 idle connections from 2 generator processes and 2 source addresses"
        start_herald memory19k
        # shellcheck disable=SC2046
        gen memory $(herald_args) --connections 19000 --processes 2 --source-ips 127.0.0.1,127.0.0.2
        stop_server herald-memory19k
        start_python memory19k
        # shellcheck disable=SC2046
        gen memory $(python_args) --connections 19000 --processes 2 --source-ips 127.0.0.1,127.0.0.2
        stop_server python-memory19k
        ;;
    storm)
        log "storm: $STORM_CONNECTIONS clients, persisted events at $STORM_RATE/s, drop all, reconnect with recovery"
        start_herald storm
        # shellcheck disable=SC2046
        gen storm $(herald_args) $(herald_pub) --connections "$STORM_CONNECTIONS" --rate "$STORM_RATE" --whoami
        stop_server herald-storm
        start_python storm
        # shellcheck disable=SC2046
        gen storm $(python_args) $(python_pub) --connections "$STORM_CONNECTIONS" --rate "$STORM_RATE"
        stop_server python-storm
        ;;
    *) log "unknown measurement: $what"; exit 2 ;;
    esac
done

log "results: $RESULTS"
"$PY" "$BENCH/summarize.py" "$RESULTS" | tee "$OUT/summary.md"
