// How to fuse the lexical and semantic lists, measured offline before choosing: the BM25 reference and the
// bundled model (exact cosine over every document) on Cranfield, CISI and the paraphrase set, fused in
// several ways. Vectors are cached in $TMPDIR between runs.
//   EMBEDDING_MODEL_DIR=... [EMBEDDING_LOCAL_MODEL=e5-small-v2] node bench/quality/fusion-study.ts
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLocalEmbedder } from '../../infra/embeddings/local.ts';
import { localModelId } from '../../infra/embeddings/local-models.ts';
import { Bm25Reference } from '../../test/support/bm25-reference.ts';
import { idf, K1, queryTermCounts } from '../../domain/search/bm25.ts';
import { analyze } from '../../domain/store/analyzer.ts';
import { loadCisi, loadCranfield, type Collection } from './collections.ts';
import { evaluate, recallAt } from './metrics.ts';

const embedder = await createLocalEmbedder({
  modelDir: process.env.EMBEDDING_MODEL_DIR!,
  model: localModelId(process.env.EMBEDDING_LOCAL_MODEL),
});
const dataDir = resolve(import.meta.dirname, '../../../shared/data');

async function vectors(name: string, texts: string[], query: boolean): Promise<Float32Array[]> {
  const file = join(tmpdir(), `fusion-study-${embedder.model}-${name}-${query ? 'q' : 'd'}.json`);
  if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as number[][]).map((v) => Float32Array.from(v));
  const out = query ? await embedder.embedQueries(texts) : await embedder.embedDocuments(texts);
  writeFileSync(file, JSON.stringify(out.map((v) => [...v])));
  return out;
}

type List = { id: string; score: number }[];
type Fusion = (lexical: List, semantic: List) => string[];

const rrf =
  (k: number, depth: number, wSem = 1): Fusion =>
  (lexical, semantic) => {
    const score = new Map<string, number>();
    lexical.slice(0, depth).forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + 1 / (k + i + 1)));
    semantic.slice(0, depth).forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + wSem / (k + i + 1)));
    return [...score].sort((a, b) => b[1] - a[1]).map(([id]) => id);
  };

// Convex combination of scores scaled to [0, 1] within each list's top `depth`.
const convex =
  (alpha: number, depth: number): Fusion =>
  (lexical, semantic) => {
    const norm = (l: List) => {
      const top = l.slice(0, depth);
      const max = top[0]?.score ?? 0;
      const min = top.at(-1)?.score ?? 0;
      return new Map(top.map((h) => [h.id, max > min ? (h.score - min) / (max - min) : 1]));
    };
    const [nl, ns] = [norm(lexical), norm(semantic)];
    const ids = new Set([...nl.keys(), ...ns.keys()]);
    return [...ids]
      .map((id) => [id, (1 - alpha) * (nl.get(id) ?? 0) + alpha * (ns.get(id) ?? 0)] as const)
      .sort((a, b) => b[1] - a[1])
      .map(([id]) => id);
  };

// Scores divided by the list's best score (no shift), then combined.
const scaled =
  (alpha: number, depth: number): Fusion =>
  (lexical, semantic) => {
    const norm = (l: List) => new Map(l.slice(0, depth).map((h) => [h.id, l[0]!.score > 0 ? h.score / l[0]!.score : 0]));
    const [nl, ns] = [norm(lexical), norm(semantic)];
    const ids = new Set([...nl.keys(), ...ns.keys()]);
    return [...ids]
      .map((id) => [id, (1 - alpha) * (nl.get(id) ?? 0) + alpha * (ns.get(id) ?? 0)] as const)
      .sort((a, b) => b[1] - a[1])
      .map(([id]) => id);
  };

// Lexical scores divided by the best score the query could reach (every term, tf -> infinity: sum of
// qtf * idf * (k1 + 1)), so a hit that matches only the query's common words stays low; semantic min-max.
let bounds = new Map<List, number>();
const bounded =
  (alpha: number, depth: number): Fusion =>
  (lexical, semantic) => {
    const bound = bounds.get(lexical)!;
    const nl = new Map(lexical.slice(0, depth).map((h) => [h.id, h.score / bound]));
    const top = semantic.slice(0, depth);
    const max = top[0]?.score ?? 0;
    const min = top.at(-1)?.score ?? 0;
    const ns = new Map(top.map((h) => [h.id, max > min ? (h.score - min) / (max - min) : 1]));
    const ids = new Set([...nl.keys(), ...ns.keys()]);
    return [...ids]
      .map((id) => [id, (1 - alpha) * (nl.get(id) ?? 0) + alpha * (ns.get(id) ?? 0)] as const)
      .sort((a, b) => b[1] - a[1])
      .map(([id]) => id);
  };

