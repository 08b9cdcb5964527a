// Whether one org's flood slows another's requests: seeds a flooding org and a quiet one (BENCH_FAIR_MEMORIES
// each, default 3,000, embedded), then measures the quiet org's hybrid searches (one at a time, BENCH_FAIR_SEARCHES
// each way in BENCH_FAIR_SEARCH_ROUNDS rounds), alone and while the other org floods, and then its saves in
// BENCH_FAIR_SAVE_ROUNDS rounds of BENCH_FAIR_SAVE_SECONDS each way, alone and beside the flood (each round alone
// first and beside first in turn): as fast as 4 at a time go, and sent at a steady BENCH_FAIR_PACED_RATE a second
// (default 50: a tenant's agents saving as they work, not a flood of its own). The flood is MCP batches of hybrid
// searches, bulk searches, exports and batch updates, all at once (BENCH_FAIR_FLOOD picks some:
// mcp,bulk,exports,updates, or none); prints both side by side with what the flood got done and how much of it was
// refused. `BENCH_SUITES=fairness bash scripts/bench.sh`.
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { paidOrg, untilDatabaseQuiet, untilEmbedded } from './lib/service.ts';
import { summarize } from './lib/stats.ts';
import { cpuByKind } from './lib/proc.ts';

const baseUrl = process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099';
const api = new ApiClient(baseUrl);
const memories = Number(process.env.BENCH_FAIR_MEMORIES ?? 3_000);
const searchCount = Number(process.env.BENCH_FAIR_SEARCHES ?? 200);
const searchRounds = Number(process.env.BENCH_FAIR_SEARCH_ROUNDS ?? 4);
const saveSeconds = Number(process.env.BENCH_FAIR_SAVE_SECONDS ?? 5);
const saveRounds = Number(process.env.BENCH_FAIR_SAVE_ROUNDS ?? 5);
const pacedRate = Number(process.env.BENCH_FAIR_PACED_RATE ?? 50);
const floodKinds = new Set((process.env.BENCH_FAIR_FLOOD ?? 'mcp,bulk,exports,updates').split(','));
const corpus = new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname, 13);
const agent = agentMemoryGenerator(corpus);

const ok = (what: string, status: number, expected: number, text: string) => {
  if (status !== expected) throw new Error(`${what} answered ${status}: ${text.slice(0, 300)}`);
};

async function seed(token: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < memories; i += 500) {
    const batch = Array.from({ length: Math.min(500, memories - i) }, () => ({ content: agent.memory(), namespace: 'bench' }));
    const res = await api.post('/api/memories/batch', { token, body: { memories: batch } });
    ok('batch create', res.status, 200, res.text);
    ids.push(...(res.body.results as { id: string }[]).map((r) => r.id));
  }
  return ids;
}

const [flooder, quiet] = [await paidOrg(api, 'fair-flood'), await paidOrg(api, 'fair-quiet')];
const floodIds = await seed(flooder.token);
await seed(quiet.token);
await untilEmbedded(api, flooder.token);
await untilEmbedded(api, quiet.token);
// Questions of its own for each of the quiet org's rounds, and new ones for every search of the flood: each is
// embedded by the model (a question asked again is answered from the org's cache of query vectors).
const newQueries = (count = searchCount) => Array.from({ length: count }, () => agent.query());

// The quiet org's searches, one at a time: each one's latency.
async function measureSearches(queries: string[]): Promise<number[]> {
  const latencies: number[] = [];
  for (const query of queries) {
    const t = performance.now();
    const res = await api.post('/api/memories/search', { token: quiet.token, body: { query, mode: 'hybrid', k: 10 } });
    latencies.push(performance.now() - t);
    ok('quiet search', res.status, 200, res.text);
  }
  return latencies;
}

// The quiet org's saves, 4 at a time for saveSeconds: how many a second, and the CPU seconds each kind of process
// used meanwhile.
async function measureSaves(): Promise<{ rate: number; cpu: Record<string, number> }> {
  const until = performance.now() + saveSeconds * 1000;
  const before = cpuByKind();
  let saves = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < until) {
        const res = await api.post('/api/memories', { token: quiet.token, body: { content: agent.memory(), namespace: 'bench' } });
        ok('quiet save', res.status, 201, res.text);
        saves++;
      }
    }),
  );
  const after = cpuByKind();
  const cpu = Object.fromEntries(Object.keys(after).map((kind) => [kind, after[kind]! - (before[kind] ?? 0)]));
  return { rate: Math.round(saves / saveSeconds), cpu };
}

