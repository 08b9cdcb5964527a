import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readCounters } from '../../domain/counters.ts';
import { query, sql } from '../../domain/sql.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer, type LlmCall } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

const llm = new LlmServer();
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  await llm.start();
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  a = await signUp(stack.api);
  await setPlan(a.org.id, 'team');
});
afterAll(async () => {
  await stack?.close();
  await llm.close();
});
beforeEach(() => llm.reset());

const setPlan = (orgId: string, plan: string) => query(stack.orm.em.fork(), sql`update orgs set plan = ${plan} where id = ${orgId}`);
const consolidate = (body: Record<string, unknown>, token = a.token) => stack.api.post('/api/consolidate', { token, body });
const proposals = async (qs = '', token = a.token) =>
  (await stack.api.get(`/api/consolidate${qs}`, { token })).body.proposals as Proposal[];
const save = async (content: string, namespace: string, token = a.token) =>
  (await stack.api.post('/api/memories', { token, body: { content, namespace, tags: [namespace] } })).body.id as string;
const mergedAs = (merged: string) => (call: LlmCall) =>
  call.tool?.name === 'merge_memories' ? { merged, had_conflict: false } : undefined;

interface Proposal {
  id: string;
  kind: string;
  memory_a_id: string;
  memory_b_id: string;
  score: number;
  status: string;
  note: string | null;
  merge_state: string | null;
  merge_error: string | null;
  merged_memory_id: string | null;
}

// Four memories per project: a duplicate pair, a stale pair (the older restated by a newer, longer one),
// a contradicting pair, and one unrelated memory.
async function seed(namespace: string, token = a.token) {
  const dupA = await save('The deploy pipeline for the billing service runs on GitHub Actions and takes twelve minutes.', namespace, token);
  const dupB = await save(
    'The deploy pipeline for the billing service runs on GitHub Actions, and takes twelve minutes!',
    namespace,
    token,
  );
  const older = await save('Alice owns the search ranking project.', namespace, token);
  const newer = await save('Alice owns the search ranking project and the indexing work since March.', namespace, token);
  const coffeeA = await save('The office coffee machine is on the third floor near the kitchen.', namespace, token);
  const coffeeB = await save('The office coffee machine is no longer on the third floor; it moved to the lobby.', namespace, token);
  await save('Lunch is served at noon in the cafeteria.', namespace, token);
  return { dupA, dupB, older, newer, coffeeA, coffeeB };
}

// A project's counters (the memory count and total length that hybrid's lexical list takes as BM25's N and
// average length) against its memories that are not merged away.
async function expectCounted(namespace: string) {
  const [live] = await query(
    stack.orm.em.fork(),
    sql<{ id: string; n: number; total: number }>`select n.id, count(m.id)::int as n, coalesce(sum(m.doc_len), 0)::int as total
      from namespaces n left join memories m on m.namespace_id = n.id and m.superseded_by is null
      where n.org_id = ${a.org.id} and n.name = ${namespace} group by n.id`,
  );
  const counters = await readCounters(stack.orm.em.fork(), a.org.id, live!.id);
  expect([counters.get('memories'), counters.get('doc_len')]).toEqual([live!.n, live!.total]);
}

const pairOf = (p: Proposal) => [p.memory_a_id, p.memory_b_id].sort().join('/');
const pair = (x: string, y: string) => [x, y].sort().join('/');

