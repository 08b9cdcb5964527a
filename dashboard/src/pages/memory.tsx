import { Fragment, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { operations } from '../../../clients/typescript/src/index.ts';
import { api, client, messageOf, MemoryServiceError, unwrap, type Memory } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { ErrorNote, Loading, when } from '../ui.tsx';
import { MemoryList, VECTOR_WAIT_POLL_MS, type Hit } from './memories.tsx';

// What the service records of each content edit (the previous text itself is not kept); a memory an extraction
// wrote in place of another says which (`supersedes`).
interface Revision {
  at: number;
  prev_content_len?: number;
  supersedes?: string;
}

// The sources the service and this dashboard save with, in words; any other is shown as its caller spelt it.
const SOURCES: Record<string, string> = {
  dashboard: 'Typed in the dashboard',
  agent: 'Saved through the API',
  conversation: 'A message of a conversation',
  extraction: 'Learnt from a conversation',
  consolidation: 'Merged from two memories by consolidation',
};
const SCOPE_LABELS = { user_id: 'User', agent_id: 'Agent', run_id: 'Run' } as const;

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
              const tags = String(form.get('tags'))
                .split(',')
                .map((t) => t.trim())
                .filter(Boolean);
              // Only what was changed is sent, so that the history names it.
              const retagged = tags.join('\n') !== memory.tags.join('\n');
              const content = String(form.get('content'));
              const patch = { ...(content !== memory.content ? { content } : {}), ...(retagged ? { tags } : {}) };
              if (Object.keys(patch).length) setMemory(await client.updateMemory(memory.id, patch));
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
            <dt>Id</dt>
            <dd>
              <CopyId id={memory.id} />
            </dd>
            <dt>Project</dt>
            <dd>
              <Link to={`/?namespace=${encodeURIComponent(memory.namespace)}`}>{memory.namespace}</Link>
            </dd>
            <dt>Tags</dt>
            <dd>{memory.tags.length ? memory.tags.join(', ') : 'none'}</dd>
            {(['user_id', 'agent_id', 'run_id'] as const).map((scope) =>
              memory[scope] ? (
                <Fragment key={scope}>
                  <dt>{SCOPE_LABELS[scope]}</dt>
                  <dd>
                    <Link to={`/?${scope}=${encodeURIComponent(memory[scope]!)}`}>{memory[scope]}</Link>
                  </dd>
                </Fragment>
              ) : null,
            )}
            <dt>Source</dt>
            <dd>
              <Source memory={memory} />
            </dd>
            {memory.source_ref ? (
              <>
                <dt>Source reference</dt>
                <dd>{memory.source_ref}</dd>
              </>
            ) : null}
            <dt>Happened</dt>
            <dd>{when(memory.occurred_at)}</dd>
            <dt>Created</dt>
            <dd>{when(memory.created_at)}</dd>
            <dt>Changed</dt>
            <dd>{when(memory.updated_at)}</dd>
          </dl>
          <h2>Metadata</h2>
          <pre>{JSON.stringify(metadata, null, 2)}</pre>
          <History memory={memory} />
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
      {note ? (
        <p class="muted">{note}</p>
      ) : hits === null ? (
        <Loading what="similar memories" />
      ) : hits.length === 0 ? (
        <p class="muted">No other memories.</p>
      ) : (
        <MemoryList memories={hits} similarity />
      )}
    </section>
  );
}

