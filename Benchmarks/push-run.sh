#!/usr/bin/env bash
# Herald push delivery benchmarks vs aioapns and pywebpush, one reproducible run (loopback only).
#
#   Benchmarks/push-run.sh                          # everything (about 7 minutes once built; 9 with REPEAT=2)
#   ONLY="h2load apns" Benchmarks/push-run.sh       # some measurements
#   APNS_SECONDS=20 CONCURRENCY=32 Benchmarks/push-run.sh
#
# Builds Benchmarks/PushLoad in release first (its own .build; incremental, seconds when up
# to date; SKIP_BUILD=1 skips it) and the peers' venv (Benchmarks/.venv: aioapns, pywebpush)
# when they are missing.
#
# Every measurement gets a fresh mock APNs process (`PushLoad mock-apns`) pinned to CPU
# $MOCK_CPU; the client under test (h2load, Herald's sender, aioapns, the delivery worker,
# the Web Push encoders) is pinned to CPU $CLIENT_CPU. The mock's CPU time over each run is
# added to the result line (mock_cpu_cores close to 1.0 means the mock was the limit).
# Results: one JSON line per measurement in $OUT/results.jsonl; summary.md, machine.txt and
# the mocks' logs beside it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/Benchmarks
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)-push}
ONLY=${ONLY:-"h2load apns aioapns window64k queue-rss live-activities departures-fanout webpush breakdown"}
REPEAT=${REPEAT:-1}                   # rounds of the 60-s Herald/aioapns pair (alternating)
WAIT_QUIET=${WAIT_QUIET:-0}           # >0: first wait (at most 10 min) for the 1-min load average to drop below it
MOCK_CPU=${MOCK_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
MOCK_IMPL=${MOCK_IMPL:-fast}          # the mock the clients are measured against: fast | shared
MOCK_WINDOW=${MOCK_WINDOW:-1048576}   # the fast mock's connection flow-control window (HTTP/2 default: 65535)
SMALL_WINDOW_SECONDS=${SMALL_WINDOW_SECONDS:-20}
H2LOAD_IMPLS=${H2LOAD_IMPLS:-"shared fast"}
H2LOAD_N=${H2LOAD_N:-500000}
H2LOAD_C=${H2LOAD_C:-8}
H2LOAD_M=${H2LOAD_M:-100}
APNS_SECONDS=${APNS_SECONDS:-60}
WARMUP=${WARMUP:-5}
CONCURRENCY=${CONCURRENCY:-100}
CONNECTIONS=${CONNECTIONS:-2}
DELIVERIES=${DELIVERIES:-100000}
LA_ACTIVITIES=${LA_ACTIVITIES:-10000}   # live-activities: trip activities, one position a second each
LA_SECONDS=${LA_SECONDS:-60}
LA_FEEDS=${LA_FEEDS:-"minutes every"}
FANOUT_RIDERS=${FANOUT_RIDERS:-20000}   # departures-fanout: riders following one stop
FANOUT_CHANGES=${FANOUT_CHANGES:-5}     # board changes, each to every rider's token or once to the channel
WEBPUSH_SECONDS=${WEBPUSH_SECONDS:-10}
PUSHLOAD=${PUSHLOAD:-$BENCH/PushLoad/.build/release/PushLoad}   # another build (a before/after comparison): PUSHLOAD=path SKIP_BUILD=1
PY=$BENCH/.venv/bin/python
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl

log() { echo "[push-run.sh $(date +%H:%M:%S)] $*" >&2; }
wants() { [[ " $ONLY " == *" $1 "* ]]; }

# ---------------------------------------------------------------- builds
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building PushLoad (release, Benchmarks/PushLoad/.build; 10+ minutes the first time)"
    # SwiftPM keeps the build plan of a path dependency (the root package) and misses source
    # files added to it since; dropping the plan makes it read the root package again.
    rm -f "$BENCH/PushLoad/.build/release.yaml" "$BENCH/PushLoad/.build/release/description.json"
    swift build -c release --package-path "$BENCH/PushLoad" >&2
fi
if ! "$PY" -c "import aioapns, pywebpush, uvloop" 2>/dev/null; then
    log "installing aioapns and pywebpush into Benchmarks/.venv"
    [[ -x $PY ]] || python3 -m venv "$BENCH/.venv"
    "$BENCH/.venv/bin/pip" install -q aioapns pywebpush uvloop
fi
if wants h2load && ! command -v h2load >/dev/null; then
    log "h2load is missing (apt-get install nghttp2-client): skipping the mock's h2load check"
    ONLY=${ONLY//h2load/}
fi

# ---------------------------------------------------------------- machine
if [[ $WAIT_QUIET != 0 ]]; then
    for _ in $(seq 1 60); do
        awk -v max="$WAIT_QUIET" '{exit !($1 < max)}' /proc/loadavg && break
        log "waiting for a quieter machine (load $(cut -d' ' -f1 /proc/loadavg), want < $WAIT_QUIET)"
        sleep 10
    done
fi
{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -srm), $(nproc) CPUs: $(lscpu | sed -n 's/^Model name: *//p')"
    echo "memory: $(free -g | awk '/Mem:/ {print $2 " GiB"}')"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "swift: $(swift --version 2>&1 | head -1)"
    echo "herald commit: $(git -C "$ROOT" rev-parse --short HEAD) ($(git -C "$ROOT" status --porcelain -- Sources Package.swift | wc -l) modified/untracked paths under Sources, Package.swift)"
    echo "sha256 of the Swift sources PushLoad compiles from the root package (HeraldCore, HeraldStorage, HeraldPush, HeraldMockProviders): $(cd "$ROOT" && find Sources/HeraldCore Sources/HeraldStorage Sources/HeraldPush Sources/HeraldMockProviders -name '*.swift' | sort | xargs cat | sha256sum | cut -c1-16)"
    echo "PushLoad binary: $(stat -c '%y' "$PUSHLOAD" 2>/dev/null | cut -c1-19)"
    echo "h2load: $(h2load --version 2>/dev/null | head -1 || echo missing)"
    echo "python: $("$PY" --version 2>&1); $("$PY" -m pip list 2>/dev/null | grep -iE '^(aioapns|h2|pyjwt|cryptography|pywebpush|py-vapid|http-ece|uvloop) ' | tr -s ' ' | paste -sd, -)"
    echo "pinning: mock on CPU $MOCK_CPU, clients on CPU $CLIENT_CPU"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

# ---------------------------------------------------------------- mock
MOCK_PID=""
MOCK_PORT=""
MOCK_CA=""
stop_mock() {
    if [[ -n $MOCK_PID ]] && kill -0 "$MOCK_PID" 2>/dev/null; then
        kill "$MOCK_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$MOCK_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$MOCK_PID" 2>/dev/null || true
        wait "$MOCK_PID" 2>/dev/null || true
    fi
    MOCK_PID=""
}
trap stop_mock EXIT

start_mock() { # impl name [window]
    local logfile=$OUT/mock-$1-$2.log
    taskset -c "$MOCK_CPU" "$PUSHLOAD" mock-apns --impl "$1" --connection-window "${3:-$MOCK_WINDOW}" > "$logfile" 2>&1 &
    MOCK_PID=$!
    for _ in $(seq 1 200); do
        grep -q '"port"' "$logfile" 2>/dev/null && break
        sleep 0.1
    done
    MOCK_PORT=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$logfile" | head -1)
    MOCK_CA=$(sed -n 's/.*"ca":"\([^"]*\)".*/\1/p' "$logfile" | head -1)
    [[ -n $MOCK_PORT ]] || { log "mock-apns did not start: $(cat "$logfile")"; exit 1; }
    log "mock-apns ($1) pid $MOCK_PID on port $MOCK_PORT"
}

cpu_ticks() { # pid -> utime + stime in clock ticks (0 without a mock)
    [[ -n $1 ]] || { echo 0; return; }
    awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}

# Runs a client command, adds the mock's CPU use over it to the client's JSON line(s).
measure() { # name command...
    local name=$1; shift
    local before after started ended connections
    before=$(cpu_ticks "$MOCK_PID")
    started=$(date +%s.%N)
    ( sleep $((WARMUP + 5)); [[ -n $MOCK_PID ]] && ss -Htn state established "( dport = :$MOCK_PORT )" 2>/dev/null | wc -l > "$OUT/$name.connections" ) &
    local probe=$!
    "$@" > "$OUT/$name.out" 2> "$OUT/$name.err" || log "$name exited with $? (see $OUT/$name.err)"
    ended=$(date +%s.%N)
    after=$(cpu_ticks "$MOCK_PID")
    kill "$probe" 2>/dev/null || true
    wait "$probe" 2>/dev/null || true
    connections=$(cat "$OUT/$name.connections" 2>/dev/null || echo null)
    python3 - "$OUT/$name.out" "$before" "$after" "$started" "$ended" "$(getconf CLK_TCK)" "$MOCK_IMPL_NOW" "${connections:-null}" "${ROUND:-1}" >> "$RESULTS" <<'PY'
import json, sys
path, before, after, started, ended, hz, impl, conns, round_ = sys.argv[1:]
mock_s = (int(after) - int(before)) / int(hz)
wall = float(ended) - float(started)
for line in open(path):
    line = line.strip()
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    d["mock_impl"] = impl
    d["mock_cpu_s"] = round(mock_s, 3)
    d["mock_cpu_cores"] = round(mock_s / wall, 3) if wall > 0 else None
    d["client_wall_s"] = round(wall, 3)
    d["tcp_connections_seen"] = None if conns == "null" else int(conns)
    d["round"] = int(round_)
    d["loadavg_after"] = open("/proc/loadavg").read().split()[0]
    print(json.dumps(d))
PY
    tail -n +1 "$OUT/$name.out" | grep '^{' | cut -c1-300 >&2 || true
}

# ---------------------------------------------------------------- h2load: can the mock take 45,000 req/s?
run_h2load() { # output file; runs "${H2[@]}" and prints one JSON line
    ( "${H2[@]}" -n "$H2LOAD_N" > "$1" 2>&1 || true; times > "$1.times" )
    python3 - "$1" <<'PY'
import json, re, sys
out = open(sys.argv[1]).read()
# bash `times`, second line: children's user and system time ("0m1.234s 0m0.567s")
child = open(sys.argv[1] + ".times").read().split("\n")[1].split()
secs = [int(t.split("m")[0]) * 60 + float(t.split("m")[1].rstrip("s")) for t in child]
m = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", out)
s = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", out)
c = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
lat = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)", out)
print(json.dumps({
    "bench": "h2load", "impl": "h2load", "req_per_s": float(m.group(3)) if m else None,
    "duration_s": (float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)) if m else None,
    "requests": int(s.group(1)) if s else None, "succeeded": int(s.group(4)) if s else None,
    "failed": int(s.group(5)) if s else None, "errored": int(s.group(6)) if s else None,
    "status_2xx": int(c.group(1)) if c else None, "status_4xx": int(c.group(3)) if c else None,
    "request_time_min_max_mean": [lat.group(1), lat.group(2), lat.group(3)] if lat else None,
    "h2load_cpu_s": round(sum(secs), 3),
    "h2load_cpu_us_per_request": round(sum(secs) * 1e6 / int(s.group(4)), 3) if s and int(s.group(4)) else None}))
PY
}

