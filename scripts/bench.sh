#!/usr/bin/env bash
# The data-plane benchmark: a fresh memsvc_bench database, a Temporal dev server, the worker and the API as
# separate processes (write limit off), then bench/memories.ts and the ranking-quality evaluation.
# BENCH_CHECKPOINTS=10000,100000 sets the seeding checkpoints; BENCH_SUITES=memories,consolidation,exports,quality,paraphrase what runs
# (saves and mcp, not in the default set: save throughput alone with each process's CPU; MCP's cost over HTTP).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

ensure_node_deps
ensure_postgres
ensure_embedding_model
ensure_temporal
ensure_secrets
trap stop_started EXIT

pg_psql -d postgres -qc "drop database if exists memsvc_bench with (force)"
ensure_database memsvc_bench
export DATABASE_URL="$(database_url memsvc_bench)" WRITE_RATE_LIMIT_PER_MINUTE=0 SIGNUPS_PER_ADDRESS_PER_HOUR=0 LOG_LEVEL=warn PORT=3099 DATABASE_POOL_MAX=20
export TEMPORAL_ADDRESS=127.0.0.1:7299 TEMPORAL_TASK_QUEUE=bench
BENCH_DIR="$(mktemp -d)"
start_temporal 7299 8299 "$BENCH_DIR/temporal.db"
node infra/migrate.ts
nice -n "$WORKER_NICE" node temporal/worker-main.ts & STARTED_PIDS+=("$!")
export BENCH_WORKER_PID="$!"
node api/main.ts & STARTED_PIDS+=("$!")
export BENCH_API_PID="$!"
wait_for_port 127.0.0.1 3099 "API"

# BENCH_SUITES picks what runs (default all), e.g. BENCH_SUITES=memories while tuning saves.
suites=",${BENCH_SUITES:-memories,consolidation,exports,quality,paraphrase},"
if [[ "$suites" == *,saves,* ]]; then
  log "save throughput and its CPU"
  BENCH_API_URL=http://127.0.0.1:3099 node bench/saves.ts
fi
if [[ "$suites" == *,mcp,* ]]; then
  log "MCP over HTTP: the cost of a tool call, and many sessions at once"
  BENCH_API_URL=http://127.0.0.1:3099 node bench/mcp.ts
fi
if [[ "$suites" == *,memories,* ]]; then
  log "data-plane benchmark"
  BENCH_API_URL=http://127.0.0.1:3099 node bench/memories.ts
fi
if [[ "$suites" == *,consolidation,* ]]; then
  log "consolidation scan"
  node bench/consolidation.ts
fi
if [[ "$suites" == *,exports,* ]]; then
  log "exports"
  BENCH_API_URL=http://127.0.0.1:3099 node bench/exports.ts
fi
if [[ "$suites" == *,quality,* ]]; then
  log "ranking quality through the API"
  BENCH_API_URL=http://127.0.0.1:3099 node bench/quality/run-service.ts
fi
if [[ "$suites" == *,paraphrase,* ]]; then
  log "recall of paraphrased questions, per search mode"
  BENCH_API_URL=http://127.0.0.1:3099 node bench/quality/run-paraphrase.ts
fi
