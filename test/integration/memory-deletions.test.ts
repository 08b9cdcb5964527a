import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCounters } from '../../domain/counters.ts';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// POST /api/memories/deletions: everything matching a filter goes, as a durable job whose progress can be read.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(async () => stack?.close());

const saveMany = async (who: SignedUp, memories: Record<string, unknown>[]) => {
  const ids: string[] = [];
  for (let i = 0; i < memories.length; i += 500) {
    const res = await stack.api.post('/api/memories/batch', { token: who.token, body: { memories: memories.slice(i, i + 500) } });
    expect(res.body.created, JSON.stringify(res.body.failed?.[0] ?? res.body)).toBe(Math.min(500, memories.length - i));
    ids.push(...res.body.results.map((r: { id: string }) => r.id));
  }
  return ids;
};
const deletion = async (who: SignedUp, id: string) => (await stack.api.get(`/api/memories/deletions/${id}`, { token: who.token })).body;

describe('deleting memories by filter', () => {
  it("deletes a user's memories in batches, each as DELETE would, and shows its progress", { timeout: 90_000 }, async () => {
    const a = await signUp(stack.api);
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${a.org.id}`);
    const erin = await saveMany(
      a,
      Array.from({ length: 1203 }, (_, i) => ({ content: `Erin's note ${i} about the garden`, user_id: 'erin', namespace: `p${i % 3}` })),
    );
    const kept = await saveMany(a, [
      { content: "Frank's note about the garden", user_id: 'frank' },
      { content: 'A note about the garden for everyone' },
    ]);

    const started = await stack.api.post('/api/memories/deletions', { token: a.token, body: { filters: { user_id: 'erin' } } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'pending', filters: { user_id: 'erin' }, matched: 1203, deleted: 0, completed_at: null });
    const done = await eventually(async () => {
      const d = await deletion(a, started.body.id);
      return d.status === 'completed' && d;
    }, 60_000);
    expect(done).toMatchObject({ matched: 1203, deleted: 1203, completed_at: expect.any(Number) });

    const left = await stack.api.post('/api/memories/list', { token: a.token, body: { limit: 500 } });
    expect(left.body.memories.map((m: { id: string }) => m.id).sort()).toEqual([...kept].sort());
    expect((await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'garden' } })).body.hits).toHaveLength(2);
    // Counters and audit rows as 1,203 single deletes would leave them (the events too: deleteMemories writes both).
    const counters = await readCounters(stack.orm.em.fork(), a.org.id);
    expect(counters.get('memories')).toBe(2);
    const em = stack.orm.em.fork();
    const [audits] = await query(
      em,
      sql<{
        n: number;
      }>`select count(*)::int as n from audit_events
        where org_id = ${a.org.id} and action = 'memory.delete' and details->>'deletion_id' = ${started.body.id}`,
    );
    expect(audits!.n).toBe(1203);
    const handle = stack.temporal.workflow.getHandle(`memory-deletion-${started.body.id}`);
    expect(await handle.result()).toBe(1203);
    // A single delete of one of them still answers 204: the audit row remembers it.
    expect((await stack.api.delete(`/api/memories/${erin[0]}`, { token: a.token })).status).toBe(204);
  });

  it('needs a filter that selects, an admin, and stays within the org', async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    await saveMany(b, [{ content: 'belongs to b', user_id: 'shared-name' }]);
    for (const filters of [{}, { tags: [] }, { metadata_filter: {} }, { include_superseded: true }]) {
      const res = await stack.api.post('/api/memories/deletions', { token: a.token, body: { filters } });
      expect(res.status, JSON.stringify(filters)).toBe(400);
      expect(res.body.error).toBe('filter_required');
    }
    expect((await stack.api.post('/api/memories/deletions', { token: a.token, body: {} })).status).toBe(400);

    // A member who is not an admin may not.
    const member = await signUp(stack.api);
    expect(
      (await stack.api.post(`/api/orgs/${a.org.id}/members`, { token: a.token, body: { email: member.user.email, role: 'member' } }))
        .status,
    ).toBe(201);
    const switched = await stack.api.post('/api/auth/login', {
      body: { email: member.user.email, password: member.password, org_id: a.org.id },
    });
    const refused = await stack.api.post('/api/memories/deletions', {
      cookie: switched.cookie,
      body: { filters: { user_id: 'shared-name' } },
    });
    expect(refused.status).toBe(403);

    // Org a's deletion never reaches org b's memory of the same user id; org b cannot read org a's deletion.
    const mine = await stack.api.post('/api/memories/deletions', { token: a.token, body: { filters: { user_id: 'shared-name' } } });
    expect(mine.body.matched).toBe(0);
    await eventually(async () => (await deletion(a, mine.body.id)).status === 'completed');
    expect((await stack.api.post('/api/memories/list', { token: b.token, body: {} })).body.total).toBe(1);
    expect((await stack.api.get(`/api/memories/deletions/${mine.body.id}`, { token: b.token })).status).toBe(404);
  });
});