if wants h2load; then
    cat > "$OUT/payload.json" <<'JSON'
{"aps":{"alert":{"body":"Are we still on for lunch tomorrow? I booked the place near the station for 12:30.","title":"New message from Alice"},"badge":3,"category":"MESSAGE","mutable-content":1,"sound":"default","thread-id":"conversation-42"},"conversation_id":"conversation-42","notification_id":"ntf_01JD5R8Y4W2KQ7X9ABCDEF","type":"chat.message"}
JSON
    for impl in $H2LOAD_IMPLS; do
        MOCK_IMPL_NOW=$impl
        start_mock "$impl" h2load
        TOKEN=$(printf 'ab%.0s' $(seq 1 32))
        H2=(taskset -c "$CLIENT_CPU" h2load -t 1 -c "$H2LOAD_C" -m "$H2LOAD_M" -H 'authorization: bearer x' -H 'apns-topic: com.example.herald'
            -H 'apns-push-type: alert' -H 'apns-priority: 10' -H 'content-type: application/json' -d "$OUT/payload.json"
            "https://localhost:$MOCK_PORT/3/device/$TOKEN")
        "${H2[@]}" -n 20000 > /dev/null 2>&1 || true   # warm up
        log "h2load against the $impl mock: -n $H2LOAD_N -c $H2LOAD_C -m $H2LOAD_M"
        measure "h2load-$impl" run_h2load "$OUT/h2load-$impl.txt"
        stop_mock
    done
