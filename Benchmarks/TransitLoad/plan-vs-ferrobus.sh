#!/usr/bin/env bash
# Journey planning on one core: Herald's planner (and the connection scan it is checked
# against) and the peer, ferrobus from PyPI, answering the same random one-to-one queries on
# the same feed in the same run. Usage (from the repository root):
#   Benchmarks/TransitLoad/plan-vs-ferrobus.sh [feed.zip] [YYYYMMDD] [queries] [out-dir]
set -euo pipefail
feed=${1:-.cache/transit-data/feeds/halifax.zip}
date=${2:-20260304}
queries=${3:-2000}
# Raw results stay under Benchmarks/results/, which git ignores; the figures worth keeping go
# into a dated entry of Benchmarks/journal/ and into BENCHMARKS.md (Benchmarks/journal/README.md).
out=${4:-Benchmarks/results/$(date +%Y%m%d-%H%M%S)-planner}
venv=.cache/bench/ferrobus-venv
mkdir -p "$out" .cache/bench
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "ferrobus==0.2.1" osmium
fi
gtfs=.cache/bench/$(basename "$feed" .zip)-gtfs
mkdir -p "$gtfs" && (cd "$gtfs" && unzip -qo "$OLDPWD/$feed")
swift build -c release --package-path Benchmarks/TransitLoad >/dev/null
taskset -c 0 Benchmarks/TransitLoad/.build/release/TransitLoad plan --feed "$feed" --date "$date" \
  --queries "$queries" --baseline-queries "$queries" --out "$out/herald.json" --pairs-out "$out/pairs.json"
taskset -c 0 "$venv/bin/python" Benchmarks/TransitLoad/peer/ferrobus_peer.py --gtfs "$gtfs" --pairs "$out/pairs.json" \
  --date "${date:0:4}-${date:4:2}-${date:6:2}" --out "$out/ferrobus.json"
