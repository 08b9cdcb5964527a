#!/usr/bin/env bash
# Starts the whole service with working defaults: PostgreSQL, the Temporal dev server (Web UI on :8233),
# migrations, the worker (with the outbox relay) and the API on http://127.0.0.1:3000, which serves the
# dashboard (built here) at /dashboard. Ctrl-C stops what
# this script started.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

ensure_node_deps
ensure_postgres
ensure_embedding_model
ensure_database memsvc
ensure_temporal
ensure_secrets
ensure_dashboard
ensure_workflow_bundle
trap stop_started EXIT
trap 'exit 130' INT TERM

export DATABASE_URL="${DATABASE_URL:-$(database_url memsvc)}"
TEMPORAL_PORT="${TEMPORAL_PORT:-7233}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:$TEMPORAL_PORT}"
API_URL="${PUBLIC_BASE_URL:-http://${HOST:-127.0.0.1}:${PORT:-3000}}"
export TEMPORAL_UI_ORIGIN="${TEMPORAL_UI_ORIGIN:-http://127.0.0.1:${TEMPORAL_UI_PORT:-8233}}"
start_temporal "$TEMPORAL_PORT" "${TEMPORAL_UI_PORT:-8233}" "$DATA_DIR/temporal/dev.db" "${API_URL%/}/api/temporal/codec"

log "applying migrations"
node infra/migrate.ts

# Background work (embedding above all) yields the CPU to requests when both share a machine. Temporal (above), the
# worker and the API are each started again when they stop (supervise, scripts/lib.sh); Ctrl-C stops them all.
supervise worker "" env "$NODE_MALLOC_ENV" nice -n "$WORKER_NICE" node $WORKER_NODE_FLAGS temporal/worker-main.ts
supervise API "" env "$NODE_MALLOC_ENV" node $API_NODE_FLAGS api/main.ts
log "API http://${HOST:-127.0.0.1}:${PORT:-3000}  dashboard /dashboard  docs /api/docs  Temporal UI http://127.0.0.1:${TEMPORAL_UI_PORT:-8233}"
wait
