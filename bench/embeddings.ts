// Throughput, query latency and memory of the local embedding model (infra/embeddings/local.ts), for choosing
// its sessions, threads and pass sizes: `node bench/embeddings.ts` with EMBEDDING_MODEL_DIR set (scripts/lib.sh,
// ensure_embedding_model), and EMBEDDING_LOCAL_MODEL naming the model it holds (default bge-small-en-v1.5).
// Each configuration runs in a child process of its own, so that RSS is its own. Each set is embedded
// BENCH_ROUNDS times (default 3) and the best rate counts, which keeps other load on the machine
// out of the figures; BENCH_TEXTS (default 128) scales the sets. BENCH_LAYOUTS (default 1x1,1x2,2x1) picks
// sessions x threads; BENCH_PASS_SIZES (default 1,8,16,32,64; empty for none) the pass sizes tried without a
// token limit beside the default passes; BENCH_PASS_TOKENS (e.g. 192,256,384; default none) token limits tried with
// the default 32 texts. BENCH_BUSY=0.6 runs a process beside each configuration that keeps
// 60% of a core busy, as the API and PostgreSQL do while the worker embeds. BENCH_QUERY_GAP_MS spaces the queries
// of the one-caller row.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { createLocalEmbedder, type LocalEmbedderOptions } from '../infra/embeddings/local.ts';
import { LOCAL_MODELS, localModelId } from '../infra/embeddings/local-models.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { closedLoop, summarize, type Summary } from './lib/stats.ts';

interface Sets {
  sentences: string[];
  memories: string[];
  long: string[];
  queries: string[];
}

// What a child is told: `passTokens` null lifts the token limit of a pass, undefined keeps the default.
interface Job {
  label: string;
  sessions: number;
  threads: number;
  batchSize?: number;
  passTokens?: number | null;
  queries: boolean;
  rounds: number;
  sets: Sets;
}

interface Result {
  perSecond: Record<'sentences' | 'memories' | 'long', number>;
  rssAfterLoadMb: number;
  peakRssMb: number;
  query?: Summary;
  concurrent?: { perSecond: number; latency: Summary };
  beside?: { inTurn: Summary; oneLine: Summary };
}

// Busy for the given share of every 10 ms.
const BUSY_LOOP =
  'const share = Number(process.argv[1]); (function tick() { const t = Date.now(); while (Date.now() - t < 10 * share); ' +
  'setTimeout(tick, 10 * (1 - share)); })();';

const modelDir = process.env.EMBEDDING_MODEL_DIR;
if (!modelDir) throw new Error('set EMBEDDING_MODEL_DIR to the directory holding model.onnx and tokenizer.json');
const model = localModelId(process.env.EMBEDDING_LOCAL_MODEL);
const mb = (bytes: number) => Math.round(bytes / 1e6);

async function child(job: Job): Promise<Result> {
  const options: LocalEmbedderOptions = {
    modelDir: modelDir!,
    model,
    sessions: job.sessions,
    threads: job.threads,
    batchSize: job.batchSize,
    batchTokens: job.passTokens === null ? Infinity : job.passTokens,
  };
  const embedder = await createLocalEmbedder(options);
  const rssAfterLoadMb = mb(process.memoryUsage().rss);
  await embedder.embedDocuments(job.sets.sentences.slice(0, 8));
  const perSecond = { sentences: 0, memories: 0, long: 0 };
  for (const set of ['sentences', 'memories', 'long'] as const) {
    for (let round = 0; round < job.rounds; round++) {
      const started = performance.now();
      await embedder.embedDocuments(job.sets[set]);
      perSecond[set] = Math.max(perSecond[set], Math.round((job.sets[set].length / (performance.now() - started)) * 10_000) / 10);
    }
  }
  const result: Result = { perSecond, rssAfterLoadMb, peakRssMb: 0 };
  if (job.queries) {
    const { queries } = job.sets;
    // One caller, each query BENCH_QUERY_GAP_MS after the one before (default 0): a search's query comes after the
    // database's part of the one before, while the session's threads have gone to sleep.
    const gap = Number(process.env.BENCH_QUERY_GAP_MS ?? 0);
    const latencies: number[] = [];
    for (const text of queries) {
      if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
      const started = performance.now();
      await embedder.embedQueries([text]);
      latencies.push(performance.now() - started);
    }
    result.query = summarize(latencies);
    // Four callers at once, as several search requests of the API would be.
    const concurrent = await closedLoop(4, queries.length, async (i) => void (await embedder.embedQueries([queries[i]!])));
    result.concurrent = { perSecond: concurrent.perSecond, latency: summarize(concurrent.latencies) };
    result.beside = {
      inTurn: await besideBulk(embedder, queries, ['bulk-org', 'single-org']),
      oneLine: await besideBulk(embedder, queries, ['', '']),
    };
  }
  result.peakRssMb = mb(process.resourceUsage().maxRSS * 1024);
  return result;
}

