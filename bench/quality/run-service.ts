// Ranking quality of the real search (PostgreSQL BM25 through the HTTP API) on Cranfield and CISI: each
// collection is saved into an org of its own, every query goes through GET /api/memories?q=, and the
// rankings are scored with the same metrics as the in-memory reference. Run by scripts/bench.sh.
import { resolve } from 'node:path';
import pg from 'pg';
import { ApiClient } from '../../test/support/api-client.ts';
import { closedLoop } from '../lib/stats.ts';
import { loadCisi, loadCranfield, type Collection } from './collections.ts';
import { evaluate } from './metrics.ts';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const dataDir = resolve(process.argv[2] ?? resolve(import.meta.dirname, '../../../shared/data'));
const DEPTH = 100;
const f3 = (x: number): string => x.toFixed(3);

async function run(collection: Collection) {
  const signup = await api.post('/api/auth/signup', {
    body: { email: `quality-${collection.name}-${Date.now()}@example.test`, password: 'quality-password', name: 'Quality', org_name: collection.name },
  });
  const token = signup.body.api_token.raw as string;
  // Past the free plan's 500 memories: a paid plan, set directly as the billing webhook would.
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  await db.query(`update orgs set plan = 'team' where id = $1`, [signup.body.org.id]);
  await db.end();
  const docOf = new Map<string, string>();
  // A few records have no text at all; they could not be saved as memories (`content required`).
  const docs = collection.docs.filter((d) => d.text.trim() !== '');
  await closedLoop(16, docs.length, async (i) => {
    const doc = docs[i]!;
    const res = await api.post('/api/memories', { token, body: { content: doc.text, metadata: { doc: doc.id } } });
    if (res.status !== 201) throw new Error(`save answered ${res.status}`);
    docOf.set(res.body.id, doc.id);
  });
  const rankings = new Map<string, string[]>();
  for (const q of collection.queries) {
    const res = await api.get(`/api/memories?q=${encodeURIComponent(q.text.slice(0, 4000))}&limit=${DEPTH}`, { token });
    rankings.set(q.id, (res.body as { id: string }[]).map((m) => docOf.get(m.id)!));
  }
  return evaluate(rankings, collection.qrels);
}

console.log('| collection | docs | judged queries | nDCG@10 | recall@100 |');
console.log('|---|---|---|---|---|');
for (const collection of [loadCranfield(dataDir), loadCisi(dataDir)]) {
  const r = await run(collection);
  console.log(`| ${collection.name} | ${collection.docs.length} | ${r.queries} | ${f3(r.ndcg10)} | ${f3(r.recall100)} |`);
}