// The memory's id, to copy into a call or a message.
function CopyId({ id }: { id: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <>
      <code>{id}</code>{' '}
      <button
        type="button"
        class="secondary"
        aria-label="Copy the id"
        onClick={async () => {
          await navigator.clipboard.writeText(id).catch(() => undefined);
          setCopied(true);
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </>
  );
}

// Where the memory came from, in words, with the source as it was saved; a message of a conversation links its thread.
function Source({ memory }: { memory: Memory }) {
  const words = SOURCES[memory.source];
  const thread = memory.source === 'conversation' && memory.metadata.parent_ref !== undefined ? String(memory.metadata.parent_ref) : null;
  return (
    <>
      {words ? thread ? <Link to={`/threads/${encodeURIComponent(thread)}`}>{words}</Link> : words : 'Saved as'}{' '}
      <span class="muted">
        ({words ? 'source ' : ''}
        <code>{memory.source}</code>)
      </span>
    </>
  );
}

type HistoryEvent = operations['getApiMemoriesIdHistory']['responses'][200]['content']['application/json']['events'][number];

// What a memory.update changed, by the fields of the call.
const FIELDS: Record<string, string> = {
  content: 'content',
  tags: 'tags',
  namespace: 'project',
  metadata: 'metadata',
  userId: 'user',
  agentId: 'agent',
  runId: 'run',
  occurredAt: 'event time',
};
const listed = (words: string[]): string => (words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);
const EXTRACTED: Record<string, string> = {
  ADD: 'Learnt from a conversation',
  UPDATE: 'Updated from a conversation',
  DELETE: 'Found no longer true in a conversation',
  NONE: 'Confirmed by a conversation',
};

// What happened, in words: the action, then who did it and with what.
function whatHappened(event: HistoryEvent): string {
  switch (event.action) {
    case 'memory.save':
      return 'Saved';
    case 'memory.update': {
      const fields = Array.isArray(event.details.fields) ? (event.details.fields as string[]).map((f) => FIELDS[f] ?? f) : [];
      return fields.length ? `Edited its ${listed(fields)}` : 'Edited';
    }
    case 'memory.synopsis':
      return 'Summarised';
    case 'memory.facts':
      return 'Its facts listed';
    case 'memory.extract':
      return EXTRACTED[String(event.details.decision)] ?? 'Read by an extraction';
    case 'memory.delete':
      return 'Deleted';
    default:
      return event.action;
  }
}

function byWhom(event: HistoryEvent) {
  const who = event.actor ? event.actor.name : event.actor_user_id ? 'a former member' : 'the service';
  const how = event.token
    ? event.token.kind === 'session'
      ? ' in the dashboard'
      : ` with the API token “${event.token.name ?? 'unnamed'}”`
    : '';
  return `by ${who}${how}`;
}

// The memory's history in words: its audit trail (GET /api/memories/:id/history, oldest first, a page at a time) by
// name, each content edit with the length of the text it replaced; edits older than the audit log keeps are listed
// from the memory's own record of them.
function History({ memory }: { memory: Memory }) {
  const [events, setEvents] = useState<HistoryEvent[] | null>(null);
  const [after, setAfter] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const read = (from: string | null, shown: HistoryEvent[]) =>
    api
      .GET('/api/memories/{id}/history', { params: { path: { id: memory.id }, query: from ? { after: from } : {} } })
      .then(unwrap)
      .then(
        (page) => {
          setEvents([...shown, ...page.events]);
          setAfter(page.next_after);
        },
        (err: unknown) => setError(messageOf(err)),
      );
  useEffect(() => {
    setError(null);
    void read(null, []);
  }, [memory.id, memory.updated_at]);
  const edits = (Array.isArray(memory.metadata.history) ? memory.metadata.history : []) as Revision[];
  // Each content edit goes with the audit row of the same update (written in the same transaction, so within seconds).
  const paired = new Set<Revision>();
  const editOf = (event: HistoryEvent): Revision | undefined => {
    if (event.action !== 'memory.update') return undefined;
    const edit = edits.find((e) => !paired.has(e) && e.prev_content_len !== undefined && Math.abs(e.at - event.created_at) < 60_000);
    if (edit) paired.add(edit);
    return edit;
  };
  const lines: { at: number; key: string; text: ComponentChildren }[] = (events ?? []).map((event) => {
    const edit = editOf(event);
    return {
      at: event.created_at,
      key: event.id,
      text: `${whatHappened(event)} ${byWhom(event)}${edit ? ` (the text it replaced had ${edit.prev_content_len} characters)` : ''}`,
    };
  });
  if (events !== null && after === null) {
    for (const edit of edits) {
      if (paired.has(edit)) continue;
      if (edit.prev_content_len !== undefined)
        lines.push({ at: edit.at, key: `edit-${edit.at}`, text: `Content changed (it had ${edit.prev_content_len} characters before)` });
      else if (edit.supersedes)
        lines.push({
          at: edit.at,
          key: `edit-${edit.at}`,
          text: (
            <>
              Written in place of <Link to={`/memories/${edit.supersedes}`}>an earlier memory</Link>
            </>
          ),
        });
    }
    lines.sort((a, b) => a.at - b.at);
  }
  return (
    <section aria-label="History">
      <h2>History</h2>
      <ErrorNote error={error} />
      {events === null && !error ? <Loading what="the history" /> : null}
      {events !== null && lines.length === 0 ? <p class="muted">Nothing recorded yet.</p> : null}
      {lines.length ? (
        <ol class="history">
          {lines.map((line) => (
            <li key={line.key}>
              {line.text}, {when(line.at)}
            </li>
          ))}
        </ol>
      ) : null}
      {after ? (
        <button type="button" class="secondary" onClick={() => void read(after, events ?? [])}>
          Show later events
        </button>
      ) : null}
    </section>
  );
}
