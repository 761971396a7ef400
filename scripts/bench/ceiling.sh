#!/usr/bin/env bash
# Copied from the shared benchmark kit that came with Retsu's performance issue (bench/ceiling.sh
# beside the project), unchanged but for these lines, so that `make bench` needs nothing outside
# the repository.
# Measures what PostgreSQL itself sustains on this machine for bare queue work.
# usage: ceiling.sh DATABASE_URL [seconds]
# Use an empty database of its own: the scripts create and drop a table named `messages`.
# Prints message lifecycles (enqueue + claim + acknowledge) per second, one statement per step
# at 8 and 32 clients, and 100 messages per statement at 8 clients. pgbench uses prepared
# statements (as pgx does) and the table is vacuumed every 5 s during each run (its best case).
set -u
url=${1:?usage: ceiling.sh DATABASE_URL [seconds]}
secs=${2:-15}
here=$(cd "$(dirname "$0")" && pwd)

vacuum_loop() { while sleep 5; do psql -qX "$url" -c 'VACUUM messages' >/dev/null 2>&1; done; }
run() {  # run CLIENTS SCRIPT -> lifecycles/s counted from the rows that went in and out
  psql -qX "$url" -f "$here/schema.sql" >/dev/null 2>&1
  vacuum_loop & local vac=$!
  local out; out=$(pgbench -n -M prepared -c "$1" -j 2 -T "$secs" -f "$here/$2" "$url" 2>&1)
  kill "$vac" 2>/dev/null; wait "$vac" 2>/dev/null
  local tx tps sent left
  tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | tail -1)
  sent=$(psql -qXAt "$url" -c "SELECT coalesce(max(seq), 0) FROM messages")
  left=$(psql -qXAt "$url" -c "SELECT count(*) FROM messages")
  awk -v d="$((sent - left))" -v tx="${tx:-0}" -v tps="${tps:-0}" 'BEGIN { if (tx > 0 && tps > 0) printf "%d", d / (tx / tps); else print "failed" }'
}
echo "single-statement steps, 8 clients:  $(run 8 cycle.sql) lifecycles/s"
echo "single-statement steps, 32 clients: $(run 32 cycle.sql) lifecycles/s"
echo "100-message statements, 8 clients:  $(run 8 batch.sql) lifecycles/s"
psql -qX "$url" -c 'DROP TABLE IF EXISTS messages' >/dev/null 2>&1
