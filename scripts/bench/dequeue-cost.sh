#!/usr/bin/env bash
# Measures whether the cost of a dequeue depends on the state of its queue: the shared buffers
# that one claim of 10 touches (EXPLAIN ANALYZE of the server's claim statement, as its
# connections run it), and one consumer's dequeue latency over HTTP (retsu-bench drain), for
# pairs of states that should cost the same:
#   ready:    1,000 ready messages against 1,000,000;
#   busy:     100,000 ready with none in flight against 100,000 in flight;
#   returned: 1,000 messages whose lease ended (a crashed consumer fleet's) against 1,000,000;
#   delayed:  1,000 ready alone against 1,000 ready behind 1,000,000 delayed and 100,000
#             released with a delay;
# and, alone, exhausted: 5,000 messages that used their only attempt ahead of 1,000 ready
# (the dequeue moves them to dead letters in bulk and still delivers).
#
# Each state is loaded with plain SQL into an otherwise empty messages table of its own
# database (BENCH_COST_DB, default retsu_bench_cost, recreated), then VACUUM ANALYZEd, as
# autovacuum would leave a table that has been in use. Expects the services of
# scripts/services.sh and .run/bin/retsu and .run/bin/retsu-bench (`make build` builds them).
# Settings: BENCH_PG_ADDR (127.0.0.1:24250), BENCH_COST_DELIVERIES (500 per state),
# BENCH_COST_STATES (all: "ready busy returned delayed exhausted"), BENCH_COST_LARGE (1000000:
# the size of the large side of ready, returned and delayed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

addr=${BENCH_PG_ADDR:-127.0.0.1:24250}
db=${BENCH_COST_DB:-retsu_bench_cost}
deliveries=${BENCH_COST_DELIVERIES:-500}
states=${BENCH_COST_STATES:-ready busy returned delayed exhausted}
large=${BENCH_COST_LARGE:-1000000}
url=$(database_url "$db")
queue=019c9a65-7d3a-7c6b-8a9d-123456789abc
out=.run/bench
mkdir -p "$out"

sql() { psql -qXAt -v ON_ERROR_STOP=1 "$url" "$@"; }

