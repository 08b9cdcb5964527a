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
ensure_dashboard
ensure_workflow_bundle
ensure_schemathesis
ensure_stripe_mock
trap stop_started EXIT

FUZZ_TMP="$(mktemp -d)" && STARTED_DIRS+=("$FUZZ_TMP")

# The LLM providers and the payment processor as local stand-ins, so that chat, billing and enrichment answer
# as they do in production instead of 503 `..._not_configured`.
node test/support/providers-main.ts "$FUZZ_TMP/providers.env" & STARTED_PIDS+=("$!")
for _ in $(seq 1 100); do [ -s "$FUZZ_TMP/providers.env" ] && break; sleep 0.1; done
[ -s "$FUZZ_TMP/providers.env" ] || die "the provider stand-ins did not start"
set -a && source "$FUZZ_TMP/providers.env" && set +a
start_own_stack memsvc_fuzz 3098 7298 8298 fuzz

api=http://127.0.0.1:3098
token="$(curl -sf -XPOST "$api/api/auth/signup" -H 'content-type: application/json' \
  -d '{"email":"fuzz@example.test","password":"correct horse battery","name":"Fuzz","org_name":"Fuzz"}' |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).api_token.raw))')"
[ -n "$token" ] || die "could not sign up the fuzzing account"

report="$DATA_DIR/fuzz"
mkdir -p "$report"
log "schemathesis over $api/api/openapi.json (report in $report)"
# Hypothesis keeps its state (examples, the constants it gathers from source files, caches) in a directory of this run
# alone, so a run is its seed's and nothing else's: with the state that earlier runs had left in .hypothesis/, the
# same code failed inside the tool (a CPython SystemError while Hypothesis described a draw, in the coverage phase of
# one operation or another) and passed with it empty.
export HYPOTHESIS_STORAGE_DIRECTORY="$FUZZ_TMP/hypothesis"
"$SCHEMATHESIS_VENV/bin/schemathesis" run "$api/api/openapi.json" \
  -H "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --max-examples "${FUZZ_EXAMPLES:-30}" --phases "${FUZZ_PHASES:-examples,coverage,fuzzing}" \
  --workers 2 --seed "${FUZZ_SEED:-1}" --suppress-health-check all \
  --report junit --report-junit-path "$report/junit.xml" "$@"