describe('consolidation', () => {
  it('detects duplicates, stale memories and contradictions within a project, and counts known pairs', async () => {
    const ids = await seed('detect');
    const res = await consolidate({ action: 'detect', namespace: 'detect' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ scanned: 7, proposalsCreated: 3, alreadyKnown: 0 });
    const found = await proposals('?status=pending');
    const byPair = new Map(found.map((p) => [pairOf(p), p]));
    expect(byPair.get(pair(ids.dupA, ids.dupB))).toMatchObject({ kind: 'duplicate', status: 'pending', score: 1 });
    expect(byPair.get(pair(ids.older, ids.newer))).toMatchObject({ kind: 'stale', note: expect.stringContaining(ids.older) });
    expect(byPair.get(pair(ids.coffeeA, ids.coffeeB))).toMatchObject({ kind: 'contradiction' });
    expect(llm.calls.map((c) => c.tool?.name)).toEqual(['check_contradiction']);

    const again = await consolidate({ action: 'detect', namespace: 'detect' });
    expect(again.body).toEqual({ scanned: 7, proposalsCreated: 0, alreadyKnown: 3 });
    // The project's name stays out of the workflow id, which Temporal stores in the clear.
    const runs = await eventually(async () => {
      const ids: string[] = [];
      for await (const run of stack.temporal.workflow.list({ query: `WorkflowType = "consolidationDetectWorkflow"` }))
        ids.push(run.workflowId);
      const mine = ids.filter((id) => id.startsWith(`consolidation-detect-${a.org.id}-`));
      return mine.length > 0 && mine;
    });
    expect(runs.every((id) => /^consolidation-detect-[0-9a-f-]{36}-p[0-9a-f]{16}-0\.8$/.test(id))).toBe(true);
    expect(llm.calls).toHaveLength(1);
    expect((await proposals('?kind=duplicate')).map(pairOf)).toContain(pair(ids.dupA, ids.dupB));
    expect((await proposals('?kind=stale')).every((p) => p.kind === 'stale')).toBe(true);
  });

  it('pairs every copy of a memory saved many times with the oldest copy', async () => {
    const copies: string[] = [];
    for (let i = 0; i < 30; i++) copies.push(await save('The user prefers dark mode in every editor.', 'copies'));
    await save('The user prefers light mode for slides.', 'copies');
    const res = await consolidate({ action: 'detect', namespace: 'copies' });
    expect(res.body).toMatchObject({ scanned: 31, proposalsCreated: 29 });
    const found = (await proposals('?kind=duplicate&limit=500')).filter(
      (p) => copies.includes(p.memory_a_id) || copies.includes(p.memory_b_id),
    );
    expect(found).toHaveLength(29);
    expect(found.every((p) => p.memory_a_id === copies[0] || p.memory_b_id === copies[0])).toBe(true);
  });

  it('never pairs memories of different projects', async () => {
    await save('Kubernetes nodes autoscale between three and nine replicas overnight.', 'left');
    await save('Kubernetes nodes autoscale between three and nine replicas overnight.', 'right');
    const res = await consolidate({ action: 'detect' });
    expect(res.status).toBe(200);
    expect(res.body.proposalsCreated).toBe(0);
    expect((await consolidate({ action: 'detect', namespace: 'no-such-project' })).body).toEqual({
      scanned: 0,
      proposalsCreated: 0,
      alreadyKnown: 0,
    });
  });

  it('records review decisions, merges approved proposals and supersedes the originals', async () => {
    const ids = await seed('merge');
    await consolidate({ action: 'detect', namespace: 'merge' });
    const dup = (await proposals()).find((p) => pairOf(p) === pair(ids.dupA, ids.dupB))!;

    const early = await consolidate({ action: 'merge', id: dup.id });
    expect(early.status).toBe(409);
    expect(early.body.error).toBe('proposal_not_approved');

    const rejected = await consolidate({ action: 'review', id: dup.id, decision: 'rejected', note: 'not sure' });
    expect(rejected.body).toMatchObject({ id: dup.id, status: 'rejected', note: 'not sure', reviewed_at: expect.any(Number) });
    const approved = await consolidate({ action: 'review', id: dup.id, decision: 'approved' });
    expect(approved.body).toMatchObject({ status: 'approved', note: 'not sure' });

    const text = 'The deploy pipeline for the billing service runs on GitHub Actions and takes twelve minutes.';
    llm.respond(mergedAs(text));
    const merged = await consolidate({ action: 'merge', id: dup.id });
    expect(merged.status).toBe(200);
    expect(merged.body).toEqual({ proposal_id: dup.id, merged_memory_id: expect.any(String), merged_content: text, had_conflict: false });
    expect(llm.calls.filter((c) => c.tool?.name === 'merge_memories').map((c) => c.protocol)).toEqual(['anthropic']);
    const newId = merged.body.merged_memory_id as string;

    const proposal = (await stack.api.get(`/api/consolidate/${dup.id}`, { token: a.token })).body;
    expect(proposal).toMatchObject({ status: 'merged', merged_memory_id: newId, merge_state: null });
    const memory = (await stack.api.get(`/api/memories/${newId}`, { token: a.token })).body;
    expect(memory).toMatchObject({
      content: text,
      namespace: 'merge',
      source: 'consolidation',
      metadata: { consolidation: { proposal_id: dup.id, merged_from: [ids.dupA, ids.dupB].sort() } },
    });
    expect(memory.tags).toEqual(expect.arrayContaining(['merge', 'merged-from-consolidation']));
    expect(memory.superseded_by).toBeUndefined();
    for (const original of [ids.dupA, ids.dupB]) {
      expect((await stack.api.get(`/api/memories/${original}`, { token: a.token })).body.superseded_by).toBe(newId);
      const edit = await stack.api.patch(`/api/memories/${original}`, { token: a.token, body: { tags: ['x'] } });
      expect(edit.status).toBe(409);
      expect(edit.body.error).toBe('memory_superseded');
    }

    const hits = (
      await stack.api.post('/api/memories/search', {
        token: a.token,
        body: { query: 'deploy pipeline billing GitHub Actions', namespace: 'merge' },
      })
    ).body.hits as { id: string }[];
    expect(hits.map((h) => h.id)).toEqual([newId]);
    const listed = (await stack.api.post('/api/memories/list', { token: a.token, body: { namespace: 'merge', limit: 500 } })).body;
    expect(listed.memories.map((m: { id: string }) => m.id)).not.toContain(ids.dupA);
    expect(listed.total).toBe(6);
    const everything = (
      await stack.api.post('/api/memories/list', { token: a.token, body: { namespace: 'merge', limit: 500, include_superseded: true } })
    ).body;
    expect(everything.total).toBe(8);
    const project = (
      (await stack.api.get('/api/projects', { token: a.token })).body.projects as { name: string; memory_count: number }[]
    ).find((p) => p.name === 'merge');
    expect(project?.memory_count).toBe(6);
    await expectCounted('merge');

    const repeat = await consolidate({ action: 'merge', id: dup.id });
    expect(repeat.body).toEqual(merged.body);
    const review = await consolidate({ action: 'review', id: dup.id, decision: 'rejected' });
    expect(review.status).toBe(409);

    const deleted = await stack.api.delete(`/api/memories/${ids.dupA}`, { token: a.token });
    expect(deleted.status).toBe(204);
    expect((await stack.api.post('/api/memories/list', { token: a.token, body: { namespace: 'merge' } })).body.total).toBe(6);
    await expectCounted('merge');
  });

  it('records a failed merge for the dashboard and lets it be asked again', async () => {
    const ids = await seed('retry');
    await consolidate({ action: 'detect', namespace: 'retry' });
    const stale = (await proposals()).find((p) => pairOf(p) === pair(ids.older, ids.newer))!;
    await consolidate({ action: 'review', id: stale.id, decision: 'approved' });
    llm.down('anthropic', true);
    llm.down('openai', true);
    const failed = await consolidate({ action: 'merge', id: stale.id });
    expect(failed.status).toBe(503);
    expect(failed.body.error).toBe('llm_unavailable');
    const polled = (await stack.api.get(`/api/consolidate/${stale.id}`, { token: a.token })).body;
    expect(polled).toMatchObject({ status: 'approved', merge_state: 'failed', merge_error: expect.stringContaining('merge_memories') });
    expect((await stack.api.get(`/api/memories/${ids.older}`, { token: a.token })).body.superseded_by).toBeUndefined();

    llm.reset();
    llm.respond(() => LlmServer.raw('{"merged": '));
    const malformed = await consolidate({ action: 'merge', id: stale.id });
    expect(malformed.status).toBe(502);
    expect(malformed.body.error).toBe('llm_malformed_output');

    llm.reset();
    llm.respond(mergedAs('Alice owns the search ranking project and the indexing work since March.'));
    const ok = await consolidate({ action: 'merge', id: stale.id });
    expect(ok.status).toBe(200);
    expect((await stack.api.get(`/api/consolidate/${stale.id}`, { token: a.token })).body).toMatchObject({
      status: 'merged',
      merge_state: null,
      merge_error: null,
    });
  });

  it('joins a merge that is already running instead of starting a second one, and shows it running', async () => {
    const ids = await seed('join');
    await consolidate({ action: 'detect', namespace: 'join' });
    const dup = (await proposals()).find((p) => pairOf(p) === pair(ids.dupA, ids.dupB))!;
    await consolidate({ action: 'review', id: dup.id, decision: 'approved' });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    llm.respond(async (call) => {
      await gate;
      return mergedAs('joined merge')(call);
    });
    const first = consolidate({ action: 'merge', id: dup.id });
    await eventually(async () => (await stack.api.get(`/api/consolidate/${dup.id}`, { token: a.token })).body.merge_state === 'running');
    const second = consolidate({ action: 'merge', id: dup.id });
    await eventually(async () => llm.calls.length > 0);
    release();
    const [one, two] = await Promise.all([first, second]);
    expect(one.status).toBe(200);
    expect(two.body).toEqual(one.body);
    expect(llm.calls.filter((c) => c.tool?.name === 'merge_memories')).toHaveLength(1);
  });

  it('needs a paid plan to detect, and a paid plan or a BYOK key to merge', async () => {
    const b = await signUp(stack.api);
    const refused = await consolidate({ action: 'detect' }, b.token);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ error: 'plan_required', upgrade_url: expect.any(String) });

    await setPlan(b.org.id, 'personal');
    const ids = await seed('byok', b.token);
    await consolidate({ action: 'detect', namespace: 'byok' }, b.token);
    const dup = (await proposals('', b.token)).find((p) => pairOf(p) === pair(ids.dupA, ids.dupB))!;
    await consolidate({ action: 'review', id: dup.id, decision: 'approved' }, b.token);
    await setPlan(b.org.id, 'free');
    const noKey = await consolidate({ action: 'merge', id: dup.id }, b.token);
    expect(noKey.status).toBe(402);
    expect(noKey.body.error).toBe('plan_required');

    llm.respond(mergedAs('merged by my own key'));
    const withKey = await consolidate({ action: 'merge', id: dup.id, byok_alternate_key: 'sk-callers-openai-key' }, b.token);
    expect(withKey.status).toBe(200);
    expect(llm.calls.filter((c) => c.tool?.name === 'merge_memories').map((c) => [c.protocol, c.apiKey])).toEqual([
      ['openai', 'sk-callers-openai-key'],
    ]);
    const escrow = await query(
      stack.orm.em.fork(),
      sql<{ n: string }>`select count(*) as n from llm_key_escrow where org_id = ${b.org.id}`,
    );
    expect(Number(escrow[0]!.n)).toBe(0);
    const leaks = await query(
      stack.orm.em.fork(),
      sql<{ n: string }>`select count(*) as n from outbox where args::text like '%sk-callers-openai-key%'`,
    );
    expect(Number(leaks[0]!.n)).toBe(0);
    const history = await stack.temporal.workflow.getHandle(`consolidation-merge-${dup.id}-1`).fetchHistory();
    expect(JSON.stringify(history)).not.toContain('sk-callers-openai-key');
  });

  it('validates actions and bounds, and keeps every org to its own proposals', async () => {
    expect((await consolidate({ action: 'explode' })).status).toBe(400);
    expect((await consolidate({ action: 'detect', threshold: 0 })).status).toBe(400);
    expect((await consolidate({ action: 'detect', threshold: 1.5 })).status).toBe(400);
    expect((await consolidate({ action: 'review', id: crypto.randomUUID(), decision: 'maybe' })).status).toBe(400);
    expect((await consolidate({ action: 'review', id: crypto.randomUUID(), decision: 'approved' })).status).toBe(404);
    for (const qs of ['?limit=0', '?limit=501', '?offset=-1', '?status=bogus', '?kind=similar']) {
      expect((await stack.api.get(`/api/consolidate${qs}`, { token: a.token })).status).toBe(400);
    }
    const mine = (await proposals('?status=all&limit=1'))[0]!;
    const other = await signUp(stack.api);
    await setPlan(other.org.id, 'team');
    expect((await stack.api.get(`/api/consolidate/${mine.id}`, { token: other.token })).status).toBe(404);
    expect((await consolidate({ action: 'review', id: mine.id, decision: 'approved' }, other.token)).status).toBe(404);
    expect((await consolidate({ action: 'merge', id: mine.id }, other.token)).status).toBe(404);
    expect(await proposals('?status=all', other.token)).toEqual([]);
    expect((await stack.api.get('/api/consolidate')).status).toBe(401);
  });
});
