#!/usr/bin/env bash
# The API under schemathesis (issue 11's measured bar): every operation of /api/openapi.json, FUZZ_EXAMPLES
# examples each (default 30), checked for server errors, undocumented status codes, content types and
# response schemas. Runs its own stack (fresh memsvc_fuzz database, Temporal on 7298, worker, API on 3098,
# write limit off, the LLM providers and stripe-mock as local stand-ins) with a signed-up account's token; the report goes to .data/fuzz/.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

ensure_node_deps
ensure_postgres
ensure_embedding_model
ensure_temporal
ensure_secrets
ensure_schemathesis
ensure_stripe_mock
trap stop_started EXIT

pg_psql -d postgres -qc "drop database if exists memsvc_fuzz with (force)"
ensure_database memsvc_fuzz
export DATABASE_URL="$(database_url memsvc_fuzz)" WRITE_RATE_LIMIT_PER_MINUTE=0 SIGNUPS_PER_ADDRESS_PER_HOUR=0 LOG_LEVEL=warn PORT=3098
export TEMPORAL_ADDRESS=127.0.0.1:7298 TEMPORAL_TASK_QUEUE=fuzz
FUZZ_TMP="$(mktemp -d)"
start_temporal 7298 8298 "$FUZZ_TMP/temporal.db"
# The LLM providers and the payment processor as local stand-ins, so that chat, billing and enrichment answer
# as they do in production instead of 503 `..._not_configured`.
node test/support/providers-main.ts "$FUZZ_TMP/providers.env" & STARTED_PIDS+=("$!")
for _ in $(seq 1 100); do [ -s "$FUZZ_TMP/providers.env" ] && break; sleep 0.1; done
[ -s "$FUZZ_TMP/providers.env" ] || die "the provider stand-ins did not start"
set -a && source "$FUZZ_TMP/providers.env" && set +a
node infra/migrate.ts
node temporal/worker-main.ts & STARTED_PIDS+=("$!")
node api/main.ts & STARTED_PIDS+=("$!")
wait_for_port 127.0.0.1 3098 "API"

api=http://127.0.0.1:3098
token="$(curl -sf -XPOST "$api/api/auth/signup" -H 'content-type: application/json' \
  -d '{"email":"fuzz@example.test","password":"correct horse battery","name":"Fuzz","org_name":"Fuzz"}' |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).api_token.raw))')"
[ -n "$token" ] || die "could not sign up the fuzzing account"

report="$DATA_DIR/fuzz"
mkdir -p "$report"
log "schemathesis over $api/api/openapi.json (report in $report)"
"$SCHEMATHESIS_VENV/bin/schemathesis" run "$api/api/openapi.json" \
  -H "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --max-examples "${FUZZ_EXAMPLES:-30}" --phases "${FUZZ_PHASES:-examples,coverage,fuzzing}" \
  --workers 2 --seed "${FUZZ_SEED:-1}" --suppress-health-check all \
  --report junit --report-junit-path "$report/junit.xml" "$@"
