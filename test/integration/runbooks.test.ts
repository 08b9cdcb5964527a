import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suggestRunbooks } from '../../domain/runbooks/runbooks.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  // Sign-up runs as a workflow, so this stack needs its worker.
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

const create = (body: Record<string, unknown>, token = a.token) => stack.api.post('/api/procedural', { token, body });
const titles = async (query: string, token = a.token) => {
  const res = await stack.api.get<{ procedurals: { title: string }[] }>(`/api/procedural?${query}`, { token });
  expect(res.status).toBe(200);
  return res.body.procedurals.map((r) => r.title);
};

describe('/api/procedural', () => {
  it('creates a runbook with defaults and every field, and reads it back', async () => {
    const bare = await create({ title: '  Rotate keys  ' });
    expect(bare.status).toBe(201);
    expect(bare.body).toEqual({
      id: expect.any(String),
      title: 'Rotate keys',
      summary: '',
      trigger_phrases: [],
      steps: [],
      metadata: {},
      success_count: 0,
      failure_count: 0,
      created_at: expect.any(Number),
      updated_at: bare.body.created_at,
      last_used_at: null,
    });
    const full = {
      title: 'Deploy the API',
      summary: 'Ship a new release',
      trigger_phrases: ['deploy', 'ship it'],
      steps: [{ description: 'build', command: 'npm run build', check: 'exit 0', notes: 'takes a minute' }, { description: 'push' }],
      metadata: { owner: 'ops' },
    };
    // A step's field the contract does not name is refused, not dropped.
    const extra = await create({ ...full, steps: [...full.steps, { description: 'tag', extra: 'x' }] });
    expect(extra.status).toBe(400);
    expect(extra.body).toMatchObject({ error: 'unknown_field', field: 'body.steps.2.extra' });
    const created = await create(full);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(full);
    const got = await stack.api.get(`/api/procedural/${created.body.id}`, { token: a.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    expect((await stack.api.get(`/api/procedural/${crypto.randomUUID()}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.get('/api/procedural/not-a-uuid', { token: a.token })).status).toBe(400);
  });

  it('rejects values outside the documented limits', async () => {
    const bad = [
      {},
      { title: '' },
      { title: '   ' },
      { title: 'x'.repeat(201) },
      { title: 't', summary: 'x'.repeat(10_001) },
      { title: 't', trigger_phrases: Array.from({ length: 51 }, (_, i) => `p${i}`) },
      { title: 't', trigger_phrases: [''] },
      { title: 't', trigger_phrases: ['x'.repeat(201)] },
      { title: 't', steps: Array.from({ length: 201 }, (_, i) => ({ description: `s${i}` })) },
      { title: 't', steps: [{ command: 'ls' }] },
      { title: 't', steps: [{ description: ' ' }] },
      { title: 't', metadata: ['not', 'an', 'object'] },
    ];
    for (const body of bad) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
    const edge = await create({
      title: 'e'.repeat(200),
      trigger_phrases: Array.from({ length: 50 }, (_, i) => `p${i}`),
      steps: Array.from({ length: 200 }, (_, i) => ({ description: `s${i}` })),
    });
    expect(edge.status).toBe(201);
  });

  it('keeps titles unique per org, case-insensitively, on create and on update', async () => {
    expect((await create({ title: 'Restart workers' })).status).toBe(201);
    for (const title of ['Restart workers', 'RESTART WORKERS', ' restart workers ']) {
      const dup = await create({ title });
      expect(dup.status).toBe(409);
      expect(dup.body.error).toBe('runbook_title_taken');
    }
    const other = (await create({ title: 'Restart queue' })).body;
    const clash = await stack.api.patch(`/api/procedural/${other.id}`, { token: a.token, body: { title: 'restart Workers' } });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toBe('runbook_title_taken');
    const recased = await stack.api.patch(`/api/procedural/${other.id}`, { token: a.token, body: { title: 'RESTART QUEUE' } });
    expect(recased.status).toBe(200);
    expect(recased.body.title).toBe('RESTART QUEUE');
    const b = await signUp(stack.api);
    expect((await create({ title: 'Restart workers' }, b.token)).status).toBe(201);
  });

  it('lists with q on title and summary, exact trigger, limit and offset', async () => {
    const c = await signUp(stack.api);
    await create({ title: 'Backup database', summary: 'nightly dump', trigger_phrases: ['backup', 'Dump DB'] }, c.token);
    await create({ title: 'Restore', summary: 'from the BACKUP bucket', trigger_phrases: ['restore'] }, c.token);
    await create({ title: 'Rotate 100% of keys', summary: 'security_chore', trigger_phrases: ['rotate'] }, c.token);
    expect(await titles('', c.token)).toEqual(['Rotate 100% of keys', 'Restore', 'Backup database']);
    expect(await titles('q=bAcKuP', c.token)).toEqual(['Restore', 'Backup database']);
    expect(await titles('q=', c.token)).toHaveLength(3);
    expect(await titles('q=NIGHTLY', c.token)).toEqual(['Backup database']);
    expect(await titles('q=100%25', c.token)).toEqual(['Rotate 100% of keys']);
    expect(await titles('q=0%25%20', c.token)).toEqual(['Rotate 100% of keys']);
    expect(await titles('q=y_c', c.token)).toEqual(['Rotate 100% of keys']);
    expect(await titles('q=1%25k', c.token)).toEqual([]);
    expect(await titles('q=e_b', c.token)).toEqual([]);
    expect(await titles('trigger=Dump%20DB', c.token)).toEqual(['Backup database']);
    expect(await titles('trigger=dump%20db', c.token)).toEqual([]);
    expect(await titles('trigger=back', c.token)).toEqual([]);
    expect(await titles('q=restore&trigger=backup', c.token)).toEqual([]);
    expect(await titles('limit=1', c.token)).toEqual(['Rotate 100% of keys']);
    expect(await titles('limit=2&offset=1', c.token)).toEqual(['Restore', 'Backup database']);
    expect(await titles('offset=3', c.token)).toEqual([]);
    expect(await titles('limit=500', c.token)).toHaveLength(3);
    expect(await titles('q=backup')).not.toContain('Backup database');
    for (const q of ['limit=0', 'limit=501', 'limit=1.5', 'limit=x', 'offset=-1', 'trigger=']) {
      const res = await stack.api.get(`/api/procedural?${q}`, { token: c.token });
      expect(res.status, q).toBe(400);
      expect(res.body.error).toBe('validation_failed');
    }
  });

  it('patches sparsely, replaces lists, merges metadata with null removing a key', async () => {
    const rb = (
      await create({
        title: 'Patch me',
        summary: 'before',
        trigger_phrases: ['one'],
        steps: [{ description: 'a' }],
        metadata: { a: 1, b: 2 },
      })
    ).body;
    const patch = (body: unknown) => stack.api.patch(`/api/procedural/${rb.id}`, { token: a.token, body });
    let res = await patch({ metadata: { a: null, c: 3 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      title: 'Patch me',
      summary: 'before',
      trigger_phrases: ['one'],
      steps: [{ description: 'a' }],
      metadata: { b: 2, c: 3 },
    });
    expect(res.body.metadata).not.toHaveProperty('a');
    expect(res.body.updated_at).toBeGreaterThan(rb.updated_at);
    expect(res.body.created_at).toBe(rb.created_at);
    res = await patch({ summary: '', trigger_phrases: ['two', 'three'], steps: [{ description: 'b', command: 'run' }] });
    expect(res.body).toMatchObject({
      title: 'Patch me',
      summary: '',
      trigger_phrases: ['two', 'three'],
      steps: [{ description: 'b', command: 'run' }],
      metadata: { b: 2, c: 3 },
    });
    res = await patch({ title: 'Patched' });
    expect(res.body.title).toBe('Patched');
    expect((await stack.api.get(`/api/procedural/${rb.id}`, { token: a.token })).body).toEqual(res.body);
    const empty = await patch({});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('no patchable fields supplied');
    for (const body of [
      { title: '' },
      { title: 'x'.repeat(201) },
      { trigger_phrases: Array.from({ length: 51 }, () => 'p') },
      { steps: [{}] },
      { summary: null },
    ]) {
      expect((await patch(body)).status, JSON.stringify(body).slice(0, 60)).toBe(400);
    }
    expect((await stack.api.patch(`/api/procedural/${crypto.randomUUID()}`, { token: a.token, body: { title: 'ghost' } })).status).toBe(
      404,
    );
  });

  it('counts outcomes and stamps last_used_at without touching updated_at', async () => {
    const rb = (await create({ title: 'Outcomes' })).body;
    const report = (outcome: unknown) => stack.api.post(`/api/procedural/${rb.id}`, { token: a.token, body: { outcome } });
    const before = Date.now();
    let res = await report('success');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success_count: 1, failure_count: 0, updated_at: rb.updated_at });
    expect(res.body.last_used_at).toBeGreaterThanOrEqual(before - 1000);
    await report('success');
    res = await report('failure');
    expect(res.body).toMatchObject({ success_count: 2, failure_count: 1 });
    expect((await stack.api.get(`/api/procedural/${rb.id}`, { token: a.token })).body).toEqual(res.body);
    for (const outcome of ['maybe', 'SUCCESS', undefined]) expect((await report(outcome)).status).toBe(400);
    expect((await stack.api.post(`/api/procedural/${crypto.randomUUID()}`, { token: a.token, body: { outcome: 'success' } })).status).toBe(
      404,
    );
  });

  it('deletes, then 404', async () => {
    const rb = (await create({ title: 'Doomed' })).body;
    const res = await stack.api.delete(`/api/procedural/${rb.id}`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true });
    expect((await stack.api.get(`/api/procedural/${rb.id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.delete(`/api/procedural/${rb.id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.post(`/api/procedural/${rb.id}`, { token: a.token, body: { outcome: 'success' } })).status).toBe(404);
    expect((await create({ title: 'Doomed' })).status).toBe(201);
  });

  it("answers 404 for another org's runbook and leaves it alone", async () => {
    const rb = (await create({ title: 'Private', trigger_phrases: ['secret'] })).body;
    const b = await signUp(stack.api);
    expect((await stack.api.get(`/api/procedural/${rb.id}`, { token: b.token })).status).toBe(404);
    expect((await stack.api.patch(`/api/procedural/${rb.id}`, { token: b.token, body: { title: 'stolen' } })).status).toBe(404);
    expect((await stack.api.post(`/api/procedural/${rb.id}`, { token: b.token, body: { outcome: 'failure' } })).status).toBe(404);
    expect((await stack.api.delete(`/api/procedural/${rb.id}`, { token: b.token })).status).toBe(404);
    expect((await stack.api.get('/api/procedural', { token: b.token })).body.procedurals).toEqual([]);
    expect((await stack.api.get(`/api/procedural/${rb.id}`, { token: a.token })).body).toEqual(rb);
  });

  it('records an audit row for every write', async () => {
    const d = await signUp(stack.api);
    const rb = (await create({ title: 'Audited' }, d.token)).body;
    await stack.api.patch(`/api/procedural/${rb.id}`, { token: d.token, body: { summary: 's' } });
    await stack.api.post(`/api/procedural/${rb.id}`, { token: d.token, body: { outcome: 'success' } });
    await stack.api.delete(`/api/procedural/${rb.id}`, { token: d.token });
    await create({ title: 'audited' }, d.token);
    const res = await stack.api.get(`/api/events?action=runbook.&target=${rb.id}`, { token: d.token });
    expect(res.body.events.map((e: { action: string }) => e.action).sort()).toEqual([
      'runbook.create',
      'runbook.delete',
      'runbook.outcome',
      'runbook.update',
    ]);
    expect(
      res.body.events.every(
        (e: { actor_user_id: string; actor_token: string }) => e.actor_user_id === d.user.id && e.actor_token === d.tokenId,
      ),
    ).toBe(true);
    expect((await stack.api.get('/api/events?action=runbook.', { token: d.token })).body.events).toHaveLength(5);
  });

  it('lets a plain member read and write', async () => {
    const { insertMembership } = await import('../../domain/accounts/rows.ts');
    const owner = await signUp(stack.api);
    const member = await signUp(stack.api);
    const em = stack.orm.em.fork();
    await insertMembership(em, { orgId: owner.org.id, userId: member.user.id, role: 'member', now: new Date() });
    const session = (
      await stack.api.post('/api/auth/login', { body: { email: member.user.email, password: member.password, org_id: owner.org.id } })
    ).cookie!;
    const rb = (await create({ title: 'Team runbook' }, owner.token)).body;
    expect((await stack.api.get(`/api/procedural/${rb.id}`, { cookie: session })).status).toBe(200);
    expect((await stack.api.patch(`/api/procedural/${rb.id}`, { cookie: session, body: { summary: 'edited by a member' } })).status).toBe(
      200,
    );
    expect((await stack.api.post(`/api/procedural/${rb.id}`, { cookie: session, body: { outcome: 'success' } })).status).toBe(200);
    expect((await stack.api.post('/api/procedural', { cookie: session, body: { title: 'Member runbook' } })).status).toBe(201);
    expect((await stack.api.delete(`/api/procedural/${rb.id}`, { cookie: session })).body).toEqual({ deleted: true });
  });

  it('answers 401 without a credential', async () => {
    const id = crypto.randomUUID();
    for (const res of [
      await stack.api.get('/api/procedural'),
      await stack.api.post('/api/procedural', { body: { title: 'x' } }),
      await stack.api.get(`/api/procedural/${id}`),
      await stack.api.patch(`/api/procedural/${id}`, { body: { title: 'x' } }),
      await stack.api.delete(`/api/procedural/${id}`),
      await stack.api.post(`/api/procedural/${id}`, { body: { outcome: 'success' } }),
      await stack.api.get('/api/procedural', { token: 'svc_not_a_real_token' }),
    ]) {
      expect(res.status).toBe(401);
    }
  });

  it('is described in the OpenAPI document', async () => {
    const res = await stack.api.get('/api/openapi.json');
    expect(res.status, res.text).toBe(200);
    const doc = res.body;
    expect(doc.components.schemas.Runbook.required).toEqual(
      expect.arrayContaining(['id', 'title', 'trigger_phrases', 'steps', 'last_used_at']),
    );
    expect(Object.keys(doc.paths['/api/procedural']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/procedural/{id}']).sort()).toEqual(['delete', 'get', 'patch', 'post']);
    expect(doc.paths['/api/procedural'].post.responses['409']).toBeDefined();
  });
});

describe('suggestRunbooks', () => {
  it('matches trigger phrases contained in the text, case-insensitively, ranked by smoothed success ratio then recency', async () => {
    const e = await signUp(stack.api);
    const outcome = async (id: string, result: string, times: number) => {
      for (let i = 0; i < times; i++) await stack.api.post(`/api/procedural/${id}`, { token: e.token, body: { outcome: result } });
    };
    const proven = (await create({ title: 'Proven', trigger_phrases: ['Deploy'] }, e.token)).body;
    const failing = (await create({ title: 'Failing', trigger_phrases: ['deploy'] }, e.token)).body;
    await create({ title: 'Unused old', trigger_phrases: ['release'] }, e.token);
    await create({ title: 'Unused new', trigger_phrases: ['DEPLOY THE'] }, e.token);
    await create({ title: 'Unrelated', trigger_phrases: ['rollback'] }, e.token);
    await create({ title: 'No triggers' }, e.token);
    await outcome(proven.id, 'success', 3);
    await outcome(proven.id, 'failure', 1);
    await outcome(failing.id, 'failure', 2);
    const suggest = async (text: string, limit?: number) =>
      (await suggestRunbooks(stack.orm.em.fork(), e.org.id, text, limit)).map((r) => r.title);
    expect(await suggest('How do I deploy the release?')).toEqual(['Proven', 'Unused new', 'Unused old', 'Failing']);
    expect(await suggest('How do I deploy the release?', 2)).toEqual(['Proven', 'Unused new']);
    expect(await suggest('nothing relevant here')).toEqual([]);
    expect(await suggest('ROLLBACK now')).toEqual(['Unrelated']);
    expect(await suggestRunbooks(stack.orm.em.fork(), a.org.id, 'rollback')).toEqual([]);
    const [top] = await suggestRunbooks(stack.orm.em.fork(), e.org.id, 'deploy');
    expect(top).toMatchObject({
      id: proven.id,
      triggerPhrases: ['Deploy'],
      successCount: 3,
      failureCount: 1,
      lastUsedAt: expect.any(Number),
    });
  });
});
