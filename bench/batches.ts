// Saves through POST /api/memories/batch: a fresh paid org filled to BENCH_BATCH_TOTAL (default 100,000) agent
// memories in batches of BENCH_BATCH_SIZE (default 500) at BENCH_BATCH_CONCURRENCY calls at once (default 4),
// reporting memories/s for each tenth of the way with the CPU each kind of process used. Every 20th call, one of
// its memories is searched by a word only it holds as soon as the call answers (it must be found). Then the
// embedding backlog is watched for BENCH_BATCH_WATCH_S seconds (default 60): how fast the model drains it.
// `BENCH_SUITES=batches bash scripts/bench.sh`.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { cpuByKind, cpuSpent } from './lib/proc.ts';
import { embeddingStatus, paidOrg } from './lib/service.ts';
import { closedLoop, summarize } from './lib/stats.ts';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const total = Number(process.env.BENCH_BATCH_TOTAL ?? 100_000);
const size = Number(process.env.BENCH_BATCH_SIZE ?? 500);
const concurrency = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 4);
const watchSeconds = Number(process.env.BENCH_BATCH_WATCH_S ?? 60);
const corpus = new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname, 11);
const agent = agentMemoryGenerator(corpus);

const { token } = await paidOrg(api, 'batches');
const tokens = [token];
for (let i = 0; i < concurrency - 1; i++)
  tokens.push((await api.post('/api/auth/tokens', { token, body: { name: `batches-${i}` } })).body.raw);

const calls = Math.ceil(total / size);
const tenth = Math.ceil(calls / 10);
const lookups: number[] = [];
let missed = 0;
let saved = 0;

for (let part = 0; part * tenth < calls; part++) {
  const first = part * tenth;
  const count = Math.min(tenth, calls - first);
  const before = cpuByKind();
  const started = performance.now();
  const run = await closedLoop(concurrency, count, async (i) => {
    const call = first + i;
    // A word no other memory holds, in the call's first memory: it must be found the moment the call answers.
    const marker = `mark${randomUUID().replaceAll('-', '')}`;
    const memories = Array.from({ length: size }, (_, j) => ({
      content: j === 0 ? `${agent.memory()} ${marker}` : agent.memory(),
      namespace: `project-${(call * size + j) % 20}`,
      tags: [`tag-${j % 50}`],
    }));
    const res = await api.post('/api/memories/batch', { token: tokens[call % tokens.length], body: { memories } });
    if (res.status !== 200 || res.body.created !== size) throw new Error(`batch answered ${res.status}: ${res.text.slice(0, 300)}`);
    if (call % 20 === 0) {
      const started = performance.now();
      const found = await api.post('/api/memories/search', { token: tokens[0], body: { query: marker, k: 1 } });
      lookups.push(performance.now() - started);
      if (found.body.hits?.[0]?.id !== res.body.results[0].id) missed += 1;
    }
  });
  saved += count * size;
  const perSecond = Math.round((count * size) / ((performance.now() - started) / 1000));
  const latency = summarize(run.latencies);
  process.stdout.write(
    `to ${saved.toLocaleString('en')}: ${perSecond} memories/s (${count} calls of ${size}, p50 ${latency.p50} ms, p95 ` +
      `${latency.p95} ms a call); CPU seconds: ${cpuSpent(before, cpuByKind())}\n`,
  );
}
const lookup = summarize(lookups);
process.stdout.write(
  `searched right after their call: ${lookups.length} markers, ${missed} not found; search p50 ${lookup.p50} ms, p95 ${lookup.p95} ms\n`,
);

// The backlog the model works through, as GET /api/memories/embeddings shows it.
const start = await embeddingStatus(api, tokens[0]!);
if (start.model === null) {
  process.stdout.write('no embedding model: the backlog is not watched\n');
} else {
  const began = performance.now();
  let last = start;
  for (let s = 10; s <= watchSeconds; s += 10) {
    await sleep(10_000);
    last = await embeddingStatus(api, tokens[0]!);
    process.stdout.write(`after ${s} s: embedded ${last.embedded.toLocaleString('en')} of ${last.total.toLocaleString('en')}\n`);
  }
  const rate = Math.round((last.embedded - start.embedded) / ((performance.now() - began) / 1000));
  const left = last.total - last.embedded;
  process.stdout.write(
    `the backlog drains at ${rate} memories/s; ${left.toLocaleString('en')} left (about ` +
      `${Math.round(left / Math.max(rate, 1) / 60)} minutes more)\n`,
  );
}
