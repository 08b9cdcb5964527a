// Save throughput and where its CPU goes: signs up a fresh org, saves BENCH_SAVES (default 10,000) agent
// memories at concurrency 32 over 8 tokens, and reports saves/s with the CPU seconds each kind of process used
// meanwhile (PostgreSQL, API, worker, Temporal, this client), read from /proc, and how many of the memories the
// curator embedded meanwhile (during a burst it leaves the model alone). For comparing configurations of
// the save path and of the background work beside it: `BENCH_SUITES=saves bash scripts/bench.sh`.
import pg from 'pg';
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { cpuByKind, cpuSpent } from './lib/proc.ts';
import { Corpus } from './lib/corpus.ts';
import { closedLoop } from './lib/stats.ts';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const count = Number(process.env.BENCH_SAVES ?? 10_000);
const corpus = new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname, 7);
const agent = agentMemoryGenerator(corpus);

const signup = await api.post('/api/auth/signup', {
  body: { email: `saves-${Date.now()}@example.test`, password: 'benchmark-password', name: 'Saves', org_name: 'Saves' },
});
if (signup.status !== 201) throw new Error(`signup answered ${signup.status}`);
// A paid plan, as the billing webhook would set it: the free plan stops at 500 memories.
const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
await db.connect();
await db.query(`update orgs set plan = 'enterprise' where id = $1`, [signup.body.org.id]);
const tokens: string[] = [signup.body.api_token.raw];
for (let i = 0; i < 7; i++) tokens.push((await api.post('/api/auth/tokens', { token: tokens[0], body: { name: `saves-${i}` } })).body.raw);

const before = cpuByKind();
const started = performance.now();
await closedLoop(32, count, async (i) => {
  const body = { content: agent.memory(), namespace: `project-${i % 20}`, tags: [`tag-${i % 50}`], metadata: { priority: i % 5 } };
  const res = await api.post('/api/memories', { token: tokens[i % tokens.length], body });
  if (res.status !== 201) throw new Error(`save answered ${res.status}`);
});
const seconds = (performance.now() - started) / 1000;
const after = cpuByKind();
// The vectors written while the saves ran (a burst holds embedding back: workflows/curator/lanes.ts, tuning.ts).
const embedded = (await db.query<{ n: number }>(`select count(*)::int as n from memory_embeddings where org_id = $1`, [signup.body.org.id]))
  .rows[0]!.n;
await db.end();
process.stdout.write(
  `${count} saves in ${seconds.toFixed(1)} s: ${Math.round(count / seconds)} saves/s; CPU seconds meanwhile: ` +
    `${cpuSpent(before, after)}; memories embedded meanwhile: ${embedded}\n`,
);