fi

# ---------------------------------------------------------------- APNs sends/s: Herald, then aioapns, same mock build
MOCK_IMPL_NOW=$MOCK_IMPL
for ROUND in $(seq 1 "$REPEAT"); do
    if wants apns; then
        start_mock "$MOCK_IMPL" "apns-herald-$ROUND"
        log "round $ROUND: Herald APNsSender: $APNS_SECONDS s, $CONCURRENCY loops, $CONNECTIONS connections"
        measure "apns-herald-$ROUND" timeout $((APNS_SECONDS + WARMUP + 60)) taskset -c "$CLIENT_CPU" "$PUSHLOAD" apns \
            --url "https://localhost:$MOCK_PORT" --ca "$MOCK_CA" --seconds "$APNS_SECONDS" --warmup "$WARMUP" \
            --concurrency "$CONCURRENCY" --connections "$CONNECTIONS"
        stop_mock
    fi
    if wants aioapns; then
        start_mock "$MOCK_IMPL" "apns-aioapns-$ROUND"
        log "round $ROUND: aioapns: $APNS_SECONDS s, $CONCURRENCY tasks, $CONNECTIONS connections"
        measure "apns-aioapns-$ROUND" timeout $((APNS_SECONDS + WARMUP + 60)) taskset -c "$CLIENT_CPU" "$PY" "$BENCH/peers/aioapns_load.py" \
            --url "https://localhost:$MOCK_PORT" --ca "$MOCK_CA" --seconds "$APNS_SECONDS" --warmup "$WARMUP" \
            --concurrency "$CONCURRENCY" --connections "$CONNECTIONS"
        stop_mock
    fi
