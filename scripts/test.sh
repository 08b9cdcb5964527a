#!/usr/bin/env bash
# Runs the whole test suite against real services: PostgreSQL (a fresh memsvc_test database each run) and a
# Temporal dev server started by the test run itself; stripe-mock is built for the billing tests; Debian's
# Chromium and Node.js 20 run the TypeScript client where its users run it, installed from its `npm pack`
# tarball with dependencies cached beforehand. Extra arguments go to vitest.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

ensure_node_deps
ensure_postgres
ensure_embedding_model
# The other local model too: its unit tests, and a switch from one model to the other (test/integration).
TEST_E5_MODEL_DIR="$(embedding_model_dir e5-small-v2)"
export TEST_E5_MODEL_DIR
ensure_temporal
ensure_temporal_test_server
ensure_secrets
ensure_stripe_mock
ensure_dashboard
ensure_workflow_bundle
ensure_chromium
ensure_node20
ensure_client_package_cache
ensure_mem0_clients
ensure_python_client
trap stop_started EXIT

export TEST_ADMIN_DATABASE_URL="$(database_url postgres)"
export DATABASE_URL="$(database_url memsvc_test)"

log "type-checking"
tsc -p tsconfig.json
tsc -p dashboard/tsconfig.json
log "running vitest"
vitest run "$@"
