# Helpers for running a private MariaDB server (sourced by test.sh): the stand-in for an
# XXL-JOB installation's MySQL that `cronwheel import xxl-job` reads in the tests.
#
# mariadbd refuses to run as root, so as root the server runs as the unprivileged `mysql`
# account (created by Debian's mariadb-server package); the server's directory is then owned
# by it. Layout of DIR: data/ (the data directory), mysqld.sock, mysqld.pid, error.log. The
# server listens on 127.0.0.1 only, reads no option file (--no-defaults: the system's
# /etc/mysql is not ours), and its `root` account authenticates by the Unix socket, as the
# operating-system user who ran mariadb_init: it is for tests and demos on one machine, never
# for production. Every wait is bounded.

MARIADB_SERVER=${MARIADB_SERVER:-/usr/sbin/mariadbd}

mariadb_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u mysql -- "$@")
  else
    "$@"
  fi
}

# mariadb_sql DIR SQL: runs SQL as the server's root account, through its socket.
mariadb_sql() {
  local dir=$1 sql=$2
  mariadb --no-defaults --socket="$dir/mysqld.sock" --user=root --connect-timeout=5 --batch -e "$sql"
}

# mariadb_init DIR: creates an empty server directory in DIR (which must not exist or be empty).
mariadb_init() {
  local dir=$1
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown mysql: "$dir"
    if ! runuser -u mysql -- test -w "$dir"; then
      echo "MariaDB runs as the mysql account, which cannot write $dir" >&2
      echo "(a parent directory is not accessible to it); use a directory under /tmp" >&2
      return 1
    fi
  fi
  # 755: the socket in it is reached by the clients of the user who started the server.
  chmod 755 "$dir"
  mariadb_as_owner mariadb-install-db --no-defaults --datadir="$dir/data" --skip-test-db \
    --auth-root-authentication-method=socket --auth-root-socket-user="$(id -un)" \
    >"$dir/install.log" 2>&1 || {
    cat "$dir/install.log" >&2
    return 1
  }
  rm -f "$dir/install.log"
}

# mariadb_running DIR: true if the server of DIR runs (its pid file names a live process).
mariadb_running() {
  local pid
  pid=$(cat "$1/mysqld.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# mariadb_start DIR PORT: starts the server of DIR on 127.0.0.1:PORT and waits (60 s at most)
# until it answers. Fails, leaving nothing running, if the port is taken or it does not answer.
mariadb_start() {
  local dir=$1 port=$2 starter waited=0
  rm -f "$dir/mysqld.pid"
  # Durability is not under test; a small buffer pool keeps it light beside the tests.
  mariadb_as_owner "$MARIADB_SERVER" --no-defaults --datadir="$dir/data" \
    --bind-address=127.0.0.1 --port="$port" --socket="$dir/mysqld.sock" \
    --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" --skip-name-resolve \
    --skip-log-bin --innodb-buffer-pool-size=32M --innodb-flush-log-at-trx-commit=0 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
    </dev/null >/dev/null 2>&1 &
  starter=$!
  while [ "$waited" -lt 300 ]; do
    if ! kill -0 "$starter" 2>/dev/null; then
      wait "$starter" 2>/dev/null || true
      return 1  # it stopped: the port is taken, or see error.log
    fi
    if mariadb-admin --no-defaults --socket="$dir/mysqld.sock" --user=root --connect-timeout=1 \
      ping >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
  echo "MariaDB in $dir did not answer within 60 s" >&2
  mariadb_stop "$dir"
  kill -KILL "$starter" 2>/dev/null || true
  return 1
}

# mariadb_start_free DIR: starts the server on a free port and prints the port.
mariadb_start_free() {
  local dir=$1 port attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 30000))
    if mariadb_start "$dir" "$port"; then
      echo "$port"
      return 0
    fi
  done
  echo "could not start MariaDB in $dir; its log:" >&2
  tail -n 20 "$dir/error.log" >&2 || true
  return 1
}

# mariadb_create_user DIR USER PASSWORD: an account that logs in over TCP from 127.0.0.1 with
# PASSWORD and may do everything (the tests create and drop databases of their own). USER and
# PASSWORD: letters, digits, '.', '_' and '-' only, so they need no quoting.
mariadb_create_user() {
  local dir=$1 user=$2 password=$3
  if [[ ! $user =~ ^[A-Za-z0-9._-]{1,80}$ || ! $password =~ ^[A-Za-z0-9._-]{1,128}$ ]]; then
    echo "mariadb_create_user: the user and password must be letters, digits, '.', '_' or '-'" >&2
    return 1
  fi
  mariadb_sql "$dir" "CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY '$password';
    GRANT ALL PRIVILEGES ON *.* TO '$user'@'127.0.0.1';"
}

# mariadb_create_database DIR NAME: an empty utf8mb4 database. NAME: letters, digits and '_'.
mariadb_create_database() {
  local dir=$1 name=$2
  if [[ ! $name =~ ^[A-Za-z0-9_]{1,64}$ ]]; then
    echo "mariadb_create_database: the name must be letters, digits or '_'" >&2
    return 1
  fi
  mariadb_sql "$dir" "CREATE DATABASE \`$name\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;"
}

# mariadb_stop DIR: stops the server of DIR if it runs (SIGTERM, then SIGKILL after 60 s).
mariadb_stop() {
  local dir=$1 pid waited=0
  pid=$(cat "$dir/mysqld.pid" 2>/dev/null) || return 0
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge 600 ]; then
      echo "MariaDB in $dir did not stop within 60 s: killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  rm -f "$dir/mysqld.pid"
}
