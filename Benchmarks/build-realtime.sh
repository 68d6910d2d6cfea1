#!/usr/bin/env bash
# The realtime benchmarks' binaries in release: the generator (Benchmarks/SocketIOLoad) and
# Herald into .build-release (about 13 minutes the first time, seconds when up to date).
# Used by Benchmarks/run.sh and Benchmarks/cluster-run.sh (SKIP_BUILD=1 skips it there).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
echo "[build-realtime $(date +%H:%M:%S)] building the generator (release)" >&2
swift build -c release --package-path "$ROOT/Benchmarks/SocketIOLoad" >&2
echo "[build-realtime $(date +%H:%M:%S)] building Herald (release into .build-release)" >&2
(cd "$ROOT" && swift build -c release --product herald --scratch-path "$ROOT/.build-release") >&2
