#!/usr/bin/env bash
# `make bench`: measures, side by side on this machine, what PostgreSQL itself sustains for bare
# queue work (ceiling.sh), Retsu on PostgreSQL, and Retsu on its memory stores (the cost of
# HTTP alone), then prints one table with Retsu's ratios to both.
#
# Expects the services of scripts/services.sh to run and .run/bin/retsu and
# .run/bin/retsu-bench to be built (the Makefile does both). Settings, from the environment:
#   BENCH_SECONDS (20)       measured seconds of each Retsu run, after BENCH_WARMUP (3)
#   CEILING_SECONDS (15)     seconds of each of the three ceiling runs
#   BENCH_PRODUCERS (16), BENCH_CONSUMERS (16)
#   BENCH_PG_ADDR (127.0.0.1:24250), BENCH_MEMORY_ADDR (127.0.0.1:24251): Retsu's addresses
#   BENCH_DB (retsu_bench), BENCH_CEILING_DB (retsu_bench_ceiling): recreated on every run
#   BENCH_REDIS_DB (2)       Redis database of the queue-details cache
# Results stay in .run/bench/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

seconds=${BENCH_SECONDS:-20}
warmup=${BENCH_WARMUP:-3}
ceiling_seconds=${CEILING_SECONDS:-15}
producers=${BENCH_PRODUCERS:-16}
consumers=${BENCH_CONSUMERS:-16}
pg_addr=${BENCH_PG_ADDR:-127.0.0.1:24250}
memory_addr=${BENCH_MEMORY_ADDR:-127.0.0.1:24251}
bench_db=${BENCH_DB:-retsu_bench}
ceiling_db=${BENCH_CEILING_DB:-retsu_bench_ceiling}
redis_db=${BENCH_REDIS_DB:-2}
out=.run/bench
mkdir -p "$out"

bench_url=$(database_url "$bench_db")
redis_url=${RETSU_REDIS_URL%/*}/$redis_db

log() { echo "bench: $*" >&2; }

# run_retsu NAME ADDR "LOAD_FLAGS" SERVE_FLAGS... serves Retsu on ADDR, loads it with
# retsu-bench run and LOAD_FLAGS, and writes $out/NAME.json.
run_retsu() {
	local name=$1 addr=$2 load=$3
	shift 3
	.run/bin/retsu serve --addr "$addr" --log-level warn "$@" 2>"$out/$name.log" &
	server=$!
	wait_for_listener "$addr"
	# shellcheck disable=SC2086 # LOAD_FLAGS are words
	.run/bin/retsu-bench run -url "http://$addr" -name "$name" -warmup "${warmup}s" -duration "${seconds}s" \
		-server-pid "$server" -out "$out/$name.json" $load >"$out/$name.txt"
	stop_server
}

# The loads: one message per request, as in the first performance issue; batches of 100 by
# a few producers and consumers that long-poll; single messages to consumers that long-poll;
# and single messages, each enqueue with an Idempotency-Key.
single="-producers $producers -consumers $consumers"
batches="-producers 4 -consumers 4 -batch 100 -wait 1s -max-backlog 5000"
longpoll="-producers $producers -consumers $consumers -wait 20s"
keyed="-producers $producers -consumers $consumers -keyed"

# stop_server stops the Retsu that run_retsu started, if it runs; also when the script fails.
server=
stop_server() {
	if [[ -n $server ]]; then
		kill -TERM "$server" 2>/dev/null || true
		wait "$server" || true
		server=
	fi
}
trap stop_server EXIT

log "ceiling: three pgbench runs of ${ceiling_seconds}s on an empty database ($ceiling_db)"
recreate_database "$ceiling_db"
scripts/bench/ceiling.sh "$(database_url "$ceiling_db")" "$ceiling_seconds" | tee "$out/ceiling.txt" >&2
# ceiling MODE prints the lifecycles/s that ceiling.sh measured in MODE, or 0 if it failed.
ceiling() {
	local rate
	rate=$(sed -n "s/^$1: *\([0-9]*\) lifecycles\/s$/\1/p" "$out/ceiling.txt")
	echo "${rate:-0}"
}

log "Retsu on PostgreSQL ($bench_db)"
recreate_database "$bench_db"
psql -qX "$bench_url" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null
.run/bin/retsu migrate up --database-url "$bench_url"
psql -qX "$bench_url" -c "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)" >/dev/null
pg_flags=(--database-url "$bench_url" --redis-url "$redis_url" --migrate=false)
run_retsu postgres "$pg_addr" "$single" "${pg_flags[@]}"
queue_statements=$(psql -qXAt "$bench_url" -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
	WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query ~* '\mqueues\M'")

# The keyed run comes between two unkeyed ones (the first above), so that the cost of keys is
# read against the same load before and after it, not against a database that three runs have
# since filled with dead rows and keys.
for run in keyed:keyed unkeyed:single batch100:batches long-poll:longpoll; do
	name=${run%%:*} load=${run##*:}
	log "Retsu on PostgreSQL, $name"
	run_retsu "postgres-$name" "$pg_addr" "${!load}" "${pg_flags[@]}"
done

log "Retsu on its memory stores"
run_retsu memory "$memory_addr" "$single" --store memory
run_retsu memory-batch100 "$memory_addr" "$batches" --store memory

echo
.run/bin/retsu-bench report -baseline memory \
	-ceiling-8 "$(ceiling 'single-statement steps, 8 clients')" \
	-ceiling-32 "$(ceiling 'single-statement steps, 32 clients')" \
	-ceiling-batch "$(ceiling '100-message statements, 8 clients')" \
	"$out"/postgres.json "$out"/postgres-{keyed,unkeyed,batch100,long-poll}.json "$out"/memory.json "$out"/memory-batch100.json
echo "statements on the queues table during the PostgreSQL run (pg_stat_statements): $queue_statements"
echo "details: $out/"
