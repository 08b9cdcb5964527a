// The ways lexical search scores what it read (domain/search/scoring.ts, top-scores.ts), in-process on the benchmark's
// own agent memories, by the number of distinct terms in the query: every posting with every document handed out
// (scoreAll, then the best 10 chosen, as a filtered search does), every posting with only the best 10 kept
// (scoreBest), and MaxScore document at a time (maxScore). It is why MaxScore stops at MAX_CURSORS terms, and it
// checks on every query that all three find the same best 10 with the same scores.
//   node bench/lexical-scoring.ts        (N=200000 memories, 40 queries per length, by default)
import { analyze } from '../domain/store/analyzer.ts';
import { BestFirst } from '../domain/search/best-first.ts';
import { decodeBlock, encodeBlock, peaksOf } from '../domain/search/blocks.ts';
import { queryTermCounts } from '../domain/search/bm25.ts';
import { BLOCK_FULL } from '../domain/search/fold.ts';
import { scoreAll, scoreBest, type IndexRead, type Scored } from '../domain/search/scoring.ts';
import { maxScore } from '../domain/search/top-scores.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { agentPostings } from './lib/agent-postings.ts';
import { Corpus } from './lib/corpus.ts';
import { summarize } from './lib/stats.ts';

const N = Number(process.env.N ?? 200_000);
const QUERIES = Number(process.env.QUERIES ?? 40);
const K = 10;
const agent = agentMemoryGenerator(new Corpus(new URL('../../shared/data', import.meta.url).pathname));

// The index as a search reads it once everything is folded: per term, blocks of BLOCK_FULL postings.
const { postings, lengths, total } = agentPostings(() => agent.memory(), N);
const index: IndexRead = { blocks: new Map(), staged: new Map(), base: N, stagedIds: [], tombstones: new Int32Array(0), n: N, total };
for (const [term, { docs, tfs }] of postings) {
  const blocks = [];
  for (let at = 0; at < docs.length; at += BLOCK_FULL) {
    const part = docs.slice(at, at + BLOCK_FULL);
    const block = decodeBlock(encodeBlock({ docnums: part, lens: part.map((d) => lengths[d]!), tfs: tfs.slice(at, at + BLOCK_FULL) }));
    blocks.push({ postings: block, peaks: peaksOf(block) });
  }
  index.blocks.set(term, blocks);
}

// The best K of a scoring, as lexical.ts takes them.
function best(scored: Scored): string {
  const order = new BestFirst(scored.scores);
  return Array.from(order.take(K), (i) => `${scored.keys[i]}:${scored.scores[i]}`)
    .sort()
    .join(',');
}

// Queries of `size` distinct terms: the benchmark's queries joined until they have that many.
function queriesOf(size: number): [string, number][][] {
  return Array.from({ length: QUERIES }, () => {
    const counts = new Map<string, number>();
    while (counts.size < size)
      for (const [term, qtf] of queryTermCounts(analyze(agent.query())))
        if (counts.size < size) counts.set(term, (counts.get(term) ?? 0) + qtf);
    return [...counts];
  });
}

process.stdout.write(
  `${N} agent memories, ${postings.size} terms; ms per query (scoring and choosing the best ${K}), ${QUERIES} queries per row\n\n`,
);
process.stdout.write(
  '| distinct terms | every posting, all handed out, p50 / p95 | every posting, the best kept | MaxScore |\n|---|---|---|---|\n',
);
for (const size of [1, 2, 3, 5, 8, 10, 12, 16, 32]) {
  const queries = queriesOf(size);
  const times = { all: [] as number[], kept: [] as number[], top: [] as number[] };
  for (const counts of queries) {
    let t = performance.now();
    const all = best(scoreAll(index, counts));
    times.all.push(performance.now() - t);
    t = performance.now();
    const kept = best(scoreBest(index, counts, K));
    times.kept.push(performance.now() - t);
    t = performance.now();
    const top = best(maxScore(index, counts, K));
    times.top.push(performance.now() - t);
    if (all !== top || all !== kept) throw new Error(`different best ${K} for ${JSON.stringify(counts)}`);
  }
  const [a, k, b] = [summarize(times.all), summarize(times.kept), summarize(times.top)];
  process.stdout.write(`| ${size} | ${a.p50} / ${a.p95} | ${k.p50} / ${k.p95} | ${b.p50} / ${b.p95} |\n`);
}
