# Shared set-up for scripts/start.sh and scripts/test.sh. Every step checks before it acts, so running
# again reuses what is there. Sourced, not executed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="${MEMSVC_DATA_DIR:-$ROOT/.data}"
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/memory-service"
TEMPORAL_CLI_VERSION="1.5.1"   # newest tag whose module installs with `go install` (later tags carry a replace directive)
STRIPE_MOCK_VERSION="0.197.0"
PG_MAJOR=15
DB_USER=memsvc
DB_PASSWORD=memsvc
STARTED_PIDS=()
STARTED_PG=""

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[setup]\033[0m %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
as_postgres() { as_root runuser -u postgres -- "$@"; }

# npm dependencies, including Node 24 itself (the `node` package puts a real Node 24 binary in node_modules/.bin).
ensure_node_deps() {
  command -v npm >/dev/null || die "npm is needed to install the project's Node.js 24 and its packages"
  local stamp="$ROOT/node_modules/.install-stamp"
  if [ ! -f "$stamp" ] || [ "$ROOT/package-lock.json" -nt "$stamp" ] || [ "$ROOT/package.json" -nt "$stamp" ]; then
    log "installing npm dependencies (npm ci)"
    (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error)
    touch "$stamp"
  fi
  export PATH="$ROOT/node_modules/.bin:$PATH"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" = 24 ] || die "expected Node.js 24 from node_modules/.bin, found $(node --version)"
}

# PostgreSQL 15 from Debian's packages, its default cluster running, and our role.
ensure_postgres() {
  if [ ! -x "/usr/lib/postgresql/$PG_MAJOR/bin/postgres" ]; then
    log "installing PostgreSQL $PG_MAJOR from Debian's packages"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$PG_MAJOR" postgresql-client-$PG_MAJOR >/dev/null
  fi
  if ! pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -qx "$PG_MAJOR main"; then
    log "creating PostgreSQL cluster $PG_MAJOR/main"
    as_root pg_createcluster "$PG_MAJOR" main >/dev/null
  fi
  if ! pg_lsclusters -h | awk -v v="$PG_MAJOR" '$1==v && $2=="main" {print $4}' | grep -q online; then
    log "starting PostgreSQL $PG_MAJOR/main"
    as_root pg_ctlcluster "$PG_MAJOR" main start
    STARTED_PG=1
  fi
  configure_postgres
  PG_PORT="$(pg_lsclusters -h | awk -v v="$PG_MAJOR" '$1==v && $2=="main" {print $3}')"
  export PG_PORT
  as_postgres psql -p "$PG_PORT" -qtAc "select 1 from pg_roles where rolname = '$DB_USER'" | grep -q 1 ||
    as_postgres psql -p "$PG_PORT" -qc "create role $DB_USER login createdb password '$DB_PASSWORD'"
}

# Server settings for this workload (conf.d is included by Debian's postgresql.conf): buffers sized for a
# dev machine, WAL room so checkpoints do not force full-page writes every minute under bulk saves, and no
# JIT (it adds compile time to the search statements without making them faster).
configure_postgres() {
  local conf="/etc/postgresql/$PG_MAJOR/main/conf.d/memsvc.conf"
  local wanted
  wanted="$(cat <<'CONF'
shared_buffers = 1GB
effective_cache_size = 4GB
work_mem = 64MB
maintenance_work_mem = 256MB
max_wal_size = 8GB
min_wal_size = 1GB
checkpoint_timeout = 15min
checkpoint_completion_target = 0.9
wal_compression = on
jit = off
max_connections = 200
CONF
)"
  if [ "$(cat "$conf" 2>/dev/null)" != "$wanted" ]; then
    log "configuring PostgreSQL ($conf)"
    printf '%s\n' "$wanted" | as_root tee "$conf" >/dev/null
    as_root pg_ctlcluster "$PG_MAJOR" main restart
  fi
}

ensure_database() {
  local name="$1"
  as_postgres psql -p "$PG_PORT" -qtAc "select 1 from pg_database where datname = '$name'" | grep -q 1 ||
    as_postgres psql -p "$PG_PORT" -qc "create database $name owner $DB_USER"
}

database_url() { echo "postgres://$DB_USER:$DB_PASSWORD@127.0.0.1:$PG_PORT/$1"; }

# A Go module built once per version into the machine's cache; the Go build cache makes rebuilds cheap.
go_tool() {
  local module="$1" version="$2" name="$3"
  local dir="$CACHE_DIR/$name-$version"
  if [ ! -x "$dir/$name" ]; then
    command -v go >/dev/null || die "Go (>= 1.25) is needed to build $name"
    log "building $name v$version with go install (cached in $dir)"
    mkdir -p "$dir"
    GOBIN="$dir" GOFLAGS=-mod=mod go install "$module@v$version" >&2
  fi
  echo "$dir/$name"
}

ensure_temporal() {
  TEMPORAL_BIN="$(go_tool github.com/temporalio/cli/cmd/temporal "$TEMPORAL_CLI_VERSION" temporal)"
  export TEMPORAL_BIN
}

ensure_stripe_mock() {
  STRIPE_MOCK_BIN="$(go_tool github.com/stripe/stripe-mock "$STRIPE_MOCK_VERSION" stripe-mock)"
  export STRIPE_MOCK_BIN
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_for_port() {
  local host="$1" port="$2" what="$3" tries=0
  until port_open "$host" "$port"; do
    tries=$((tries + 1))
    [ "$tries" -lt 120 ] || die "$what did not come up on $host:$port"
    sleep 0.5
  done
}

# The Temporal dev server (frontend, Web UI, SQLite state in a file) with the OrgId search attribute.
start_temporal() {
  local port="$1" ui_port="$2" db_file="$3"
  if port_open 127.0.0.1 "$port"; then
    log "Temporal already listening on 127.0.0.1:$port; reusing it"
  else
    mkdir -p "$(dirname "$db_file")"
    log "starting Temporal dev server on 127.0.0.1:$port (Web UI http://127.0.0.1:$ui_port, state in $db_file)"
    "$TEMPORAL_BIN" server start-dev --ip 127.0.0.1 --port "$port" --ui-port "$ui_port" \
      --db-filename "$db_file" --namespace default --search-attribute OrgId=Keyword \
      --log-level warn >"$(dirname "$db_file")/temporal.log" 2>&1 &
    STARTED_PIDS+=("$!")
    wait_for_port 127.0.0.1 "$port" "Temporal"
  fi
  local tries=0
  until "$TEMPORAL_BIN" operator search-attribute list --address "127.0.0.1:$port" 2>/dev/null | grep -q OrgId; do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || die "Temporal at 127.0.0.1:$port has no OrgId search attribute"
    sleep 0.5
  done
}

stop_started() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${STARTED_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$STARTED_PG" ]; then
    log "stopping PostgreSQL $PG_MAJOR/main (this script started it)"
    as_root pg_ctlcluster "$PG_MAJOR" main stop || true
  fi
}
