# clickhouse.sh — a ClickHouse server of a test's (or bench's) own, for the
# SQL shipped in scripts/clickhouse and for tapless export. Source it from
# bash. The server runs as a child of the script on 127.0.0.1, on free
# ports, with its data, config and logs in one directory that is removed
# when the script ends, however it ends.
#
#   ch_available        0 if clickhouse-server and clickhouse-client are
#                       installed; else prints "skipped: clickhouse-server
#                       not installed (scripts/install-deps)" and returns 1
#   ch_start            start a server: picks free TCP and HTTP ports, writes
#                       config.xml and users.xml into CH_DIR (a new temporary
#                       directory unless CH_DIR is set; made, and removed at
#                       the end, if it does not exist), waits (CH_TIMEOUT s,
#                       default 60) until it answers SELECT 1; on failure
#                       prints its error log and returns 1. Installs the
#                       cleanup trap unless CH_NO_TRAP=1 (then call
#                       ch_cleanup from your own).
#   ch_stop             SIGTERM, wait for it to exit (SIGKILL after 20 s)
#   ch_kill             SIGKILL, as a crash or power cut would
#   ch_restart          start again on the same directory and ports
#   ch_query SQL [ARG...]        run SQL (one statement) with
#                       clickhouse-client, as user default; extra ARGs go to
#                       the client (e.g. --format=TSV, --time)
#   ch_query_file FILE [ARG...]  run every statement of FILE
#   ch_writer_query SQL [ARG...] the same, as user writer
#   ch_load_schema      scripts/clickhouse/schema.sql
#   ch_cleanup          stop the server, remove CH_DIR if ch_start made it
#
# Set after ch_start: CH_DIR, CH_TCP_PORT, CH_HTTP_PORT, CH_PID, CH_URL
# (http://127.0.0.1:PORT/). Users: default (no password) and writer
# (password CH_WRITER_PASSWORD, default "tapless-writer"), both limited to
# 127.0.0.1. Timezone UTC, whatever the machine's.

CH_SERVER=${CH_SERVER:-clickhouse-server}
CH_CLIENT=${CH_CLIENT:-clickhouse-client}
CH_WRITER_PASSWORD=${CH_WRITER_PASSWORD:-tapless-writer}
CH_TIMEOUT=${CH_TIMEOUT:-60}
CH_PID=
CH_WATCH_PID=
CH_DIR_OWNED=0
CH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

ch_available() {
	if ! command -v "$CH_SERVER" > /dev/null 2>&1 ||
	   ! command -v "$CH_CLIENT" > /dev/null 2>&1; then
		echo "skipped: clickhouse-server not installed (scripts/install-deps)"
		return 1
	fi
	return 0
}

# Two distinct free ports: bound to port 0 by the kernel, then released.
# Another process may take one before the server binds it; ch_start then
# sees the server fail on "Address already in use" and picks again.
ch_free_ports() {
	python3 - << 'EOF'
import socket
socks = []
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

ch_write_config() {
	mkdir -p "$CH_DIR/data" "$CH_DIR/tmp" "$CH_DIR/user_files" \
		"$CH_DIR/format_schemas" "$CH_DIR/log" || return 1
	# A one-shard cluster "tapless" on this server, for the Distributed
	# table of scripts/clickhouse/distributed.sql.
	cat > "$CH_DIR/config.xml" << EOF
<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>$CH_DIR/log/server.log</log>
    <errorlog>$CH_DIR/log/err.log</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <http_port>$CH_HTTP_PORT</http_port>
  <tcp_port>$CH_TCP_PORT</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$CH_DIR/data/</path>
  <tmp_path>$CH_DIR/tmp/</tmp_path>
  <user_files_path>$CH_DIR/user_files/</user_files_path>
  <format_schema_path>$CH_DIR/format_schemas/</format_schema_path>
  <users_config>$CH_DIR/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <timezone>UTC</timezone>
  <remote_servers>
    <tapless>
      <shard>
        <replica><host>127.0.0.1</host><port>$CH_TCP_PORT</port></replica>
      </shard>
    </tapless>
  </remote_servers>
</yandex>
EOF
	cat > "$CH_DIR/users.xml" << EOF
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default><max_memory_usage>${CH_MAX_MEMORY:-8000000000}</max_memory_usage></default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota>
    </default>
    <writer>
      <password>$CH_WRITER_PASSWORD</password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota>
    </writer>
  </users>
  <quotas>
    <default><interval><duration>3600</duration><queries>0</queries>
      <errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows>
      <execution_time>0</execution_time></interval></default>
  </quotas>
</yandex>
EOF
}

ch_errlog() {
	echo "--- clickhouse-server error log ($CH_DIR/log/err.log, last lines):"
	tail -n 30 "$CH_DIR/log/err.log" 2> /dev/null
	if [ -s "$CH_DIR/log/stdout" ]; then
		echo "--- its output:"
		tail -n 10 "$CH_DIR/log/stdout"
	fi
}

# Start the server on CH_DIR as it is and wait for it. 0: up; 1: it failed
# (2: it failed on a port another process took).
ch_launch() {
	local t0
	: > "$CH_DIR/log/err.log"
	"$CH_SERVER" --config-file="$CH_DIR/config.xml" \
		> "$CH_DIR/log/stdout" 2>&1 &
	CH_PID=$!
	# Should this shell die without running its traps (SIGKILL), the
	# server goes with it and its directory is removed.
	( while kill -0 $$ 2> /dev/null; do sleep 1; done
	  kill -9 "$CH_PID" 2> /dev/null
	  [ "$CH_DIR_OWNED" = 1 ] && { sleep 1; rm -rf "$CH_DIR"; } ) \
		> /dev/null 2>&1 &
	CH_WATCH_PID=$!
	t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "$CH_TIMEOUT" ]; do
		if ! kill -0 "$CH_PID" 2> /dev/null; then
			wait "$CH_PID" 2> /dev/null
			CH_PID=
			ch_unwatch
			grep -q "Address already in use" "$CH_DIR/log/err.log" \
				"$CH_DIR/log/stdout" 2> /dev/null && return 2
			return 1
		fi
		if "$CH_CLIENT" --host 127.0.0.1 --port "$CH_TCP_PORT" \
			-q 'SELECT 1' > /dev/null 2>&1; then
			return 0
		fi
		sleep 0.2
	done
	echo "clickhouse: no answer to SELECT 1 within $CH_TIMEOUT s"
	ch_kill
	return 1
}

