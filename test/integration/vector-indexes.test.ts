import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilters } from '../../domain/store/filters.ts';
import { semanticCandidates } from '../../domain/search/semantic.ts';
import { orgIndexName, orgIndexReady } from '../../domain/store/vector-indexes.ts';
import { query, queryOne, sql } from '../../domain/sql.ts';
import { ensureSchedules, vectorIndexScheduleId } from '../../temporal/schedules.ts';
import type { VectorIndexRun } from '../../workflows/vector-indexes.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { vectorLiteral } from '../../domain/store/vectors.ts';

// Orgs that grow large get an HNSW index of their own, built and dropped by the scheduled vector-indexes workflow
// against the real stack (the bundled model embeds, PostgreSQL with pgvector builds). The threshold is lowered so
// a handful of memories make an org "large".
const MIN = 6;
let stack: Stack;
let big: SignedUp;
let small: SignedUp;
const ids: string[] = [];

const CONTENTS = [
  'Deploys to production happen on Tuesdays after the change review.',
  'The pager rotation switches owners every Monday at 9am Berlin time.',
  'Dana is vegetarian and allergic to peanuts; book restaurants accordingly.',
  'The billing service keeps invoices in PostgreSQL 16 with nightly backups.',
  "Ivan's cat is called Pixel and sleeps on the office printer.",
  'Omar prefers aisle seats and morning flights when travelling for work.',
  'The staging cluster is rebuilt from scratch every Sunday night.',
  'Customer support answers within four hours on business days.',
];

const save = (who: SignedUp, content: string) => stack.api.post('/api/memories', { token: who.token, body: { content } });
const status = async (who: SignedUp) => (await stack.api.get('/api/memories/embeddings', { token: who.token })).body;
const allEmbedded = (who: SignedUp) =>
  eventually(async () => {
    const s = await status(who);
    return s.total > 0 && s.embedded === s.total && s;
  }, 60_000);

// Triggers the schedule and waits for that run's result. A scheduled run's id ends in the second the server
// scheduled it, so two triggers in one second would name the same run (the second never starts): each waits until
// the clock is past the second of the previous run, as the server recorded it (the trigger's call can reach the
// server in the second after the one it left the test in).
let lastRunSecond = 0;
async function runSchedule(): Promise<VectorIndexRun> {
  await eventually(async () => Math.floor(Date.now() / 1000) > lastRunSecond);
  const schedule = stack.temporal.schedule.getHandle(vectorIndexScheduleId(stack.config.TEMPORAL_TASK_QUEUE));
  const before = new Set((await schedule.describe()).info.recentActions.map((a) => a.action.workflow.workflowId));
  // Allowed to overlap: the schedule learns that the previous run ended only a moment after it did.
  await schedule.trigger('ALLOW_ALL');
  const run = await eventually(async () =>
    (await schedule.describe()).info.recentActions.find((a) => !before.has(a.action.workflow.workflowId)),
  );
  lastRunSecond = Math.floor(run.scheduledAt.getTime() / 1000);
  return (await stack.temporal.workflow.getHandle(run.action.workflow.workflowId).result()) as VectorIndexRun;
}

// The index the planner reads the org's approximate candidates from, as a search asks for them (sequential scans
// and sorts priced out, since the test's tables are tiny).
async function indexUsed(who: SignedUp): Promise<string> {
  const em = stack.orm.em.fork();
  const compiled = await compileFilters(em, who.org.id, {});
  const own = await orgIndexReady(em, who.org.id);
  const plan = await em.transactional(async (tx) => {
    await query(tx, sql`select set_config('enable_sort', 'off', true), set_config('enable_seqscan', 'off', true)`);
    const statement = semanticCandidates(
      who.org.id,
      vectorLiteral(new Float32Array(384).fill(0.05)),
      'bge-small-en-v1.5-int8',
      10,
      compiled,
      own ? 'own' : 'shared',
    );
    return query(tx, sql<{ 'QUERY PLAN': string }>`explain ${statement}`);
  });
  return (
    plan
      .map((row) => row['QUERY PLAN'])
      .join('\n')
      .match(/Index Scan using (\S+)/)?.[1] ?? 'none'
  );
}

// The org's vectors, and how many of them its own index serves (the rest are in the shared one).
const rows = async (who: SignedUp) =>
  (await queryOne(
    stack.orm.em.fork(),
    sql<{
      all: number;
      own: number;
    }>`select count(*)::int as all, (count(*) filter (where own_index))::int as own from memory_embeddings where org_id = ${who.org.id}`,
  ))!;

const indexValid = async (name: string) =>
  (
    await queryOne(
      stack.orm.em.fork(),
      sql<{ valid: boolean }>`select indisvalid as valid from pg_index where indexrelid = to_regclass(${name})`,
    )
  )?.valid ?? null;

beforeAll(async () => {
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', VECTOR_INDEX_ORG_MIN: String(MIN) } });
  [big, small] = [await signUp(stack.api), await signUp(stack.api)];
  for (const content of CONTENTS) ids.push((await save(big, content)).body.id);
  await save(small, CONTENTS[0]!);
  await allEmbedded(big);
  await allEmbedded(small);
  await ensureSchedules(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE);
}, 120_000);
afterAll(async () => {
  await stack?.temporal.schedule.getHandle(vectorIndexScheduleId(stack.config.TEMPORAL_TASK_QUEUE)).delete();
  await stack?.close();
});

