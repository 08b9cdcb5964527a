import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, unwrap } from '../api.ts';
import type { components } from '../../../clients/typescript/src/index.ts';
import { Link, usePath } from '../router.tsx';
import { Empty, ErrorNote, Loading, Pager, when } from '../ui.tsx';

const PAGE = 50;
type Summary = {
  parent_ref: string;
  namespace: string;
  count: number;
  first_at: number;
  last_at: number;
  title: string;
  has_chunks: boolean;
};
type Chunk = { id: string; content: string; metadata: Record<string, unknown> };

// Conversations, newest first: memories sharing metadata.parent_ref (the conversations API sets it to the conversation's
// id; an agent may set it on any save), whatever their number. Memories saved on their own are not conversations: they
// are on the Memories page, and listed here too, each as a thread of one, with ?solo=include.
export function Threads() {
  const { query } = usePath();
  const solo = query.get('solo') === 'include';
  // The page read, kept with the list it belongs to: switching lists starts at their first page.
  const [paged, setPaged] = useState({ solo, offset: 0 });
  const offset = paged.solo === solo ? paged.offset : 0;
  const setOffset = (next: number) => setPaged({ solo, offset: next });
  const [threads, setThreads] = useState<Summary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setThreads(null);
    setError(null);
    api
      .GET('/api/threads', { params: { query: { limit: PAGE, offset, solo: solo ? 'include' : 'exclude' } } })
      .then(unwrap)
      .then(setThreads, (err: unknown) => setError(messageOf(err)));
  }, [offset, solo]);
  return (
    <main>
      <h1>Threads</h1>
      {solo ? (
        <p class="muted">
          Conversations and the memories saved on their own, newest first. <Link to="/threads">Conversations only</Link>
        </p>
      ) : (
        <p class="muted">
          Conversations, newest first: the memories of one conversation share a thread. Memories saved on their own are on the{' '}
          <Link to="/">Memories</Link> page, or <Link to="/threads?solo=include">listed here too</Link>.
        </p>
      )}
      <ErrorNote error={error} />
      {threads === null && !error ? <Loading what="threads" /> : null}
      {threads?.length === 0 ? (
        <Empty>
          {offset > 0
            ? 'No more threads.'
            : 'No conversations yet: memories saved through the conversations API (POST /api/conversations), ' +
              'or with metadata.parent_ref, are grouped here.'}
        </Empty>
      ) : null}
      <ul class="memories">
        {threads?.map((thread) => (
          <li key={thread.parent_ref}>
            <Link to={`/threads/${encodeURIComponent(thread.parent_ref)}`}>{thread.title}</Link>
            <p class="meta">
              <span>{thread.namespace}</span>
              <span>
                {thread.count} {thread.count === 1 ? 'memory' : 'memories'}
              </span>
              <span>last {when(thread.last_at)}</span>
            </p>
          </li>
        ))}
      </ul>
      <Pager offset={offset} page={PAGE} shown={threads?.length ?? 0} onOffset={setOffset} />
    </main>
  );
}

type Extraction = components['schemas']['ConversationExtraction'];
// What each decision of an extraction did, in words.
const DECIDED = { ADD: 'Learnt', UPDATE: 'Updated', DELETE: 'No longer true', NONE: 'Already known' } as const;

export function Thread({ parentRef }: { parentRef: string }) {
  const [chunks, setChunks] = useState<Chunk[] | null>(null);
  const [extractions, setExtractions] = useState<Extraction[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api
      .GET('/api/threads/{ref}', { params: { path: { ref: parentRef } } })
      .then(unwrap)
      .then(
        (answer) => setChunks(answer.chunks),
        (err: unknown) => setError(messageOf(err)),
      );
    api
      .GET('/api/conversations/extractions', { params: { query: { conversation_id: parentRef } } })
      .then(unwrap)
      .then(
        (answer) => setExtractions(answer.extractions),
        (err: unknown) => setError(messageOf(err)),
      );
  }, [parentRef]);
  return (
    <main>
      <p>
        <Link to="/threads">← Threads</Link>
      </p>
      <h1>Thread {parentRef}</h1>
      <ErrorNote error={error} />
      {chunks === null && !error ? <Loading what="the thread" /> : null}
      <ol class="memories">
        {chunks?.map((chunk) => (
          <li key={chunk.id}>
            <Link to={`/memories/${chunk.id}`}>{chunk.content}</Link>
          </li>
        ))}
      </ol>
      {extractions.length > 0 ? (
        <section aria-label="What was learnt">
          <h2>What was learnt</h2>
          {extractions.map((e) => (
            <article key={e.id}>
              <p class="muted">
                {e.status === 'processed'
                  ? `Read ${when(e.processed_at ?? e.created_at)}`
                  : e.status === 'queued'
                    ? 'Waiting to be read'
                    : `${e.status === 'failed' ? 'Failed' : 'Skipped'}: ${e.reason}`}
              </p>
              <ul class="decisions">
                {e.decisions.map((d, i) => (
                  <li key={i}>
                    <strong>{DECIDED[d.action]}</strong> {d.memory_id ? <Link to={`/memories/${d.memory_id}`}>{d.fact}</Link> : d.fact}
                    {d.target_id && d.action !== 'NONE' ? (
                      <>
                        {' '}
                        (replaces <Link to={`/memories/${d.target_id}`}>an earlier memory</Link>)
                      </>
                    ) : null}
                  </li>
                ))}
              </ul>
            </article>
          ))}
        </section>
      ) : null}
    </main>
  );
}
