// An org's freshness while a backlog of memories is being embedded: other orgs' or its own. The worker's embedding
// model is shared by every org's curator; this measures what a quiet org's saves wait for while busy orgs have
// thousands of memories to embed, and what an org's saves wait for behind its own backlog (after an import).
// Run with `BENCH_SUITES=backlogs bash scripts/bench.sh` (BENCH_BUSY_ORGS orgs, default 2, save BENCH_BUSY_MEMORIES
// each, default 3,000, at once; the quiet org saves 5 a second for 30 s: alone, then from the start of such bursts,
// then, beside new busy orgs, from the end of theirs while they catch up; last, from the end of a burst of its own).
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { freshness } from './lib/freshness.ts';
import { cpuSeconds } from './lib/proc.ts';
import { embeddingStatus, paidOrg, untilEmbedded } from './lib/service.ts';
import { closedLoop, summarize, type Summary } from './lib/stats.ts';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const corpus = new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname);
const agent = agentMemoryGenerator(corpus);
const busyOrgs = Number(process.env.BENCH_BUSY_ORGS ?? 2);
const busyMemories = Number(process.env.BENCH_BUSY_MEMORIES ?? 3000);

async function save(token: string): Promise<string> {
  const res = await api.post('/api/memories', { token, body: { content: agent.memory(), tags: ['bench'] } });
  if (res.status !== 201) throw new Error(`save answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}

const quiet = await paidOrg(api, 'quiet');
// The quiet org's first saves start its curator, so that no run below measures a workflow's start.
await save(quiet.token);
await untilEmbedded(api, quiet.token);
const quietly = () => freshness(quiet.orgId, { save: () => save(quiet.token), perSecond: 5, count: 150, pollMs: 50 });

// New busy orgs, each saving its memories at once (16 at a time each); a busy org's curator pauses while its
// burst lasts, then embeds what it missed.
async function bursts() {
  const orgs = await Promise.all(Array.from({ length: busyOrgs }, (_, i) => paidOrg(api, `busy-${i}`)));
  return { orgs, saving: Promise.all(orgs.map((org) => closedLoop(16, busyMemories, async () => void (await save(org.token))))) };
}

const alone = await quietly();

// The quiet org's stream starting with the bursts: the API and PostgreSQL are busy with the saves, the outbox relay
// with their rows.
const first = await bursts();
const during = await quietly();
await first.saving;
await Promise.all(first.orgs.map((org) => untilEmbedded(api, org.token)));

// The quiet org's stream starting as the bursts end: the busy orgs' curators catch up meanwhile.
const second = await bursts();
const burst = await second.saving;
const burstEnded = performance.now();
const cpuBefore = cpuSeconds(process.env.STACK_WORKER_PID);
const beside = await quietly();
const left = await Promise.all(
  second.orgs.map(async (org) => {
    const { embedded, total } = await embeddingStatus(api, org.token);
    return total - embedded;
  }),
);
await Promise.all(second.orgs.map((org) => untilEmbedded(api, org.token)));
const caughtUp = (performance.now() - burstEnded) / 1000;
const workerCpu = cpuSeconds(process.env.STACK_WORKER_PID) - cpuBefore;

// The quiet org saves as many memories at once itself, then its stream goes on while its curator catches up.
const own = await closedLoop(16, busyMemories, async () => void (await save(quiet.token)));
const ownEnded = performance.now();
const behindOwn = await quietly();
const ownLeft = await embeddingStatus(api, quiet.token);
await untilEmbedded(api, quiet.token);
const ownCaughtUp = (performance.now() - ownEnded) / 1000;

// The lags of each 5 s of the stream (25 saves), p50 / max.
const windows = (lags: number[]) =>
  Array.from({ length: Math.ceil(lags.length / 25) }, (_, w) => {
    const s = summarize(lags.slice(w * 25, (w + 1) * 25));
    return `${Math.round(s.p50)} / ${Math.round(s.max)}`;
  });
const row = (label: string, s: Summary & { seen: Summary }) => `| ${label} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.max} | ${s.count} |`;
process.stdout.write(
  [
    '',
    `### A quiet org's saves (5 a second for 30 s) beside ${busyOrgs} orgs that each save ` +
      `${busyMemories.toLocaleString('en')} memories at once`,
    '',
    "| from a save's 201 to its vector | p50 ms | p95 ms | p99 ms | max ms | saves |",
    '|---|---|---|---|---|---|',
    row('alone', alone),
    row('from the start of the bursts', during),
    row('from their end, while the busy orgs catch up', beside),
    row(`from the end of its own burst (${own.perSecond} saves/s), while it catches up`, behindOwn),
    '',
    `p50 / max ms of each 5 s of the quiet stream, from the start of the bursts: ${windows(during.inOrder).join(', ')}; from ` +
      `their end: ${windows(beside.inOrder).join(', ')}`,
    `bursts: ${burst.map((b) => `${b.perSecond} saves/s`).join(', ')}; memories the busy orgs still had to embed when the ` +
      `quiet stream ended: ${left.join(', ')}`,
    `the busy orgs were all embedded ${caughtUp.toFixed(1)} s after their bursts ended, with ${Math.round(workerCpu)} s of worker CPU`,
    `behind its own burst: p50 / max ms of each 5 s: ${windows(behindOwn.inOrder).join(', ')}; ` +
      `${ownLeft.total - ownLeft.embedded} memories still to embed when the stream ended, all embedded ` +
      `${ownCaughtUp.toFixed(1)} s after the burst`,
    '',
  ].join('\n'),
);
