import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { query, queryOne, sql } from '../../domain/sql.ts';
import { llmEnv, SERVER_PRIMARY_KEY } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { curatorWorkflowId } from '../../domain/store/curate.ts';
import { backlogQuery } from '../../workflows/memory-curator.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

const llm = new LlmServer();
let stack: Stack;
let paid: SignedUp;
beforeAll(async () => {
  await llm.start();
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  paid = await signUp(stack.api);
  await setPlan(paid.org.id, 'team');
});
afterAll(async () => {
  await stack?.close();
  await llm.close();
});
beforeEach(() => llm.reset());

const setPlan = (orgId: string, plan: string) => query(stack.orm.em.fork(), sql`update orgs set plan = ${plan} where id = ${orgId}`);
const save = async (body: Record<string, unknown>, token = paid.token) => {
  const res = await stack.api.post('/api/memories', { token, body });
  expect(res.status).toBe(201);
  return res.body as { id: string; content: string; metadata: Record<string, unknown>; updated_at: number };
};
const memory = async (id: string, token = paid.token) => (await stack.api.get(`/api/memories/${id}`, { token })).body;
// The curator runs an org's enrichments one at a time, paced: on a loaded 2-core CI machine that can take a while.
const CURATOR_WAIT_MS = 60_000;
// The org's curator runs the enrichment shortly after the save commits and keeps its latest outcomes; the
// n-th report of a memory (0: after its save, 1: after its first edit, ...).
async function report(
  memoryId: string,
  nth = 0,
  orgId = paid.org.id,
): Promise<{ stored: string[]; skipped: string[]; failed: { task: string; error: string }[] }> {
  const handle = stack.temporal.workflow.getHandle(curatorWorkflowId(orgId));
  const reports = await eventually(async () => {
    const backlog = await handle.query(backlogQuery).catch(() => null);
    const mine = backlog?.recent.filter((r) => r.memoryId === memoryId) ?? [];
    return mine.length > nth && mine;
  }, CURATOR_WAIT_MS);
  const { memoryId: _, ...outcome } = reports[nth]!;
  return outcome;
}
// Outbox jobs asking for the memory's enrichment (they are the org's curate signals).
const jobs = async (memoryId: string) =>
  Number(
    (await queryOne(
      stack.orm.em.fork(),
      sql<{
        n: string;
      }>`select count(*) as n from outbox where job_type = 'curate' and args -> 0 -> 'enrich' @> ${JSON.stringify([{ memoryId }])}::jsonb`,
    ))!.n,
  );

const LONG =
  'Grace Hopper and Ada Lovelace reviewed the Kubernetes migration plan with the Acme Corp platform team. ' +
  'They agreed to move the billing service first, keep PostgreSQL as the primary store, and revisit the queue choice in March after the load tests.';

