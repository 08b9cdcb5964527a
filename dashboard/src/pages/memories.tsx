import { useEffect, useState } from 'preact/hooks';
import { api, client, messageOf, unwrap, type Memory } from '../api.ts';
import { Link, usePath } from '../router.tsx';
import { Empty, ErrorNote, Loading, Pager, useAction, when } from '../ui.tsx';

const PAGE = 25;
type Mode = 'lexical' | 'semantic' | 'hybrid';
interface Filters {
  namespace: string;
  tags: string;
  // Who or what the memories are about: an end user, an agent, a run (exact ids).
  user_id: string;
  agent_id: string;
  run_id: string;
  order: 'updated_desc' | 'newest' | 'oldest' | 'updated_asc';
}
const SCOPES = [
  ['user_id', 'User'],
  ['agent_id', 'Agent'],
  ['run_id', 'Run'],
] as const;
// The filters as a request names them (those left empty left out).
const requested = (f: Filters) => ({
  namespace: f.namespace || undefined,
  tags: tagsOf(f.tags),
  user_id: f.user_id || undefined,
  agent_id: f.agent_id || undefined,
  run_id: f.run_id || undefined,
});
type Shown = { kind: 'list'; memories: Memory[]; total: number | null } | { kind: 'search'; query: string; hits: Hit[] };

const tagsOf = (text: string): string[] | undefined => {
  const tags = text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return tags.length ? tags : undefined;
};

export function Memories() {
  // A project's page links here with ?namespace=<project>.
  const { query } = usePath();
  const [filters, setFilters] = useState<Filters>({
    namespace: query.get('namespace') ?? '',
    tags: '',
    user_id: query.get('user_id') ?? '',
    agent_id: query.get('agent_id') ?? '',
    run_id: query.get('run_id') ?? '',
    order: 'updated_desc',
  });
  const [offset, setOffset] = useState(0);
  const [shown, setShown] = useState<Shown | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  // Whether this server embeds at all (GET /api/memories/embeddings names a model): without one, searches are by words.
  const [meaning, setMeaning] = useState(true);

  useEffect(() => {
    let live = true;
    setError(null);
    client.api.POST('/api/memories/list', { body: { ...requested(filters), order: filters.order, limit: PAGE, offset } }).then(
      ({ data, error: failed }) => {
        if (!live) return;
        if (data) setShown({ kind: 'list', memories: data.memories, total: data.total });
        else setError((failed as { message?: string } | undefined)?.message ?? 'the list could not be loaded');
      },
      (err: unknown) => live && setError(messageOf(err)),
    );
    return () => {
      live = false;
    };
  }, [filters, offset, reload]);

  return (
    <main>
      <h1>Memories</h1>
      <AddMemory onAdded={() => setReload((n) => n + 1)} />
      <Search
        onResults={(query, hits) => setShown({ kind: 'search', query, hits })}
        onError={setError}
        filters={filters}
        meaning={meaning}
        onClear={() => setReload((n) => n + 1)}
      />
      <MeaningStatus reload={reload} onModel={setMeaning} />
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          setOffset(0);
          const text = (name: string) => String(form.get(name)).trim();
          setFilters({
            namespace: text('namespace'),
            tags: String(form.get('tags')),
            user_id: text('user_id'),
            agent_id: text('agent_id'),
            run_id: text('run_id'),
            order: form.get('order') as Filters['order'],
          });
        }}
      >
        <label>
          Project <input name="namespace" defaultValue={filters.namespace} placeholder="any" />
        </label>
        <label>
          Tags (all of) <input name="tags" defaultValue={filters.tags} placeholder="ops, deploy" />
        </label>
        {SCOPES.map(([name, label]) => (
          <label key={name}>
            {label} <input name={name} defaultValue={filters[name]} placeholder="any" />
          </label>
        ))}
        <label>
          Order
          <select name="order" defaultValue={filters.order}>
            <option value="updated_desc">Changed last</option>
            <option value="newest">Newest</option>
            <option value="oldest">Oldest</option>
            <option value="updated_asc">Changed first</option>
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorNote error={error} />
      {shown === null && !error ? <Loading what="memories" /> : null}
      {shown?.kind === 'search' ? (
        <section aria-label="Search results">
          <h2>
            {shown.hits.length} {shown.hits.length === 1 ? 'result' : 'results'} for “{shown.query}”
          </h2>
          <button type="button" class="secondary" onClick={() => setReload((n) => n + 1)}>
            Show all memories
          </button>
          {shown.hits.length === 0 ? (
            <Empty>
              {meaning
                ? 'Nothing matches. Try other words, or the “meaning” mode to find memories that say it differently.'
                : 'Nothing matches. Try other words.'}
            </Empty>
          ) : (
            <MemoryList memories={shown.hits} />
          )}
        </section>
      ) : null}
      {shown?.kind === 'list' ? (
        <section aria-label="All memories">
          {shown.memories.length === 0 ? (
            <Empty>
              {offset > 0
                ? 'No more memories.'
                : Object.values(requested(filters)).some((v) => v !== undefined)
                  ? 'No memories match these filters.'
                  : 'No memories here yet. Add one above, or let an agent save some with an API token.'}
            </Empty>
          ) : (
            <MemoryList memories={shown.memories} />
          )}
          <Pager offset={offset} page={PAGE} shown={shown.memories.length} onOffset={setOffset}>
            <span>
              {shown.memories.length ? `${offset + 1}–${offset + shown.memories.length}` : '0'} of {shown.total ?? 'many'}
            </span>
          </Pager>
        </section>
      ) : null}
    </main>
  );
}

