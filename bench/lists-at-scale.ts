// Lists, threads and projects of one org of 1,000,000 memories (issue 14: p50 <= 20 ms each), timed on the
// domain's own queries. The org is written straight into a scratch database with SQL (20 s instead of about
// 25 minutes through the API): 20 projects, 50 tags, 30% of the memories in threads of 12, metadata with a
// frequent value (kind: fact, a third) and a rare one (i: 7, 0.1%).
//   ADMIN_DATABASE_URL=postgres://memsvc:memsvc@127.0.0.1:5433/postgres node bench/lists-at-scale.ts
import { listMemories } from '../domain/memories/list.ts';
import { listProjects } from '../domain/projects/projects.ts';
import { listThreads } from '../domain/threads/threads.ts';
import { migrate, openOrm } from '../infra/orm.ts';
import { createdAt, scratchDatabase, writeScaleOrg } from './lib/scale-org.ts';
import { summarize } from './lib/stats.ts';

const N = Number(process.env.N ?? 1_000_000);
const scratch = await scratchDatabase('memsvc_lists_bench');
const orm = await openOrm({ databaseUrl: scratch.url, poolMax: 2 });
await migrate(orm);
const org = '00000000-0000-0000-0000-00000000a001';
const started = performance.now();
await writeScaleOrg((statement) => orm.em.getConnection().execute(statement), {
  org,
  slug: 'scale',
  n: N,
  content: `'memory number ' || i || ' about deploys and releases of project ' || (i % 400)`,
  metadata: `case when i % 10 < 3 then jsonb_build_object('parent_ref', 'conv-' || (i / 12), 'chunk_index', i % 12, 'i', i % 1000)
                  else jsonb_build_object('i', i % 1000, 'kind', case when i % 3 = 0 then 'fact' else 'note' end) end`,
});
console.log(`${N} memories written in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);

const week = createdAt(N - 30_000);
const cases: [string, () => Promise<unknown>][] = [
  ['list, newest', () => listMemories(orm.em.fork(), org, { limit: 20, offset: 0, order: 'newest' })],
  [
    'list, namespace + tag',
    () => listMemories(orm.em.fork(), org, { limit: 20, offset: 0, order: 'newest', namespace: 'project-3', tags: ['tag-13'] }),
  ],
  [
    'list, metadata_filter matching a third',
    () => listMemories(orm.em.fork(), org, { limit: 20, offset: 0, order: 'newest', metadataFilter: { kind: 'fact' } }),
  ],
  [
    'list, metadata_filter matching 0.1%',
    () => listMemories(orm.em.fork(), org, { limit: 20, offset: 0, order: 'newest', metadataFilter: { i: 7 } }),
  ],
  [
    'list, created_after (the last 30,000)',
    () => listMemories(orm.em.fork(), org, { limit: 20, offset: 0, order: 'newest', createdAfter: week }),
  ],
  ['threads', () => listThreads(orm.em.fork(), org, { limit: 20, offset: 0 })],
  ['threads, offset 1,000', () => listThreads(orm.em.fork(), org, { limit: 20, offset: 1000 })],
  ['threads of a project', () => listThreads(orm.em.fork(), org, { limit: 20, offset: 0, namespace: 'project-3' })],
  ['projects', () => listProjects(orm.em.fork(), org, { limit: 100, offset: 0 })],
];
console.log('| operation | p50 ms | p95 ms |');
console.log('|---|---|---|');
for (const [name, run] of cases) {
  const times: number[] = [];
  for (let i = 0; i < 25; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  const s = summarize(times.slice(5));
  console.log(`| ${name} | ${s.p50} | ${s.p95} |`);
}
await orm.close();
await scratch.close();