// The quiet org's saves sent at pacedRate a second for saveSeconds, each on schedule whether or not the last was
// answered (an open loop), each timed from when it was due, so that a stall counts against every save it held up.
async function measurePacedSaves(): Promise<{ seconds: number; latencies: number[] }> {
  const count = Math.round(pacedRate * saveSeconds);
  const started = performance.now();
  const latencies = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const due = started + (i * 1000) / pacedRate;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      const res = await api.post('/api/memories', { token: quiet.token, body: { content: agent.memory(), namespace: 'bench' } });
      ok('quiet paced save', res.status, 201, res.text);
      return performance.now() - due;
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

// What the flood did: requests answered, and how many were refused (429 or 503) rather than served. The flood
// waits out a refusal's Retry-After, as the clients we ship do.
const flood = { mcpCalls: 0, bulkQueries: 0, exports: 0, updates: 0, refused: 0 };
let flooding = false;
const waitOut = () => new Promise((r) => setTimeout(r, 1000));
const refusedOrOk = async (status: number, expected: number, what: string, text: string) => {
  if (status === 429 || status === 503) {
    flood.refused++;
    await waitOut();
  } else ok(what, status, expected, text);
  return status === expected;
};
const loops = (n: number, body: () => Promise<void>) =>
  Array.from({ length: n }, async () => {
    while (flooding) await body();
  });
function startFlood(): Promise<unknown> {
  flooding = true;
  const nextQuery = () => agent.query();
  return Promise.all([
    // MCP: JSON-RPC batches of 20 hybrid searches, 4 batches at a time.
    ...loops(floodKinds.has('mcp') ? 4 : 0, async () => {
      const batch = Array.from({ length: 20 }, (_, id) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'search_memories', arguments: { query: nextQuery(), mode: 'hybrid' } },
      }));
      const res = await fetch(new URL('/mcp', baseUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${flooder.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(batch),
      });
      const answers = (await res.json()) as { result?: { isError?: boolean; _meta?: { status?: number } } }[];
      let refused = 0;
      for (const a of answers) {
        const status = a.result?._meta?.status;
        if (status === 429 || status === 503) refused++;
        else if (a.result && !a.result.isError) flood.mcpCalls++;
        else throw new Error(`MCP search failed: ${JSON.stringify(a).slice(0, 300)}`);
      }
      flood.refused += refused;
      if (refused > 0) await waitOut();
    }),
    // Bulk searches of 25 hybrid queries, 2 at a time.
    ...loops(floodKinds.has('bulk') ? 2 : 0, async () => {
      const body = { queries: Array.from({ length: 25 }, nextQuery), mode: 'hybrid' };
      const res = await api.post('/api/memories/search/bulk', { token: flooder.token, body });
      if (await refusedOrOk(res.status, 200, 'bulk search', res.text)) flood.bulkQueries += 25;
    }),
    // Exports of the whole org, one after another.
    ...loops(floodKinds.has('exports') ? 1 : 0, async () => {
      const res = await api.post('/api/memories/exports', { token: flooder.token, body: { format: 'ndjson' } });
      if (!(await refusedOrOk(res.status, 202, 'export', res.text))) return;
      flood.exports++;
      for (;;) {
        const job = await api.get(`/api/memories/exports/${res.body.id}`, { token: flooder.token });
        if (job.body.status !== 'pending' && job.body.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }),
    // Batch updates of 200 memories' tags, 2 at a time.
    ...loops(floodKinds.has('updates') ? 2 : 0, async () => {
      const start = Math.floor(Math.random() * (floodIds.length - 200));
      const updates = floodIds.slice(start, start + 200).map((id) => ({ id, tags: [`round-${Date.now() % 1000}`] }));
      const res = await api.put('/api/memories/batch', { token: flooder.token, body: { updates } });
      if (await refusedOrOk(res.status, 200, 'batch update', res.text)) flood.updates += 200;
    }),
  ]);
}

// A first round warms the processes (compiled code, the database's and the index's caches) for both orgs.
for (const token of [quiet.token, flooder.token])
  for (const query of newQueries()) {
    const res = await api.post('/api/memories/search', { token, body: { query, mode: 'hybrid', k: 10 } });
    ok('warm-up search', res.status, 200, res.text);
  }
// Both sides of searches come before any save, so that they search an org of the same size; each side of saves
// starts with no memory of the quiet org waiting for its vector (those would keep the worker busy on one side only).
let floodSeconds = 0;
// Each side starts the same way, 3 s after the flood began or would have (time for it to fill every queue), so that
// the flood is all that tells them apart.
async function measured<T>(beside: boolean, measure: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const flooded = beside ? startFlood() : Promise.resolve();
  await new Promise((r) => setTimeout(r, 3000));
  const result = await measure();
  flooding = false;
  await flooded;
  if (beside) floodSeconds += (performance.now() - started) / 1000;
  return result;
}
// One round each way, alone first and beside first in turn, so that what drifts from round to round (the machine,
// the org's size, the background work the last round left) falls on both sides alike.
async function pair<T>(round: number, before: () => Promise<unknown>, measure: () => Promise<T>): Promise<{ alone: T; beside: T }> {
  const sides = round % 2 === 0 ? [false, true] : [true, false];
  const result: Partial<{ alone: T; beside: T }> = {};
  for (const beside of sides) {
    await before();
    result[beside ? 'beside' : 'alone'] = await measured(beside, measure);
  }
  return result as { alone: T; beside: T };
}
// Each side starts with the database at rest (no vacuum or index build under way) and, for saves, with none of the
// quiet org's memories waiting for a vector: either would keep a core busy on one side only.
const settled = () => untilDatabaseQuiet();
const embedded = async () => {
  await untilEmbedded(api, quiet.token);
  await untilDatabaseQuiet();
};
const searchLatencies = { alone: [] as number[], beside: [] as number[] };
for (let round = 0; round < searchRounds; round++) {
  const perRound = Math.ceil(searchCount / searchRounds);
  const { alone, beside } = await pair(round, settled, () => measureSearches(newQueries(perRound)));
  searchLatencies.alone.push(...alone);
  searchLatencies.beside.push(...beside);
}
const [searchAlone, searchBeside] = [summarize(searchLatencies.alone), summarize(searchLatencies.beside)];
// Saves go in saveRounds rounds each way: one round each way could not tell the target from the benchmark's own
// spread.
const savePairs: { alone: number; beside: number }[] = [];
const saveCpu = { alone: {} as Record<string, number>, beside: {} as Record<string, number> };
const paced = { alone: { seconds: 0, latencies: [] as number[] }, beside: { seconds: 0, latencies: [] as number[] } };
for (let round = 0; round < saveRounds; round++) {
  const saves = await pair(round, embedded, measureSaves);
  savePairs.push({ alone: saves.alone.rate, beside: saves.beside.rate });
  for (const side of ['alone', 'beside'] as const)
    for (const [kind, seconds] of Object.entries(saves[side].cpu)) saveCpu[side][kind] = (saveCpu[side][kind] ?? 0) + seconds;
  const { alone, beside } = await pair(round, embedded, measurePacedSaves);
  for (const [side, got] of [['alone', alone], ['beside', beside]] as const) {
    paced[side].seconds += got.seconds;
    paced[side].latencies.push(...got.latencies);
  }
}
const savesAlone = Math.round(savePairs.reduce((sum, p) => sum + p.alone, 0) / saveRounds);
const savesBeside = Math.round(savePairs.reduce((sum, p) => sum + p.beside, 0) / saveRounds);

const row = (label: string, a: number, b: number, unit: string) => `| ${label} | ${a} ${unit} | ${b} ${unit} | ${(b / a).toFixed(2)}x |`;
console.log(`\nThe quiet org alone and beside the flood (${memories} memories each, hybrid, k 10):\n`);
console.log('| quiet org | alone | beside the flood | ratio |\n|---|---|---|---|');
console.log(row('search p50', searchAlone.p50, searchBeside.p50, 'ms'));
console.log(row('search p95', searchAlone.p95, searchBeside.p95, 'ms'));
console.log(row('saves, 4 at a time', savesAlone, savesBeside, '/s'));
const [pacedAlone, pacedBeside] = [summarize(paced.alone.latencies), summarize(paced.beside.latencies)];
const answered = (side: keyof typeof paced) => Math.round(paced[side].latencies.length / paced[side].seconds);
console.log(row(`saves sent at ${pacedRate}/s, answered`, answered('alone'), answered('beside'), '/s'));
console.log(row(`saves sent at ${pacedRate}/s, p50`, pacedAlone.p50, pacedBeside.p50, 'ms'));
console.log(row(`saves sent at ${pacedRate}/s, p95`, pacedAlone.p95, pacedBeside.p95, 'ms'));
const rounds = savePairs.map((p) => `${p.alone}, ${p.beside}/s (${(p.beside / p.alone).toFixed(2)}x)`);
console.log(`\nSaves, round by round (alone, beside): ${rounds.join('; ')}.`);
// Cores each kind of process kept busy while the quiet org saved 4 at a time: on full cores, what the flood's work in
// the API and PostgreSQL takes comes out of the saves' share of them.
const cores = (side: keyof typeof saveCpu) =>
  Object.entries(saveCpu[side])
    .filter(([kind]) => kind !== 'other')
    .map(([kind, seconds]) => `${kind} ${(seconds / (saveSeconds * saveRounds)).toFixed(2)}`)
    .join(', ');
console.log(`\nCores busy while saving 4 at a time, alone: ${cores('alone')}.\nBeside the flood: ${cores('beside')}.`);
const per = (n: number) => Math.round(n / floodSeconds);
console.log(
  `\nThe flood over ${Math.round(floodSeconds)} s: ${per(flood.mcpCalls)} MCP searches/s, ${per(flood.bulkQueries)} bulk queries/s, ` +
    `${flood.exports} exports, ${per(flood.updates)} updates/s; ${flood.refused} requests or tool calls refused (429 or 503).`,
);