ch_unwatch() {
	if [ -n "$CH_WATCH_PID" ]; then
		kill "$CH_WATCH_PID" 2> /dev/null
		wait "$CH_WATCH_PID" 2> /dev/null
		CH_WATCH_PID=
	fi
}

ch_start() {
	local try rc ports
	if [ -z "${CH_DIR:-}" ]; then
		CH_DIR=$(mktemp -d /tmp/tapless-ch.XXXXXX) || return 1
		CH_DIR_OWNED=1
	elif [ ! -e "$CH_DIR" ]; then
		mkdir -p "$CH_DIR" || return 1
		CH_DIR_OWNED=1
	fi
	if [ "${CH_NO_TRAP:-0}" != 1 ]; then
		trap ch_cleanup EXIT
		trap 'ch_cleanup; exit 130' INT
		trap 'ch_cleanup; exit 143' TERM
	fi
	for try in 1 2 3 4 5; do
		ports=$(ch_free_ports) || { echo "clickhouse: no free ports"; return 1; }
		read -r CH_TCP_PORT CH_HTTP_PORT <<< "$ports"
		CH_URL="http://127.0.0.1:$CH_HTTP_PORT/"
		ch_write_config || { echo "clickhouse: cannot write $CH_DIR"; return 1; }
		ch_launch
		rc=$?
		[ "$rc" -eq 0 ] && return 0
		[ "$rc" -eq 2 ] && continue	# a port was taken: others
		break
	done
	echo "clickhouse: clickhouse-server did not start (ports $CH_TCP_PORT, $CH_HTTP_PORT)"
	ch_errlog
	return 1
}

ch_restart() {
	[ -n "$CH_PID" ] && ch_stop
	ch_launch || { echo "clickhouse: restart failed"; ch_errlog; return 1; }
}

ch_stop() {
	local i
	[ -n "$CH_PID" ] || return 0
	kill -TERM "$CH_PID" 2> /dev/null
	for i in $(seq 100); do
		kill -0 "$CH_PID" 2> /dev/null || break
		sleep 0.2
	done
	kill -0 "$CH_PID" 2> /dev/null && kill -KILL "$CH_PID" 2> /dev/null
	wait "$CH_PID" 2> /dev/null
	CH_PID=
	ch_unwatch
}

ch_kill() {
	[ -n "$CH_PID" ] || return 0
	kill -KILL "$CH_PID" 2> /dev/null
	wait "$CH_PID" 2> /dev/null
	CH_PID=
	ch_unwatch
}

ch_query() {
	local sql=$1
	shift
	"$CH_CLIENT" --host 127.0.0.1 --port "$CH_TCP_PORT" "$@" -q "$sql"
}

ch_writer_query() {
	local sql=$1
	shift
	"$CH_CLIENT" --host 127.0.0.1 --port "$CH_TCP_PORT" --user writer \
		--password "$CH_WRITER_PASSWORD" "$@" -q "$sql"
}

ch_query_file() {
	local f=$1
	shift
	"$CH_CLIENT" --host 127.0.0.1 --port "$CH_TCP_PORT" --multiquery "$@" \
		< "$f"
}

ch_load_schema() {
	ch_query_file "$CH_ROOT/scripts/clickhouse/schema.sql"
}

ch_cleanup() {
	ch_stop
	if [ "$CH_DIR_OWNED" = 1 ] && [ -n "${CH_DIR:-}" ]; then
		rm -rf "$CH_DIR"
		CH_DIR=
		CH_DIR_OWNED=0
	fi
}
