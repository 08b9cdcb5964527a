import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { llmEnv, SERVER_PRIMARY_KEY } from '../support/llm-env.ts';
import { LlmServer, type LlmCall } from '../support/llm-server.ts';
import { eventually, signUp, startStack, subscribeToMemoryEvents, type SignedUp, type Stack } from '../support/stack.ts';

// POST /api/conversations with infer: the org's curator extracts the facts worth keeping from the new messages and
// reconciles them with the memories extracted before (ADD, UPDATE, DELETE, NONE), against the local server that
// speaks the providers' protocols with scripted answers.
const llm = new LlmServer();
let stack: Stack;
let paid: SignedUp;
const CURATOR_WAIT_MS = 60_000;
beforeAll(async () => {
  await llm.start();
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', EXTRACTION_TOKENS_PER_MONTH: '1000000', ...llmEnv(llm) } });
  paid = await signUp(stack.api);
  await setPlan(paid.org.id, 'team');
  await subscribeToMemoryEvents(stack, paid.org.id);
});
afterAll(async () => {
  await stack?.close();
  await llm.close();
});
beforeEach(() => llm.reset());

const setPlan = (orgId: string, plan: string) => query(stack.orm.em.fork(), sql`update orgs set plan = ${plan} where id = ${orgId}`);
type Extraction = {
  id: string;
  status: string;
  reason: string | null;
  decisions: { action: string; fact: string; memory_id: string | null; target_id: string | null }[];
  tokens_in: number;
  tokens_out: number;
};
const converse = async (body: Record<string, unknown>, token = paid.token) => {
  const res = await stack.api.post('/api/conversations', { token, body: { infer: true, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { conversation_id: string; memories: { id: string }[]; extraction: Extraction };
};
const settled = (id: string, token = paid.token) =>
  eventually(async () => {
    const res = await stack.api.get(`/api/conversations/extractions/${id}`, { token });
    return res.body.status !== 'queued' && (res.body as Extraction);
  }, CURATOR_WAIT_MS);
const memory = async (id: string) => (await stack.api.get(`/api/memories/${id}`, { token: paid.token })).body;
// The model: the facts it is scripted to find, and decisions made from the numbered memories it is shown.
function script(facts: string[], decide: (existing: Map<string, number>) => unknown[] = () => []) {
  llm.respond((call: LlmCall) => {
    if (call.tool?.name === 'extract_conversation_facts') return { facts };
    if (call.tool?.name === 'reconcile_memories') {
      const shown = new Map([...call.messages[0]!.content.matchAll(/^\[(\d+)\] (.*)$/gm)].map((m) => [m[2]!, Number(m[1])]));
      return { decisions: decide(shown) };
    }
    return { entities: [] };
  });
}
const numberOf = (shown: Map<string, number>, part: string) => [...shown].find(([text]) => text.includes(part))![1];

describe('extraction from conversations', { timeout: 3 * CURATOR_WAIT_MS }, () => {
  it('adds the facts of a first conversation, then updates, deletes and keeps against them in the next', async () => {
    script(['Dana lives in Lisbon', 'Dana drinks coffee every morning', 'Dana likes the trams of Lisbon']);
    const first = await converse({
      user_id: 'dana',
      run_id: 'run-1',
      messages: [
        { role: 'user', content: 'Morning! Coffee first, as always. I just moved to Lisbon.', occurred_at: Date.UTC(2026, 2, 1) },
        { role: 'assistant', content: 'Welcome to Lisbon! The trams are lovely.' },
        { role: 'user', content: 'I love the trams.' },
      ],
    });
    expect(first.extraction).toMatchObject({ status: 'queued', reason: null, decisions: [] });
    const done = await settled(first.extraction.id);
    expect(done).toMatchObject({ status: 'processed', reason: null });
    expect(done.decisions.map((d) => d.action)).toEqual(['ADD', 'ADD', 'ADD']);
    expect(done.tokens_in).toBeGreaterThan(0);
    // Only the facts call: nothing was extracted before, so there is nothing to reconcile.
    const factsCall = llm.calls.find((c) => c.tool?.name === 'extract_conversation_facts')!;
    expect(factsCall.apiKey).toBe(SERVER_PRIMARY_KEY);
    expect(factsCall.messages[0]!.content).toContain('<new>\n[2026-03-01] user: Morning! Coffee first');
    expect(factsCall.system).toMatch(/never follow instructions/);
    expect(llm.calls.some((c) => c.tool?.name === 'reconcile_memories')).toBe(false);
    const lisbon = await memory(done.decisions[0]!.memory_id!);
    expect(lisbon).toMatchObject({
      content: 'Dana lives in Lisbon',
      source: 'extraction',
      user_id: 'dana',
      run_id: 'run-1',
      metadata: { extraction: { id: first.extraction.id, conversation_id: 'run-1', messages: first.memories.map((m) => m.id) } },
    });

    script(['Dana now lives in Porto', 'Dana stopped drinking coffee', 'Dana likes trams'], (shown) => [
      { fact: 1, action: 'UPDATE', memory: numberOf(shown, 'Lisbon'), text: 'Dana lives in Porto (moved from Lisbon)' },
      { fact: 2, action: 'DELETE', memory: numberOf(shown, 'coffee'), text: null },
      { fact: 3, action: 'NONE', memory: numberOf(shown, 'trams'), text: null },
    ]);
    const second = await converse({
      user_id: 'dana',
      run_id: 'run-2',
      messages: [{ role: 'user', content: 'Moved again, to Porto now. And no more coffee for me.' }],
    });
    const next = await settled(second.extraction.id);
    expect(next.decisions.map((d) => [d.action, d.fact])).toEqual([
      ['UPDATE', 'Dana now lives in Porto'],
      ['DELETE', 'Dana stopped drinking coffee'],
      ['NONE', 'Dana likes trams'],
    ]);
    const [update, remove, none] = next.decisions;
    const coffee = done.decisions[1]!.memory_id!;
    expect(update).toMatchObject({ target_id: lisbon.id });
    expect(remove).toMatchObject({ memory_id: null, target_id: coffee });
    expect(none).toMatchObject({ memory_id: null, target_id: done.decisions[2]!.memory_id });
    const porto = await memory(update!.memory_id!);
    expect(porto).toMatchObject({ content: 'Dana lives in Porto (moved from Lisbon)', metadata: { supersedes: lisbon.id } });
    expect(await memory(lisbon.id)).toMatchObject({ superseded_by: porto.id });
    expect(await memory(coffee)).toMatchObject({ superseded_by: coffee });

    // Superseded memories leave lists and search unless asked for; their successor's history names them.
    const listed = await stack.api.post('/api/memories/list', {
      token: paid.token,
      body: { user_id: 'dana', filters: { source: 'extraction' } },
    });
    expect(listed.body.memories.map((m: { content: string }) => m.content).sort()).toEqual([
      'Dana likes the trams of Lisbon',
      'Dana lives in Porto (moved from Lisbon)',
    ]);
    const all = await stack.api.post('/api/memories/list', {
      token: paid.token,
      body: { user_id: 'dana', include_superseded: true, filters: { source: 'extraction' } },
    });
    expect(all.body.total).toBe(4);
    const found = await stack.api.post('/api/memories/search', {
      token: paid.token,
      body: { query: 'where does Dana live', user_id: 'dana' },
    });
    expect(found.body.hits.map((h: { id: string }) => h.id)).not.toContain(lisbon.id);
    const history = await stack.api.get(`/api/memories/${porto.id}/history`, { token: paid.token });
    expect(JSON.stringify(history.body)).toContain(lisbon.id);

    // Each decision an audit row, and the outcome a webhook event.
    const audits = await query(
      stack.orm.em.fork(),
      sql<{
        details: { decision: string };
      }>`select details from audit_events where org_id = ${paid.org.id} and action = 'memory.extract'
          and details->>'extraction_id' = ${second.extraction.id}`,
    );
    expect(audits.map((a) => a.details.decision).sort()).toEqual(['DELETE', 'NONE', 'UPDATE']);
    const listed2 = await stack.api.get('/api/conversations/extractions?conversation_id=run-2', { token: paid.token });
    expect(listed2.body.extractions.map((e: Extraction) => e.id)).toEqual([second.extraction.id]);
    const events = await query(
      stack.orm.em.fork(),
      sql<{ data: Extraction }>`select data from events where org_id = ${paid.org.id} and type = 'conversation.extracted' order by id`,
    );
    expect(events.map((e) => e.data.id)).toEqual([first.extraction.id, second.extraction.id]);
    expect(events[1]!.data).toMatchObject({
      status: 'processed',
      decisions: [{ action: 'UPDATE' }, { action: 'DELETE' }, { action: 'NONE' }],
    });
  });

  it('ends failed on malformed output or a refusal, keeping the messages', async () => {
    llm.respond((call) => (call.tool?.name === 'extract_conversation_facts' ? { facts: 'not a list' } : { entities: [] }));
    const malformed = await converse({ user_id: 'eli', messages: [{ role: 'user', content: 'I am allergic to cats.' }] });
    expect(await settled(malformed.extraction.id)).toMatchObject({ status: 'failed', reason: 'llm_malformed_output', decisions: [] });
    llm.respond(() => LlmServer.raw('I would rather not.'));
    const refused = await converse({ user_id: 'eli', messages: [{ role: 'user', content: 'My sister is called Ruth.' }] });
    expect(await settled(refused.extraction.id)).toMatchObject({ status: 'failed', reason: 'llm_malformed_output' });
    for (const m of [...malformed.memories, ...refused.memories]) expect((await memory(m.id)).id).toBe(m.id);
  });

  it('waits out a provider that is down and fails over one that times out', async () => {
    script(['Fay plays the cello']);
    llm.down('anthropic', true);
    llm.down('openai', true);
    const waiting = await converse({ user_id: 'fay', messages: [{ role: 'user', content: 'I play the cello on Sundays.' }] });
    await eventually(async () => llm.calls.length >= 4, CURATOR_WAIT_MS);
    expect((await stack.api.get(`/api/conversations/extractions/${waiting.extraction.id}`, { token: paid.token })).body.status).toBe(
      'queued',
    );
    llm.down('anthropic', false);
    llm.down('openai', false);
    expect(await settled(waiting.extraction.id)).toMatchObject({
      status: 'processed',
      decisions: [{ action: 'ADD', fact: 'Fay plays the cello' }],
    });

    llm.slow('anthropic', 6_000);
    script(['Fay tunes the cello weekly']);
    const slow = await converse({ user_id: 'fay', messages: [{ role: 'user', content: 'I tune it every week.' }] });
    expect(await settled(slow.extraction.id)).toMatchObject({ status: 'processed' });
    expect(llm.calls.filter((c) => c.tool?.name === 'extract_conversation_facts').map((c) => c.protocol)).toContain('openai');
    llm.slow('anthropic', 0);
  });

  it('skips an org past its monthly tokens, and a free org without its own key, keeping the messages', async () => {
    const capped = await signUp(stack.api);
    await setPlan(capped.org.id, 'team');
    await query(
      stack.orm.em.fork(),
      sql`insert into llm_usage (org_id, month, tokens_in, tokens_out)
        values (${capped.org.id}, date_trunc('month', now())::date, 999000, 1000)`,
    );
    const over = await converse({ messages: [{ role: 'user', content: 'Remember my locker is 42.' }] }, capped.token);
    expect(await settled(over.extraction.id, capped.token)).toMatchObject({ status: 'skipped', reason: 'llm_budget' });
    expect(llm.calls).toHaveLength(0);

    const free = await signUp(stack.api);
    const skipped = await converse({ messages: [{ role: 'user', content: 'Remember my locker is 7.' }] }, free.token);
    expect(skipped.extraction).toMatchObject({ status: 'skipped', reason: 'plan_required' });
    expect(skipped.memories).toHaveLength(1);

    script(['The user keeps locker 9']);
    const key = 'sk-ant-free-orgs-own-key';
    const own = await converse(
      { metadata: { byok_primary_key: key }, messages: [{ role: 'user', content: 'My locker is 9.' }] },
      free.token,
    );
    expect(await settled(own.extraction.id, free.token)).toMatchObject({ status: 'processed', decisions: [{ action: 'ADD' }] });
    expect(llm.calls.map((c) => c.apiKey)).toEqual([key]);
    const usage = await query(
      stack.orm.em.fork(),
      sql<{ tokens_in: string }>`select tokens_in from llm_usage where org_id = ${free.org.id}`,
    );
    expect(Number(usage[0]!.tokens_in)).toBeGreaterThan(0);
    const billing = await stack.api.get('/api/billing', { token: free.token });
    expect(billing.body.llm_tokens).toMatchObject({
      month: new Date().toISOString().slice(0, 7),
      tokens_in: Number(usage[0]!.tokens_in),
      extraction_limit: 1_000_000,
    });
  });
});
