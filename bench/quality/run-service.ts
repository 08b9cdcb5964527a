// Ranking quality of the real search through the HTTP API on Cranfield and CISI, in each mode: each
// collection is saved into an org of its own, embedded by its curator, and every query is run in each mode;
// the rankings are scored with the same metrics as the in-memory reference. Run by scripts/bench.sh.
import { resolve } from 'node:path';
import { ApiClient } from '../../test/support/api-client.ts';
import { paidOrg, untilEmbedded } from '../lib/service.ts';
import { closedLoop } from '../lib/stats.ts';
import { loadCisi, loadCranfield, type Collection } from './collections.ts';
import { evaluate } from './metrics.ts';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const dataDir = resolve(process.argv[2] ?? resolve(import.meta.dirname, '../../../shared/data'));
const DEPTH = 100;
const f3 = (x: number): string => x.toFixed(3);

// nDCG@10 of each search mode (lexical through the legacy GET, which also gives recall@100; semantic and hybrid
// through POST /api/memories/search with k 50, its maximum).
async function run(collection: Collection) {
  const { token } = await paidOrg(api, `quality-${collection.name}`);
  const docOf = new Map<string, string>();
  // A few records have no text at all; they could not be saved as memories (`content required`).
  const docs = collection.docs.filter((d) => d.text.trim() !== '');
  await closedLoop(16, docs.length, async (i) => {
    const doc = docs[i]!;
    const res = await api.post('/api/memories', { token, body: { content: doc.text, metadata: { doc: doc.id } } });
    if (res.status !== 201) throw new Error(`save answered ${res.status}`);
    docOf.set(res.body.id, doc.id);
  });
  await untilEmbedded(api, token);
  const lexical = new Map<string, string[]>();
  for (const q of collection.queries) {
    const res = await api.get(`/api/memories?q=${encodeURIComponent(q.text.slice(0, 4000))}&limit=${DEPTH}`, { token });
    lexical.set(
      q.id,
      (res.body as { id: string }[]).map((m) => docOf.get(m.id)!),
    );
  }
  const byMode = async (mode: string) => {
    const rankings = new Map<string, string[]>();
    for (const q of collection.queries) {
      const res = await api.post('/api/memories/search', { token, body: { query: q.text.slice(0, 4000), k: 50, mode } });
      if (res.status !== 200) throw new Error(`${mode} search answered ${res.status}`);
      rankings.set(
        q.id,
        (res.body.hits as { id: string }[]).map((m) => docOf.get(m.id)!),
      );
    }
    return evaluate(rankings, collection.qrels);
  };
  return { lexical: evaluate(lexical, collection.qrels), semantic: await byMode('semantic'), hybrid: await byMode('hybrid') };
}

console.log('| collection | docs | judged queries | nDCG@10 lexical | recall@100 lexical | nDCG@10 semantic | nDCG@10 hybrid |');
console.log('|---|---|---|---|---|---|---|');
for (const collection of [loadCranfield(dataDir), loadCisi(dataDir)]) {
  const r = await run(collection);
  console.log(
    `| ${collection.name} | ${collection.docs.length} | ${r.lexical.queries} | ${f3(r.lexical.ndcg10)} | ` +
      `${f3(r.lexical.recall100)} | ${f3(r.semantic.ndcg10)} | ${f3(r.hybrid.ndcg10)} |`,
  );
}
