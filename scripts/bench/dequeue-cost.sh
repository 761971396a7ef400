#!/usr/bin/env bash
# Measures whether the cost of a dequeue depends on the state of its queue: one consumer's
# dequeue latency (retsu-bench drain, over HTTP) and the plans of the hot statements, for a
# queue of 1,000 ready messages against 1,000,000, and for 100,000 ready messages with none
# against 100,000 in flight (dequeued, not acknowledged).
#
# Each state is loaded with plain SQL into an otherwise empty messages table of its own
# database (BENCH_COST_DB, default retsu_bench_cost, recreated), then VACUUM ANALYZEd, as
# autovacuum would leave a table that has been in use. Expects the services of
# scripts/services.sh and .run/bin/retsu and .run/bin/retsu-bench (`make build` builds them).
# Settings: BENCH_PG_ADDR (127.0.0.1:24250), BENCH_COST_DELIVERIES (500 per state),
# BENCH_COST_EXPLAIN (1: print the plans).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

addr=${BENCH_PG_ADDR:-127.0.0.1:24250}
db=${BENCH_COST_DB:-retsu_bench_cost}
deliveries=${BENCH_COST_DELIVERIES:-500}
explain=${BENCH_COST_EXPLAIN:-1}
url=$(database_url "$db")
queue=019c9a65-7d3a-7c6b-8a9d-123456789abc
out=.run/bench
mkdir -p "$out"

sql() { psql -qXAt -v ON_ERROR_STOP=1 "$url" "$@"; }

# statement NAME prints the SQL constant NAME of adapters/postgres/queries.go.
statement() {
	awk -v name="$1" '
		index($0, "const " name " = `") == 1 { found = 1; sub(/^[^`]*`/, "") }
		found && /`/ { sub(/`.*/, ""); print; exit }
		found { print }' adapters/postgres/queries.go
}

# time_ordered_id is a UUID version 7 made from the number g: like the IDs Retsu gives
# messages, later messages get larger IDs, so that the primary key grows at its right edge.
time_ordered_id="(substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12))::uuid"
ids="LATERAL (SELECT lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint + g), 12, '0') AS h, md5(g::text) AS r) AS id"

# load READY IN_FLIGHT empties the table and fills the queue: the in-flight messages first,
# as they were enqueued first.
load() {
	sql -c "TRUNCATE messages, dead_letters" \
		-c "INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds, max_delivery_attempts,
				delivery_attempts, receipt_handle, visible_at)
			SELECT '$queue', $time_ordered_id, 1 + g % 3, convert_to('send welcome email to user ' || g, 'UTF8'),
				now() + interval '7 days', 30, 5, 1, gen_random_uuid(), now() + interval '1 hour'
			FROM generate_series(1, $2) AS g, $ids" \
		-c "INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds, max_delivery_attempts)
			SELECT '$queue', $time_ordered_id, 1 + g % 3, convert_to('send welcome email to user ' || g, 'UTF8'),
				now() + interval '7 days', 30, 5
			FROM generate_series($2 + 1, $2 + $1) AS g, $ids" \
		-c "VACUUM ANALYZE messages"
}

# explain_hot_statements prints the plans of a claim of 10, an insert of 10 and an
# acknowledgement of 10 messages (in-flight ones when there are, with their receipt handles),
# each rolled back. Each statement is prepared and explained as the server's connections run
# it (adapters/postgres/db.go): with its generic plan, and sequential scans off.
explain_hot_statements() {
	local new_ids ack_ids ack_handles
	new_ids=$(sql -c "SELECT array_agg(gen_random_uuid()) FROM generate_series(1, 10)")
	ack_ids=$(sql -c "SELECT array_agg(id ORDER BY delivery_attempts DESC, id) FROM
		(SELECT id, delivery_attempts FROM messages ORDER BY delivery_attempts DESC LIMIT 10) AS m")
	ack_handles=$(sql -c "SELECT array_agg(coalesce(receipt_handle, gen_random_uuid()) ORDER BY delivery_attempts DESC, id) FROM
		(SELECT id, delivery_attempts, receipt_handle FROM messages ORDER BY delivery_attempts DESC LIMIT 10) AS m")
	explain_prepared claimMessages "'$queue'::uuid, 10"
	explain_prepared insertMessages "array_fill('$queue'::uuid, ARRAY[10]), '$new_ids'::uuid[],
		array_fill(2::smallint, ARRAY[10]), array_fill('payload'::bytea, ARRAY[10]),
		array_fill(3600, ARRAY[10]), array_fill(30, ARRAY[10]), array_fill(5, ARRAY[10])"
	explain_prepared deleteAcknowledged "array_fill('$queue'::uuid, ARRAY[10]), '$ack_ids'::uuid[], '$ack_handles'::uuid[]"
}

# explain_prepared NAME ARGUMENTS prepares the statement NAME of queries.go and explains its
# execution with ARGUMENTS in a rolled-back transaction.
explain_prepared() {
	psql -qX -v ON_ERROR_STOP=1 "$url" -c "SET enable_seqscan = off" -c "SET plan_cache_mode = force_generic_plan" \
		-c "BEGIN" -c "PREPARE hot AS $(statement "$1")" \
		-c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE hot($2)" -c "ROLLBACK"
}

# measure NAME READY IN_FLIGHT loads a state and drains some of it over HTTP.
measure() {
	echo "== $1: $2 ready, $3 in flight" >&2
	load "$2" "$3"
	if [[ $explain == 1 ]]; then explain_hot_statements >"$out/plans-$1.txt"; fi
	.run/bin/retsu-bench drain -url "http://$addr" -queue "$queue" -deliveries "$deliveries" | tee "$out/cost-$1.txt"
}

p50() { sed -n 's/^dequeue *p50 *\([0-9.]*\) ms.*/\1/p' "$out/cost-$1.txt"; }

recreate_database "$db"
.run/bin/retsu migrate up --database-url "$url"
sql -c "INSERT INTO queues (id, name, visibility_timeout_seconds, max_delivery_attempts, default_message_ttl_seconds)
	VALUES ('$queue', 'dequeue-cost', 30, 5, 604800)"
# Without workers, so that no cleaner pass runs during a measurement.
.run/bin/retsu serve --addr "$addr" --database-url "$url" --migrate=false --workers=false --log-level warn 2>"$out/dequeue-cost.log" &
server=$!
trap 'kill -TERM $server; wait $server || true' EXIT
wait_for_listener "$addr"

measure small 1000 0
measure large 1000000 0
measure idle 100000 0
measure busy 100000 100000
echo
awk -v s="$(p50 small)" -v l="$(p50 large)" -v i="$(p50 idle)" -v b="$(p50 busy)" 'BEGIN {
	printf "dequeue p50: 1,000 ready %.2f ms, 1,000,000 ready %.2f ms: ratio %.2f\n", s, l, l / s
	printf "dequeue p50: 100,000 ready, none in flight %.2f ms, 100,000 in flight %.2f ms: ratio %.2f\n", i, b, b / i
}'
if [[ $explain == 1 ]]; then echo "plans: $out/plans-{small,large,idle,busy}.txt"; fi