# statement NAME prints the SQL constant NAME of adapters/postgres/queries.go, with the
# constants it joins (the notification channel, the bounds of due rows and exhausted moves) put in.
statement() {
	awk -v name="$1" '
		index($0, "const " name " = `") == 1 { found = 1; sub(/^[^`]*`/, "") }
		found {
			gsub(/` \+ wakeupChannel \+ `/, "retsu_wakeups")
			gsub(/` \+ exhaustedPerClaim \+ `/, "1000")
			gsub(/` \+ duePerClaim \+ `/, "1000")
			if (index($0, "`")) { sub(/`.*/, ""); print; exit }
			print
		}' adapters/postgres/queries.go
}

# time_ordered_id is a UUID version 7 made from the number g: like the IDs Retsu gives
# messages, later messages get larger IDs, so that the primary key grows at its right edge.
time_ordered_id="(substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12))::uuid"
ids="LATERAL (SELECT lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint + g), 12, '0') AS h, md5(g::text) AS r) AS id"

# insert FROM TO STATE ATTEMPTS MAX_ATTEMPTS VISIBLE_AT HANDLE adds messages FROM to TO of
# the queue, all priorities in turn, in one state (0 ready, 1 delayed, 2 leased).
insert() {
	sql -c "INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds,
			max_delivery_attempts, delivery_attempts, state, receipt_handle, visible_at)
		SELECT '$queue', $time_ordered_id, 1 + g % 3, convert_to('send welcome email to user ' || g, 'UTF8'),
			now() + interval '7 days', 30, $5, $4, $3, $7, $6
		FROM generate_series($1, $2) AS g, $ids"
}

# load STATE fills the queue for one state, after emptying the table.
load() {
	sql -c "TRUNCATE messages, dead_letters"
	case $1 in
	ready-small) insert 1 1000 0 0 5 "now()" NULL ;;
	ready-large) insert 1 "$large" 0 0 5 "now()" NULL ;;
	busy-idle) insert 1 100000 0 0 5 "now()" NULL ;;
	busy-busy)
		insert 1 100000 2 1 5 "now() + interval '1 hour'" "gen_random_uuid()"
		insert 100001 200000 0 0 5 "now()" NULL
		;;
	returned-small) insert 1 1000 2 1 5 "now() - interval '1 minute'" "gen_random_uuid()" ;;
	returned-large) insert 1 "$large" 2 1 5 "now() - interval '1 minute'" "gen_random_uuid()" ;;
	delayed-none) insert 1 1000 0 0 5 "now()" NULL ;;
	delayed-behind)
		insert 1 "$large" 1 0 5 "now() + interval '1 day'" NULL
		insert $((large + 1)) $((large + 100000)) 1 1 5 "now() + interval '1 hour'" NULL
		insert $((large + 100001)) $((large + 101000)) 0 0 5 "now()" NULL
		;;
	exhausted-ahead)
		insert 1 5000 2 1 1 "now() - interval '1 minute'" "gen_random_uuid()"
		insert 5001 6000 0 0 5 "now()" NULL
		;;
	esac
	sql -c "VACUUM ANALYZE messages"
}

# claim_buffers prints the shared buffers (hit + read) of one claim of 10, prepared and
# explained as the server's connections run it (adapters/postgres/db.go: its generic plan,
# sequential scans, sorts and JIT off), in a transaction that is rolled back; its plan goes to $out.
claim_buffers() {
	psql -qXAt -v ON_ERROR_STOP=1 "$url" -c "SET enable_seqscan = off" -c "SET enable_sort = off" -c "SET jit = off" -c "SET plan_cache_mode = force_generic_plan" \
		-c "BEGIN" -c "PREPARE claim AS $(statement claimMessages)" \
		-c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE claim('$queue'::uuid, 10, false)" -c "ROLLBACK" >"$out/plan-$1.txt"
	grep -m1 'Buffers: shared' "$out/plan-$1.txt" | awk '{
		n = 0
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^hit=/) n += substr($i, 5)
			if ($i ~ /^read=/) n += substr($i, 6)
		}
		print n
	}'
}

# measure STATE loads a state, explains a claim and drains some of it over HTTP.
measure() {
	echo "== $1" >&2
	load "$1"
	local buffers first
	buffers=$(claim_buffers "$1")
	# One dequeue alone first: with a backlog of exhausted messages, it is the one that moves
	# the most of them.
	first=$(curl -s -o /dev/null -w '%{http_code} in %{time_total} s' -X POST "http://$addr/v1/queues/$queue/messages/dequeue")
	echo "  the first dequeue answered $first" >&2
	.run/bin/retsu-bench drain -url "http://$addr" -queue "$queue" -deliveries "$deliveries" >"$out/cost-$1.txt"
	echo "$1 $buffers $(sed -n 's/^dequeue *p50 *\([0-9.]*\) ms.*/\1/p' "$out/cost-$1.txt")" >>"$out/cost.txt"
	echo "  buffers per claim of 10: $buffers; $(head -1 "$out/cost-$1.txt")" >&2
}

recreate_database "$db"
.run/bin/retsu migrate up --database-url "$url"
sql -c "INSERT INTO queues (id, name, visibility_timeout_seconds, max_delivery_attempts, default_message_ttl_seconds)
	VALUES ('$queue', 'dequeue-cost', 30, 5, 604800)"
# Without workers, so that no cleaner pass runs during a measurement.
.run/bin/retsu serve --addr "$addr" --database-url "$url" --migrate=false --workers=false --log-level warn 2>"$out/dequeue-cost.log" &
server=$!
trap 'kill -TERM $server; wait $server || true' EXIT
wait_for_listener "$addr"

: >"$out/cost.txt"
for state in $states; do
	case $state in
	ready | busy | returned | delayed)
		pair=(small large)
		[[ $state == busy ]] && pair=(idle busy)
		[[ $state == delayed ]] && pair=(none behind)
		measure "$state-${pair[0]}"
		measure "$state-${pair[1]}"
		;;
	exhausted) measure exhausted-ahead ;;
	*) echo "unknown state $state" >&2; exit 2 ;;
	esac
done
echo
awk '{ buffers[$1] = $2; p50[$1] = $3 } END {
	split("ready-small ready-large busy-idle busy-busy returned-small returned-large delayed-none delayed-behind", names, " ")
	for (i = 1; i <= 8; i += 2) {
		a = names[i]; b = names[i + 1]
		if (!(a in buffers) || !(b in buffers)) continue
		printf "%-15s vs %-15s buffers per claim %5d vs %5d (ratio %.2f); dequeue p50 %.2f vs %.2f ms (ratio %.2f)\n",
			a, b, buffers[a], buffers[b], buffers[b] / buffers[a], p50[a], p50[b], p50[b] / p50[a]
	}
	if ("exhausted-ahead" in buffers)
		printf "5,000 exhausted ahead of 1,000 ready: the first claim touches %d buffers; dequeue p50 %.2f ms\n",
			buffers["exhausted-ahead"], p50["exhausted-ahead"]
}' "$out/cost.txt"
echo "plans: $out/plan-*.txt"
