#!/usr/bin/env bash
# Shows where the CPU of a load run goes: the cores used by the load generator, by
# `retsu serve` and by PostgreSQL's processes over SAMPLE seconds in the middle of a
# `retsu-bench run` of 16 producers and 16 consumers (docs/performance.md, "What limits
# throughput"), from utime and stime in /proc/PID/stat.
#
# usage: scripts/bench/cpu.sh postgres|memory [SAMPLE]   (SAMPLE: seconds, default 6)
# BENCH_LOAD replaces the load's flags (default "-producers 16 -consumers 16"), for example
# BENCH_LOAD="-producers 4 -consumers 4 -batch 100 -wait 1s -max-backlog 5000" for batches of
# 100, or BENCH_LOAD="-producers 16 -consumers 16 -wait 20s" for consumers that long-poll.
# Uses BENCH_DB (retsu_bench, recreated), BENCH_PG_ADDR (127.0.0.1:24250) and BENCH_REDIS_DB
# (2) like scripts/bench/run.sh, and the binaries that `make build` puts in .run/bin.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

store=${1:?usage: scripts/bench/cpu.sh postgres|memory [SAMPLE]}
sample=${2:-6}
addr=${BENCH_PG_ADDR:-127.0.0.1:24250}
db=${BENCH_DB:-retsu_bench}
case $store in
postgres)
	recreate_database "$db"
	flags=(--database-url "$(database_url "$db")" --redis-url "${RETSU_REDIS_URL%/*}/${BENCH_REDIS_DB:-2}")
	;;
memory) flags=(--store memory) ;;
*) echo "usage: scripts/bench/cpu.sh postgres|memory [SAMPLE]" >&2; exit 2 ;;
esac

.run/bin/retsu serve --addr "$addr" --log-level warn "${flags[@]}" 2>/dev/null &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server || true' EXIT
wait_for_listener "$addr"
# shellcheck disable=SC2086 # BENCH_LOAD is words
.run/bin/retsu-bench run -url "http://$addr" -warmup 2s -duration "$((sample * 2))s" \
	${BENCH_LOAD:--producers 16 -consumers 16} >.run/bench/cpu-"$store".txt 2>/dev/null &
loadgen=$!

# cpu PID... prints the CPU clock ticks (user and system) the processes have used so far.
cpu() {
	local n=0 p t
	for p in "$@"; do
		t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null) || t=0
		n=$((n + ${t:-0}))
	done
	echo "$n"
}

sleep $((sample / 2 + 2))
postgres_pids=$(postgres_pids) # its backends connected during the warm-up
g0=$(cpu "$loadgen"); s0=$(cpu "$server"); p0=$(cpu $postgres_pids)
sleep "$sample"
g1=$(cpu "$loadgen"); s1=$(cpu "$server"); p1=$(cpu $postgres_pids)
wait "$loadgen"
hz=$(getconf CLK_TCK)
awk -v hz="$hz" -v s="$sample" -v g=$((g1 - g0)) -v r=$((s1 - s0)) -v p=$((p1 - p0)) \
	-v rate="$(sed -n 's/.*: \([0-9,]*\) lifecycles\/s.*/\1/p' .run/bench/cpu-"$store".txt | head -1)" 'BEGIN {
	printf "%s lifecycles/s; cores: load generator %.2f, retsu serve %.2f, PostgreSQL %.2f, total %.2f\n",
		rate, g / hz / s, r / hz / s, p / hz / s, (g + r + p) / hz / s
	n = rate; gsub(/,/, "", n)
	if (n > 0) printf "CPU per lifecycle: retsu serve %.3f ms, PostgreSQL %.3f ms\n", r / hz / s / n * 1000, p / hz / s / n * 1000
}'
