import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportActivities } from '../../activities/exports.ts';
import { OrgActivity } from '../../domain/org-activity.ts';
import { OrgActivityBoard, PUBLISH_EVERY_MS, publishOrgActivity } from '../../domain/org-activity-board.ts';
import { OrgActivityInbound } from '../../temporal/org-activity-interceptor.ts';
import { signUp, startStack, type Stack } from '../support/stack.ts';

// No relay and no worker: the export stays pending, and this test runs its pages itself.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, worker: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', EXPORTS_PER_ORG_PER_HOUR: '2' } });
});
afterAll(async () => stack?.close());

// An org with a pending export of 1,001 memories (a full page and one row), and its first page's input.
async function pendingExport() {
  const a = await signUp(stack.api);
  await stack.orm.em.fork().getConnection().execute(`update orgs set plan = 'team' where id = ?`, [a.org.id]);
  for (const n of [500, 500, 1]) {
    const memories = Array.from({ length: n }, (_, i) => ({ content: `memory ${n}-${i}` }));
    expect((await stack.api.post('/api/memories/batch', { token: a.token, body: { memories } })).status).toBe(200);
  }
  const started = await stack.api.post('/api/memories/exports', { token: a.token, body: { format: 'ndjson' } });
  expect(started.status).toBe(202);
  const cursor = { seq: 0, afterCreatedAt: null, afterId: null };
  return { org: a.org.id as string, first: { exportId: started.body.id as string, cursor } };
}

describe("an export's pages beside another org's work", () => {
  it('pause for three times their own time while another org has an activity under way, and not after the last page', async () => {
    const { org, first } = await pendingExport();
    // Orgs stop counting as active the moment their activity ends (no linger: test/unit/fair-slots.test.ts has it).
    const orgs = new OrgActivity(0);
    const pauses: number[] = [];
    const pause = async (ms: number) => pauses.push(ms);
    const orgBoard = new OrgActivityBoard(stack.orm);
    const { exportPage } = exportActivities({ orm: stack.orm, orgActivity: orgs, orgBoard, busyShare: 0.25, pause });

    // Alone in the worker: no pause.
    const next = await exportPage(first);
    expect(next).toMatchObject({ seq: 1 });
    expect(pauses).toEqual([]);

    // Another org's activity under way, counted as the worker's interceptor counts it: the page (written again, to
    // the same effect) is followed by a pause.
    const inbound = new OrgActivityInbound(orgs);
    let release!: () => void;
    const underWay = () => new Promise((r) => (release = () => r(null)));
    const held = inbound.execute({ args: [{ orgId: 'another-org', ids: [] }], headers: {} }, underWay);
    expect(orgs.othersActive(org)).toBe(true);
    const t0 = performance.now();
    expect(await exportPage(first)).toEqual(next);
    const took = performance.now() - t0;
    expect(pauses).toHaveLength(1);
    // Three times the page's time (a quarter of the time for the export), which the call itself outlasted.
    expect(pauses[0]).toBeGreaterThan(0);
    expect(pauses[0]).toBeLessThanOrEqual(3 * took);

    // The last page ends the export: nothing is left to pace.
    expect(await exportPage({ ...first, cursor: next! })).toBeNull();
    expect(pauses).toHaveLength(1);

    // Once the other org's activity ends, no pause.
    release();
    await held;
    expect(orgs.othersActive(org)).toBe(false);
    expect(await exportPage(first)).toEqual(next);
    expect(pauses).toHaveLength(1);
  });

  it("pause while another org has a request under way in an API process, as that process writes it", async () => {
    const { org, first } = await pendingExport();
    const other = await signUp(stack.api);
    const pauses: number[] = [];
    const pause = async (ms: number) => pauses.push(ms);
    const orgBoard = new OrgActivityBoard(stack.orm);
    const { exportPage } = exportActivities({ orm: stack.orm, orgActivity: new OrgActivity(), orgBoard, busyShare: 0.25, pause });
    // An API process's activity, written to the database as api/main.ts writes it.
    const api = new OrgActivity();
    const publishing = publishOrgActivity(stack.orm, api, (err) => {
      throw err;
    });
    const settle = () => new Promise((r) => setTimeout(r, 3 * PUBLISH_EVERY_MS));
    try {
      // The exporting org's own requests do not pause it.
      const own = api.enter(org);
      await settle();
      await exportPage(first);
      expect(pauses).toEqual([]);

      const leave = api.enter(other.org.id);
      await settle();
      await exportPage(first);
      expect(pauses).toHaveLength(1);
      own();
      leave();
      await settle();
      await exportPage(first);
      expect(pauses).toHaveLength(1);
    } finally {
      await publishing.stop();
    }
  });
});

describe('the exports an org may start', () => {
  it('are EXPORTS_PER_ORG_PER_HOUR in a rolling hour: past them 429 with Retry-After and no job, while another org starts its own', async () => {
    const [a, b] = [await signUp(stack.api), await signUp(stack.api)];
    const start = (token: string) => stack.api.post('/api/memories/exports', { token, body: { format: 'ndjson' } });
    for (let i = 0; i < 2; i++) expect((await start(a.token)).status).toBe(202);
    const refused = await start(a.token);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'rate-limited', message: expect.stringContaining('2 exports per organization an hour') });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect((await stack.api.get('/api/memories/exports', { token: a.token })).body.exports).toHaveLength(2);
    expect((await start(b.token)).status).toBe(202);
  });
});
