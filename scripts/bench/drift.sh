#!/usr/bin/env bash
# Runs Retsu on PostgreSQL at a fixed rate for a long time and shows whether it drifts: the
# lifecycles/s of every minute (retsu-bench progress) and, each minute, the size of the
# message table and its dead tuples, which autovacuum must keep bounded.
#
# usage: scripts/bench/drift.sh RATE [DURATION]
#   RATE      enqueues per second of all producers together, e.g. half of what `make bench`
#             measured for postgres
#   DURATION  Go duration of the measurement (default 10m)
# Uses BENCH_DB (retsu_bench, recreated), BENCH_PG_ADDR (127.0.0.1:24250), BENCH_REDIS_DB (2),
# BENCH_PRODUCERS and BENCH_CONSUMERS (16), like scripts/bench/run.sh, and the binaries that
# `make build` puts in .run/bin. BENCH_LOAD adds flags of `retsu-bench run`, such as
# BENCH_LOAD="-wait 20s" for consumers that long-poll. Results stay in .run/bench/drift.*.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

rate=${1:?usage: scripts/bench/drift.sh RATE [DURATION]}
duration=${2:-10m}
addr=${BENCH_PG_ADDR:-127.0.0.1:24250}
db=${BENCH_DB:-retsu_bench}
url=$(database_url "$db")
redis_url=${RETSU_REDIS_URL%/*}/${BENCH_REDIS_DB:-2}
out=.run/bench
mkdir -p "$out"

recreate_database "$db"
.run/bin/retsu serve --addr "$addr" --database-url "$url" --redis-url "$redis_url" --log-level warn 2>"$out/drift.log" &
server=$!
sampler=
trap 'kill -TERM $server ${sampler:-}; wait $server || true' EXIT
wait_for_listener "$addr"

# Every minute: the table's size with its indexes, its live and dead tuples, and autovacuum's count.
(
	while sleep 60; do
		psql -qXAt "$url" -F ' ' -c "SELECT to_char(now(), 'HH24:MI:SS'), pg_size_pretty(pg_total_relation_size('messages')),
			n_live_tup, n_dead_tup, autovacuum_count FROM pg_stat_user_tables WHERE relname = 'messages'"
	done >"$out/drift.table.txt"
) &
sampler=$!

.run/bin/retsu-bench run -url "http://$addr" -name drift -rate "$rate" -warmup 10s -duration "$duration" -progress 1m \
	-producers "${BENCH_PRODUCERS:-16}" -consumers "${BENCH_CONSUMERS:-16}" -server-pid "$server" -out "$out/drift.json" \
	${BENCH_LOAD:-} |
	tee "$out/drift.txt"
echo "time size live dead autovacuums"
cat "$out/drift.table.txt"
