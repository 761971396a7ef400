#!/usr/bin/env bash
# Measures long polls (issue 15, target 2), on two `retsu serve` instances on one database:
#   idle:    BENCH_IDLE_CONSUMERS (1000) consumers long-polling an empty queue on instance A
#            for BENCH_IDLE_SECONDS (30): the CPU of A and of PostgreSQL, and the connections
#            A holds to PostgreSQL, against A before the consumers came;
#   latency: a message enqueued every 20 ms, BENCH_LATENCY_MESSAGES (500) of them, to 16
#            consumers long-polling, first on the same instance, then on the other: the time
#            from the send of each enqueue to the arrival of its delivery, p50/p99.
# Settings: BENCH_DB (retsu_bench_longpoll, recreated), BENCH_REDIS_DB (4), BENCH_PORT_BASE
# (24280). Expects the services of scripts/services.sh and the binaries of `make build`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

idle_consumers=${BENCH_IDLE_CONSUMERS:-1000}
idle_seconds=${BENCH_IDLE_SECONDS:-30}
messages=${BENCH_LATENCY_MESSAGES:-500}
db=${BENCH_DB:-retsu_bench_longpoll}
redis_url=${RETSU_REDIS_URL%/*}/${BENCH_REDIS_DB:-4}
port_base=${BENCH_PORT_BASE:-24280}
url=$(database_url "$db")
out=.run/bench
mkdir -p "$out"
a=127.0.0.1:$port_base
b=127.0.0.1:$((port_base + 1))

# A thousand connections each way need more than the default 1,024 file descriptors.
[[ $(ulimit -n) -ge 8192 ]] || ulimit -n 8192
servers=()
trap 'for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait' EXIT
recreate_database "$db"
.run/bin/retsu migrate up --database-url "$url"
for addr in "$a" "$b"; do
	# Waiting requests past the default cap of 10,000 are refused; the idle run needs 1,000.
	.run/bin/retsu serve --addr "$addr" --database-url "$url" --redis-url "$redis_url" --migrate=false \
		--workers=false --log-level warn 2>"$out/longpoll-${addr##*:}.log" &
	servers+=($!)
	wait_for_listener "$addr"
done
server_a=${servers[0]}

cpu_ticks() {
	local n=0 p t
	for p in "$@"; do
		t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null) || t=0
		n=$((n + ${t:-0}))
	done
	echo "$n"
}
connections() {
	psql -qXAt "$url" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
}
hz=$(getconf CLK_TCK)

# sample SECONDS prints the cores that instance A and PostgreSQL used over SECONDS.
sample() {
	local postgres s0 p0 s1 p1
	postgres=$(postgres_pids)
	s0=$(cpu_ticks "$server_a"); p0=$(cpu_ticks $postgres)
	sleep "$1"
	s1=$(cpu_ticks "$server_a"); p1=$(cpu_ticks $postgres)
	awk -v s=$((s1 - s0)) -v p=$((p1 - p0)) -v hz="$hz" -v d="$1" \
		'BEGIN { printf "instance A %.2f%% of a core, PostgreSQL %.2f%% of a core", 100 * s / hz / d, 100 * p / hz / d }'
}

echo "== idle: nobody waiting"
echo "  $(sample 10); connections to PostgreSQL $(connections) (both instances)"
echo "== idle: $idle_consumers consumers long-polling an empty queue on A"
.run/bin/retsu-bench latency -url "http://$a" -consumers "$idle_consumers" -messages 0 -interval "$((idle_seconds + 5))s" \
	>"$out/longpoll-idle.txt" 2>&1 &
loadgen=$!
sleep 5 # the consumers are all waiting
echo "  $(sample "$idle_seconds"); connections to PostgreSQL $(connections) (both instances)"
kill "$loadgen" 2>/dev/null || true
wait "$loadgen" 2>/dev/null || true

echo "== latency: producer and consumers on A"
.run/bin/retsu-bench latency -url "http://$a" -consumers 16 -messages "$messages" | tee "$out/longpoll-same.txt" | sed 's/^/  /'
echo "== latency: producer on A, consumers on B"
.run/bin/retsu-bench latency -url "http://$a" -consumer-url "http://$b" -consumers 16 -messages "$messages" |
	tee "$out/longpoll-across.txt" | sed 's/^/  /'
