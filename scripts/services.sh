#!/usr/bin/env bash
# Local PostgreSQL and Redis for `make run` and `make test`, as plain processes under .run/.
#
# usage: scripts/services.sh up|down|status|env
#   up      install what is missing (apt-get, as root: PostgreSQL, Redis, gcc, and Chromium for
#           the dashboard's browser tests), start both, create role and databases
#   down    stop both
#   status  say what runs; exits 1 unless both answer
#   env     print `export` lines for the Retsu environment variables, and nothing else
#   fresh-test-db  drop and recreate the test database (make test does this first)
#
# Ports: RETSU_PG_PORT (55432) and RETSU_REDIS_PORT (56379). PostgreSQL refuses to run as root,
# so as root it runs as the `postgres` user; if that user cannot reach the project directory,
# its files live in /var/tmp/retsu-pg-<hash> and .run/pg is a symlink to them.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
run_dir=$root/.run
pg_link=$run_dir/pg # holds data/, sock/ and pg.log
redis_dir=$run_dir/redis
pg_port=${RETSU_PG_PORT:-55432}
redis_port=${RETSU_REDIS_PORT:-56379}
wait_seconds=60

log() { echo "services: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}
is_root() { [[ $(id -u) -eq 0 ]]; }
pg_user() { if is_root; then echo postgres; else id -un; fi; }

# as_pg runs a command as the OS user that owns the PostgreSQL cluster, from a directory it can read.
as_pg() {
	if is_root; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

# pg_bin prints the directory of initdb/pg_ctl/postgres: the cluster's own major version if it
# exists, else the highest version installed (Debian layout), else whatever is on PATH.
pg_bin() {
	local version dir
	if [[ -f $pg_link/data/PG_VERSION ]]; then
		version=$(<"$pg_link/data/PG_VERSION")
		dir=/usr/lib/postgresql/$version/bin
		[[ -x $dir/postgres && -x $dir/pg_ctl ]] && { echo "$dir"; return; }
	fi
	for dir in $(compgen -G '/usr/lib/postgresql/*/bin' | sort -V -r); do
		[[ -x $dir/initdb && -x $dir/postgres && -x $dir/pg_ctl ]] && { echo "$dir"; return; }
	done
	dir=$(dirname "$(command -v postgres 2>/dev/null || echo /nonexistent/postgres)")
	[[ -x $dir/initdb && -x $dir/pg_ctl ]] && { echo "$dir"; return; }
	return 1
}

# pg_home prints the real directory behind .run/pg, or the one `up` would choose for it.
pg_home() {
	if [[ -e $pg_link ]]; then
		readlink -f "$pg_link"
	elif is_root && ! (cd / && runuser -u postgres -- test -x "$run_dir") 2>/dev/null; then
		echo "/var/tmp/retsu-pg-$(printf %s "$root" | sha256sum | cut -c1-12)"
	else
		echo "$pg_link"
	fi
}

install_missing() {
	local packages=() browser=()
	if ! pg_bin >/dev/null || ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
		packages+=(postgresql postgresql-contrib redis-server)
	fi
	# `go test -race` needs cgo, hence a C compiler.
	if ! command -v cc >/dev/null; then
		if is_root; then packages+=(gcc libc6-dev); else log "warning: no C compiler; \`go test -race\` needs gcc"; fi
	fi
	# The dashboard's browser tests (test/dashboard_test.go) drive Debian's Chromium headless.
	if ! command -v chromium >/dev/null; then
		if is_root; then browser+=(chromium); else log "warning: no chromium; the dashboard's browser tests need it"; fi
	fi
	((${#packages[@]} + ${#browser[@]})) || return 0
	if ! is_root; then
		die "missing software; install it first, e.g.: sudo apt-get install -y ${packages[*]}"
	fi
	command -v apt-get >/dev/null || die "missing ${packages[*]} ${browser[*]} and no apt-get to install them"
	apt-get update >&2
	if ((${#packages[@]})); then
		log "installing ${packages[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}" >&2
		pg_bin >/dev/null || die "PostgreSQL (initdb, pg_ctl, postgres) still not found after installing"
		command -v redis-server >/dev/null || die "redis-server still not found after installing"
	fi
	if ((${#browser[@]})); then
		# Without its recommended packages (desktop integration, extra fonts, the sandbox
		# helper): a fifth of the packages, and headless tests use none of them.
		log "installing ${browser[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${browser[@]}" >&2
		command -v chromium >/dev/null || die "chromium still not found after installing"
	fi
}

pg_running() { [[ -f $(pg_home)/data/PG_VERSION ]] && as_pg "$(pg_bin)/pg_ctl" -D "$(pg_home)/data" status >/dev/null 2>&1; }
pg_ready() { "$(pg_bin)/pg_isready" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -t 2; }
redis_ready() { [[ $(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null) == PONG ]]; }

# wait_for NAME LOGFILE COMMAND... polls COMMAND until it succeeds, or fails with the log's tail.
wait_for() {
	local name=$1 logfile=$2 deadline=$((SECONDS + wait_seconds))
	shift 2
	until "$@"; do
		if ((SECONDS >= deadline)); then
			log "$name did not answer within ${wait_seconds}s; end of $logfile:"
			tail -n 30 "$logfile" >&2 2>/dev/null || true
			exit 1
		fi
		sleep 0.5
	done
}

prepare_pg_home() {
	local home
	mkdir -p "$run_dir"
	chmod 755 "$run_dir"
	home=$(pg_home)
	if [[ ! -e $pg_link ]]; then
		mkdir -p "$home"
		[[ $home == "$pg_link" ]] || ln -sfn "$home" "$pg_link"
	fi
	mkdir -p "$home/sock"
	if is_root; then
		getent passwd postgres >/dev/null || die "no 'postgres' user to run PostgreSQL as"
		chown postgres: "$home" "$home/sock"
	fi
	ln -sfn pg/pg.log "$run_dir/pg.log"
}

write_pg_config() {
	local home=$1
	as_pg tee "$home/data/retsu.conf" >/dev/null <<EOF
# Written by scripts/services.sh on every \`up\`; changes apply at the next start.
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$home/sock'
max_connections = 200
shared_buffers = 256MB
shared_preload_libraries = 'pg_stat_statements'
log_min_messages = warning
logging_collector = on
log_directory = '$home'
log_filename = 'pg.log'
log_rotation_age = 0
log_rotation_size = 0
EOF
	grep -q "^include_if_exists 'retsu.conf'" "$home/data/postgresql.conf" ||
		echo "include_if_exists 'retsu.conf'" | as_pg tee -a "$home/data/postgresql.conf" >/dev/null
}

pg_up() {
	local bin home
	prepare_pg_home
	home=$(pg_home)
	if [[ -e $home/data && ! -f $home/data/PG_VERSION ]]; then
		log "removing the half-initialised $home/data"
		rm -rf "$home/data"
	fi
	if [[ ! -f $home/data/PG_VERSION ]]; then
		log "initialising PostgreSQL in $home/data"
		as_pg "$(pg_bin)/initdb" -D "$home/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
	fi
	bin=$(pg_bin)
	if pg_running; then
		log "PostgreSQL already running on port $pg_port"
	else
		pg_ready && die "port $pg_port already has a PostgreSQL that is not $home/data; set RETSU_PG_PORT"
		write_pg_config "$home"
		log "starting PostgreSQL $(<"$home/data/PG_VERSION") on 127.0.0.1:$pg_port"
		as_pg "$bin/pg_ctl" -D "$home/data" -l "$home/pg.log" -w -t "$wait_seconds" start >/dev/null 9>&- ||
			{ tail -n 30 "$home/pg.log" >&2 || true; die "PostgreSQL did not start"; }
	fi
	wait_for PostgreSQL "$home/pg.log" pg_ready
	create_databases "$bin"
}

# admin_psql BIN ARGS... runs BIN/psql as the postgres superuser, stopping at the first error.
admin_psql() {
	local bin=$1
	shift
	PGOPTIONS='-c client_min_messages=warning' "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres "$@"
}

create_databases() {
	admin_psql "$1" -d postgres >/dev/null <<'EOF'
SELECT 'CREATE ROLE retsu LOGIN SUPERUSER' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'retsu') \gexec
SELECT format('CREATE DATABASE %I OWNER retsu', name) FROM unnest(ARRAY['retsu', 'retsu_test']) AS name
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = name) \gexec
EOF
	for db in retsu retsu_test; do
		admin_psql "$1" -d "$db" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null
	done
}

# fresh_test_db recreates the test database, so that every `make test` starts from an empty
# schema and old runs' queues do not slow down the cleaners' passes.
fresh_test_db() {
	local bin
	bin=$(pg_bin) || die "PostgreSQL is not installed; run $0 up"
	pg_ready || die "PostgreSQL is not running; run $0 up"
	admin_psql "$bin" -d postgres -c 'DROP DATABASE IF EXISTS retsu_test WITH (FORCE)' >/dev/null
	create_databases "$bin"
}

redis_up() {
	mkdir -p "$redis_dir"
	if redis_ready; then
		log "Redis already running on port $redis_port"
	else
		log "starting Redis on 127.0.0.1:$redis_port"
		redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
			--daemonize yes --dir "$redis_dir" --pidfile "$redis_dir/redis.pid" \
			--logfile "$redis_dir/redis.log" >/dev/null 9>&- # the daemons must not hold the lock
	fi
	wait_for Redis "$redis_dir/redis.log" redis_ready
}

up() {
	install_missing
	mkdir -p "$run_dir"
	exec 9>"$run_dir/services.lock"
	# Two `make test` at once must not both start servers.
	flock -w 120 9 || die "another 'services.sh up' holds $run_dir/services.lock"
	pg_up
	redis_up
	log "ready: PostgreSQL on 127.0.0.1:$pg_port, Redis on 127.0.0.1:$redis_port"
}

down() {
	if pg_bin >/dev/null && pg_running; then
		log "stopping PostgreSQL"
		as_pg "$(pg_bin)/pg_ctl" -D "$(pg_home)/data" -m fast -w stop >/dev/null
	fi
	if command -v redis-cli >/dev/null && redis_ready; then
		log "stopping Redis"
		redis-cli -h 127.0.0.1 -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
		local deadline=$((SECONDS + wait_seconds))
		while redis_ready && ((SECONDS < deadline)); do sleep 0.2; done
	fi
}

status() {
	local ok=0
	if pg_bin >/dev/null && pg_ready; then
		echo "PostgreSQL: running on 127.0.0.1:$pg_port, data $(pg_home)/data"
	else
		echo "PostgreSQL: not running (port $pg_port)"
		ok=1
	fi
	if command -v redis-cli >/dev/null && redis_ready; then
		echo "Redis: running on 127.0.0.1:$redis_port"
	else
		echo "Redis: not running (port $redis_port)"
		ok=1
	fi
	return $ok
}

# print_export NAME VALUE prints a line that is safe to eval.
print_export() { printf "export %s='%s'\n" "$1" "${2//\'/\'\\\'\'}"; }

print_env() {
	local bin
	bin=$(pg_bin) || die "PostgreSQL is not installed; run: scripts/services.sh up"
	print_export RETSU_DATABASE_URL "postgres://retsu@127.0.0.1:$pg_port/retsu?sslmode=disable"
	print_export RETSU_REDIS_URL "redis://127.0.0.1:$redis_port/0"
	print_export RETSU_TEST_DATABASE_URL "postgres://retsu@127.0.0.1:$pg_port/retsu_test?sslmode=disable"
	print_export RETSU_TEST_REDIS_URL "redis://127.0.0.1:$redis_port/1"
	print_export RETSU_TEST_PG_CTL "$bin/pg_ctl"
	print_export RETSU_TEST_PG_USER "$(pg_user)"
}

case ${1:-} in
up) up ;;
down) down ;;
status) status ;;
env) print_env ;;
fresh-test-db) fresh_test_db ;;
*)
	echo "usage: $0 up|down|status|env|fresh-test-db" >&2
	exit 2
	;;
esac
