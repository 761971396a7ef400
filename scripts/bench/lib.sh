# Helpers of the scripts in scripts/bench, which source this file after
# `eval "$(scripts/services.sh env)"`.

# database_url NAME prints the URL of database NAME on the services' PostgreSQL.
database_url() { echo "${RETSU_DATABASE_URL%/*}/$1?sslmode=disable"; }

# recreate_database NAME drops database NAME if it exists and creates it empty; a failure
# stops the script.
recreate_database() {
	PGOPTIONS='-c client_min_messages=warning' psql -qX -v ON_ERROR_STOP=1 "$(database_url postgres)" \
		-c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" >/dev/null
}

# wait_for_listener HOST:PORT waits until something accepts connections there, for up to 60 s.
wait_for_listener() {
	local deadline=$((SECONDS + 60))
	until (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; do
		((SECONDS < deadline)) || { echo "bench: nothing listens on $1" >&2; return 1; }
		sleep 0.2
	done
}

# postgres_pids prints the process IDs of the services' PostgreSQL: its postmaster and every
# process it started (backends, checkpointer, WAL writer…), and no other cluster's.
postgres_pids() {
	local postmaster
	postmaster=$(head -1 .run/pg/data/postmaster.pid)
	echo "$postmaster" $(pgrep -P "$postmaster")
}
