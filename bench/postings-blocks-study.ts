// What reading postings costs when PostgreSQL stores them as compact blocks (one bytea row per few thousand
// postings) instead of one row each, and the scoring happens in the service's process (issue 14): the cost
// of an exhaustive, hence exactly rank-safe, BM25 over the numbers of postings bench/lexical-pruning-study.ts
// counted at 1,000,000 memories (83,525 at the median query, 545,134 at p99).
//   DATABASE_URL=postgres://... node bench/postings-blocks-study.ts
// The table lives in a scratch schema of its own, dropped at the end.
import pg from 'pg';
import { summarize } from './lib/stats.ts';

const url = process.env.DATABASE_URL ?? 'postgres://memsvc:memsvc@127.0.0.1:5433/memsvc';
const N = 1_000_000;
const BLOCK = 4096;
const K1 = 1.2;
const B = 0.75;
const AVGDL = 57;
const db = new pg.Client({ connectionString: url });
await db.connect();
await db.query('drop schema if exists postings_study cascade; create schema postings_study');
await db.query(`create table postings_study.blocks (org_id uuid, term text, block int, docs int, data bytea, primary key (org_id, term, block))`);
// Stored as they are: TOAST compression would cost a decompression per read.
await db.query('alter table postings_study.blocks alter column data set storage external');
const org = '00000000-0000-0000-0000-0000000000aa';

// A term's postings: memory numbers ascending (4 bytes), tf (1 byte), length (2 bytes), in three runs.
function encode(docs: Int32Array, tfs: Uint8Array, lens: Uint16Array): Buffer {
  const out = Buffer.alloc(docs.length * 7);
  Buffer.from(docs.buffer, docs.byteOffset, docs.byteLength).copy(out, 0);
  Buffer.from(tfs.buffer, tfs.byteOffset, tfs.byteLength).copy(out, docs.length * 4);
  Buffer.from(lens.buffer, lens.byteOffset, lens.byteLength).copy(out, docs.length * 5);
  return out;
}

// Terms of the sizes the study's queries touch: df from 1,000 to 400,000.
const sizes = [1_000, 10_000, 50_000, 83_525, 150_000, 250_000, 400_000];
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
for (const df of sizes) {
  const step = N / df;
  const docs = Int32Array.from({ length: df }, (_, i) => Math.floor(i * step + random() * step));
  const tfs = Uint8Array.from({ length: df }, () => 1 + (random() < 0.2 ? 1 : 0));
  const lens = Uint16Array.from({ length: df }, () => 20 + Math.floor(random() * 80));
  for (let b = 0; b * BLOCK < df; b++) {
    const [from, to] = [b * BLOCK, Math.min(df, (b + 1) * BLOCK)];
    await db.query('insert into postings_study.blocks values ($1, $2, $3, $4, $5)', [org, `t${df}`, b, to - from, encode(docs.subarray(from, to), tfs.subarray(from, to), lens.subarray(from, to))]);
  }
}
await db.query('vacuum analyze postings_study.blocks');

// Every posting of the query's terms read and scored into one accumulator, then the top 10.
const scores = new Float64Array(N);
const touched = new Int32Array(N);
async function search(terms: string[]): Promise<number> {
  const res = await db.query<{ term: string; docs: number; data: Buffer }>('select term, docs, data from postings_study.blocks where org_id = $1 and term = any($2) order by term, block', [org, terms]);
  let count = 0;
  let n = 0;
  for (const row of res.rows) {
    const docs = row.docs;
    const data = row.data.byteOffset % 4 === 0 ? row.data : Buffer.from(row.data);
    const d = new Int32Array(data.buffer, data.byteOffset, docs);
    const weight = 2.2 * Math.log(1 + N / (1 + docs));
    for (let i = 0; i < docs; i++) {
      const tf = row.data[docs * 4 + i]!;
      const len = row.data.readUInt16LE(docs * 5 + i * 2);
      const doc = d[i]!;
      const before = scores[doc]!;
      if (before === 0) touched[n++] = doc;
      scores[doc] = before + (weight * tf) / (tf + K1 * (1 - B + (B * len) / AVGDL));
    }
    count += docs;
  }
  let best: { doc: number; score: number }[] = [];
  for (let i = 0; i < n; i++) {
    const doc = touched[i]!;
    if (best.length < 10 || scores[doc]! > best[9]!.score) {
      best.push({ doc, score: scores[doc]! });
      best.sort((a, b) => b.score - a.score);
      best = best.slice(0, 10);
    }
    scores[doc] = 0;
  }
  return count;
}

console.log('| postings of the query | p50 ms | p95 ms |');
console.log('|---|---|---|');
for (const terms of [['t83525'], ['t50000', 't10000', 't1000'], ['t400000', 't150000'], ['t400000', 't150000', 't50000'], ['t400000', 't250000', 't150000', 't50000']]) {
  const times: number[] = [];
  let count = 0;
  for (let i = 0; i < 40; i++) {
    const started = performance.now();
    count = await search(terms);
    times.push(performance.now() - started);
  }
  const s = summarize(times.slice(5));
  console.log(`| ${count.toLocaleString('en')} (${terms.length} terms) | ${s.p50} | ${s.p95} |`);
}
await db.query('drop schema postings_study cascade');
await db.end();
