#!/usr/bin/env bash
cd /work/main
export CLUSTER_DIR=/tmp/churn-stmts-cluster CLUSTER_PORT=18600 HERALD_BIN=/work/main/.build-release/release/herald CLUSTER_CONFIG=/work/main/Benchmarks/realtime-bench-config.yaml
rm -rf $CLUSTER_DIR
scripts/cluster up 2 > /tmp/churn-stmts-up.log 2>&1
PGB=$(dirname $(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1))
$PGB/psql -h 127.0.0.1 -p 18700 -U postgres -qc "ALTER SYSTEM SET log_statement='all'" -c "SELECT pg_reload_conf()"
SECRET=$(cat $CLUSTER_DIR/secret)
Benchmarks/.venv/bin/python Benchmarks/peers/bench_tokens.py --secret "$SECRET" --users 4000 > /tmp/churn-stmts-tokens.txt
LOG=$(readlink $CLUSTER_DIR/pg)/log
Benchmarks/SocketIOLoad/.build/release/SocketIOLoad churn --url http://127.0.0.1:18601,http://127.0.0.1:18602 --tokens-file /tmp/churn-stmts-tokens.txt --connections 4000 --rate 300 --offline 1 --duration 10 --threads 1 --label x > /tmp/churn-stmts-gen.out 2>&1
cp $LOG /tmp/churn-stmts-pg.log
scripts/cluster down > /dev/null 2>&1