const FUSIONS: Record<string, Fusion> = {
  'convex 0.65 d100': convex(0.65, 100),
  'convex 0.75 d100': convex(0.75, 100),
  'bounded 0.5 d100': bounded(0.5, 100),
  'bounded 0.4 d100': bounded(0.4, 100),
  'bounded 0.3 d100': bounded(0.3, 100),
  'bounded 0.6 d100': bounded(0.6, 100),
  'lexical only': (l) => l.map((h) => h.id),
  'semantic only': (_, s) => s.map((h) => h.id),
  'rrf k60 d100': rrf(60, 100),
  'rrf k60 d50': rrf(60, 50),
  'rrf k30 d100': rrf(30, 100),
  'rrf k10 d100': rrf(10, 100),
  'rrf k60 d100 w_sem 1.5': rrf(60, 100, 1.5),
  'rrf k60 d100 w_sem 2': rrf(60, 100, 2),
  'convex 0.5 d100': convex(0.5, 100),
  'convex 0.7 d100': convex(0.7, 100),
  'convex 0.8 d100': convex(0.8, 100),
  'convex 0.4 d100': convex(0.4, 100),
  'convex 0.6 d100': convex(0.6, 100),
  'convex 0.5 d50': convex(0.5, 50),
  'convex 0.6 d50': convex(0.6, 50),
  'rrf k10 d100 w_sem 1.5': rrf(10, 100, 1.5),
  'rrf k5 d100': rrf(5, 100),
  'scaled 0.5 d100': scaled(0.5, 100),
  'scaled 0.7 d100': scaled(0.7, 100),
};

interface Prepared {
  queries: { id: string; lexical: List; semantic: List }[];
  score(rankings: Map<string, string[]>): number;
}

function rank(docIds: string[], docVectors: Float32Array[], q: Float32Array, depth: number): List {
  const scored = docVectors.map((v, i) => {
    let dot = 0;
    for (let d = 0; d < v.length; d++) dot += v[d]! * q[d]!;
    return { id: docIds[i]!, score: dot };
  });
  return scored.sort((a, b) => b.score - a.score).slice(0, depth);
}

async function prepare(
  name: string,
  docs: { id: string; text: string }[],
  queries: { id: string; text: string }[],
  score: Prepared['score'],
): Promise<Prepared> {
  const index = new Bm25Reference();
  for (const d of docs) index.add(d.id, d.text);
  const dv = await vectors(
    name,
    docs.map((d) => d.text),
    false,
  );
  const qv = await vectors(
    name,
    queries.map((q) => q.text),
    true,
  );
  return {
    queries: queries.map((q, i) => {
      const lexical = index.search(q.text, 100);
      let bound = 0;
      for (const [term, qtf] of queryTermCounts(analyze(q.text))) bound += qtf * idf(index.size, index.df(term)) * (K1 + 1);
      bounds.set(lexical, bound || 1);
      return {
        id: q.id,
        lexical,
        semantic: rank(
          docs.map((d) => d.id),
          dv,
          qv[i]!,
          100,
        ),
      };
    }),
    score,
  };
}

const collection = (c: Collection) =>
  prepare(
    c.name,
    c.docs.filter((d) => d.text.trim() !== ''),
    c.queries,
    (r) => evaluate(r, c.qrels).ndcg10,
  );
const lines = (file: string) =>
  readFileSync(resolve(import.meta.dirname, 'paraphrase', file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
const memories = lines('memories.jsonl') as { id: string; content: string }[];
const questions = lines('questions.jsonl') as { id: string; question: string; evidence: string[] }[];
const paraphrase = await prepare(
  'paraphrase',
  memories.map((m) => ({ id: m.id, text: m.content })),
  questions.map((q) => ({ id: q.id, text: q.question })),
  (r) => {
    let sum = 0;
    for (const q of questions) sum += recallAt(r.get(q.id) ?? [], new Map(q.evidence.map((e) => [e, 1])), 10);
    return sum / questions.length;
  },
);
const sets: [string, Prepared][] = [
  ['Cranfield nDCG@10', await collection(loadCranfield(dataDir))],
  ['CISI nDCG@10', await collection(loadCisi(dataDir))],
  ['paraphrase recall@10', paraphrase],
];

console.log(`| fusion | ${sets.map(([n]) => n).join(' | ')} |`);
console.log(`|---|${sets.map(() => '---').join('|')}|`);
for (const [name, fuse] of Object.entries(FUSIONS)) {
  const cells = sets.map(([, p]) => p.score(new Map(p.queries.map((q) => [q.id, fuse(q.lexical, q.semantic).slice(0, 100)]))).toFixed(3));
  console.log(`| ${name} | ${cells.join(' | ')} |`);
}
