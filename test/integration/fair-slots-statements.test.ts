import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrgActivity } from '../../domain/org-activity.ts';
import { searchSlots } from '../../domain/search/search-slots.ts';
import { query, sql } from '../../domain/sql.ts';
import { openOrm } from '../../infra/orm.ts';
import { createTestDatabase } from '../support/database.ts';

// A paced org's call that runs statements on two connections at once is charged their time, not its wall time: a
// hybrid search's two lists cost the database twice what one list does.
let orm: MikroORM;
beforeAll(async () => {
  orm = await openOrm({ databaseUrl: await createTestDatabase(), poolMax: 4 });
});
afterAll(async () => orm?.close());

const SLEEP_MS = 100;
const sleepOn = () => query(orm.em.fork(), sql`select pg_sleep(${SLEEP_MS / 1000})`);

describe("a paced org's slot time", () => {
  it('is the time of its statements summed over the connections it held, when that is longer than its wall time', async () => {
    const activity = new OrgActivity(0);
    // A quarter of two slots' time: each call's charge puts off the org's next waiting call by twice that.
    const slots = searchSlots(2, activity, 0.25);
    const [leaveA, leaveB] = [activity.enter('a'), activity.enter('b')];
    const started = performance.now();
    let secondStarted = 0;
    // The first takes a's one slot (the other is left for b); the second waits in a's line, paced.
    await Promise.all([
      slots.run('a', () => Promise.all([sleepOn(), sleepOn()])),
      slots.run('a', async () => void (secondStarted = performance.now())),
    ]);
    // Two statements of at least 100 ms each: 200 ms charged, so the next call starts 400 ms after the first did at
    // the earliest (charged by its wall time, about 100 ms, it would start after about 200 ms).
    expect(secondStarted - started).toBeGreaterThanOrEqual(4 * SLEEP_MS);
    leaveA();
    leaveB();
  });
});