// A list of memories or of search hits; `similarity` shows each hit's score as the cosine it is (memory.tsx).
export function MemoryList({
  memories,
  similarity = false,
}: {
  memories: (Memory & Partial<Pick<Hit, 'score' | 'relevance' | 'found_by' | 'matched_passage' | 'explain'>>)[];
  similarity?: boolean;
}) {
  return (
    <ul class="memories">
      {memories.map((m) => (
        <li key={m.id}>
          <Link to={`/memories/${m.id}`}>{m.content.length > 240 ? `${m.content.slice(0, 240)}…` : m.content}</Link>
          {m.matched_passage ? (
            // A long memory found by meaning through a passage (at most about 900 characters): why it was found. The
            // ellipses say that text comes before or after it, not mere white space.
            <p class="passage" aria-label="Matched passage">
              {m.content.slice(0, m.matched_passage.start).trim() ? '…' : ''}
              {m.matched_passage.text}
              {m.content.slice(m.matched_passage.end).trim() ? '…' : ''}
            </p>
          ) : null}
          <p class="meta">
            <span>{m.namespace}</span>
            {SCOPES.map(([name, label]) =>
              m[name] ? (
                <span class="scope" key={name}>
                  {label.toLowerCase()} {m[name]}
                </span>
              ) : null,
            )}
            {m.tags.map((t) => (
              <span class="tag" key={t}>
                {t}
              </span>
            ))}
            <span>{when(m.updated_at)}</span>
            {similarity && m.score !== undefined ? <span>similarity {m.score.toFixed(2)}</span> : null}
            {m.relevance !== undefined ? <span class="relevance">relevance {Math.round(100 * m.relevance)}%</span> : null}
            {m.found_by ? <span>{whyFound(m.found_by)}</span> : null}
          </p>
          {m.explain ? <Explain explain={m.explain} /> : null}
        </li>
      ))}
    </ul>
  );
}

// Why a hit was found, in plain words.
const whyFound = (lists: string[]): string =>
  lists.length > 1 ? 'matched words and similar meaning' : lists[0] === 'semantic' ? 'similar meaning' : 'matched words';

// A hit's place in each list and what its relevance was computed from (the search's explain).
function Explain({ explain }: { explain: NonNullable<Hit['explain']> }) {
  const place = (p: { rank: number; score: number } | undefined) => (p ? `#${p.rank} (${p.score.toFixed(3)})` : 'not found');
  return (
    <details class="explain">
      <summary>Why</summary>
      <dl>
        <dt>Words (BM25)</dt>
        <dd>
          {place(explain.lexical)}
          {explain.thread_context ? `, +${explain.thread_context.toFixed(3)} from the turns before it` : ''}
        </dd>
        {explain.relevance_inputs.semantic !== null ? (
          <>
            <dt>Meaning (cosine)</dt>
            <dd>
              {place(explain.semantic)}
              {explain.passage ? `, through passage ${explain.passage}` : ''}
            </dd>
          </>
        ) : null}
        {explain.fused !== undefined ? (
          <>
            <dt>Fused</dt>
            <dd>
              {explain.fused.toFixed(3)}
              {explain.thread_terms ? `, +${explain.thread_terms.toFixed(3)} from its thread's words` : ''}
              {explain.speaker_named ? `, +${explain.speaker_named.toFixed(3)} for its speaker, named in the query` : ''}
              {explain.time_answer ? `, +${explain.time_answer.toFixed(2)} for stating a time` : ''}
              {explain.short_message ? `, ${explain.short_message.toFixed(3)} for a short message` : ''}
            </dd>
          </>
        ) : null}
      </dl>
    </details>
  );
}

