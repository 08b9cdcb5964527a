import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { client, messageOf, MemoryServiceError, type Memory } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { ErrorNote, Loading, when } from '../ui.tsx';
import { MemoryList, VECTOR_WAIT_POLL_MS, type Hit } from './memories.tsx';

// What the service records of each content edit (the previous text itself is not kept).
interface Revision {
  at: number;
  prev_content_len: number;
}

export function MemoryPage({ id }: { id: string }) {
  const [memory, setMemory] = useState<Memory | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  useEffect(() => {
    client.getMemory(id).then(setMemory, (err: unknown) => setError(messageOf(err)));
  }, [id]);
  if (!memory) {
    return (
      <main>
        <p>
          <Link to="/">← Memories</Link>
        </p>
        {error ? <ErrorNote error={error} /> : <Loading what="the memory" />}
      </main>
    );
  }
  const history = (Array.isArray(memory.metadata.history) ? memory.metadata.history : []) as Revision[];
  const metadata = Object.fromEntries(Object.entries(memory.metadata).filter(([key]) => key !== 'history'));
  return (
    <main>
      <p>
        <Link to="/">← Memories</Link>
      </p>
      <h1>Memory</h1>
      {editing ? (
        <form
          aria-label="Edit the memory"
          onSubmit={async (event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            setError(null);
            try {
              const tags = String(form.get('tags')).split(',').map((t) => t.trim()).filter(Boolean);
              setMemory(await client.updateMemory(memory.id, { content: String(form.get('content')), tags }));
              setEditing(false);
            } catch (err) {
              setError(messageOf(err));
            }
          }}
        >
          <label class="wide">
            Content <textarea name="content" rows={6} required defaultValue={memory.content} />
          </label>
          <label>
            Tags <input name="tags" defaultValue={memory.tags.join(', ')} />
          </label>
          <button type="submit">Save</button>
          <button type="button" class="secondary" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <article>
          <p class="content">{memory.content}</p>
          <dl class="facts">
            <dt>Project</dt>
            <dd>{memory.namespace}</dd>
            <dt>Tags</dt>
            <dd>{memory.tags.length ? memory.tags.join(', ') : 'none'}</dd>
            {(['user_id', 'agent_id', 'run_id'] as const).map((scope) =>
              memory[scope] ? (
                <Fragment key={scope}>
                  <dt>{{ user_id: 'User', agent_id: 'Agent', run_id: 'Run' }[scope]}</dt>
                  <dd>{memory[scope]}</dd>
                </Fragment>
              ) : null,
            )}
            <dt>Source</dt>
            <dd>{memory.source}</dd>
            <dt>Happened</dt>
            <dd>{when(memory.occurred_at)}</dd>
            <dt>Created</dt>
            <dd>{when(memory.created_at)}</dd>
            <dt>Changed</dt>
            <dd>{when(memory.updated_at)}</dd>
          </dl>
          <h2>Metadata</h2>
          <pre>{JSON.stringify(metadata, null, 2)}</pre>
          <h2>History</h2>
          {history.length === 0 ? (
            <p class="muted">Never edited.</p>
          ) : (
            <ol class="history">
              {history.map((revision, i) => (
                <li key={i}>
                  Content changed {when(revision.at)} (it had {revision.prev_content_len} characters before)
                </li>
              ))}
            </ol>
          )}
          <div class="actions">
            <button type="button" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button
              type="button"
              class="danger"
              onClick={async () => {
                if (!confirm('Delete this memory? This cannot be undone.')) return;
                try {
                  await client.deleteMemory(memory.id);
                  navigate('/');
                } catch (err) {
                  setError(messageOf(err));
                }
              }}
            >
              Delete
            </button>
          </div>
        </article>
      )}
      <ErrorNote error={error} />
      <SimilarMemories id={memory.id} version={memory.updated_at} />
    </main>
  );
}

const SIMILAR_SHOWN = 5;

// The memories nearest in meaning to this one (GET /api/memories/:id/similar): what else is known about its
// subject, or restatements worth merging. A memory saved or edited seconds ago has no vector yet: asked again until it
// has. Absent on a server without an embedding model.
function SimilarMemories({ id, version }: { id: string; version: number }) {
  const [hits, setHits] = useState<Hit[] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [off, setOff] = useState(false);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      client.similarMemories(id, { k: SIMILAR_SHOWN }).then(
        (found) => {
          if (!live) return;
          setNote(null);
          setHits(found);
        },
        (err: unknown) => {
          if (!live) return;
          const code = err instanceof MemoryServiceError ? err.error : null;
          if (code === 'embeddings_unavailable') setOff(true);
          else if (code === 'embedding_pending') {
            setNote('Its meaning is still being read: similar memories show in a few seconds.');
            timer = setTimeout(read, VECTOR_WAIT_POLL_MS);
          } else setNote(messageOf(err));
        },
      );
    setHits(null);
    void read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, version]);
  if (off) return null;
  return (
    <section aria-label="Similar in meaning">
      <h2>Similar in meaning</h2>
      {note ? <p class="muted">{note}</p> : hits === null ? <Loading what="similar memories" /> : hits.length === 0 ? <p class="muted">No other memories.</p> : <MemoryList memories={hits} similarity />}
    </section>
  );
}
