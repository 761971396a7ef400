#!/usr/bin/env bash
# Measures the two operations of the dead-letter and queue-lifecycle issue that touch many
# rows (issue 13), while a steady load runs on another queue of the same server:
#   redrive: 100,000 dead letters sent back, 10,000 a request: the time it takes;
#   delete:  a queue of 1,000,000 messages deleted, its rows removed by the cleaner in
#            batches: the time until they are gone, and the longest transaction of a client
#            meanwhile (pg_stat_activity, sampled every 100 ms by one backend; autovacuum,
#            which the deletion calls in, is not a client);
# and for each, the other queue's enqueue/dequeue/acknowledge latencies (p99) during it
# against the same load alone: at the start for the redrive, and for the deletion also just
# before it, with the queue's million rows in place. Whenever a transaction passes 250 ms
# during the deletion, what every backend was doing goes to .run/bench/lifecycle-activity.txt.
# The server reads the RETSU_CLEANUP_* variables of the environment (RETSU_CLEANUP_REST=3, say).
# Settings: BENCH_DB (retsu_bench_lifecycle, recreated), BENCH_REDIS_DB (5), BENCH_PG_ADDR
# (127.0.0.1:24290), BENCH_RATE (200 enqueues/s of the steady load), BENCH_REDRIVE (100000),
# BENCH_REDRIVE_LIMIT (10000 dead letters a redrive request), BENCH_DELETE (1000000). Expects
# the services of scripts/services.sh and `make build`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/services.sh env)"
source scripts/bench/lib.sh

db=${BENCH_DB:-retsu_bench_lifecycle}
addr=${BENCH_PG_ADDR:-127.0.0.1:24290}
rate=${BENCH_RATE:-200}
redrive=${BENCH_REDRIVE:-100000}
redrive_limit=${BENCH_REDRIVE_LIMIT:-10000}
doomed=${BENCH_DELETE:-1000000}
url=$(database_url "$db")
out=.run/bench
mkdir -p "$out"
sql() { psql -qXAt -v ON_ERROR_STOP=1 "$url" "$@"; }
api() { curl -s -X "$1" "http://$addr$2" -H 'content-type: application/json' ${3:+-d "$3"}; }

recreate_database "$db"
.run/bin/retsu migrate up --database-url "$url"
# The cleaners every second, so that the deletion's rows go soon after it.
.run/bin/retsu serve --addr "$addr" --database-url "$url" --redis-url "${RETSU_REDIS_URL%/*}/${BENCH_REDIS_DB:-5}" \
	--migrate=false --cleanup-interval 1s --log-level info 2>"$out/lifecycle-server.log" &
server=$!
trap 'kill -TERM $server; wait $server || true' EXIT
wait_for_listener "$addr"

# steady NAME SECONDS runs the steady load on a queue of its own for SECONDS, in the background.
steady() {
	.run/bin/retsu-bench run -url "http://$addr" -name "$1" -producers 2 -consumers 2 -rate "$rate" \
		-warmup 1s -duration "$2s" -out "$out/lifecycle-$1.json" >"$out/lifecycle-$1.txt" 2>&1 &
	loadgen=$!
	sleep 1.5 # past its warm-up
}
p99s() { sed -n 's/^  \([a-z]*\) *p50.*p99 *\([0-9.]*\) ms.*/\1 p99 \2 ms/p' "$out/lifecycle-$1.txt" | paste -sd, -; }

echo "== the steady load alone ($rate enqueues/s, 2 producers, 2 consumers, 20 s)"
steady alone 20
wait "$loadgen"
echo "  $(p99s alone)"

