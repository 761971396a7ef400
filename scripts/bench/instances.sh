#!/usr/bin/env bash
# Measures what PostgreSQL pays per message when several Retsu instances share it (issue 18):
# the same total load (BENCH_PRODUCERS producers and BENCH_CONSUMERS consumers, spread over the
# instances) against 1, 2 and 3 instances of `retsu serve` on one database and one Redis, in
# one run, and for each the lifecycles/s, PostgreSQL's commits per lifecycle (xact_commit of
# pg_stat_database) and its CPU per lifecycle (utime + stime of its processes in /proc), and,
# where pg_stat_statements is loaded (scripts/services.sh loads it), what the commits are made
# of: the statements per lifecycle, the rounds per lifecycle (executions of the round lock,
# which every round takes once), and the buffers each claim of a round read; and the load
# generator's median dequeue latency, the wait that sets a closed loop's throughput. After the
# table, each count's lifecycles/s, commits and CPU per lifecycle against the run of one instance
# before it: "1 3p 1 3p" measures two pairs.
#
# usage: scripts/bench/instances.sh [INSTANCE_COUNTS]   (default "1 2 3 2p 3p": a count with p
# runs its instances with peer listeners, forwarding rounds to their leader, docs/operations.md)
# Settings: BENCH_SECONDS (15), BENCH_WARMUP (3), BENCH_PRODUCERS (16), BENCH_CONSUMERS (16),
# BENCH_BATCH (1: messages per request), BENCH_RATE (enqueues/s of all producers together; 0,
# the default, as fast as they can: then fewer lifecycles/s spread PostgreSQL's fixed costs over
# fewer lifecycles, and a rate that every count of instances sustains compares them at the
# same throughput), BENCH_WAIT (wait_seconds of the consumers' dequeues: 0s, the default, polls;
# with a rate, 20s makes the consumers the long-polling workers they would be), BENCH_DB
# (retsu_bench_instances, recreated), BENCH_REDIS_DB (3), BENCH_PORT_BASE (24270: instance i listens on BASE+i),
# BENCH_RETSU (.run/bin/retsu: the server binary, so that two builds can be run in turns). Expects the
# services of scripts/services.sh and the binaries of `make build`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