done
ROUND=1

# ---------------------------------------------------------------- the same two against a 64 KiB connection window
# (HTTP/2's default, and MockPushServer's): aioapns does not check the peer's flow-control
# window, gets h2's FlowControlError and sleeps a second
# (see Benchmarks/journal/2026-11-21-push-first-measurement.md, "The 1 MiB connection window").
if wants window64k; then
    for impl in herald aioapns; do
        start_mock "$MOCK_IMPL" "window64k-$impl" 65535
        MOCK_IMPL_NOW="$MOCK_IMPL-window65535"
        if [[ $impl == herald ]]; then
            CMD=("$PUSHLOAD" apns)
        else
            CMD=("$PY" "$BENCH/peers/aioapns_load.py")
        fi
        log "$impl against a 65,535-byte connection window: $SMALL_WINDOW_SECONDS s"
        measure "window64k-$impl" timeout $((SMALL_WINDOW_SECONDS + WARMUP + 60)) taskset -c "$CLIENT_CPU" "${CMD[@]}" \
            --url "https://localhost:$MOCK_PORT" --ca "$MOCK_CA" --seconds "$SMALL_WINDOW_SECONDS" --warmup "$WARMUP" \
            --concurrency "$CONCURRENCY" --connections "$CONNECTIONS"
        stop_mock
    done
    MOCK_IMPL_NOW=$MOCK_IMPL
