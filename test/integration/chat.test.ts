import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { llmEnv, SERVER_ALTERNATE_KEY, SERVER_PRIMARY_KEY } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

const llm = new LlmServer();
let stack: Stack;
let paid: SignedUp;
let free: SignedUp;
beforeAll(async () => {
  await llm.start();
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  paid = await signUp(stack.api);
  free = await signUp(stack.api);
  await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${paid.org.id}`);
  const save = (content: string, namespace: string) => stack.api.post('/api/memories', { token: paid.token, body: { content, namespace } });
  await save('The staging database runs PostgreSQL 15 on port 5433.', 'infra');
  await save('Deploys to staging happen from the release branch every Tuesday.', 'infra');
  await save('The staging database password rotates monthly.', 'other');
  await save('Lunch is at noon.', 'infra');
  await stack.api.post('/api/procedural', {
    token: paid.token,
    body: {
      title: 'Restart staging database',
      summary: 'When staging is down',
      trigger_phrases: ['staging database'],
      steps: [{ description: 'restart it', command: 'systemctl restart postgresql' }],
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await llm.close();
});
beforeEach(() => llm.reset());

const chat = (body: Record<string, unknown>, token = paid.token) => stack.api.post('/api/chat', { token, body });
const ask = (content: string, extra: Record<string, unknown> = {}) => chat({ messages: [{ role: 'user', content }], ...extra });

describe('POST /api/chat', () => {
  it('grounds the reply on the top BM25 memories and matching runbooks, and says which provider answered', async () => {
    const res = await ask('What port does the staging database use?');
    expect(res.status).toBe(200);
    expect(res.body.reply).toBe('Echo: What port does the staging database use?');
    expect(res.body.via).toBe('primary');
    expect(res.body.session_id).toBeNull();
    expect(res.body.runbook_proposal).toBeNull();
    const memoryTitles = res.body.citations.filter((c: { type: string }) => c.type === 'memory').map((c: { title: string }) => c.title);
    expect(memoryTitles[0]).toBe('The staging database runs PostgreSQL 15 on port 5433.');
    expect(memoryTitles).not.toContain('Lunch is at noon.');
    expect(res.body.citations.filter((c: { type: string }) => c.type === 'procedural').map((c: { title: string }) => c.title)).toEqual([
      'Restart staging database',
    ]);
    const call = llm.calls[0]!;
    expect(call).toMatchObject({ protocol: 'anthropic', apiKey: SERVER_PRIMARY_KEY, model: 'claude-test', tool: { name: 'chat_reply' } });
    expect(call.system).toContain('PostgreSQL 15 on port 5433');
    expect(call.system).toContain('systemctl restart postgresql');
  });

  it('limits memory retrieval to one project and passes caller system messages as instructions', async () => {
    const res = await chat({
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'staging database password' },
      ],
      namespace: 'infra',
    });
    expect(res.status).toBe(200);
    const titles = res.body.citations.filter((c: { type: string }) => c.type === 'memory').map((c: { title: string }) => c.title);
    expect(titles).not.toContain('The staging database password rotates monthly.');
    expect(titles).toContain('The staging database runs PostgreSQL 15 on port 5433.');
    expect(llm.calls[0]!.system).toContain('Instructions from the caller: Answer in French.');
    expect(llm.calls[0]!.messages).toEqual([{ role: 'user', content: 'staging database password' }]);
  });

  it('appends the user turn and the reply to the session', async () => {
    const session = (await stack.api.post('/api/chat/sessions', { token: paid.token, body: {} })).body;
    const res = await ask('Where do deploys come from?', { session_id: session.id });
    expect(res.status).toBe(200);
    expect(res.body.session_id).toBe(session.id);
    const got = (await stack.api.get(`/api/chat/sessions/${session.id}`, { token: paid.token })).body;
    expect(got.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'Where do deploys come from?'],
      ['assistant', 'Echo: Where do deploys come from?'],
    ]);
    const other = await signUp(stack.api);
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${other.org.id}`);
    expect(
      (
        await ask('hi', { session_id: session.id }).then(() =>
          chat({ messages: [{ role: 'user', content: 'hi' }], session_id: session.id }, other.token),
        )
      ).status,
    ).toBe(404);
    expect((await ask('hi', { session_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });

  it('passes a runbook the model offers through', async () => {
    const proposal = {
      title: 'Rotate keys',
      summary: 'monthly',
      trigger_phrases: ['rotate keys'],
      steps: [{ description: 'run the script', command: './rotate.sh' }],
    };
    llm.respond(() => ({ reply: 'Here is how.', runbook_proposal: proposal }));
    const res = await ask('How do we rotate keys?');
    expect(res.body).toMatchObject({ reply: 'Here is how.', runbook_proposal: proposal });
  });

  it('needs a paid plan unless the call carries a BYOK key, which is used for that call only', async () => {
    const refused = await ask('hello', {}).then(() => chat({ messages: [{ role: 'user', content: 'hello' }] }, free.token));
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ error: 'plan_required', upgrade_url: expect.stringContaining('/dashboard/billing') });
    llm.reset();
    const byok = await chat({ messages: [{ role: 'user', content: 'hello' }], byok_primary_key: 'sk-ant-callers-own' }, free.token);
    expect(byok.status).toBe(200);
    expect(byok.body.via).toBe('byok');
    expect(llm.calls.map((c) => [c.protocol, c.apiKey])).toEqual([['anthropic', 'sk-ant-callers-own']]);
    const alternateOnly = await chat(
      { messages: [{ role: 'user', content: 'hello' }], byok_alternate_key: 'sk-callers-openai' },
      free.token,
    );
    expect(alternateOnly.body.via).toBe('byok');
    expect(llm.calls.at(-1)).toMatchObject({ protocol: 'openai', apiKey: 'sk-callers-openai' });
    const audit = await query(
      stack.orm.em.fork(),
      sql<{ n: string }>`select count(*) as n from audit_events where details::text like '%callers-own%'`,
    );
    expect(Number(audit[0]!.n)).toBe(0);
  });

  it('fails over to the alternate provider when the default one fails', async () => {
    llm.failNext('anthropic', 1, 529);
    const res = await ask('failover please');
    expect(res.status).toBe(200);
    expect(res.body.via).toBe('alternate');
    expect(llm.calls.map((c) => [c.protocol, c.apiKey, c.status])).toEqual([
      ['anthropic', SERVER_PRIMARY_KEY, 529],
      ['openai', SERVER_ALTERNATE_KEY, 200],
    ]);
  });

  it('answers 503 llm_unavailable when every provider is down, 502 on a refused BYOK key or a malformed answer', async () => {
    llm.down('anthropic', true);
    llm.down('openai', true);
    const down = await ask('anyone?');
    expect(down.status).toBe(503);
    expect(down.body.error).toBe('llm_unavailable');
    llm.reset();
    llm.validKeys.add(SERVER_PRIMARY_KEY);
    const refused = await ask('mine', { byok_primary_key: 'sk-ant-wrong' });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toBe('llm_rejected');
    expect(JSON.stringify(refused.body)).not.toContain('sk-ant-wrong');
    llm.reset();
    llm.respond(() => LlmServer.raw('not json at all'));
    const malformed = await ask('garbage?');
    expect(malformed.status).toBe(502);
    expect(malformed.body.error).toBe('llm_malformed_output');
    expect(llm.calls).toHaveLength(2);
  });

  it('validates the request', async () => {
    expect((await chat({ messages: [] })).status).toBe(400);
    expect((await chat({ messages: [{ role: 'assistant', content: 'only me' }] })).status).toBe(400);
    expect((await chat({ messages: [{ role: 'robot', content: 'x' }] })).status).toBe(400);
    expect((await chat({ messages: [{ role: 'user', content: 'x' }], session_id: 'nope' })).status).toBe(400);
    // A key that cannot travel in an HTTP header is the caller's mistake, not a provider outage (the fuzzer
    // found it answered 503 llm_unavailable).
    for (const key of ['sk-ünïcode', 'sk two words', 'sk-\u0085']) {
      const refused = await chat({ messages: [{ role: 'user', content: 'x' }], byok_primary_key: key });
      expect(refused.status, key).toBe(400);
      expect(JSON.stringify(refused.body.issues)).toContain('byok_primary_key');
    }
    expect((await stack.api.post('/api/chat', { body: { messages: [{ role: 'user', content: 'x' }] } })).status).toBe(401);
  });

  it('answers 503 llm_not_configured when the server has no provider and the caller no key', async () => {
    const bare = await startStack({ relay: false, worker: false, databaseUrl: stack.config.DATABASE_URL });
    try {
      const res = await bare.api.post('/api/chat', { token: paid.token, body: { messages: [{ role: 'user', content: 'x' }] } });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('llm_not_configured');
    } finally {
      await bare.close();
    }
  });
});
