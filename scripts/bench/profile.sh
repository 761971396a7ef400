#!/usr/bin/env bash
# Profiles the CPU of `retsu serve` over SAMPLE seconds in the middle of a `retsu-bench run` of
# 16 producers and 16 consumers, the load of scripts/bench/cpu.sh, and prints the hottest
# functions (issue 15, target 4: where the single-message path spends its CPU). The server is a
# build with -tags pprof (cmd/retsu/profile.go, never in release binaries): SIGUSR1 starts and
# stops its CPU profile, so the profile covers the measured window only.
#
# usage: scripts/bench/profile.sh postgres|memory [SAMPLE]   (SAMPLE: seconds, default 8)
# BENCH_LOAD replaces the load's flags as in scripts/bench/cpu.sh, for example
# BENCH_LOAD="-producers 4 -consumers 4 -batch 100 -wait 1s -max-backlog 5000" for batches of 100.
# Writes .run/bench/profile-STORE.pprof (open with `go tool pprof -http=: FILE`). Uses BENCH_DB
# (retsu_bench, recreated), BENCH_PG_ADDR (127.0.0.1:24250) and BENCH_REDIS_DB (2) like
# scripts/bench/cpu.sh, and .run/bin/retsu-bench from `make build`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

store=${1:?usage: scripts/bench/profile.sh postgres|memory [SAMPLE]}
sample=${2:-8}
addr=${BENCH_PG_ADDR:-127.0.0.1:24250}
db=${BENCH_DB:-retsu_bench}
profile=$PWD/.run/bench/profile-$store.pprof
case $store in
postgres)
	recreate_database "$db"
	flags=(--database-url "$(database_url "$db")" --redis-url "${RETSU_REDIS_URL%/*}/${BENCH_REDIS_DB:-2}")
	;;
memory) flags=(--store memory) ;;
*) echo "usage: scripts/bench/profile.sh postgres|memory [SAMPLE]" >&2; exit 2 ;;
esac

mkdir -p .run/bench .run/bin-pprof
go build -tags pprof -o .run/bin-pprof/retsu ./cmd/retsu
RETSU_CPU_PROFILE=$profile .run/bin-pprof/retsu serve --addr "$addr" --log-level warn "${flags[@]}" 2>/dev/null &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server || true' EXIT
wait_for_listener "$addr"
# shellcheck disable=SC2086 # BENCH_LOAD is words
.run/bin/retsu-bench run -url "http://$addr" -warmup 2s -duration "$((sample * 2))s" \
	${BENCH_LOAD:--producers 16 -consumers 16} >.run/bench/profile-"$store".txt 2>/dev/null &
loadgen=$!

sleep $((sample / 2 + 2))
kill -USR1 "$server"
sleep "$sample"
kill -USR1 "$server"
wait "$loadgen"
kill -TERM "$server"
wait "$server" || true
trap - EXIT
sed -n 's/.*: \([0-9,]*\) lifecycles\/s.*/\1 lifecycles\/s/p' .run/bench/profile-"$store".txt | head -1
go tool pprof -top -nodecount=30 .run/bin-pprof/retsu "$profile" 2>/dev/null | sed -n '1,40p'