fi

# ---------------------------------------------------------------- RSS with 100,000 deliveries queued
if wants queue-rss; then
    start_mock "$MOCK_IMPL" queue-rss
    log "queue-rss: $DELIVERIES deliveries through the stores, then DeliveryWorker drains them"
    measure queue-rss timeout 1200 taskset -c "$CLIENT_CPU" "$PUSHLOAD" queue-rss \
        --url "https://localhost:$MOCK_PORT" --ca "$MOCK_CA" --deliveries "$DELIVERIES" --connections "$CONNECTIONS"
    stop_mock
fi

# ---------------------------------------------------------------- one stop's board: R riders' tokens against one broadcast channel
if wants departures-fanout; then
    for mode in devices channel; do
        start_mock "$MOCK_IMPL" "departures-fanout-$mode"
        log "departures-fanout ($mode): $FANOUT_RIDERS riders on one stop, $FANOUT_CHANGES board changes"
        measure "departures-fanout-$mode" timeout 1200 taskset -c "$CLIENT_CPU" "$PUSHLOAD" departures-fanout \
            --url "https://localhost:$MOCK_PORT" --ca "$MOCK_CA" --riders "$FANOUT_RIDERS" --changes "$FANOUT_CHANGES" --mode "$mode" \
            --connections "$CONNECTIONS"
        stop_mock
    done
fi

# ---------------------------------------------------------------- Live Activities: N trips, one position a second each
if wants live-activities; then
    for feed in $LA_FEEDS; do
        start_mock "$MOCK_IMPL" "live-activities-$feed"
        log "live-activities ($feed): $LA_ACTIVITIES trip activities, one position a second each for $LA_SECONDS s"
        measure "live-activities-$feed" timeout 1200 taskset -c "$CLIENT_CPU" "$PUSHLOAD" live-activities \
            --url "https://localhost:$MOCK_PORT" --ca "$MOCK_CA" --activities "$LA_ACTIVITIES" --seconds "$LA_SECONDS" --feed "$feed" \
            --connections "$CONNECTIONS"
        stop_mock
    done
fi

# ---------------------------------------------------------------- Web Push encrypt + sign, one core
if wants webpush; then
    MOCK_IMPL_NOW=none
    MOCK_PID=""
    log "Web Push encrypt+sign: Herald, then pywebpush ($WEBPUSH_SECONDS s per mode)"
    measure webpush-herald taskset -c "$CLIENT_CPU" "$PUSHLOAD" webpush-encrypt --seconds "$WEBPUSH_SECONDS"
    measure webpush-pywebpush taskset -c "$CLIENT_CPU" "$PY" "$BENCH/peers/pywebpush_encrypt.py" --seconds "$WEBPUSH_SECONDS"
    measure webpush-pywebpush-string-key taskset -c "$CLIENT_CPU" "$PY" "$BENCH/peers/pywebpush_encrypt.py" \
        --seconds "$WEBPUSH_SECONDS" --mode string-key
fi

# ---------------------------------------------------------------- where the time and memory go (no network)
if wants breakdown; then
    MOCK_IMPL_NOW=none
    MOCK_PID=""
    log "per-step CPU of APNsSender's and Web Push's own work; memory held by withDeadline"
    measure apns-breakdown taskset -c "$CLIENT_CPU" "$PUSHLOAD" apns-breakdown
    measure webpush-breakdown taskset -c "$CLIENT_CPU" "$PUSHLOAD" webpush-breakdown
    measure deadline-memory taskset -c "$CLIENT_CPU" "$PUSHLOAD" deadline-memory --calls 50000 --timeout 10
fi

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
python3 "$BENCH/PushLoad/summarize.py" "$RESULTS" > "$OUT/summary.md"
cat "$OUT/summary.md"
log "results in $OUT"