function AddMemory({ onAdded }: { onAdded: () => void }) {
  const { busy, error, run } = useAction();
  return (
    <form
      class="add"
      aria-label="Add a memory"
      onSubmit={async (event) => {
        event.preventDefault();
        const formElement = event.currentTarget;
        const form = new FormData(formElement);
        await run(async () => {
          // Saved as typed here (`source: dashboard`): the memory's page says so.
          await client.addMemory({
            content: String(form.get('content')),
            namespace: String(form.get('namespace')).trim() || undefined,
            tags: tagsOf(String(form.get('tags'))),
            source: 'dashboard',
          });
          formElement.reset();
          onAdded();
        });
      }}
    >
      <label class="wide">
        New memory <textarea name="content" rows={2} required placeholder="Deploys to production happen on Tuesdays" />
      </label>
      <label>
        Project <input name="namespace" placeholder="default" />
      </label>
      <label>
        Tags <input name="tags" placeholder="ops, deploy" />
      </label>
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : 'Save'}
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

// While memories wait for their vectors (seconds after a save or an edit), what depends on them is read again this often.
export const VECTOR_WAIT_POLL_MS = 3000;

// How much of the org search by meaning covers: a memory is found by its meaning once the worker has embedded it
// (seconds after it is saved), and by its words at once. While some wait, the line is read again.
function MeaningStatus({ reload, onModel }: { reload: number; onModel: (embeds: boolean) => void }) {
  const [text, setText] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      api
        .GET('/api/memories/embeddings')
        .then(unwrap)
        .then(
          ({ model, total, embedded, pending }) => {
            if (!live) return;
            onModel(model !== null);
            if (model === null) setText('Search by meaning is off on this server: memories are found by their words.');
            else if (total === 0) setText('Search by meaning is on: memories are found by their meaning seconds after they are saved.');
            else if (pending === 0)
              setText(`Search by meaning covers all ${total.toLocaleString()} ${total === 1 ? 'memory' : 'memories'}.`);
            else {
              setText(
                `Search by meaning covers ${embedded.toLocaleString()} of ${total.toLocaleString()} memories; the newest are found by their words until they are ready.`,
              );
              timer = setTimeout(read, VECTOR_WAIT_POLL_MS);
            }
          },
          () => live && setText(null),
        );
    void read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [reload]);
  return text ? (
    <p class="muted" role="status" aria-label="Meaning search coverage">
      {text}
    </p>
  ) : null;
}

export type Hit = Awaited<ReturnType<typeof client.searchMemories>>[number];

function Search(props: {
  onResults: (query: string, hits: Hit[]) => void;
  onError: (error: string | null) => void;
  onClear: () => void;
  filters: Filters;
  meaning: boolean;
}) {
  const { onResults, onError, onClear, filters, meaning } = props;
  const { busy, error, run } = useAction();
  useEffect(() => onError(error), [error]);
  return (
    <form
      class="search"
      role="search"
      onSubmit={async (event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        const query = String(form.get('query')).trim();
        if (!query) return onClear();
        await run(async () =>
          onResults(
            query,
            await client.searchMemories({ query, k: 25, mode: form.get('mode') as Mode, explain: true, ...requested(filters) }),
          ),
        );
      }}
    >
      <label class="wide">
        Search <input name="query" type="search" placeholder="when do we ship releases" />
      </label>
      <label>
        By
        {/* Keyed so that learning the server has no model resets the choice to words, the one that can work. */}
        <select name="mode" key={meaning ? 'meaning' : 'words'} defaultValue={meaning ? 'hybrid' : 'lexical'}>
          <option value="hybrid" disabled={!meaning}>
            words and meaning
          </option>
          <option value="lexical">words</option>
          <option value="semantic" disabled={!meaning}>
            meaning
          </option>
        </select>
      </label>
      <button type="submit" disabled={busy}>
        {busy ? 'Searching…' : 'Search'}
      </button>
    </form>
  );
}