// One org's single queries, 10 ms apart, while four callers of another org keep asking 25 queries at once (bulk
// searches): with the orgs named the model takes their passes in turn (infra/embeddings/turns.ts); with the same
// name for both, in one line, as it did before owners took turns.
async function besideBulk(
  embedder: Awaited<ReturnType<typeof createLocalEmbedder>>,
  queries: string[],
  [bulkOrg, singleOrg]: [string, string],
): Promise<Summary> {
  let asking = true;
  const bulk = Array.from({ length: 4 }, async (_, caller) => {
    for (let round = 0; asking; round++)
      await embedder.embedQueries(
        Array.from({ length: 25 }, (_, i) => queries[(caller * 31 + round * 7 + i) % queries.length]!),
        bulkOrg,
      );
  });
  const latencies: number[] = [];
  for (const text of queries.slice(0, 60)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const started = performance.now();
    await embedder.embedQueries([text], singleOrg);
    latencies.push(performance.now() - started);
  }
  asking = false;
  await Promise.all(bulk);
  return summarize(latencies);
}

function makeSets(count: number): { sets: Sets; tokens: Record<keyof Sets, number> } {
  const corpus = new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname);
  const agent = agentMemoryGenerator(corpus);
  const tokenizer = new Tokenizer(JSON.parse(readFileSync(join(modelDir!, 'tokenizer.json'), 'utf8')), {});
  const tokens = (text: string) => Math.min(512, tokenizer.encode(text).ids.length);
  const sets: Sets = {
    // Sentences of about 43 tokens, [CLS] and [SEP] included.
    sentences: corpus.sentences.filter((s) => Math.abs(tokens(s) - 43) <= 3).slice(0, count),
    memories: Array.from({ length: count / 2 }, () => agent.memory()),
    // Texts the model cuts at 512 tokens.
    long: Array.from({ length: count / 8 }, () => Array.from({ length: 8 }, () => agent.memory()).join(' ')),
    queries: Array.from({ length: count }, () => agent.query()),
  };
  const mean = (texts: string[]) => Math.round(texts.reduce((sum, t) => sum + tokens(t), 0) / texts.length);
  return {
    sets,
    tokens: {
      sentences: mean(sets.sentences),
      memories: mean(sets.memories),
      long: mean(sets.long),
      queries: mean(sets.queries.map((q) => LOCAL_MODELS[model].queryPrefix + q)),
    },
  };
}

