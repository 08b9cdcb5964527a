#!/usr/bin/env bash
# The data-plane benchmark: a fresh memsvc_bench database, a Temporal dev server, the worker and the API as
# separate processes (write limit off), then bench/memories.ts and the ranking-quality evaluation.
# BENCH_CHECKPOINTS=10000,100000 sets the seeding checkpoints; BENCH_REUSE=1 keeps the database of the last run
# and measures its org again without seeding; BENCH_SUITES=memories,consolidation,exports,quality,paraphrase,documents
# what runs (documents: the paraphrase set saved as long memories, runs of 32 notes joined). Not in the default set:
# saves (save throughput alone with each process's CPU), batches (saves through POST /api/memories/batch to 100,000
# memories and the backlog they leave), scopes (searches filtered to one user of 1,000 in an org of 1,000,000),
# backlogs (an org's freshness beside other orgs' backlogs and behind its own), webhooks (save to webhook received
# at 5 saves a second), fairness (one org's flood beside another's searches and saves), mcp (MCP's cost over HTTP),
# dashboard (its loads in Chromium), locomo (LoCoMo's conversations, from LOCOMO_JSON) and relevance (the relevance
# scale on every quality set and questions never answered). BENCH_API_PORT moves the API (default 3099), with
# Temporal at BENCH_API_PORT+4200 and its Web UI at +5200, so that a second checkout can run the benchmark beside the first.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

ensure_node_deps
ensure_postgres
ensure_embedding_model
ensure_temporal
ensure_secrets
ensure_dashboard
ensure_workflow_bundle
trap stop_started EXIT

# BENCH_SUITES picks what runs (default all), e.g. BENCH_SUITES=memories while tuning saves.
suites=",${BENCH_SUITES:-memories,consolidation,exports,quality,paraphrase,documents},"

# The saves suite alone, or the backlogs suite alone, runs on a fresh database of its own: it neither drops the
# seeded org that BENCH_REUSE=1 measures again, nor is measured while the worker embeds what earlier runs left (at
# its start the worker catches up every org whose vectors lag, and a burst pauses only its own org's curator).
database=memsvc_bench keep="${BENCH_REUSE:-0}"
[ "$suites" = ",saves," ] && database=memsvc_saves keep=0
[ "$suites" = ",backlogs," ] && database=memsvc_backlogs keep=0
[ "$suites" = ",batches," ] && database=memsvc_batches keep=0
[ "$suites" = ",fairness," ] && database=memsvc_fairness keep=0
# The fairness suite's quiet org grows past VECTOR_INDEX_ORG_MIN as it saves; its own index's build, the move of its
# vectors and the vacuum after them would keep a core busy in one round, so both orgs stay in the shared index.
[ "$suites" = ",fairness," ] && export VECTOR_INDEX_ORG_MIN="${VECTOR_INDEX_ORG_MIN:-100000000}"
[ "$suites" = ",webhooks," ] && database=memsvc_webhooks keep=0
[ "$suites" = ",scopes," ] && database=memsvc_scopes keep="${BENCH_REUSE:-0}"
export DATABASE_POOL_MAX=20
# The webhook lag's receiver listens on this machine.
[[ "$suites" == *,webhooks,* ]] && export WEBHOOK_ALLOW_PRIVATE_TARGETS=true
api_port="${BENCH_API_PORT:-3099}"
export BENCH_API_URL="http://127.0.0.1:$api_port"
STACK_KEEP_DATABASE="$keep" start_own_stack "$database" "$api_port" "$((api_port + 4200))" "$((api_port + 5200))" bench
if [[ "$suites" == *,saves,* ]]; then
  log "save throughput and its CPU"
  node bench/saves.ts
fi
if [[ "$suites" == *,batches,* ]]; then
  log "saves through batches, and the embedding backlog they leave"
  node bench/batches.ts
fi
if [[ "$suites" == *,scopes,* ]]; then
  log "searches filtered to one user in a large org"
  node bench/scopes.ts
fi
if [[ "$suites" == *,backlogs,* ]]; then
  log "an org's freshness beside other orgs' backlogs and behind its own"
  node bench/backlogs.ts
fi
if [[ "$suites" == *,webhooks,* ]]; then
  log "save to webhook received"
  node bench/webhook-lag.ts
fi
if [[ "$suites" == *,fairness,* ]]; then
  log "one org's flood beside another org's searches and saves"
  node bench/fairness.ts
fi
if [[ "$suites" == *,mcp,* ]]; then
  log "MCP over HTTP: the cost of a tool call, and many sessions at once"
  node bench/mcp.ts
fi
if [[ "$suites" == *,dashboard,* ]]; then
  log "the dashboard in Chromium: first loads, and the memories page of a large org"
  ensure_chromium
  node bench/dashboard.ts
fi
if [[ "$suites" == *,memories,* ]]; then
  log "data-plane benchmark"
  node bench/memories.ts
fi
if [[ "$suites" == *,consolidation,* ]]; then
  log "consolidation scan"
  node bench/consolidation.ts
fi
if [[ "$suites" == *,exports,* ]]; then
  log "exports"
  node bench/exports.ts
fi
if [[ "$suites" == *,quality,* ]]; then
  log "ranking quality through the API"
  node bench/quality/run-service.ts
fi
# LoCoMo's conversations in the shape of its data/locomo10.json, written from ../shared/data/locomo (CC BY-NC: read
# from there, never kept in the repository) unless LOCOMO_JSON names a copy.
if [[ "$suites" == *,locomo,* || "$suites" == *,relevance,* ]] && [ -z "${LOCOMO_JSON:-}" ]; then
  LOCOMO_JSON="$CACHE_DIR/locomo10.json"
  python3 "$ROOT/../shared/data/locomo/to-locomo10-json.py" > "$LOCOMO_JSON" || die "could not read LoCoMo from ../shared/data/locomo; set LOCOMO_JSON"
  export LOCOMO_JSON
fi
if [[ "$suites" == *,locomo,* ]]; then
  log "conversational memory: LoCoMo's evidence recall, per search mode"
  node bench/quality/run-locomo.ts
fi
if [[ "$suites" == *,relevance,* ]]; then
  log "relevance: precision and recall at the recommended floor on every quality set and never-stored questions; the curves fitted"
  node bench/quality/run-relevance.ts
fi
if [[ "$suites" == *,paraphrase,* ]]; then
  log "recall of paraphrased questions, per search mode"
  node bench/quality/run-paraphrase.ts
fi
if [[ "$suites" == *,documents,* ]]; then
  log "recall of paraphrased questions in long memories (searched in passages), per search mode"
  PARAPHRASE_DOCUMENTS=32 node bench/quality/run-paraphrase.ts
fi