echo "== redrive of $redrive dead letters, $redrive_limit a request"
q=$(api POST /v1/queues '{"name":"redrive-bench"}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
sql -c "INSERT INTO dead_letters (queue_id, id, priority, payload, delivery_attempts, enqueued_at, dead_lettered_at)
	SELECT '$q', gen_random_uuid(), 1 + g % 3, convert_to('dead ' || g, 'UTF8'), 5, now() - interval '1 hour', now()
	FROM generate_series(1, $redrive) AS g" -c "VACUUM ANALYZE dead_letters"
steady redrive 30
start=$(date +%s.%N)
moved=0
while :; do
	# grep finds no ID in the last answer, {"redriven":[]}, which is no error here.
	n=$(api POST "/v1/queues/$q/dead-letters/redrive" '{"limit":'"$redrive_limit"'}' | { grep -o '"[0-9a-f-]\{36\}"' || true; } | wc -l)
	moved=$((moved + n))
	((n > 0)) || break
done
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
kill -INT "$loadgen" 2>/dev/null || true; wait "$loadgen" || true
echo "  moved $moved in $took s; the other queue meanwhile: $(p99s redrive)"

echo "== delete of a queue of $doomed messages"
d=$(api POST /v1/queues '{"name":"delete-bench"}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
sql -c "INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds, max_delivery_attempts)
	SELECT '$d', gen_random_uuid(), 1 + g % 3, convert_to('doomed ' || g, 'UTF8'), now() + interval '7 days', 30, 5
	FROM generate_series(1, $doomed) AS g" -c "VACUUM ANALYZE messages"
# A cleaner statement planned before the insert's ANALYZE and still running (see "A plan
# cached before a backlog" in docs/performance.md) is the setup's, not the deletion's: give
# the statements that started before the ANALYZE two cleaner intervals, then wait for their
# end.
sleep 2
for _ in $(seq 600); do
	(($(sql -c "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'
		AND pid <> pg_backend_pid() AND xact_start < clock_timestamp() - interval '500 ms'") == 0)) && break
	sleep 0.1
done
# The control of the deletion: the same load with the million rows in place, just before it,
# so that the two windows differ by the deletion only (the table's size, the setup's WAL and
# the checkpoint it brings on are in both).
steady before 20
wait "$loadgen"
echo "  the steady load alone, just before: $(p99s before)"
steady delete 60
start=$(date +%s.%N) wal=$(sql -c "SELECT pg_current_wal_lsn()")
status=$(curl -s -o /dev/null -w '%{http_code} in %{time_total} s' -X DELETE "http://$addr/v1/queues/$d")
# The watch runs in one backend for the whole deletion, so that measuring costs the other
# queue little: a psql started ten times a second, and a count of the queue's rows every
# second, took about a third of a core here and doubled the other queue's p99 on their own,
# without any deletion. Every 100 ms it notes the oldest open transaction of a client (and
# every backend's state when that passes 250 ms, as notices into the activity file), commits,
# so that it holds no snapshot longer than a sample, and at once and then once a second it
# looks for a row of the queue. Its last notice, the last line of the activity file, is the
# longest transaction it saw.
watch=$(PGOPTIONS='-c client_min_messages=notice' sql -c "DO \$\$
DECLARE
    longest int := 0; longest_what text := ''; ms int; what text; i int := 0;
BEGIN
    LOOP
        PERFORM pg_stat_clear_snapshot();
        SELECT (extract(epoch FROM clock_timestamp() - xact_start) * 1000)::int,
               state || ' ' || coalesce(wait_event_type || ':' || wait_event, 'on CPU') || ' ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 60)
          INTO ms, what
          FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'
            AND backend_type = 'client backend' AND xact_start IS NOT NULL
          ORDER BY 1 DESC LIMIT 1;
        IF ms > longest THEN longest := ms; longest_what := what; END IF;
        IF ms >= 250 THEN
            RAISE NOTICE '== % a transaction % ms old%', clock_timestamp()::time, ms, (
                SELECT string_agg(E'\\n' || concat_ws(' ', backend_type, state, coalesce(wait_event_type || ':' || wait_event, 'on CPU'),
                           (extract(epoch FROM clock_timestamp() - xact_start) * 1000)::int, left(regexp_replace(query, '\\s+', ' ', 'g'), 200)), '')
                FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (state IS NULL OR state <> 'idle'));
        END IF;
        COMMIT;
        i := i + 1;
        EXIT WHEN i % 10 = 1 AND NOT EXISTS (SELECT FROM messages WHERE queue_id = '$d');
        PERFORM pg_sleep(0.1);
    END LOOP;
    RAISE NOTICE 'longest % %', longest, coalesce(longest_what, '');
END
\$\$" 2>&1 >/dev/null | sed 's/^[A-Z]*:  //' | tee "$out/lifecycle-activity.txt" | tail -1) ||
	{ echo "the watch of the deletion failed:" >&2; cat "$out/lifecycle-activity.txt" >&2; exit 1; }
[[ $watch == longest* ]] || { echo "the watch of the deletion ended without its figure: $watch" >&2; exit 1; }
read -r _ longest longest_what <<<"$watch"
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
wal=$(sql -c "SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal'))")
kill -INT "$loadgen" 2>/dev/null || true; wait "$loadgen" || true
echo "  DELETE answered $status; its $doomed rows were gone after $took s, with $wal of WAL; the longest transaction seen ${longest} ms (${longest_what:-none})"
echo "  the other queue meanwhile: $(p99s delete)"
echo "details: $out/lifecycle-*"