function main(): void {
  const { sets, tokens } = makeSets(Number(process.env.BENCH_TEXTS ?? 128));
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const passSizes = (process.env.BENCH_PASS_SIZES ?? '1,8,16,32,64').split(',').filter(Boolean).map(Number);
  const passTokens = (process.env.BENCH_PASS_TOKENS ?? '').split(',').filter(Boolean).map(Number);
  const jobs: Job[] = (process.env.BENCH_LAYOUTS ?? '1x1,1x2,2x1').split(',').flatMap((layout) => {
    const [sessions, threads] = layout.split('x').map(Number) as [number, number];
    return [
      ...passSizes.map((batchSize): Job => ({
        label: `${batchSize}`,
        sessions,
        threads,
        batchSize,
        passTokens: null,
        queries: false,
        rounds,
        sets,
      })),
      ...passTokens.map((limit): Job => ({
        label: `32, at most ${limit} tokens`,
        sessions,
        threads,
        passTokens: limit,
        queries: false,
        rounds,
        sets,
      })),
      { label: '32, default token limit (256 a thread)', sessions, threads, queries: true, rounds, sets },
    ];
  });
  const busy = Number(process.env.BENCH_BUSY ?? 0);
  const rows: string[] = [];
  const queryRows: string[] = [];
  const besideRows: string[] = [];
  for (const job of jobs) {
    const hog = busy > 0 ? spawn(process.execPath, ['-e', BUSY_LOOP, String(busy)], { stdio: 'ignore' }) : null;
    const run = spawnSync(process.execPath, [new URL(import.meta.url).pathname, 'child'], {
      input: JSON.stringify(job),
      encoding: 'utf8',
      maxBuffer: 1e8,
    });
    hog?.kill();
    if (run.status !== 0) throw new Error(`the child for ${job.sessions} x ${job.threads}, ${job.label} failed:\n${run.stderr}`);
    const r = JSON.parse(run.stdout) as Result;
    rows.push(
      `| ${job.sessions} x ${job.threads} | ${job.label} | ${r.perSecond.sentences} | ${r.perSecond.memories} | ` +
        `${r.perSecond.long} | ${r.rssAfterLoadMb} | ${r.peakRssMb} |`,
    );
    if (r.query && r.concurrent) {
      const c = r.concurrent;
      queryRows.push(
        `| ${job.sessions} x ${job.threads} | ${r.query.p50} | ${r.query.p95} | ${c.perSecond} | ${c.latency.p50} | ${c.latency.p95} |`,
      );
    }
    if (r.beside)
      besideRows.push(
        `| ${job.sessions} x ${job.threads} | ${r.beside.inTurn.p50} | ${r.beside.inTurn.p95} | ${r.beside.oneLine.p50} | ` +
          `${r.beside.oneLine.p95} |`,
      );
    process.stderr.write('.');
  }
  process.stdout.write(
    [
      `\n### Local embedding model ${model}: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}\n`,
      `Texts/s of embedDocuments over each whole set, best of ${rounds}: ${sets.sentences.length} sentences (mean ` +
        `${tokens.sentences} tokens), ${sets.memories.length} agent memories`,
      `(mean ${tokens.memories} tokens), ${sets.long.length} long texts (cut to ${tokens.long} tokens). A pass holds at most ` +
        `"texts per pass"`,
      `texts; the rows without a token limit show the batch size alone. RSS in ` +
        `MB.${busy > 0 ? ` Beside a process keeping ${busy * 100}% of a core busy.` : ''}\n`,
      '| sessions x threads | texts per pass | sentences/s | memories/s | long texts/s | RSS after load | peak RSS |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      `\nQueries (agent-style, mean ${tokens.queries} tokens with the instruction prefix), one per call, default passes; ms:\n`,
      '| sessions x threads | one caller p50 | p95 | 4 callers at once: queries/s | p50 | p95 |',
      '|---|---|---|---|---|---|',
      ...queryRows,
      `\nOne org's queries, 10 ms apart, while four callers of another org ask 25 queries at once, back to back; ms:\n`,
      '| sessions x threads | the orgs in turn: p50 | p95 | in one line: p50 | p95 |',
      '|---|---|---|---|---|',
      ...besideRows,
      '',
    ].join('\n'),
  );
}

if (process.argv[2] === 'child') {
  process.stdout.write(JSON.stringify(await child(JSON.parse(readFileSync(0, 'utf8')) as Job)));
} else {
  main();
}