describe('background enrichment after a save', { timeout: 2 * CURATOR_WAIT_MS }, () => {
  it('extracts entities from long content on a paid plan, links them, and leaves the memory as saved', async () => {
    const saved = await save({ content: LONG });
    expect(await report(saved.id)).toEqual({ stored: ['entities'], skipped: [], failed: [] });
    const entities = (await stack.api.get('/api/entities?limit=100', { token: paid.token })).body.entities as {
      id: string;
      display_name: string;
      mention_count: number;
    }[];
    const names = entities.map((e) => e.display_name);
    expect(names).toEqual(expect.arrayContaining(['Grace Hopper', 'Ada Lovelace', 'Kubernetes']));
    const grace = entities.find((e) => e.display_name === 'Grace Hopper')!;
    const detail = (await stack.api.get(`/api/entities/${grace.id}?include_memories=1`, { token: paid.token })).body;
    expect(detail.memories).toEqual([expect.objectContaining({ id: saved.id, linked_via: 'extraction' })]);
    const listed = (await stack.api.post('/api/memories/list', { token: paid.token, body: { entity: grace.id } })).body.memories as {
      id: string;
    }[];
    expect(listed.map((m) => m.id)).toEqual([saved.id]);
    expect(await memory(saved.id)).toMatchObject({ content: saved.content, metadata: saved.metadata, updated_at: saved.updated_at });
    expect(llm.calls).toEqual([
      expect.objectContaining({
        protocol: 'anthropic',
        apiKey: SERVER_PRIMARY_KEY,
        tool: expect.objectContaining({ name: 'extract_entities' }),
      }),
    ]);

    const again = await save({ content: `${LONG} Grace Hopper signed off.` });
    await report(again.id);
    const after = (await stack.api.get(`/api/entities/${grace.id}`, { token: paid.token })).body;
    expect(after.mention_count).toBe(2);
    const found = new Set<string>();
    for await (const run of stack.temporal.workflow.list({ query: `OrgId = "${paid.org.id}"` })) found.add(run.workflowId);
    expect([...found].filter((id) => id !== `verification-mail-signup-${paid.org.id}`)).toEqual([curatorWorkflowId(paid.org.id)]);
  });

  it('writes a synopsis and facts when asked, and extracts entities from short content only when asked', async () => {
    const short = await save({ content: 'Short note. Second fact here.', metadata: { summarize: true, extract_facts: true } });
    expect(await report(short.id)).toEqual({ stored: ['synopsis', 'facts'], skipped: [], failed: [] });
    const got = await memory(short.id);
    expect(got.metadata).toMatchObject({
      summarize: true,
      extract_facts: true,
      synopsis: 'Short note.',
      facts: ['Short note.', 'Second fact here.'],
    });
    expect(got.updated_at).toBe(short.updated_at);

    const tiny = await save({ content: 'Tiny note without enrichment.' });
    expect(await jobs(tiny.id)).toBe(0);
    const forced = await save({ content: 'Meeting with Marie Curie.', metadata: { extract_entities: true } });
    expect(await report(forced.id)).toMatchObject({ stored: ['entities'] });
  });

  it('redoes the work for new content, and ignores callers writing server keys', async () => {
    const saved = await save({
      content: 'Meeting with Marie Curie. One sentence to summarize.',
      metadata: { summarize: true, extract_entities: true, synopsis: 'forged' },
    });
    await report(saved.id);
    expect((await memory(saved.id)).metadata.synopsis).toBe('Meeting with Marie Curie.');
    const curie = async () =>
      ((await stack.api.get('/api/entities?q=curie', { token: paid.token })).body.entities as { id: string; mention_count: number }[])[0];
    const before = (await curie())!.mention_count;

    const edited = await stack.api.patch(`/api/memories/${saved.id}`, {
      token: paid.token,
      body: { content: 'Call with Linus Torvalds. Different words now.' },
    });
    expect(edited.body.metadata.synopsis).toBeUndefined();
    expect(await report(saved.id, 1)).toEqual({ stored: ['entities', 'synopsis'], skipped: [], failed: [] });
    expect((await memory(saved.id)).metadata.synopsis).toBe('Call with Linus Torvalds.');
    expect((await curie())!.mention_count).toBe(before - 1);
    const linus = ((await stack.api.get('/api/entities?q=torvalds', { token: paid.token })).body.entities as { id: string }[])[0]!;
    const linked = (await stack.api.post('/api/memories/list', { token: paid.token, body: { entity: linus.id } })).body.memories as {
      id: string;
    }[];
    expect(linked.map((m) => m.id)).toEqual([saved.id]);

    const tagsOnly = await stack.api.patch(`/api/memories/${saved.id}`, { token: paid.token, body: { tags: ['x'] } });
    expect(tagsOnly.status).toBe(200);
    expect(await jobs(saved.id)).toBe(2);
  });

  it('runs nothing for a free org without a key, and uses a BYOK key only for that save', async () => {
    const free = await signUp(stack.api);
    const plain = await save({ content: LONG, metadata: { summarize: true } }, free.token);
    expect(await jobs(plain.id)).toBe(0);

    const key = 'sk-ant-free-orgs-own-key';
    const withKey = await save({ content: LONG, metadata: { summarize: true, byok_primary_key: key } }, free.token);
    expect(withKey.metadata.byok_primary_key).toBeUndefined();
    expect(await report(withKey.id, 0, free.org.id)).toEqual({ stored: ['entities', 'synopsis'], skipped: [], failed: [] });
    expect(llm.calls.map((c) => c.apiKey)).toEqual([key, key]);
    const db = stack.orm.em.fork();
    expect(
      Number((await queryOne(db, sql<{ n: string }>`select count(*) as n from llm_key_escrow where org_id = ${free.org.id}`))!.n),
    ).toBe(0);
    for (const table of ['memories', 'outbox', 'audit_events', 'events']) {
      const hits = await query(db, sql<{ n: string }>`select count(*) as n from ${sql.table(table)} t where t::text like ${`%${key}%`}`);
      expect(Number(hits[0]!.n), table).toBe(0);
    }
    const history = await stack.temporal.workflow.getHandle(curatorWorkflowId(free.org.id)).fetchHistory();
    expect(JSON.stringify(history)).not.toContain(key);
  });

  it('fails over to the alternate provider, and retries an outage until the provider is back', async () => {
    llm.failNext('anthropic', 1, 500);
    const first = await save({ content: 'Failover note.', metadata: { summarize: true } });
    expect(await report(first.id)).toMatchObject({ stored: ['synopsis'] });
    expect(llm.calls.map((c) => [c.protocol, c.status])).toEqual([
      ['anthropic', 500],
      ['openai', 200],
    ]);

    llm.reset();
    llm.down('anthropic', true);
    llm.down('openai', true);
    const second = await save({ content: 'Outage note.', metadata: { summarize: true } });
    await eventually(async () => llm.calls.length >= 4, CURATOR_WAIT_MS);
    expect((await memory(second.id)).metadata.synopsis).toBeUndefined();
    llm.down('anthropic', false);
    llm.down('openai', false);
    expect(await report(second.id)).toMatchObject({ stored: ['synopsis'], failed: [] });
    expect((await memory(second.id)).metadata.synopsis).toBe('Outage note.');
  });

  it('gives up on a malformed answer without touching the memory', async () => {
    llm.respond(() => LlmServer.raw('I would rather not.'));
    const saved = await save({ content: 'Malformed note.', metadata: { summarize: true, extract_facts: true } });
    const result = await report(saved.id);
    expect(result.stored).toEqual([]);
    expect(result.failed.map((f) => f.task)).toEqual(['synopsis', 'facts']);
    expect(result.failed[0]!.error).toContain('summarize');
    const got = await memory(saved.id);
    expect(got).toMatchObject({ content: 'Malformed note.', updated_at: saved.updated_at });
    expect(got.metadata.synopsis).toBeUndefined();
  });

  it('skips work whose memory was deleted before it ran', async () => {
    llm.down('anthropic', true);
    llm.down('openai', true);
    const saved = await save({ content: 'Soon gone.', metadata: { summarize: true } });
    await eventually(async () => llm.calls.length >= 2, CURATOR_WAIT_MS);
    await stack.api.delete(`/api/memories/${saved.id}`, { token: paid.token });
    llm.down('anthropic', false);
    llm.down('openai', false);
    expect(await report(saved.id)).toEqual({ stored: [], skipped: ['synopsis'], failed: [] });
  });
});
