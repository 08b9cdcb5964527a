// The OpenAPI document's longer prose for the routes of api/memories/, kept out of the route definitions.
import { FRESH_EMBED_MAX, FRESH_WAIT_MS } from '../../domain/search/fresh.ts';
import { DELETION_BATCH } from '../../domain/memories/delete-by-filter.ts';
import { MAX_PROJECTS_PER_ORG } from '../../domain/store/namespaces.ts';
import { HISTORY_ENTRIES_KEPT } from '../../domain/memories/limits.ts';
import { BATCHES_WAITING_PER_ORG_PER_SLOT } from '../../domain/memories/batch-slots.ts';
import { PACE_AHEAD_MAX_MS, WAIT_MAX_MS } from '../../domain/fair-slots.ts';

// Batch writes take turns between orgs (domain/memories/batch-slots.ts).
const BATCH_SLOTS =
  `Batches of all organizations take turns in a few slots: an organization with ${BATCHES_WAITING_PER_ORG_PER_SLOT} batches per ` +
  'slot waiting already gets 429 `rate-limited` with Retry-After, and while another organization is busy, a stream of ' +
  'batches is paced to a share of the slots, and refused with 429 and the wait once its pace runs more than ' +
  `${PACE_AHEAD_MAX_MS / 1000} s ahead. A batch still waiting for a slot after ${WAIT_MAX_MS / 1000} s is refused: with 429 ` +
  'and the wait while its organization is paced, otherwise with 503 `server_busy` (docs/api-decisions.md, "Batch slots").';

export const postMemoriesBatch =
  'Each item is shaped like the body of POST /api/memories and has its semantics: secrets redacted, the free ' +
  "plan's quotas, one memory.saved event and one audit row per memory, each searchable by its words as soon as " +
  'the call answers and by meaning once embedded (GET /api/memories/embeddings shows the backlog). The memories ' +
  'are written in one statement. An item that cannot be saved is reported in `failed` with its index, the status ' +
  'and error a single save would answer, and does not stop the others; on the free plan the items past the quota ' +
  'fail one by one with 402 and the earlier ones stay. With an `Idempotency-Key` header the call is one ' +
  'transaction, and a repeat with the same body within 24 hours answers the first outcome (`Idempotent-Replayed: ' +
  'true`) and saves nothing. The body is limited to 2 MiB like any other. ' +
  BATCH_SLOTS;

export const putMemoriesBatch =
  'Each item has the single-update semantics. A bad row is reported in `failed` with the code, message and extra ' +
  'fields its single update would have answered (for example `not found`, `validation_failed` or `unknown_field` ' +
  'with `issues`) and does not stop the others. ' +
  BATCH_SLOTS;

export const postMemoriesDeletions =
  `The filters of POST /api/memories/list (at least one that selects: namespace, tags, metadata_filter, a time ` +
  `bound, entity, user_id, agent_id or run_id). Runs as the \`memory-deletion-<id>\` workflow, ${DELETION_BATCH} ` +
  `memories a transaction, each deleted as DELETE /api/memories/:id would (its memory.deleted event and audit ` +
  `row, naming the deletion); a memory saved meanwhile that matches goes too. Counts as a write.`;

export const postMemoriesEmbeddingsBackfill =
  "Runs in the org's curator workflow (`memory-curator-<org id>`); follow it with GET /api/memories/embeddings. " +
  'The worker also starts one by itself for orgs whose vectors lag, when it starts.';

export const postMemoriesExports = (perHour: number) =>
  'Runs as the `export-<id>` workflow, a page of 1,000 rows at a time; poll GET /api/memories/exports/:id ' +
  '(row_count grows while it runs). Counts as a write. ' +
  (perHour > 0
    ? `An organization starts at most ${perHour} exports in a rolling hour (EXPORTS_PER_ORG_PER_HOUR); past that, 429 ` +
      '`rate-limited` with Retry-After.'
    : 'Exports per organization are not limited (EXPORTS_PER_ORG_PER_HOUR is 0).');

export const postMemories =
  'Secrets in content are redacted before storage (metadata.redacted_count/redacted_kinds). Searchable as soon ' +
  'as the 201 is sent. With an `Idempotency-Key` header, a repeat of the same request within 24 hours returns ' +
  'the first answer (header `Idempotent-Replayed: true`) and creates nothing; the same key with a different body ' +
  'is 409 `idempotency_key_reused`.';

export const postMemories409 =
  `\`idempotency_key_reused\`, or \`project_limit\`: the save names a new project and the org holds ` + `${MAX_PROJECTS_PER_ORG} already`;

export const getMemoriesIdHistory200 =
  `edits: metadata.history, the latest ${HISTORY_ENTRIES_KEPT} content edits (the prior text is not kept); ` +
  `events: a page of the audit rows about this memory, oldest first; next_after: where the next page starts ` +
  `(null on the last)`;

export const postMemoriesSearch503 =
  '`embeddings_unavailable`: semantic or hybrid, and no vector could be computed for the query (lexical still ' +
  'works). A query the org asked lately keeps its vector, and is answered even while the model is down.';

export const postMemoriesSearchBulk503 =
  '`embeddings_unavailable`: semantic or hybrid, and no vector could be computed for the queries (the queries ' +
  'the org asked lately keep theirs)';

export const getMemoriesIdSimilar =
  "The memory's own vector is the query (for a chunk of a thread, its vector with the chunks before it), so no " +
  'model runs: the same scan and scores as a semantic search (cosine similarity; a copy of the text scores 1), ' +
  'with the memory itself left out. Filters: namespace, tags (repeated), metadata_filter (JSON), created_after, ' +
  'created_before, occurred_after, occurred_before, user_id, agent_id, run_id. Superseded memories are left out ' +
  'of the hits. Hits carry no relevance: it is calibrated for questions, not for one memory against another.';

export const getMemoriesIdSimilar409 =
  '`embedding_pending`: the memory has no vector of the current model yet (it is embedded in the background, ' + 'usually within seconds)';

export const patchMemoriesId =
  'Partial update: content (a change appends to metadata.history and is re-indexed at once), tags (replaced), ' +
  'namespace (moved; created if missing), metadata (merged; null removes a key). Fires memory.updated.';

export const getMemoriesExportsId = (inlineMaxBytes: number) =>
  `\`size_bytes\` is the finished file's size. \`payload\` carries the file inline only when it is at most ` +
  `${inlineMaxBytes} bytes (EXPORT_INLINE_MAX_BYTES); a larger file has \`payload: null\` and is read from ` +
  `\`download_url\`, streamed.`;

export const postMemoriesSearch =
  `A memory is found lexically from the moment its save answers. By meaning, it is found once its embedding is ` +
  `computed in the background (usually well under a second; GET /api/memories/embeddings shows the backlog), and ` +
  `before that a search embeds the latest few memories its filters pass that still wait (up to ` +
  `${FRESH_EMBED_MAX}, within ${FRESH_WAIT_MS} ms): a search right after a save finds it by meaning too; ` +
  `\`pending_embeddings\` says how many it could not. A memory in a thread (metadata.parent_ref, ordered by ` +
  `metadata.chunk_index) is found by meaning with the two chunks before it as its context, so a reply is found ` +
  `by what it answers. Every hit carries \`relevance\`, one scale in every mode (docs/api-decisions.md, ` +
  `"Relevance").`;