describe('vector indexes of large orgs', () => {
  it("builds an org's own index once it holds enough vectors, and its searches use it", async () => {
    expect((await status(big)).index).toBe('shared');
    expect(await indexUsed(big)).toBe('memory_embeddings_shared_idx');

    expect(await rows(big)).toEqual({ all: 8, own: 0 });
    expect(await runSchedule()).toEqual({ built: [big.org.id], dropped: [], failed: [] });
    expect(await indexValid(orgIndexName(big.org.id))).toBe(true);
    expect((await status(big)).index).toBe('own');
    // Its rows left the shared index, and the vectors written from now on go straight to its own.
    expect(await rows(big)).toEqual({ all: 8, own: 8 });
    ids.push((await save(big, 'The office closes early on the last Friday of each month.')).body.id);
    await allEmbedded(big);
    expect(await rows(big)).toEqual({ all: 9, own: 9 });
    expect(await rows(small)).toEqual({ all: 1, own: 0 });
    // A re-embedded vector (its memory's content edited) stays in the org's index.
    expect(
      (
        await stack.api.patch(`/api/memories/${ids[1]}`, {
          token: big.token,
          body: { content: 'The pager rotation switches owners every Tuesday at 10am Berlin time.' },
        })
      ).status,
    ).toBe(200);
    await eventually(
      async () =>
        (
          await query(
            stack.orm.em.fork(),
            sql<{
              hash: string;
            }>`select content_hash as hash from memory_embeddings e join memories m on m.id = e.memory_id
              where e.memory_id = ${ids[1]} and e.content_hash = md5(m.content)`,
          )
        ).length === 1,
      30_000,
    );
    expect(await rows(big)).toEqual({ all: 9, own: 9 });
    expect(await indexUsed(big)).toBe(orgIndexName(big.org.id));
    // The small org stays in the shared index.
    expect((await status(small)).index).toBe('shared');
    expect(await indexUsed(small)).toBe('memory_embeddings_shared_idx');

    const hits = (
      await stack.api.post('/api/memories/search', {
        token: big.token,
        body: { query: 'what day are releases shipped', mode: 'semantic', k: 3 },
      })
    ).body.hits;
    expect(hits[0].id).toBe(ids[0]);
    // Nothing left to do.
    expect(await runSchedule()).toEqual({ built: [], dropped: [], failed: [] });
  });

  it('drops an invalid index that a failed build left behind, then builds it again', async () => {
    const name = orgIndexName(big.org.id);
    await query(stack.orm.em.fork(), sql`drop index ${sql.id(name)}`);
    // A concurrent build that fails (here a unique index over duplicates) leaves its index behind, invalid.
    await expect(
      query(
        stack.orm.em.fork(),
        sql`create unique index concurrently ${sql.id(name)} on memory_embeddings (org_id) where org_id = ${sql.lit(big.org.id)}::uuid`,
      ),
    ).rejects.toThrow(/could not create unique index/);
    expect(await indexValid(name)).toBe(false);
    expect((await status(big)).index).toBe('shared');

    expect(await runSchedule()).toEqual({ built: [big.org.id], dropped: [name], failed: [] });
    expect(await indexValid(name)).toBe(true);
    expect(await rows(big)).toEqual({ all: 9, own: 9 });
    expect(await indexUsed(big)).toBe(name);
  });

  it('keeps the index of an org that shrinks, drops it once the org holds no vector, and hands rows back', async () => {
    for (const id of ids.slice(1)) expect((await stack.api.delete(`/api/memories/${id}`, { token: big.token })).status).toBe(204);
    expect(await rows(big)).toEqual({ all: 1, own: 1 });
    expect(await runSchedule()).toEqual({ built: [], dropped: [], failed: [] });
    let hits = (
      await stack.api.post('/api/memories/search', {
        token: big.token,
        body: { query: 'what day are releases shipped', mode: 'semantic', k: 3 },
      })
    ).body.hits;
    expect(hits.map((h: { id: string }) => h.id)).toEqual([ids[0]]);

    expect((await stack.api.delete(`/api/memories/${ids[0]}`, { token: big.token })).status).toBe(204);
    expect(await runSchedule()).toEqual({ built: [], dropped: [orgIndexName(big.org.id)], failed: [] });
    expect(await indexValid(orgIndexName(big.org.id))).toBeNull();
    expect((await status(big)).index).toBe('shared');
    // Saved again, its vectors go to the shared index.
    const again = (await save(big, CONTENTS[0]!)).body.id;
    await allEmbedded(big);
    expect(await rows(big)).toEqual({ all: 1, own: 0 });
    hits = (
      await stack.api.post('/api/memories/search', {
        token: big.token,
        body: { query: 'what day are releases shipped', mode: 'semantic', k: 3 },
      })
    ).body.hits;
    expect(hits.map((h: { id: string }) => h.id)).toEqual([again]);
  });
});
