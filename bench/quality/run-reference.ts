// Ranking quality of the in-memory BM25 reference with our analyzer, on Cranfield and CISI.
// Usage: node bench/quality/run-reference.ts [dataDir]   (default: ../shared/data beside the project)
import { resolve } from 'node:path';
import { Bm25Reference } from '../../test/support/bm25-reference.ts';
import { loadCisi, loadCranfield, type Collection } from './collections.ts';
import { evaluate, type Evaluation } from './metrics.ts';

// Deep enough for MAP to be comparable with trec_eval's usual 1000.
const DEPTH = 1000;

// Lucene 8.8.1 BM25 + Porter, from the data README.
const PUBLISHED_NDCG10: Record<string, number> = { Cranfield: 0.368, CISI: 0.381 };

function run(collection: Collection): Evaluation & { ms: number } {
  const started = performance.now();
  const index = new Bm25Reference();
  for (const doc of collection.docs) index.add(doc.id, doc.text);
  const rankings = new Map<string, string[]>();
  for (const q of collection.queries)
    rankings.set(
      q.id,
      index.search(q.text, DEPTH).map((h) => h.id),
    );
  const result = evaluate(rankings, collection.qrels);
  return { ...result, ms: performance.now() - started };
}

const dataDir = resolve(process.argv[2] ?? resolve(import.meta.dirname, '../../../shared/data'));
const f3 = (x: number): string => x.toFixed(3);

console.log('| collection | docs | judged queries | nDCG@10 | Lucene nDCG@10 | recall@100 | MAP | time |');
console.log('|---|---|---|---|---|---|---|---|');
for (const collection of [loadCranfield(dataDir), loadCisi(dataDir)]) {
  const r = run(collection);
  const published = PUBLISHED_NDCG10[collection.name];
  console.log(
    `| ${collection.name} | ${collection.docs.length} | ${r.queries} | ${f3(r.ndcg10)} | ` +
      `${published === undefined ? '-' : f3(published)} | ${f3(r.recall100)} | ${f3(r.map)} | ${Math.round(r.ms)} ms |`,
  );
}
