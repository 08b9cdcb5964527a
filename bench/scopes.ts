// Searches and lists filtered to one end user (user_id) in a large org: a fresh paid org filled through
// POST /api/memories/batch to BENCH_SCOPE_TOTAL agent memories (default 1,000,000), spread over BENCH_SCOPE_USERS
// users (default 1,000, so 1,000 memories each), then, once the postings are folded and the tables vacuumed, 300
// searches and 300 lists each filtered to one user, one at a time. Lexical search only unless the org's memories are
// embedded (they are not, at this size, within a run). `BENCH_SUITES=scopes bash scripts/bench.sh`.
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { paidOrg, paidOrgPassword } from './lib/service.ts';
import { closedLoop, summarize } from './lib/stats.ts';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const total = Number(process.env.BENCH_SCOPE_TOTAL ?? 1_000_000);
const users = Number(process.env.BENCH_SCOPE_USERS ?? 1_000);
const size = 500;
const corpus = new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname, 13);
const agent = agentMemoryGenerator(corpus);

// BENCH_REUSE=1 (scripts/bench.sh keeps memsvc_scopes then): no seeding, the org an earlier run seeded is measured
// again, e.g. after a change to filtered search.
const { orgId, token } = process.env.BENCH_REUSE === '1' ? await seededOrg() : await seed();

async function seed(): Promise<{ orgId: string; token: string }> {
  const org = await paidOrg(api, 'scopes');
  const seeding = await closedLoop(4, Math.ceil(total / size), async (call) => {
    const memories = Array.from({ length: size }, (_, j) => ({
      content: agent.memory(),
      user_id: `user-${(call * size + j) % users}`,
      namespace: `project-${j % 20}`,
    }));
    const res = await api.post('/api/memories/batch', { token: org.token, body: { memories } });
    if (res.status !== 200 || res.body.created !== size) throw new Error(`batch answered ${res.status}: ${res.text.slice(0, 300)}`);
  });
  process.stdout.write(`seeded ${total.toLocaleString('en')} memories of ${users} users in ${seeding.seconds} s\n`);
  return org;
}

async function seededOrg(): Promise<{ orgId: string; token: string }> {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const { rows } = await db.query<{ email: string; org_id: string }>(
    `select u.email, m.org_id from users u join memberships m on m.user_id = u.id where u.email like 'scopes-%@example.test'
      order by u.created_at desc limit 1`,
  );
  await db.end();
  if (!rows[0]) throw new Error('BENCH_REUSE=1: no org seeded by an earlier run in this database');
  const session = await api.post('/api/auth/login', { body: { email: rows[0].email, password: paidOrgPassword } });
  const issued = await api.post('/api/auth/tokens', { cookie: session.cookie, body: { name: `scopes-again-${Date.now()}` } });
  if (issued.status !== 201) throw new Error(`token answered ${issued.status}: ${issued.text}`);
  return { orgId: rows[0].org_id, token: issued.body.raw };
}

const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
await db.connect();
while (Number((await db.query<{ n: string }>('select count(*) as n from lexical_staged where org_id = $1', [orgId])).rows[0]!.n) > 0)
  await sleep(1000);
await db.query('vacuum (analyze) lexical_staged, lexical_blocks, lexical_docs, lexical_tombstones, memories, counters');
await db.end();

const user = (i: number) => `user-${(i * 7919) % users}`;
const searched: number[] = [];
const hitCounts: number[] = [];
for (let i = 0; i < 300; i++) {
  const started = performance.now();
  const res = await api.post('/api/memories/search', { token, body: { query: agent.query(), user_id: user(i) } });
  searched.push(performance.now() - started);
  if (res.status !== 200) throw new Error(`search answered ${res.status}: ${res.text.slice(0, 300)}`);
  if (res.body.hits.some((h: { user_id?: string }) => h.user_id !== user(i))) throw new Error('a hit of another user');
  hitCounts.push(res.body.hits.length);
}
const listed: number[] = [];
for (let i = 0; i < 300; i++) {
  const started = performance.now();
  const res = await api.post('/api/memories/list', { token, body: { user_id: user(i), limit: 50 } });
  listed.push(performance.now() - started);
  if (res.status !== 200 || res.body.memories.length !== 50) throw new Error(`list answered ${res.status}: ${res.text.slice(0, 300)}`);
}
const s = summarize(searched);
const l = summarize(listed);
const h = summarize(hitCounts);
process.stdout.write(
  `lexical search filtered to one user (of ${users}): p50 ${s.p50} ms, p95 ${s.p95} ms, p99 ${s.p99} ms (hits p50 ${h.p50})\n`,
);
process.stdout.write(`list filtered to one user, 50 rows + total: p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms\n`);
