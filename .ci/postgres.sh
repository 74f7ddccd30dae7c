# A throwaway PostgreSQL server for the tests. Source it (`. .ci/postgres.sh`): it installs
# Debian's postgresql when initdb is missing, starts a server as an unprivileged user in a
# temporary directory on 127.0.0.1 (a free port, TLS with a CA made here), creates the role
# `sessiondb` (scram-sha-256, CREATEDB) and exports
#   SESSIONDB_TEST_PG_URL   postgres://sessiondb:…@127.0.0.1:PORT/sessiondb
#   SESSIONDB_TEST_PG_CA    the CA certificate that signed the server's certificate
# The server is stopped and its directory removed when the sourcing shell exits.

sessiondb_pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && echo "$d"
  done | sort -V | tail -n 1
}

sessiondb_pg_start() {
  local bin
  bin="$(sessiondb_pg_bin)"
  if [ -z "$bin" ]; then
    echo "postgres.sh: installing PostgreSQL from Debian's packages" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql openssl >&2
    bin="$(sessiondb_pg_bin)"
  fi
  [ -n "$bin" ] || { echo "postgres.sh: no PostgreSQL server binaries found" >&2; return 1; }

  # initdb refuses to run as root: run the server as `postgres` (made by the package) or nobody.
  local user=postgres
  id "$user" >/dev/null 2>&1 || user=nobody
  local dir
  dir="$(mktemp -d /tmp/sessiondb-pg.XXXXXX)"
  chmod 755 "$dir"
  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))"
  local password
  password="pw-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"

  # TLS: a CA made here signs the server's certificate for 127.0.0.1 and localhost.
  if command -v openssl >/dev/null; then
    (
      cd "$dir" &&
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=sessiondb test CA" \
          -keyout ca.key -out ca.crt >/dev/null 2>&1 &&
        openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr >/dev/null 2>&1 &&
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext &&
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
          -extfile san.ext -out server.crt >/dev/null 2>&1
    ) || echo "postgres.sh: could not make certificates; TLS off" >&2
  fi

  mkdir -p "$dir/data"
  printf '%s\n' "$password" >"$dir/pwfile"
  chown -R "$user" "$dir"
  local as=(setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups)
  [ "$(id -u)" = 0 ] || as=()
  "${as[@]}" "$bin/initdb" -D "$dir/data" -U sessiondb_admin --auth=scram-sha-256 \
    --pwfile="$dir/pwfile" -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; return 1; }
  {
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $port"
    echo "unix_socket_directories = '$dir'"
    echo "fsync = off"
    echo "max_connections = 100"
    if [ -f "$dir/server.crt" ]; then
      chmod 600 "$dir/server.key"
      echo "ssl = on"
      echo "ssl_cert_file = '$dir/server.crt'"
      echo "ssl_key_file = '$dir/server.key'"
    fi
  } >>"$dir/data/postgresql.conf"
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
    { cat "$dir/server.log" >&2; return 1; }

  SESSIONDB_PG_DIR="$dir"
  SESSIONDB_PG_CTL=("${as[@]}" "$bin/pg_ctl" -D "$dir/data")
  trap 'sessiondb_pg_stop' EXIT

  PGPASSWORD="$password" "$bin/psql" -q -h 127.0.0.1 -p "$port" -U sessiondb_admin -d postgres \
    -v ON_ERROR_STOP=1 -v pw="$password" >/dev/null <<'SQL' || return 1
SET password_encryption = 'scram-sha-256';
CREATE ROLE sessiondb LOGIN CREATEDB PASSWORD :'pw';
CREATE DATABASE sessiondb OWNER sessiondb ENCODING 'UTF8';
SQL
  export SESSIONDB_TEST_PG_URL="postgres://sessiondb:$password@127.0.0.1:$port/sessiondb"
  if [ -f "$dir/ca.crt" ]; then
    export SESSIONDB_TEST_PG_CA="$dir/ca.crt"
  fi
  echo "postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($dir)" >&2
}

sessiondb_pg_stop() {
  if [ -n "${SESSIONDB_PG_DIR:-}" ]; then
    "${SESSIONDB_PG_CTL[@]}" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$SESSIONDB_PG_DIR"
    SESSIONDB_PG_DIR=
  fi
}

sessiondb_pg_start
