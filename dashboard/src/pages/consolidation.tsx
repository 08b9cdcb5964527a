import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { api, client, messageOf, unwrap, type Memory } from '../api.ts';
import { Link } from '../router.tsx';
import { Empty, ErrorNote, Loading, useAction } from '../ui.tsx';

type Proposal = components['schemas']['ConsolidationProposal'];
type Status = Proposal['status'] | 'all';
const POLL_MS = 1000;

// Consolidation: find memories that say the same thing, contradict each other or went stale; review
// each proposal; merge the approved ones (an LLM writes the merged memory; the originals are superseded).
export function Consolidation() {
  const [status, setStatus] = useState<Status>('pending');
  const [kind, setKind] = useState<Proposal['kind'] | ''>('');
  const [proposals, setProposals] = useState<Proposal[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [report, setReport] = useState<string | null>(null);
  const detect = useAction();
  const load = () =>
    api
      .GET('/api/consolidate', { params: { query: { status, ...(kind ? { kind } : {}), limit: 50 } } })
      .then(unwrap)
      .then(
        (answer) => setProposals(answer.proposals),
        (err: unknown) => setError(messageOf(err)),
      );
  useEffect(() => void load(), [status, kind]);
  return (
    <main>
      <h1>Consolidation</h1>
      <form
        class="add"
        aria-label="Find proposals"
        onSubmit={async (event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          const namespace = String(form.get('namespace')).trim();
          await detect.run(async () => {
            const found = (await unwrap(
              await api.POST('/api/consolidate', {
                body: { action: 'detect', threshold: Number(form.get('threshold')), ...(namespace ? { namespace } : {}) },
              }),
            )) as {
              scanned: number;
              proposalsCreated: number;
            };
            setReport(`Scanned ${found.scanned} memories: ${found.proposalsCreated} new proposals.`);
            await load();
          });
        }}
      >
        <label>
          Project <input name="namespace" placeholder="all" />
        </label>
        <label>
          Similarity at least <input name="threshold" type="number" min="0.05" max="1" step="0.05" defaultValue="0.8" />
        </label>
        <button type="submit" disabled={detect.busy}>
          {detect.busy ? 'Looking…' : 'Find proposals'}
        </button>
        <ErrorNote error={detect.error} upgradeUrl={detect.upgradeUrl} />
        {report ? (
          <p role="status" class="muted">
            {report}
          </p>
        ) : null}
      </form>
      <form class="filters" aria-label="Show">
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.currentTarget.value as Status)}>
            {(['pending', 'approved', 'rejected', 'merged', 'all'] as const).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select value={kind} onChange={(event) => setKind(event.currentTarget.value as Proposal['kind'] | '')}>
            <option value="">any</option>
            <option value="duplicate">duplicate</option>
            <option value="contradiction">contradiction</option>
            <option value="stale">stale</option>
          </select>
        </label>
      </form>
      <ErrorNote error={error} />
      {proposals === null && !error ? <Loading what="proposals" /> : null}
      {proposals?.length === 0 ? <Empty>No {status === 'all' ? '' : status} proposals. “Find proposals” scans the memories.</Empty> : null}
      <ul class="memories">
        {proposals?.map((proposal) => (
          <ProposalItem key={proposal.id} initial={proposal} />
        ))}
      </ul>
    </main>
  );
}

function ProposalItem({ initial }: { initial: Proposal }) {
  const [proposal, setProposal] = useState(initial);
  const [memories, setMemories] = useState<(Memory | null)[]>([]);
  const action = useAction();
  useEffect(() => {
    Promise.all([proposal.memory_a_id, proposal.memory_b_id].map((id) => client.getMemory(id).catch(() => null))).then(setMemories);
  }, [proposal.memory_a_id, proposal.memory_b_id]);
  // While a merge runs (here or started elsewhere), its state is read again until it is done or failed.
  useEffect(() => {
    if (proposal.merge_state !== 'running') return;
    const timer = setInterval(
      () =>
        void api
          .GET('/api/consolidate/{id}', { params: { path: { id: proposal.id } } })
          .then(unwrap)
          .then(setProposal, () => undefined),
      POLL_MS,
    );
    return () => clearInterval(timer);
  }, [proposal.merge_state]);
  const review = (decision: 'approved' | 'rejected') =>
    action.run(async () =>
      setProposal(
        (await unwrap(await api.POST('/api/consolidate', { body: { action: 'review', id: proposal.id, decision } }))) as Proposal,
      ),
    );
  return (
    <li aria-label={`${proposal.kind} proposal`}>
      <p class="meta">
        <span class="tag">{proposal.kind}</span>
        <span>similarity {proposal.score.toFixed(2)}</span>
        <span>{proposal.status}</span>
      </p>
      <ol>
        {memories.map((memory, i) => (
          <li key={i}>
            {memory ? <Link to={`/memories/${memory.id}`}>{memory.content}</Link> : <span class="muted">(no longer there)</span>}
          </li>
        ))}
      </ol>
      {proposal.merge_state === 'running' ? (
        <p role="status">Merging…</p>
      ) : proposal.merge_state === 'failed' ? (
        <p class="error" role="alert">
          The merge failed: {proposal.merge_error}
        </p>
      ) : null}
      {proposal.merged_memory_id ? (
        <p role="status">
          Merged into <Link to={`/memories/${proposal.merged_memory_id}`}>the new memory</Link>.
        </p>
      ) : null}
      <div class="actions">
        {proposal.status === 'pending' || proposal.status === 'rejected' ? (
          <button type="button" onClick={() => void review('approved')} disabled={action.busy}>
            Approve
          </button>
        ) : null}
        {proposal.status === 'pending' || proposal.status === 'approved' ? (
          <button type="button" class="secondary" onClick={() => void review('rejected')} disabled={action.busy}>
            Reject
          </button>
        ) : null}
        {proposal.status === 'approved' && proposal.merge_state !== 'running' ? (
          <button
            type="button"
            onClick={() =>
              void action.run(async () => {
                setProposal({ ...proposal, merge_state: 'running', merge_error: null });
                try {
                  await unwrap(await api.POST('/api/consolidate', { body: { action: 'merge', id: proposal.id } }));
                } finally {
                  setProposal(await unwrap(await api.GET('/api/consolidate/{id}', { params: { path: { id: proposal.id } } })));
                }
              })
            }
            disabled={action.busy}
          >
            Merge
          </button>
        ) : null}
      </div>
      <ErrorNote error={action.error} upgradeUrl={action.upgradeUrl} />
    </li>
  );
}
