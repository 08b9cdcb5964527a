import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, lockWaiters, signUp, startStack, type Stack } from '../support/stack.ts';

// A pool of 4: batch writes of all orgs share one batch slot (domain/memories/batch-slots.ts), in turn.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { DATABASE_POOL_MAX: '4', WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(async () => stack?.close());

describe('batch slots shared by the orgs in turn', () => {
  it("refuses an org's batches past its own queue with 429, and serves another org's batch ahead of that queue", async () => {
    const [a, b] = [await signUp(stack.api), await signUp(stack.api)];
    // Every batch write waits in the database until the lock goes.
    const gate = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await gate.connect();
    await gate.query('begin; lock table memories in access exclusive mode');
    const finished: string[] = [];
    const batch = (org: typeof a, name: string) =>
      stack.api
        .post('/api/memories/batch', { token: org.token, body: { memories: [{ content: `${name} one` }, { content: `${name} two` }] } })
        .then((res) => {
          finished.push(name);
          return res;
        });
    let flood: ReturnType<typeof batch>[] = [];
    let quiet: ReturnType<typeof batch>;
    try {
      // One slot: a's first batch holds it in the database, 4 wait in a's queue, the sixth is refused at once.
      flood = Array.from({ length: 6 }, (_, i) => batch(a, `a${i}`));
      await eventually(async () => (await lockWaiters(stack)) >= 1 && finished.length === 1);
      quiet = batch(b, 'b');
      // b's batch waits for the slot too, in a line of its own.
      await new Promise((r) => setTimeout(r, 200));
      expect(finished).toHaveLength(1);
    } finally {
      await gate.query('commit');
      await gate.end();
    }
    const answers = await Promise.all(flood);
    const refused = answers.filter((res) => res.status !== 200);
    expect(refused.map((res) => [res.status, res.body.error, res.headers.get('retry-after')])).toEqual([[429, 'rate-limited', '1']]);
    expect(answers.filter((res) => res.status === 200).map((res) => res.body.created)).toEqual([2, 2, 2, 2, 2]);
    expect((await quiet).status).toBe(200);
    // b waited for the batch under way, not for a's queue of 4 (its answer may reach the client just after the next of
    // a's).
    expect(finished.slice(1).indexOf('b')).toBeLessThanOrEqual(2);
  });
});
