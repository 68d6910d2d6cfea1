# Shared by Benchmarks/run.sh and Benchmarks/cluster-run.sh (sourced; they define log()).

wait_healthy() { # port
    for _ in $(seq 1 200); do
        curl -sf "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    log "server on port $1 did not become healthy"; return 1
}