counts=${1:-1 2 3 2p 3p}
seconds=${BENCH_SECONDS:-15}
warmup=${BENCH_WARMUP:-3}
producers=${BENCH_PRODUCERS:-16}
consumers=${BENCH_CONSUMERS:-16}
batch=${BENCH_BATCH:-1}
rate_limit=${BENCH_RATE:-0}
wait_seconds=${BENCH_WAIT:-0s}
db=${BENCH_DB:-retsu_bench_instances}
redis_url=${RETSU_REDIS_URL%/*}/${BENCH_REDIS_DB:-3}
port_base=${BENCH_PORT_BASE:-24270}
retsu=${BENCH_RETSU:-.run/bin/retsu}
peer_port_base=$((port_base + 100))
url=$(database_url "$db")
out=.run/bench
mkdir -p "$out"

servers=()
stop_servers() {
	for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
	servers=()
}
trap stop_servers EXIT

# cpu_ticks PID... prints the CPU clock ticks (user and system) the processes used so far.
cpu_ticks() {
	local n=0 p t
	for p in "$@"; do
		t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null) || t=0
		n=$((n + ${t:-0}))
	done
	echo "$n"
}

commits() { psql -qXAt "$url" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }

# statements_reset forgets this database's statement statistics; statements prints its
# statement executions since then, the executions of the round lock (lockRoundSlot) and the
# buffers per claim (the statement that delivers), or "- - -" without pg_stat_statements.
statements_reset() {
	psql -qXAt "$url" -c "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)" \
		>/dev/null 2>&1 || true
}
statements() {
	psql -qXAt -F ' ' "$url" -c "SELECT sum(calls),
		coalesce(sum(calls) FILTER (WHERE query LIKE '%locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(%'), 0),
		round(sum(shared_blks_hit + shared_blks_read)
		FILTER (WHERE query LIKE '%), delivered AS (%') / nullif(sum(calls) FILTER (WHERE query LIKE '%), delivered AS (%'), 0))
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())" 2>/dev/null ||
		echo "- - -"
}

# dequeue_p50 prints the median dequeue latency, in ms, of the load generator's report $1.
dequeue_p50() {
	awk -F': ' '/"name": "dequeue"/ { d = 1 } d && /"p50_ms"/ { sub(/,$/, "", $2); print $2; exit }' "$1"
}

hz=$(getconf CLK_TCK)
rows=()
printf '%-10s %14s %22s %24s %20s %16s %12s %18s %18s\n' instances lifecycles/s "commits per lifecycle" "PostgreSQL CPU ms/lc" \
	"Retsu CPU ms/lc" "statements/lc" "rounds/lc" "buffers per claim" "dequeue p50 ms"
for run in $counts; do
	n=${run%p}
	peers=$([ "$n" != "$run" ] && echo 1 || echo 0)
	recreate_database "$db"
	"$retsu" migrate up --database-url "$url"
	psql -qX "$url" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null 2>&1 || true
	urls=()
	for ((i = 0; i < n; i++)); do
		addr=127.0.0.1:$((port_base + i))
		peer_flags=()
		if [ "$peers" = 1 ]; then
			peer_flags=(--peer-addr "127.0.0.1:$((peer_port_base + i))" --peer-token bench-peer-token-0123456789)
		fi
		"$retsu" serve --addr "$addr" --database-url "$url" --redis-url "$redis_url" --migrate=false \
			--workers=false --log-level warn "${peer_flags[@]}" 2>"$out/instances-$run-$i.log" &
		servers+=($!)
		wait_for_listener "$addr"
		urls+=("http://$addr")
	done
	list=$(IFS=,; echo "${urls[*]}")
	.run/bin/retsu-bench run -url "$list" -name "instances-$run" -producers "$producers" -consumers "$consumers" \
		-batch "$batch" -rate "$rate_limit" -wait "$wait_seconds" -warmup "${warmup}s" -duration "${seconds}s" -out "$out/instances-$run.json" >"$out/instances-$run.txt" 2>&1 &
	loadgen=$!
	# Measure over the middle of the measurement: after the warm-up, for most of it.
	sleep $((warmup + 1))
	postgres=$(postgres_pids)
	statements_reset
	c0=$(commits); p0=$(cpu_ticks $postgres); r0=$(cpu_ticks "${servers[@]}"); t0=$(date +%s.%N)
	sleep $((seconds - 2))
	c1=$(commits); p1=$(cpu_ticks $postgres); r1=$(cpu_ticks "${servers[@]}"); t1=$(date +%s.%N)
	read -r calls rounds claim_buffers <<<"$(statements)"
	wait "$loadgen"
	stop_servers
	rate=$(sed -n 's/.*"lifecycles_per_second": \([0-9.]*\).*/\1/p' "$out/instances-$run.json")
	p50=$(dequeue_p50 "$out/instances-$run.json")
	row=$(awk -v n="$run" -v rate="$rate" -v c=$((c1 - c0)) -v p=$((p1 - p0)) -v r=$((r1 - r0)) -v hz="$hz" -v t0="$t0" -v t1="$t1" \
		-v calls="${calls:--}" -v rounds="${rounds:--}" -v claim="${claim_buffers:--}" -v p50="${p50:--}" 'BEGIN {
		lifecycles = rate * (t1 - t0)
		per = calls == "-" ? "-" : sprintf("%.3f", calls / lifecycles)
		rounds_per = rounds == "-" ? "-" : sprintf("%.3f", rounds / lifecycles)
		printf "%-10s %14.0f %22.3f %24.3f %20.3f %16s %12s %18s %18s\n", n, rate, c / lifecycles, p / hz * 1000 / lifecycles,
			r / hz * 1000 / lifecycles, per, rounds_per, claim, p50
	}')
	echo "$row"
	rows+=("$row")
done
# Each count against the run of one instance nearest before it (runs far apart in time on a
# shared machine compare less well): the ratios issue 18 asks about.
printf '%s\n' "${rows[@]}" | awk '
	$1 == "1" { base = 1; lc = $2; commits = $3; cpu = $4; next }
	base && lc > 0 && commits > 0 && cpu > 0 {
		printf "%s against 1: lifecycles/s %.2fx, commits per lifecycle %.2fx, PostgreSQL CPU per lifecycle %.2fx\n",
			$1, $2 / lc, $3 / commits, $4 / cpu
	}'
echo "details: $out/instances-*.{txt,json,log}"
